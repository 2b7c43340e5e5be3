//! The ledger on both engines, a real SQLite file and a real PostgreSQL database, including concurrent holds
//! on one account; and what only the SQLite backend does (group commit, holds in memory).

use std::sync::Arc;

use test_support::Engine;

use credit_ledger::{
    Charge, Credits, EntryKind, Ledger, LedgerError, PgLedger, SqliteLedger, Tenant,
};

fn credits(text: &str) -> Credits {
    Credits::parse(text).expect("valid amount")
}

async fn ledger() -> (tempfile::TempDir, SqliteLedger) {
    let dir = tempfile::tempdir().expect("temp dir");
    let ledger = SqliteLedger::open(&dir.path().join("l.db"))
        .await
        .expect("opens");
    (dir, ledger)
}

/// A ledger on the engine's database.
async fn ledger_on(engine: &Engine) -> Arc<dyn Ledger> {
    match engine {
        Engine::Sqlite(dir) => Arc::new(
            SqliteLedger::open(&dir.path().join("l.db"))
                .await
                .expect("opens"),
        ),
        Engine::Postgres(database) => Arc::new(
            PgLedger::with_pool(
                pg_pool::PgPool::connect(&database.url)
                    .await
                    .expect("connects"),
            )
            .await
            .expect("migrates"),
        ),
    }
}

async fn reserve_settle_and_the_ledger_rows(engine: &Engine) {
    let ledger = ledger_on(engine).await;
    let account = ledger.ensure_account("acme").await.expect("account");
    assert_eq!(
        ledger
            .ensure_account("acme")
            .await
            .expect("same account")
            .id,
        account.id
    );
    assert_eq!(
        ledger
            .grant(account.id, credits("2"), "trial")
            .await
            .expect("grant"),
        credits("2")
    );

    let hold = ledger
        .reserve(Tenant::live(account.id), credits("1.5"))
        .await
        .expect("covered");
    // The hold counts against what is available, not against the balance.
    let refused = ledger
        .reserve(Tenant::live(account.id), credits("1"))
        .await
        .expect_err("only 0.5 left");
    assert!(matches!(
        refused,
        LedgerError::InsufficientCredits { available, required } if available == credits("0.5") && required == credits("1")
    ));
    assert_eq!(
        ledger
            .account(account.id)
            .await
            .expect("read")
            .expect("exists")
            .balance,
        credits("2")
    );

    let charge = Charge {
        amount: credits("1"),
        key_id: Some(7),
        urls_requested: 3,
        urls_returned: 2,
        live: true,
        reference: None,
    };
    assert_eq!(
        ledger.settle(hold, charge.clone()).await.expect("settled"),
        credits("1")
    );

    let entries = ledger
        .entries(Tenant::live(account.id), None, 10)
        .await
        .expect("rows");
    assert_eq!(entries.len(), 2);
    assert_eq!(
        (entries[0].kind, entries[0].delta, entries[0].balance_after),
        (EntryKind::Charge, Credits::from_millis(-1000), credits("1"))
    );
    assert_eq!(entries[0].charge.as_ref(), Some(&charge));
    assert_eq!(
        (entries[1].kind, entries[1].note.as_deref()),
        (EntryKind::Grant, Some("trial"))
    );
}

async fn a_charge_cannot_exceed_its_hold(engine: &Engine) {
    let ledger = ledger_on(engine).await;
    let account = ledger.ensure_account("acme").await.expect("account");
    ledger
        .grant(account.id, credits("5"), "")
        .await
        .expect("grant");
    let hold = ledger
        .reserve(Tenant::live(account.id), credits("1"))
        .await
        .expect("covered");
    let id = hold.id;
    let too_much = Charge {
        amount: credits("2"),
        ..Charge::default()
    };
    assert!(matches!(
        ledger.settle(hold, too_much).await,
        Err(LedgerError::InvalidAmount(_))
    ));
    // The refused settle consumed the value but not the hold: it is still there, and stale release frees it.
    let released = ledger
        .release_stale(jiff::Timestamp::now() + jiff::SignedDuration::from_secs(1))
        .await;
    assert_eq!(
        released.expect("released"),
        1,
        "hold {id} was left after the refused settle"
    );
    assert!(
        ledger.grant(account.id, Credits::ZERO, "").await.is_err(),
        "zero grants are refused"
    );
    assert!(matches!(
        ledger
            .reserve(Tenant::live(credit_ledger::AccountId(999)), credits("1"))
            .await,
        Err(LedgerError::UnknownAccount(_))
    ));
}

