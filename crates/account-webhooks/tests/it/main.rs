//! The accounts' webhooks over real parts: a SQLite file for the store and the ledger, webhook receivers on
//! loopback, and a clock moved by hand.

use std::sync::Arc;
use std::time::Duration;

use account_webhooks::{Clock, DeliveriesDone, ManualClock, WebhookSettings, Webhooks};
use company_model::{AccountId, Tenant};
use credit_ledger::{Ledger, SqliteLedger};
use test_support::Receiver;
use watch_store::SqliteWatchStore;

struct World {
    _dir: tempfile::TempDir,
    tenant: Tenant,
    clock: Arc<ManualClock>,
    webhooks: Webhooks,
}

/// Webhooks that may send to loopback (the receivers), on a fresh SQLite file with one account.
async fn world() -> World {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("c.db");
    let ledger = Arc::new(SqliteLedger::open(&db).await.expect("ledger"));
    let account = ledger.ensure_account("acme").await.expect("account").id;
    let clock = Arc::new(ManualClock::new(
        jiff::Timestamp::now()
            .round(jiff::Unit::Millisecond)
            .expect("rounds"),
    ));
    let webhooks = Webhooks::new(
        Arc::new(SqliteWatchStore::open(&db).await.expect("watch store")),
        ledger,
        WebhookSettings {
            allow_private: true,
            ..WebhookSettings::default()
        },
        clock.clone(),
    )
    .expect("webhooks");
    World {
        _dir: dir,
        tenant: Tenant::live(account),
        clock,
        webhooks,
    }
}

impl World {
    /// Moves the clock on by `wait`, then sends what is due.
    async fn after(&self, wait: Duration) -> DeliveriesDone {
        self.clock.advance(wait);
        self.webhooks.deliver_once().await.expect("delivers")
    }

    fn clock_seconds(&self) -> i64 {
        self.clock.now().as_second()
    }
}

/// An endpoint request for `events` at the receiver on `port`.
fn endpoint_request(port: u16, events: &[&str]) -> api_contract::EndpointRequest {
    let body = serde_json::json!({
        "url": format!("http://127.0.0.1:{port}/hooks/account"),
        "events": events,
    });
    api_contract::EndpointRequest::from_json(body.to_string().as_bytes(), true).expect("valid")
}

#[tokio::test]
async fn account_events_reach_the_endpoints_that_want_them_signed_and_once() {
    let world = world().await;
    let (jobs, everything) = (Receiver::start().await, Receiver::start().await);
    let for_jobs = world
        .webhooks
        .create_endpoint(
            world.tenant,
            &endpoint_request(jobs.port, &["job.finished"]),
        )
        .await
        .expect("registered");
    world
        .webhooks
        .create_endpoint(
            world.tenant,
            &endpoint_request(everything.port, &["job.finished", "account.balance_low"]),
        )
        .await
        .expect("registered");
    let secret = world.webhooks.secret(world.tenant).await.expect("secret");

    // job.finished goes to both; the same job finishing announced again (another server) goes nowhere again.
    let data = serde_json::json!({ "job_id": "job_1", "status": "done" });
    let announce = |kind, id: &str| {
        world
            .webhooks
            .announce(world.tenant, kind, id.to_owned(), data.clone())
    };
    assert_eq!(
        announce(
            api_contract::AccountEventType::JobFinished,
            "evt_job_1_done"
        )
        .await
        .expect("queued"),
        2
    );
    assert_eq!(
        announce(
            api_contract::AccountEventType::JobFinished,
            "evt_job_1_done"
        )
        .await
        .expect("queued"),
        0
    );
    assert_eq!(
        announce(
            api_contract::AccountEventType::JobPaused,
            "evt_job_1_paused"
        )
        .await
        .expect("queued"),
        0,
        "no endpoint wants job.paused"
    );
    let done = world.after(Duration::ZERO).await;
    assert_eq!((done.delivered, done.failed), (2, 0));
    for receiver in [&jobs, &everything] {
        let received = receiver.received();
        assert_eq!(received.len(), 1);
        let event: serde_json::Value = serde_json::from_str(&received[0].body).expect("JSON body");
        assert_eq!(event["id"], "evt_job_1_done");
        assert_eq!(event["type"], "job.finished");
        assert_eq!(event["data"], data);
        assert_eq!(
            received[0].header("company-data-event-id"),
            Some("evt_job_1_done")
        );
        let signature = received[0]
            .header("company-data-signature")
            .expect("signed");
        assert!(account_webhooks::signature::verify(
            &secret,
            signature,
            received[0].body.as_bytes(),
            world.clock_seconds(),
            300
        ));
    }

    // A receiver that fails three times, then answers: the event arrives again with the same id each time,
    // and is delivered once (not again after its 2xx).
    jobs.answer_with(503);
    let ping = world
        .webhooks
        .ping(world.tenant, for_jobs.id)
        .await
        .expect("queued")
        .expect("the endpoint is the account's");
    assert_eq!(world.after(Duration::ZERO).await.failed, 1);
    assert_eq!(world.after(Duration::from_secs(30)).await.failed, 1);
    assert_eq!(world.after(Duration::from_mins(1)).await.failed, 1);
    jobs.answer_with(200);
    assert_eq!(world.after(Duration::from_mins(2)).await.delivered, 1);
    assert_eq!(
        world.after(Duration::from_hours(2)).await,
        DeliveriesDone::default()
    );
    let pings: Vec<_> = jobs
        .received()
        .into_iter()
        .filter(|r| r.body.contains(r#""type":"ping""#))
        .collect();
    assert_eq!(pings.len(), 4, "three failures and the success");
    assert!(
        pings
            .iter()
            .all(|r| r.header("company-data-event-id") == Some(ping.as_str()))
    );
    assert!(
        everything.received().len() == 1,
        "a ping goes to the endpoint named only"
    );

    // Its deliveries, newest first, with their status.
    let deliveries = world
        .webhooks
        .endpoint_events(world.tenant, Some(for_jobs.id), 10)
        .await
        .expect("listed");
    assert_eq!(deliveries.len(), 2);
    assert_eq!(deliveries[0].event_id, ping);
    assert_eq!(
        (deliveries[0].attempts, deliveries[0].last_status),
        (4, Some(200))
    );
    assert!(deliveries[0].delivered_at.is_some());

    // Another account cannot ping or delete it, nor can the same account's test mode; the bound on endpoints
    // holds.
    let sandbox = Tenant::test(world.tenant.account);
    assert_eq!(
        world
            .webhooks
            .ping(sandbox, for_jobs.id)
            .await
            .expect("answers"),
        None
    );
    assert!(
        world
            .webhooks
            .endpoints(sandbox)
            .await
            .expect("answers")
            .is_empty()
    );
    let other = Tenant::live(AccountId(world.tenant.account.0 + 1));
    assert_eq!(
        world
            .webhooks
            .ping(other, for_jobs.id)
            .await
            .expect("answers"),
        None
    );
    assert!(
        !world
            .webhooks
            .delete_endpoint(other, for_jobs.id)
            .await
            .expect("answers")
    );
    for _ in 2..api_contract::MAX_ENDPOINTS {
        world
            .webhooks
            .create_endpoint(world.tenant, &endpoint_request(jobs.port, &["job.paused"]))
            .await
            .expect("under the bound");
    }
    let over = world
        .webhooks
        .create_endpoint(world.tenant, &endpoint_request(jobs.port, &["job.paused"]))
        .await;
    assert!(
        matches!(
            over,
            Err(account_webhooks::WebhookError::TooManyEndpoints { .. })
        ),
        "{over:?}"
    );
}
