//! Whose data a request works on: an account ([`AccountId`]) in a [`Mode`], together a [`Tenant`].

/// The id of a customer account: the owner of API keys and of a credit balance. Ids are a store's serial, so
/// they start at 1.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct AccountId(pub i64);

impl std::fmt::Display for AccountId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Which of an account's two sets of data a key works on: the live one, or its test-mode sandbox (a
/// `cdk_test_…` key), whose requests never reach the network's pages and never spend credits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// The account's real data and balance.
    #[default]
    Live,
    /// The account's sandbox: its own jobs, watches, webhook endpoints and idempotency records, served from
    /// the sandbox's pages, spending nothing.
    Test,
}

impl Mode {
    /// How lists and logs name it: `live` or `test`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Live => "live",
            Self::Test => "test",
        }
    }
}

/// Whose data a request reads and writes: an account in one [`Mode`]. Every store keyed by account (jobs,
/// watches, webhook endpoints and secrets, idempotency records) is keyed by a tenant, so an account's test data
/// is never its live data; the ledger bills the live tenant and answers for the test one itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tenant {
    /// The account.
    pub account: AccountId,
    /// Which of its data.
    pub mode: Mode,
}

impl Tenant {
    /// `account`'s live data.
    pub fn live(account: AccountId) -> Self {
        Self {
            account,
            mode: Mode::Live,
        }
    }

    /// `account`'s test-mode sandbox.
    pub fn test(account: AccountId) -> Self {
        Self {
            account,
            mode: Mode::Test,
        }
    }

    /// Whether this is a test-mode tenant.
    pub fn is_test(self) -> bool {
        self.mode == Mode::Test
    }

    /// The one integer a store keeps a tenant in (its `account_id` columns): the account's id when live, the id
    /// negated in test mode. This is the layout stores had before the mode was a type of its own, so no stored
    /// row moves; [`Tenant::from_key`] reads it back. Only the stores use it.
    ///
    /// Account ids start at 1, so the two modes never share a key; the id 0 has no test key and is kept as
    /// live.
    pub fn key(self) -> i64 {
        match self.mode {
            Mode::Live => self.account.0,
            // Saturating: no id overflows (`-i64::MIN` would), whatever a row or a test holds.
            Mode::Test => self.account.0.saturating_abs().saturating_neg(),
        }
    }

    /// The tenant a store's key ([`Tenant::key`]) stands for.
    pub fn from_key(key: i64) -> Self {
        if key < 0 {
            Self::test(AccountId(key.saturating_abs()))
        } else {
            Self::live(AccountId(key))
        }
    }
}

impl std::fmt::Display for Tenant {
    /// `42` for a live account, `42 (test)` for its sandbox.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.mode {
            Mode::Live => self.account.fmt(f),
            Mode::Test => write!(f, "{} (test)", self.account),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{AccountId, Mode, Tenant};

    #[test]
    fn a_tenant_reads_back_from_its_key_in_both_modes() {
        for id in [1, 42, i64::MAX] {
            for tenant in [Tenant::live(AccountId(id)), Tenant::test(AccountId(id))] {
                assert_eq!(Tenant::from_key(tenant.key()), tenant);
            }
            assert_ne!(
                Tenant::live(AccountId(id)).key(),
                Tenant::test(AccountId(id)).key()
            );
        }
    }

    #[test]
    fn keys_are_the_layout_stores_already_hold_and_never_overflow() {
        assert_eq!(Tenant::live(AccountId(7)).key(), 7);
        assert_eq!(Tenant::test(AccountId(7)).key(), -7);
        assert_eq!(Tenant::from_key(-7), Tenant::test(AccountId(7)));
        assert_eq!(Tenant::test(AccountId(i64::MIN)).mode, Mode::Test);
        assert!(Tenant::from_key(i64::MIN).is_test());
        assert_eq!(Tenant::test(AccountId(3)).to_string(), "3 (test)");
    }
}
