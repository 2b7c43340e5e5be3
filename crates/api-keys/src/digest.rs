//! How a key is stored and found: an HMAC-SHA256 of the whole key under the deployment's digest key.
//!
//! A key carries about 238 random bits, so no guessing can invert a digest of it, slow or fast; a slow hash
//! (argon2) would protect nothing more and costs ~20 ms of CPU per request that presents an unknown key, which a
//! flood of made-up keys turns against the service. The digest is computed in about a microsecond and looked up
//! by the database's index: equality on an HMAC output the caller cannot choose leaks nothing through timing.
//! The HMAC key makes a digest useless without it (a leaked `api_keys` table alone cannot even confirm a
//! guessed key).

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use crate::ApiKey;

/// Bytes in a digest key.
const DIGEST_KEY_BYTES: usize = 32;

/// The deployment's HMAC key for API-key digests, kept by the [`crate::KeyStore`] (one per database, shared
/// by every server on it).
#[derive(Clone)]
pub(crate) struct DigestKey(Vec<u8>);

impl std::fmt::Debug for DigestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DigestKey(redacted)")
    }
}

impl DigestKey {
    /// A fresh random key in hex, to propose to the store when it has none yet.
    pub(crate) fn generate_hex() -> String {
        let mut bytes = [0u8; DIGEST_KEY_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        hex::encode(bytes)
    }

    /// The key from the store's hex text; `None` when the text is not hex of the right length.
    pub(crate) fn from_hex(text: &str) -> Option<Self> {
        let bytes = hex::decode(text).ok()?;
        (bytes.len() == DIGEST_KEY_BYTES).then_some(Self(bytes))
    }

    /// The stored form of `key`: 64 lowercase hex characters.
    pub(crate) fn digest(&self, key: &ApiKey) -> String {
        // HMAC accepts a key of any length; this one is always 32 bytes.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.0) else {
            unreachable!("HMAC takes keys of any length")
        };
        mac.update(key.expose().as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_depend_on_key_and_digest_key() {
        let (a, b) = (
            DigestKey::from_hex(&DigestKey::generate_hex()).expect("hex"),
            DigestKey::from_hex(&DigestKey::generate_hex()).expect("hex"),
        );
        let key = ApiKey::generate();
        assert_eq!(a.digest(&key), a.digest(&key));
        assert_eq!(a.digest(&key).len(), 64);
        assert_ne!(a.digest(&key), b.digest(&key));
        assert_ne!(a.digest(&key), a.digest(&ApiKey::generate()));
        assert!(DigestKey::from_hex("abcd").is_none());
        assert!(DigestKey::from_hex(&"zz".repeat(32)).is_none());
        assert_eq!(format!("{a:?}"), "DigestKey(redacted)");
    }
}
