//! The accounts façade on a real SQLite file: what each way of setting up a customer leaves in the stores.

use std::sync::Arc;

use api_keys::KeyMode;

use accounts::{Accounts, AccountsError, FIRST_START_ACCOUNT, FIRST_START_CREDITS};
use api_keys::{ApiKeys, SqliteKeyStore};
use credit_ledger::{Credits, LedgerError, SqliteLedger};
use dashboard_auth::{AuthError, SqliteUserStore, Users};

const PASSWORD: &str = "correct horse battery";

async fn accounts(dir: &tempfile::TempDir) -> Accounts {
    let pool = sqlite_pool::SqlitePool::open(&dir.path().join("a.db"))
        .await
        .expect("opens");
    Accounts::new(
        Arc::new(SqliteLedger::with_pool(pool.clone()).await.expect("ledger")),
        Arc::new(ApiKeys::new(Arc::new(
            SqliteKeyStore::with_pool(pool.clone()).await.expect("keys"),
        ))),
        Arc::new(Users::new(Arc::new(
            SqliteUserStore::with_pool(pool).await.expect("users"),
        ))),
    )
}

fn credits(text: &str) -> Credits {
    Credits::parse(text).expect("amount")
}

#[tokio::test]
async fn first_start_makes_one_funded_key_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let accounts = accounts(&dir).await;
    let first = accounts
        .first_start()
        .await
        .expect("works")
        .expect("made on an empty database");
    assert_eq!(first.account.name, FIRST_START_ACCOUNT);
    assert_eq!(first.account.balance, FIRST_START_CREDITS);
    let verified = accounts
        .keys()
        .verify(first.key.expose())
        .await
        .expect("valid");
    assert_eq!(
        verified.tenant,
        company_model::Tenant::live(first.account.id)
    );
    assert!(
        accounts.first_start().await.expect("works").is_none(),
        "only once"
    );
    let ledger = accounts
        .ledger()
        .entries(company_model::Tenant::live(first.account.id), None, 10)
        .await
        .expect("rows");
    assert_eq!(ledger.len(), 1, "one grant row");
}

#[tokio::test]
async fn keys_for_a_named_account_make_it_and_fund_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let accounts = accounts(&dir).await;
    let one = accounts
        .create_key("acme", Some(credits("10")), Some("crm"), KeyMode::Live)
        .await
        .expect("made");
    let two = accounts
        .create_key("acme", Some(credits("0.5")), None, KeyMode::Live)
        .await
        .expect("made");
    assert_eq!(one.account.id, two.account.id, "the same account");
    assert_eq!(two.account.balance, credits("10.5"));
    // No grant, no ledger row.
    let three = accounts
        .create_key("acme", None, None, KeyMode::Test)
        .await
        .expect("made");
    assert_eq!(three.account.balance, credits("10.5"));
    let rows = accounts
        .ledger()
        .entries(company_model::Tenant::live(one.account.id), None, 10)
        .await
        .expect("rows");
    assert_eq!(rows.len(), 2);
    let keys = accounts
        .keys()
        .of_account(one.account.id)
        .await
        .expect("keys");
    assert_eq!(keys.len(), 3);
    // The third is a test key of the same account, and acts for its test mode.
    assert_eq!(three.record.account, one.account.id);
    assert!(three.key.expose().starts_with("cdk_test_"));
    assert_eq!(
        three.record.acts_for(),
        company_model::Tenant::test(one.account.id)
    );
    assert!(matches!(
        accounts
            .grant(one.account.id, Credits::ZERO, "nothing")
            .await,
        Err(AccountsError::Ledger(LedgerError::InvalidAmount(_)))
    ));
}

#[tokio::test]
async fn a_refused_sign_in_or_invitation_leaves_no_account_behind() {
    let dir = tempfile::tempdir().expect("temp dir");
    let accounts = accounts(&dir).await;
    assert!(matches!(
        accounts
            .create_sign_in("ada@example.com", "short", None, false, Some(credits("5")))
            .await,
        Err(AccountsError::Users(AuthError::WeakPassword))
    ));
    assert!(matches!(
        accounts.invite("not an email", None, false).await,
        Err(AccountsError::Users(AuthError::InvalidEmail(_)))
    ));
    assert!(accounts.ledger().accounts().await.expect("list").is_empty());

    let (user, account) = accounts
        .create_sign_in("Ada@Example.com", PASSWORD, None, true, Some(credits("5")))
        .await
        .expect("made");
    assert_eq!(
        (account.name.as_str(), user.admin),
        ("ada@example.com", true)
    );
    assert_eq!(account.balance, credits("5"));
    assert!(matches!(
        accounts.invite("ada@example.com", None, false).await,
        Err(AccountsError::Users(AuthError::EmailTaken(_)))
    ));
    assert!(matches!(
        accounts
            .create_sign_in("ada@example.com", PASSWORD, Some("other"), false, None)
            .await,
        Err(AccountsError::Users(AuthError::EmailTaken(_)))
    ));
    assert!(matches!(
        accounts
            .invite("bob@example.com", Some(accounts::AccountId(999)), false)
            .await,
        Err(AccountsError::Ledger(LedgerError::UnknownAccount(_)))
    ));
    let names: Vec<String> = accounts
        .ledger()
        .accounts()
        .await
        .expect("list")
        .into_iter()
        .map(|a| a.name)
        .collect();
    assert_eq!(names, ["ada@example.com"]);

    // An invitation into an existing account; its link makes the sign-in.
    let (token, invitation) = accounts
        .invite("bob@example.com", Some(account.id), false)
        .await
        .expect("invited");
    assert_eq!(invitation.account, account.id);
    let (bob, _, _) = accounts
        .users()
        .accept_invitation(token.expose(), PASSWORD, None)
        .await
        .expect("accepted");
    assert!(bob.may_manage(account.id) && !bob.may_manage(accounts::AccountId(999)));
    assert_eq!(accounts.users().list().await.expect("users").len(), 2);
}
