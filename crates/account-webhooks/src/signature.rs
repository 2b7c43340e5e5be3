//! Webhook signatures: `Company-Data-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`,
//! keyed with the account's webhook secret (the scheme Stripe's webhooks use, so receivers' code carries over).

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// The header that carries the signature.
pub const SIGNATURE_HEADER: &str = "Company-Data-Signature";

/// A new webhook secret: `whsec_` and 32 random bytes in hex (256 bits).
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("whsec_{}", hex::encode(bytes))
}

/// The header's value for `body` sent at `t` (Unix seconds).
pub fn sign(secret: &str, t: i64, body: &[u8]) -> String {
    format!(
        "t={t},v1={}",
        hex::encode(mac(secret, t, body).finalize().into_bytes())
    )
}

/// Whether `header` signs `body` with `secret`, made within `tolerance_seconds` of `now` (Unix seconds): what
/// a receiver checks. Compares in constant time; any `v1` in the header may match (several are sent while a
/// secret is rotated by receivers that keep two).
pub fn verify(secret: &str, header: &str, body: &[u8], now: i64, tolerance_seconds: i64) -> bool {
    let mut t = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", value)) => t = value.parse::<i64>().ok(),
            Some(("v1", value)) => signatures.push(value.to_owned()),
            _ => {}
        }
    }
    let Some(t) = t else { return false };
    if (now - t).abs() > tolerance_seconds {
        return false;
    }
    signatures.iter().any(|signature| {
        hex::decode(signature)
            .ok()
            .is_some_and(|bytes| mac(secret, t, body).verify_slice(&bytes).is_ok())
    })
}

fn mac(secret: &str, t: i64, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_only_with_its_secret_body_and_time() {
        let body = br#"{"id":"evt_1"}"#;
        let header = sign("whsec_test", 1_800_000_000, body);
        assert!(header.starts_with("t=1800000000,v1="));
        assert!(verify("whsec_test", &header, body, 1_800_000_100, 300));
        assert!(!verify("whsec_other", &header, body, 1_800_000_100, 300));
        assert!(!verify("whsec_test", &header, b"{}", 1_800_000_100, 300));
        assert!(
            !verify("whsec_test", &header, body, 1_800_001_000, 300),
            "too old"
        );
        assert!(!verify(
            "whsec_test",
            "t=1800000000,v1=zz",
            body,
            1_800_000_000,
            300
        ));
        assert_eq!(new_secret().len(), 6 + 64);
        assert_ne!(new_secret(), new_secret());
    }
}
