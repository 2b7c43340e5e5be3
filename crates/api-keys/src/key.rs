use std::fmt;

use rand::Rng;

/// The prefix every key starts with, so that keys are recognisable in configs and secret scanners.
pub const KEY_PREFIX: &str = "cdk_";
/// The prefix of a test-mode key ([`KeyMode::Test`]): `cdk_test_` then 40 random characters.
pub const TEST_KEY_PREFIX: &str = "cdk_test_";
/// Random characters after the prefix.
const RANDOM_CHARS: usize = 40;
const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// Random characters kept in clear after the mode's prefix, as the lookup prefix (`cdk_` + 8, `cdk_test_` + 8).
const PREFIX_RANDOM_CHARS: usize = 8;

/// Whether a key acts for its account's live data or for its test-mode sandbox ([`company_model::Mode`]): a test
/// key's requests never reach the network's pages and never spend credits, and its jobs, watches and endpoints
/// are the sandbox's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyMode {
    /// `cdk_…`: the account itself.
    Live,
    /// `cdk_test_…`: the account's sandbox.
    Test,
}

impl KeyMode {
    /// The prefix keys of this mode start with.
    pub fn prefix(self) -> &'static str {
        match self {
            Self::Live => KEY_PREFIX,
            Self::Test => TEST_KEY_PREFIX,
        }
    }

    /// How lists name it: `live` or `test`.
    pub fn label(self) -> &'static str {
        self.mode().label()
    }

    /// The data a key of this mode works on.
    pub fn mode(self) -> company_model::Mode {
        match self {
            Self::Live => company_model::Mode::Live,
            Self::Test => company_model::Mode::Test,
        }
    }

    /// The mode of a key, or of a key's stored prefix, by how its text starts.
    pub fn of_text(text: &str) -> Self {
        if text.starts_with(TEST_KEY_PREFIX) {
            Self::Test
        } else {
            Self::Live
        }
    }

    /// Whose data a key of this mode, belonging to `account`, works on.
    pub fn acts_for(self, account: company_model::AccountId) -> company_model::Tenant {
        company_model::Tenant {
            account,
            mode: self.mode(),
        }
    }
}

/// How many characters of `text` (a key, or text naming one) are its stored prefix.
pub(crate) fn stored_prefix_len(text: &str) -> usize {
    KeyMode::of_text(text).prefix().len() + PREFIX_RANDOM_CHARS
}
/// Characters kept in clear as the suffix.
pub(crate) const STORED_SUFFIX_LEN: usize = 4;

/// A full API key. The secret is only reachable through [`ApiKey::expose`]; `Debug` and `Display` redact it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A new random live key from the operating system's generator.
    pub fn generate() -> Self {
        Self::generate_for(KeyMode::Live)
    }

    /// A new random key of `mode` from the operating system's generator.
    pub fn generate_for(mode: KeyMode) -> Self {
        let mut rng = rand::rngs::OsRng;
        let random: String = (0..RANDOM_CHARS)
            .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
            .collect();
        Self(format!("{}{random}", mode.prefix()))
    }

    /// Accepts text shaped like a key (prefix, length, alphabet), without checking it exists.
    pub fn parse(text: &str) -> Option<Self> {
        let random = text
            .strip_prefix(TEST_KEY_PREFIX)
            .or_else(|| text.strip_prefix(KEY_PREFIX))?;
        (random.len() == RANDOM_CHARS && random.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| Self(text.to_owned()))
    }

    /// The secret itself, to show once or to send.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Its mode, by its prefix.
    pub fn mode(&self) -> KeyMode {
        KeyMode::of_text(&self.0)
    }

    /// The mode's prefix and 8 characters (`cdk_AbCd1234`, `cdk_test_AbCd1234`), which lists show and logs
    /// may carry: they identify the key to its owner and give nothing of its secret away.
    pub fn prefix(&self) -> &str {
        &self.0[..stored_prefix_len(&self.0)]
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
        assert!(!format!("{a:?} {a}").contains(&a.expose()[a.prefix().len()..]));
        assert_eq!((a.prefix().len(), a.mode()), (12, KeyMode::Live));
    }

    #[test]
    fn test_keys_say_so_and_keep_as_much_secret() {
        let test = ApiKey::generate_for(KeyMode::Test);
        assert!(test.expose().starts_with("cdk_test_"), "{}", test.expose());
        assert_eq!(test.expose().len(), TEST_KEY_PREFIX.len() + RANDOM_CHARS);
        assert_eq!(ApiKey::parse(test.expose()), Some(test.clone()));
        assert_eq!((test.prefix().len(), test.mode()), (17, KeyMode::Test));
        assert_eq!(
            KeyMode::Test.acts_for(company_model::AccountId(7)),
            company_model::Tenant::test(company_model::AccountId(7))
        );
        // A live key's random part is base62, so it never reads as a test key.
        assert_eq!(ApiKey::parse("cdk_test_short"), None);
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