async fn concurrent_holds_never_overdraw(engine: &Engine) {
    let ledger = ledger_on(engine).await;
    let ledger = Arc::new(ledger);
    let account = ledger.ensure_account("acme").await.expect("account");
    ledger
        .grant(account.id, credits("10"), "")
        .await
        .expect("grant");
    // 40 requests that each may cost 1 credit and return 1 company; only 10 can be paid for.
    let tasks = (0..40).map(|_| {
        let ledger = Arc::clone(&ledger);
        tokio::spawn(async move {
            match ledger.reserve(Tenant::live(account.id), credits("1")).await {
                Ok(hold) => {
                    let charge = Charge {
                        amount: credits("1"),
                        urls_requested: 1,
                        urls_returned: 1,
                        ..Charge::default()
                    };
                    ledger.settle(hold, charge).await.map(|_| true)
                }
                Err(LedgerError::InsufficientCredits { .. }) => Ok(false),
                Err(other) => Err(other),
            }
        })
    });
    let outcomes = futures::future::join_all(tasks).await;
    let paid = outcomes
        .into_iter()
        .map(|o| o.expect("task").expect("no store error"))
        .filter(|&p| p)
        .count();
    assert_eq!(paid, 10);
    let balance = ledger
        .account(account.id)
        .await
        .expect("read")
        .expect("exists")
        .balance;
    assert_eq!(balance, Credits::ZERO);
    let entries = ledger
        .entries(Tenant::live(account.id), None, 100)
        .await
        .expect("rows");
    let sum: i64 = entries.iter().map(|e| e.delta.millis()).sum();
    assert_eq!(sum, balance.millis(), "the ledger sums to the balance");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn settles_in_one_commit_and_grants_from_another_process_count_at_once() {
    let (dir, ledger) = ledger().await;
    let ledger = Arc::new(ledger);
    let account = ledger.ensure_account("acme").await.expect("account");
    // A second ledger on the file stands for the CLI granting credits while the server runs.
    let cli = SqliteLedger::open(&dir.path().join("l.db"))
        .await
        .expect("opens");
    cli.grant(account.id, credits("100"), "top-up")
        .await
        .expect("grant");
    // 200 settles at once on many threads: every one is answered with a balance, each balance once.
    let tasks = (0..200).map(|_| {
        let ledger = Arc::clone(&ledger);
        tokio::spawn(async move {
            let hold = ledger
                .reserve(Tenant::live(account.id), credits("0.5"))
                .await?;
            let charge = Charge {
                amount: credits("0.5"),
                ..Charge::default()
            };
            ledger.settle(hold, charge).await
        })
    });
    let mut balances: Vec<i64> = futures::future::join_all(tasks)
        .await
        .into_iter()
        .map(|o| o.expect("task").expect("paid").millis())
        .collect();
    balances.sort_unstable();
    let expected: Vec<i64> = (0..200).map(|i| i * 500).collect();
    assert_eq!(balances, expected, "each charge saw the one before it");
    // Nothing is held any more: the whole (now zero) balance is available, and the next grant is too.
    cli.grant(account.id, credits("1"), "")
        .await
        .expect("grant");
    let hold = ledger
        .reserve(Tenant::live(account.id), credits("1"))
        .await
        .expect("the new credit is available");
    ledger.release(hold).await.expect("released");
}

#[tokio::test]
async fn a_charge_that_cannot_be_written_is_not_charged_and_frees_its_hold() {
    let (dir, ledger) = ledger().await;
    let account = ledger.ensure_account("acme").await.expect("account");
    ledger
        .grant(account.id, credits("3"), "")
        .await
        .expect("grant");
    // A trigger makes SQLite refuse one ledger row, as a full disk or a broken file would.
    let conn = sqlite_pool::rusqlite::Connection::open(dir.path().join("l.db")).expect("open");
    conn.execute_batch(
        "CREATE TRIGGER refuse BEFORE INSERT ON ledger_entries WHEN NEW.urls_requested = 666
         BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
    )
    .expect("trigger");
    let hold = ledger
        .reserve(Tenant::live(account.id), credits("2"))
        .await
        .expect("covered");
    let refused = Charge {
        amount: credits("2"),
        urls_requested: 666,
        ..Charge::default()
    };
    assert!(matches!(
        ledger.settle(hold, refused).await,
        Err(LedgerError::Backend(_))
    ));
    // Not charged, and the 2 credits it held are available again at once.
    let whole = ledger
        .reserve(Tenant::live(account.id), credits("3"))
        .await
        .expect("the failed charge's hold was freed");
    assert_eq!(
        ledger
            .settle(whole, Charge::default())
            .await
            .expect("settled"),
        credits("3")
    );
}

/// What the dashboard's ledger pages and usage chart read: pages by id, and per-day totals split live/stored.
async fn entries_page_by_id_and_usage_adds_up_per_day(engine: &Engine) {
    let ledger = ledger_on(engine).await;
    let account = ledger.ensure_account("acme").await.expect("account");
    let other = ledger.ensure_account("other").await.expect("account");
    for id in [account.id, other.id] {
        ledger
            .grant(id, credits("100"), "trial")
            .await
            .expect("grant");
    }
    let started = jiff::Timestamp::now();
    // (live, requested, returned): charged 1 per live and 0.5 per stored company returned.
    for (live, requested, returned) in [(true, 3, 2), (true, 1, 1), (false, 4, 4), (false, 2, 0)] {
        let price = if live { 1000 } else { 500 };
        let hold = ledger
            .reserve(
                Tenant::live(account.id),
                Credits::from_millis(price * i64::from(requested)),
            )
            .await
            .expect("held");
        let charge = Charge {
            amount: Credits::from_millis(price * i64::from(returned)),
            key_id: Some(1),
            urls_requested: requested,
            urls_returned: returned,
            live,
            reference: None,
        };
        ledger.settle(hold, charge).await.expect("settled");
    }
    let other_hold = ledger
        .reserve(Tenant::live(other.id), credits("1"))
        .await
        .expect("held");
    ledger
        .settle(
            other_hold,
            Charge {
                amount: credits("1"),
                urls_requested: 1,
                urls_returned: 1,
                live: true,
                key_id: None,
                reference: None,
            },
        )
        .await
        .expect("settled");

    let first = ledger
        .entries(Tenant::live(account.id), None, 3)
        .await
        .expect("page 1");
    let rest = ledger
        .entries(Tenant::live(account.id), first.last().map(|e| e.id), 3)
        .await
        .expect("page 2");
    assert_eq!(
        (first.len(), rest.len()),
        (3, 2),
        "4 charges and a grant, 3 per page"
    );
    assert!(first.iter().chain(&rest).all(|e| e.account == account.id));
    assert!(
        first
            .windows(2)
            .chain(rest.windows(2))
            .all(|w| w[0].id > w[1].id)
    );
    assert!(first[2].id > rest[0].id);
    assert_eq!(rest[1].kind, EntryKind::Grant);

    let days = ledger
        .daily_usage(Tenant::live(account.id), started)
        .await
        .expect("usage");
    assert_eq!(days.len(), 1, "{days:?}");
    let today = days[0];
    assert_eq!(today.day, started.to_zoned(jiff::tz::TimeZone::UTC).date());
    assert_eq!(
        (
            today.live.requests,
            today.live.returned,
            today.live.unresolved,
            today.live.credits
        ),
        (2, 3, 1, credits("3"))
    );
    assert_eq!(
        (
            today.stored.requests,
            today.stored.returned,
            today.stored.unresolved,
            today.stored.credits
        ),
        (2, 4, 2, credits("2"))
    );
    let later = started
        .checked_add(jiff::SignedDuration::from_hours(1))
        .expect("time");
    assert!(
        ledger
            .daily_usage(Tenant::live(account.id), later)
            .await
            .expect("usage")
            .is_empty()
    );
}

/// Half the requests pay at once (a stored answer), half through a hold (a live one); 7.5 credits pay for
/// exactly 15 of 40 half-credit requests, whichever way each pays.
async fn immediate_charges_and_holds_together_never_overdraw(engine: &Engine) {
    let ledger = ledger_on(engine).await;
    let account = ledger.ensure_account("acme").await.expect("account");
    ledger
        .grant(account.id, credits("7.5"), "")
        .await
        .expect("grant");
    let half = credits("0.5");
    let charge = Charge {
        amount: half,
        urls_requested: 1,
        urls_returned: 1,
        ..Charge::default()
    };
    let tasks = (0..40).map(|n| {
        let (ledger, charge) = (Arc::clone(&ledger), charge.clone());
        tokio::spawn(async move {
            let paid = if n % 2 == 0 {
                ledger.charge(Tenant::live(account.id), half, charge).await
            } else {
                match ledger.reserve(Tenant::live(account.id), half).await {
                    Ok(hold) => ledger.settle(hold, charge).await,
                    Err(refused) => Err(refused),
                }
            };
            match paid {
                Ok(_) => Ok(true),
                Err(LedgerError::InsufficientCredits { .. }) => Ok(false),
                Err(other) => Err(other),
            }
        })
    });
    let paid = futures::future::join_all(tasks)
        .await
        .into_iter()
        .map(|o| o.expect("task").expect("no store error"))
        .filter(|&p| p)
        .count();
    assert_eq!(paid, 15);
    let entries = ledger
        .entries(Tenant::live(account.id), None, 100)
        .await
        .expect("rows");
    let balance = ledger
        .account(account.id)
        .await
        .expect("read")
        .expect("exists")
        .balance;
    assert_eq!(balance, Credits::ZERO);
    assert_eq!(
        entries.iter().map(|e| e.delta.millis()).sum::<i64>(),
        0,
        "the ledger sums to the balance"
    );

    // A charge checks what the request could have cost, not what it returned; a refusal changes nothing.
    ledger
        .grant(account.id, credits("1"), "")
        .await
        .expect("grant");
    let hold = ledger
        .reserve(Tenant::live(account.id), credits("0.6"))
        .await
        .expect("hold");
    match ledger
        .charge(Tenant::live(account.id), credits("0.5"), Charge::default())
        .await
    {
        Err(LedgerError::InsufficientCredits {
            available,
            required,
        }) => assert_eq!((available, required), (credits("0.4"), credits("0.5"))),
        other => panic!("a held credit was spent: {other:?}"),
    }
    assert!(matches!(
        ledger
            .charge(
                Tenant::live(account.id),
                credits("0.2"),
                Charge {
                    amount: credits("0.3"),
                    ..Charge::default()
                }
            )
            .await,
        Err(LedgerError::InvalidAmount(_))
    ));
    ledger.release(hold).await.expect("released");
    assert!(matches!(
        ledger
            .charge(
                Tenant::live(credit_ledger::AccountId(account.id.0 + 1_000)),
                credits("0.5"),
                Charge::default()
            )
            .await,
        Err(LedgerError::UnknownAccount(_))
    ));
    assert_eq!(
        ledger
            .charge(
                Tenant::live(account.id),
                credits("1"),
                Charge {
                    amount: credits("0.5"),
                    ..Charge::default()
                }
            )
            .await
            .expect("covered once the hold is gone"),
        credits("0.5")
    );
}

#[tokio::test]
async fn a_restarted_server_frees_its_own_holds_and_no_other() {
    let Some(database) = test_support::TestDatabase::create().await else {
        return;
    };
    let open = |server: &'static str| {
        let url = database.url.clone();
        async move {
            let pool = pg_pool::PgPool::connect(&url).await.expect("connects");
            PgLedger::with_pool(pool)
                .await
                .expect("migrates")
                .for_server(server)
        }
    };
    let (first, second) = (open("host-a:8080").await, open("host-b:8080").await);
    let account = first.ensure_account("acme").await.expect("account");
    first
        .grant(account.id, credits("3"), "")
        .await
        .expect("grant");
    let _lost = first
        .reserve(Tenant::live(account.id), credits("1"))
        .await
        .expect("hold");
    let kept = second
        .reserve(Tenant::live(account.id), credits("1"))
        .await
        .expect("hold");

    // host-a restarts: its hold goes, host-b's stays and can still be settled.
    let restarted = open("host-a:8080").await;
    assert_eq!(restarted.release_own().await.expect("released"), 1);
    assert_eq!(restarted.release_own().await.expect("nothing left"), 0);
    let after = second
        .settle(
            kept,
            Charge {
                amount: credits("1"),
                ..Charge::default()
            },
        )
        .await
        .expect("host-b's hold is still held");
    assert_eq!(after, credits("2"));
    let hold = restarted
        .reserve(Tenant::live(account.id), credits("2"))
        .await
        .expect("both credits are free again");
    restarted.release(hold).await.expect("released");
}

