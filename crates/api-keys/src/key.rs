use std::fmt;

use rand::Rng;

/// The prefix every key starts with, so that keys are recognisable in configs and secret scanners.
pub const KEY_PREFIX: &str = "cdk_";
/// Random characters after the prefix.
const RANDOM_CHARS: usize = 40;
const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// Characters kept in clear as the lookup prefix (`cdk_` + 8).
pub(crate) const STORED_PREFIX_LEN: usize = 12;
/// Characters kept in clear as the suffix.
pub(crate) const STORED_SUFFIX_LEN: usize = 4;

/// A full API key. The secret is only reachable through [`ApiKey::expose`]; `Debug` and `Display` redact it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A new random key from the operating system's generator.
    pub fn generate() -> Self {
        let mut rng = rand::rngs::OsRng;
        let random: String = (0..RANDOM_CHARS)
            .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
            .collect();
        Self(format!("{KEY_PREFIX}{random}"))
    }

    /// Accepts text shaped like a key (prefix, length, alphabet), without checking it exists.
    pub fn parse(text: &str) -> Option<Self> {
        let random = text.strip_prefix(KEY_PREFIX)?;
        (random.len() == RANDOM_CHARS && random.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| Self(text.to_owned()))
    }

    /// The secret itself, to show once or to send.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The first 12 characters (`cdk_` + 8), which lists show and logs may carry: they identify the key to
    /// its owner and give nothing of its secret away.
    pub fn prefix(&self) -> &str {
        &self.0[..STORED_PREFIX_LEN]
    }

    pub(crate) fn suffix(&self) -> &str {
        &self.0[self.0.len() - STORED_SUFFIX_LEN..]
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({}… redacted)", self.prefix())
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}…(redacted)", self.prefix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_parse_and_differ() {
        let (a, b) = (ApiKey::generate(), ApiKey::generate());
        assert_ne!(a, b);
        assert_eq!(ApiKey::parse(a.expose()), Some(a.clone()));
        assert_eq!(a.expose().len(), KEY_PREFIX.len() + RANDOM_CHARS);
        assert!(!format!("{a:?} {a}").contains(&a.expose()[STORED_PREFIX_LEN..]));
    }

    #[test]
    fn malformed_keys_are_refused() {
        let good = ApiKey::generate();
        for bad in [
            "",
            "cdk_",
            "xyz_0123456789012345678901234567890123456789",
            &good.expose()[..30],
        ] {
            assert_eq!(ApiKey::parse(bad), None, "{bad}");
        }
        assert_eq!(
            ApiKey::parse(&format!("{}!", &good.expose()[..good.expose().len() - 1])),
            None
        );
    }
}
