use std::fmt;
use std::str::FromStr;

/// An amount of credits, exact to a thousandth (stored as an integer count of thousandths, so sums never drift).
///
/// Serialized to JSON as a number (`0.5`, `100`); written as text without trailing zeros (`99.5`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Credits(i64);

/// Why text is not an amount of credits.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "`{0}` is not an amount of credits: write a non-negative number with at most three decimals, e.g. 100 or 0.5"
)]
pub struct CreditsError(String);

impl Credits {
    /// No credits.
    pub const ZERO: Credits = Credits(0);

    /// An amount in thousandths of a credit (may be negative, for ledger deltas).
    pub const fn from_millis(millis: i64) -> Self {
        Self(millis)
    }

    /// The amount in thousandths of a credit.
    pub const fn millis(self) -> i64 {
        self.0
    }

    /// Reads a non-negative decimal such as `100`, `0.5` or `2.125`.
    ///
    /// # Errors
    /// [`CreditsError`] for negative numbers, more than three decimals, or anything not a number.
    pub fn parse(text: &str) -> Result<Self, CreditsError> {
        let error = || CreditsError(text.to_owned());
        let trimmed = text.trim();
        let (whole, fraction) = trimmed.split_once('.').unwrap_or((trimmed, ""));
        let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !digits_only(whole) || !digits_only(fraction) || fraction.len() > 3 {
            return Err(error());
        }
        let whole: i64 = whole.parse().map_err(|_| error())?;
        let fraction: i64 = format!("{fraction:0<3}").parse().map_err(|_| error())?;
        whole
            .checked_mul(1000)
            .and_then(|w| w.checked_add(fraction))
            .map(Self)
            .ok_or_else(error)
    }

    /// `self * count`, saturating.
    #[must_use]
    pub fn times(self, count: u32) -> Self {
        Self(self.0.saturating_mul(i64::from(count)))
    }

    /// `self + other`, saturating.
    #[must_use]
    pub fn saturating_add(self, other: Self) -> Self {
        Self(self.0.saturating_add(other.0))
    }

    /// The amount as a float, for JSON and headers.
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }
}

impl fmt::Display for Credits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let (whole, fraction) = (abs / 1000, abs % 1000);
        if fraction == 0 {
            write!(f, "{sign}{whole}")
        } else {
            let fraction = format!("{fraction:03}");
            write!(f, "{sign}{whole}.{}", fraction.trim_end_matches('0'))
        }
    }
}

impl FromStr for Credits {
    type Err = CreditsError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

/// A number of credits: an integer when whole, else a decimal of up to three places.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Credits {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Credits".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "number"})
    }
}

impl serde::Serialize for Credits {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0 % 1000 == 0 {
            serializer.serialize_i64(self.0 / 1000)
        } else {
            serializer.serialize_f64(self.as_f64())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display() {
        for (text, millis, shown) in [
            ("100", 100_000, "100"),
            ("0.5", 500, "0.5"),
            ("2.125", 2125, "2.125"),
            ("1.10", 1100, "1.1"),
            ("0", 0, "0"),
        ] {
            let credits = Credits::parse(text).expect("valid");
            assert_eq!(credits.millis(), millis, "{text}");
            assert_eq!(credits.to_string(), shown, "{text}");
        }
        for bad in [
            "-1",
            "1.2345",
            "",
            ".5",
            "1e3",
            "abc",
            "99999999999999999999",
        ] {
            assert!(Credits::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Credits::from_millis(-1500).to_string(), "-1.5");
    }
}