/// A job that stopped after it paid and runs its work again names the same reference: whether the second
/// payment is a settle or an immediate charge, nothing more is taken, its hold is freed and no row is added.
/// Another account may use the same reference; a charge without one is never matched.
async fn a_reference_is_charged_once(engine: &Engine) {
    let ledger = ledger_on(engine).await;
    let acme = ledger.ensure_account("acme").await.expect("account");
    let other = ledger.ensure_account("other").await.expect("account");
    for account in [acme.id, other.id] {
        ledger
            .grant(account, credits("10"), "")
            .await
            .expect("grant");
    }
    let charge = Charge {
        amount: credits("2"),
        urls_requested: 4,
        urls_returned: 2,
        reference: Some("job:1:lease:1".to_owned()),
        ..Charge::default()
    };
    let hold = ledger
        .reserve(Tenant::live(acme.id), credits("4"))
        .await
        .expect("hold");
    assert_eq!(
        ledger.settle(hold, charge.clone()).await.expect("settles"),
        credits("8")
    );
    let again = ledger
        .reserve(Tenant::live(acme.id), credits("4"))
        .await
        .expect("hold");
    assert_eq!(
        ledger.settle(again, charge.clone()).await.expect("settles"),
        credits("8")
    );
    assert_eq!(
        ledger
            .charge(Tenant::live(acme.id), credits("4"), charge.clone())
            .await
            .expect("charges"),
        credits("8")
    );
    // The holds of the repeats are gone: the whole balance can be held again.
    let all = ledger
        .reserve(Tenant::live(acme.id), credits("8"))
        .await
        .expect("nothing else held");
    ledger.release(all).await.expect("released");
    let rows = ledger
        .entries(Tenant::live(acme.id), None, 10)
        .await
        .expect("rows");
    let charges: Vec<_> = rows.iter().filter_map(|row| row.charge.as_ref()).collect();
    assert_eq!(charges.len(), 1, "{rows:?}");
    assert_eq!(charges[0].reference.as_deref(), Some("job:1:lease:1"));

    assert_eq!(
        ledger
            .charge(Tenant::live(other.id), credits("4"), charge.clone())
            .await
            .expect("charges"),
        credits("8"),
        "the same reference on another account is another payment"
    );
    let unnamed = Charge {
        reference: None,
        ..charge
    };
    for expected in ["6", "4"] {
        assert_eq!(
            ledger
                .charge(Tenant::live(acme.id), credits("4"), unnamed.clone())
                .await
                .expect("charges"),
            credits(expected)
        );
    }
}

