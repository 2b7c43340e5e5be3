//! `PATCH /v1/account`: the settings an account's owner may change, as a JSON Merge Patch (RFC 7396).

use crate::InvalidRequest;
use crate::validation::{self, Body};

/// The highest low-balance threshold an account may set, in credits.
pub const MAX_LOW_BALANCE_THRESHOLD: u32 = 1_000_000_000;

/// The largest `PATCH /v1/account` body read, in bytes: a few settings.
pub const MAX_SETTINGS_BYTES: usize = 4 * 1024;

/// Settings of the account to change (a JSON Merge Patch, RFC 7396): a member sent replaces the setting, null
/// removes it, a member left out is unchanged.
#[derive(
    Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "AccountUpdate")]
pub struct AccountUpdate {
    /// Below this balance (credits, rounded to a thousandth) the account's webhook endpoints that want
    /// `account.balance_low` are told, once each time the balance falls below it; null for never.
    #[serde(
        default,
        deserialize_with = "sent_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<f64>", range(min = 0, max = MAX_LOW_BALANCE_THRESHOLD))]
    #[allow(clippy::option_option)] // absent (unchanged), null (removed) or a number
    pub low_balance_threshold: Option<Option<f64>>,
}

/// A member of a merge patch: sent (`Some`, its value or `null`), where `default` gives `None` when left out.
#[allow(clippy::option_option)] // absent, null and a number are three different patches
fn sent_or_null<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<f64>>, D::Error> {
    <Option<f64> as serde::Deserialize>::deserialize(deserializer).map(Some)
}

impl Body for AccountUpdate {
    const EXAMPLE: &str =
        r#"send a JSON object such as {"low_balance_threshold": 25}, or null to remove it"#;
    validation::rules!(AccountUpdate);
}

impl AccountUpdate {
    /// Checks a body such as `{"low_balance_threshold": 25}` against this type's schema.
    ///
    /// # Errors
    /// [`InvalidRequest`] naming every problem: a member that is not a setting, a threshold that is not a
    /// number from 0 to [`MAX_LOW_BALANCE_THRESHOLD`] or `null`.
    pub fn from_json(body: &[u8]) -> Result<Self, InvalidRequest> {
        validation::read(body, &mut |_, _, _| Ok(()))
    }
}