/// The threshold's rule on every path that moves a balance: 20 concurrent charges (half through holds, half at
/// once) take the balance from 12 to 2 across a threshold of 10, and raise one alert; further charges raise
/// none; a grant that lifts the balance to the threshold ends it, and the next fall raises the second; a
/// threshold set above the balance raises one at once, and removing it ends the account's being low.
async fn a_low_balance_alert_is_raised_once_per_crossing(engine: &Engine) {
    let ledger = ledger_on(engine).await;
    let account = ledger.ensure_account("acme").await.expect("account");
    let other = ledger.ensure_account("other").await.expect("account");
    ledger
        .grant(account.id, credits("12"), "")
        .await
        .expect("grant");
    ledger
        .grant(other.id, credits("1"), "")
        .await
        .expect("grant");
    assert_eq!(account.low_balance_threshold, None);
    let set = ledger
        .set_low_balance_threshold(Tenant::live(account.id), Some(credits("10")))
        .await
        .expect("set");
    assert_eq!(set.low_balance_threshold, Some(credits("10")));
    assert!(
        ledger.balance_alerts(10).await.expect("alerts").is_empty(),
        "12 is not below 10; no threshold on the other account"
    );
    let half = credits("0.5");
    let charge = Charge {
        amount: half,
        urls_requested: 1,
        urls_returned: 1,
        ..Charge::default()
    };
    let tasks = (0..20).map(|n| {
        let (ledger, charge) = (Arc::clone(&ledger), charge.clone());
        tokio::spawn(async move {
            if n % 2 == 0 {
                ledger.charge(Tenant::live(account.id), half, charge).await
            } else {
                let hold = ledger.reserve(Tenant::live(account.id), half).await?;
                ledger.settle(hold, charge).await
            }
        })
    });
    for paid in futures::future::join_all(tasks).await {
        paid.expect("task").expect("paid");
    }
    let alerts = ledger.balance_alerts(10).await.expect("alerts");
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    let first = &alerts[0];
    assert_eq!(
        (first.account, first.crossing, first.threshold),
        (account.id, 1, credits("10"))
    );
    assert_eq!(
        first.balance,
        credits("9.5"),
        "the balance of the charge that crossed"
    );
    assert_eq!(
        first.event_id(),
        format!("evt_balance_low_{}_1", account.id)
    );
    assert!(
        first.at <= jiff::Timestamp::now()
            && first.at > jiff::Timestamp::now() - jiff::SignedDuration::from_mins(1)
    );
    // Not announced yet: still listed, and nothing more raised by another charge.
    ledger
        .charge(Tenant::live(account.id), half, charge.clone())
        .await
        .expect("paid");
    assert_eq!(ledger.balance_alerts(10).await.expect("alerts"), alerts);
    ledger
        .balance_alert_announced(first)
        .await
        .expect("recorded");
    assert!(ledger.balance_alerts(10).await.expect("alerts").is_empty());

    // A grant to 1.5 + 8.5 = 10 ends it (10 is not below 10); the next charge is the second crossing.
    ledger
        .grant(account.id, credits("8.5"), "")
        .await
        .expect("grant");
    assert!(ledger.balance_alerts(10).await.expect("alerts").is_empty());
    ledger
        .charge(Tenant::live(account.id), half, charge.clone())
        .await
        .expect("paid");
    let second = ledger.balance_alerts(10).await.expect("alerts");
    assert_eq!(second.iter().map(|a| a.crossing).collect::<Vec<_>>(), [2]);
    ledger
        .balance_alert_announced(&second[0])
        .await
        .expect("recorded");

    // Removing the threshold ends it; setting one above the balance (9.5) raises the third at once.
    ledger
        .set_low_balance_threshold(Tenant::live(account.id), None)
        .await
        .expect("removed");
    let third = ledger
        .set_low_balance_threshold(Tenant::live(account.id), Some(credits("20")))
        .await
        .expect("set");
    assert_eq!(third.low_balance_threshold, Some(credits("20")));
    let alerts = ledger.balance_alerts(10).await.expect("alerts");
    assert_eq!(
        alerts
            .iter()
            .map(|a| (a.crossing, a.balance, a.threshold))
            .collect::<Vec<_>>(),
        [(3, credits("9.5"), credits("20"))]
    );
    assert!(matches!(
        ledger
            .set_low_balance_threshold(Tenant::live(account.id), Some(Credits::from_millis(-1)))
            .await,
        Err(LedgerError::InvalidAmount(_))
    ));
    assert!(matches!(
        ledger
            .set_low_balance_threshold(Tenant::live(credit_ledger::AccountId(9_999)), None)
            .await,
        Err(LedgerError::UnknownAccount(_))
    ));
}

/// Issue 40: an account's own quotas are kept on its row and replace the deployment's one by one.
async fn an_accounts_own_quotas_replace_the_deployments(engine: &Engine) {
    let ledger = ledger_on(engine).await;
    let account = ledger.ensure_account("quota-co").await.expect("made");
    let deployment = credit_ledger::Quotas::default();
    assert_eq!(
        credit_ledger::quotas_of(ledger.as_ref(), account.id, &deployment)
            .await
            .expect("read"),
        deployment
    );
    let own = credit_ledger::QuotaOverrides {
        open_jobs: Some(1),
        keys: Some(0),
        ..credit_ledger::QuotaOverrides::default()
    };
    let updated = ledger.set_quotas(account.id, own).await.expect("set");
    assert_eq!(updated.quotas, own);
    let quotas = credit_ledger::quotas_of(
        &credit_ledger::WithTestMode::new(Arc::clone(&ledger)),
        account.id,
        &deployment,
    )
    .await
    .expect("read");
    assert_eq!(
        (quotas.open_jobs, quotas.keys, quotas.watches),
        (1, 0, deployment.watches)
    );
    assert_eq!(
        ledger
            .set_quotas(account.id, credit_ledger::QuotaOverrides::default())
            .await
            .expect("cleared")
            .quotas,
        credit_ledger::QuotaOverrides::default()
    );
    assert!(matches!(
        ledger
            .set_quotas(company_model::AccountId(987_654), own)
            .await,
        Err(LedgerError::UnknownAccount(_))
    ));
}

/// Issue 41: a test-mode tenant is answered by `WithTestMode` and spends nothing; the engine under it keeps live
/// accounts only and refuses a test tenant outright, so test mode can never reach a real balance.
async fn a_test_tenant_spends_nothing_and_never_reaches_the_engine(engine: &Engine) {
    let ledger = ledger_on(engine).await;
    let account = ledger.ensure_account("sandbox-co").await.expect("made");
    ledger
        .grant(account.id, Credits::parse("5").expect("credits"), "start")
        .await
        .expect("granted");
    let test = Tenant::test(account.id);
    assert!(matches!(
        ledger.reserve(test, Credits::parse("1").expect("credits")).await,
        Err(LedgerError::NotLive(tenant)) if tenant == test
    ));

    let with_test_mode = credit_ledger::WithTestMode::new(Arc::clone(&ledger));
    let hold = with_test_mode
        .reserve(test, Credits::parse("50").expect("credits"))
        .await
        .expect("held");
    let charge = Charge {
        amount: credit_ledger::billed(test, Credits::parse("50").expect("credits")),
        ..Charge::default()
    };
    assert_eq!(charge.amount, Credits::ZERO);
    assert_eq!(
        with_test_mode.settle(hold, charge).await.expect("settled"),
        credit_ledger::TEST_BALANCE
    );
    let seen = credit_ledger::account_of(&with_test_mode, test)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(
        (seen.id, seen.name.as_str(), seen.balance),
        (account.id, "sandbox-co (test)", credit_ledger::TEST_BALANCE)
    );
    assert!(
        with_test_mode
            .entries(test, None, 10)
            .await
            .expect("rows")
            .is_empty()
    );

    let live = ledger
        .account(account.id)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(
        live.balance,
        Credits::parse("5").expect("credits"),
        "the live balance never moved"
    );
    assert_eq!(
        ledger
            .entries(Tenant::live(account.id), None, 10)
            .await
            .expect("rows")
            .len(),
        1,
        "only the grant"
    );
}

test_support::engine_tests! {
    a_test_tenant_spends_nothing_and_never_reaches_the_engine,
    an_accounts_own_quotas_replace_the_deployments,
    reserve_settle_and_the_ledger_rows,
    a_charge_cannot_exceed_its_hold,
    concurrent_holds_never_overdraw,
    entries_page_by_id_and_usage_adds_up_per_day,
    immediate_charges_and_holds_together_never_overdraw(flavor = "multi_thread", worker_threads = 4),
    a_reference_is_charged_once,
    a_low_balance_alert_is_raised_once_per_crossing(flavor = "multi_thread", worker_threads = 4),
}
