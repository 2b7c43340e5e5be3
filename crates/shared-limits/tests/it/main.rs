//! The limits on both backends: in memory, and in a real PostgreSQL database shared by three stores on
//! separate pools, as three servers share it.

use std::sync::Arc;
use std::time::Duration;

use shared_limits::{
    Admission, Cap, LimitStore, MemoryLimits, Pacer, PgLimits, Rate, RateGate, Taken,
};
use test_support::{Engine, TestDatabase};
use tokio::time::Instant;

/// Held by the tests that measure time, so that they do not share the machine's cores with each other.
static TIMING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn pg_store(database: &TestDatabase) -> Arc<dyn LimitStore> {
    let pool = pg_pool::PgPool::connect(&database.url)
        .await
        .expect("connects");
    Arc::new(PgLimits::with_pool(pool).await.expect("migrates"))
}

/// Three stores counting together: three on the PostgreSQL database, or the one memory store three times.
async fn three_stores(engine: &Engine) -> Vec<Arc<dyn LimitStore>> {
    match engine {
        Engine::Sqlite(_) => vec![Arc::new(MemoryLimits::new()) as Arc<dyn LimitStore>; 3],
        Engine::Postgres(database) => vec![
            pg_store(database).await,
            pg_store(database).await,
            pg_store(database).await,
        ],
    }
}

async fn a_bucket_gives_its_burst_then_asks_to_wait_and_takes_back_what_was_unused(
    engine: &Engine,
) {
    let stores = three_stores(engine).await;
    let rate = Rate {
        per_second: 2.0,
        burst: 4,
    };
    assert_eq!(
        stores[0]
            .take("key:1", rate, 3)
            .await
            .expect("take")
            .tokens(),
        3
    );
    assert_eq!(
        stores[1]
            .take("key:1", rate, 3)
            .await
            .expect("take")
            .tokens(),
        1,
        "what the first took counts on the second"
    );
    match stores[2].take("key:1", rate, 1).await.expect("take") {
        Taken::Wait(wait) => assert!(
            wait > Duration::from_millis(400) && wait <= Duration::from_millis(500),
            "{wait:?}"
        ),
        granted @ Taken::Granted { .. } => panic!("over the burst: {granted:?}"),
    }
    assert_eq!(
        stores[2]
            .take("key:2", rate, 1)
            .await
            .expect("take")
            .tokens(),
        1,
        "names are counted apart"
    );
    stores[0]
        .give_back("key:1", rate, 2)
        .await
        .expect("give back");
    assert_eq!(
        stores[2]
            .take("key:1", rate, 5)
            .await
            .expect("take")
            .tokens(),
        2
    );
}

async fn a_rate_is_a_total_for_three_servers_within_ten_percent(engine: &Engine) {
    let _alone = TIMING.lock().await;
    let rate = Rate {
        per_second: 200.0,
        burst: 20,
    };
    let gates: Vec<Arc<RateGate>> = three_stores(engine)
        .await
        .into_iter()
        .map(|store| Arc::new(RateGate::new(store, rate).expect("a rate")))
        .collect();
    let run_for = Duration::from_millis(1500);
    let started = Instant::now();
    // Six clients per server, each asking as fast as it is answered.
    let clients = (0..18).map(|n| {
        let gate = Arc::clone(&gates[n % 3]);
        tokio::spawn(async move {
            let mut admitted = 0u32;
            while started.elapsed() < run_for {
                match gate.check("key:9").await {
                    Ok(_) => admitted += 1,
                    Err(refused) => {
                        // A client's pause after a refusal, as long as it was told (5 ms at most).
                        tokio::time::sleep(refused.retry_after.min(Duration::from_millis(5))).await;
                    }
                }
            }
            admitted
        })
    });
    let admitted: u32 = futures::future::join_all(clients)
        .await
        .into_iter()
        .map(|c| c.expect("client"))
        .sum();
    let expected = f64::from(rate.burst) + rate.per_second * run_for.as_secs_f64();
    let ratio = f64::from(admitted) / expected;
    assert!(
        (0.9..=1.02).contains(&ratio),
        "{admitted} admitted, {expected} allowed (lease {})",
        gates[0].lease_size()
    );
}

async fn paced_starts_on_three_servers_are_spaced_as_one(engine: &Engine) {
    let _alone = TIMING.lock().await;
    let stores = three_stores(engine).await;
    let interval = Duration::from_millis(50);
    // Opens each pool's connections first: a start is late by its round trip, and a new connection's is long.
    let warm_up = stores
        .iter()
        .flat_map(|store| (0..5).map(move |_| store.next_start("warm-up", interval)));
    for booked in futures::future::join_all(warm_up).await {
        booked.expect("asked");
    }
    let pacers: Vec<Arc<Pacer>> = stores
        .iter()
        .map(|store| Arc::new(Pacer::new(Arc::clone(store), "origin", 20.0).expect("a pace")))
        .collect();
    let starts = (0..12).map(|n| {
        let pacer = Arc::clone(&pacers[n % 3]);
        tokio::spawn(async move {
            pacer.wait().await;
            Instant::now()
        })
    });
    let mut starts: Vec<Instant> = futures::future::join_all(starts)
        .await
        .into_iter()
        .map(|s| s.expect("start"))
        .collect();
    starts.sort();
    // A start is late by its round trip and by as much as its sleep overshoots, so one gap can shrink by that
    // much (and the next grow); over every four gaps the pace shows whole.
    for window in starts.windows(5) {
        let span = window[4] - window[0];
        assert!(span + Duration::from_millis(25) >= interval * 4, "{span:?}");
    }
    let span = starts[11] - starts[0];
    assert!(
        span + Duration::from_millis(25) >= interval * 11,
        "{span:?}"
    );
}

async fn a_pace_deferred_on_one_server_waits_on_every_server(engine: &Engine) {
    let stores = three_stores(engine).await;
    let interval = Duration::from_millis(10);
    assert!(
        stores[0]
            .next_start("route:a", interval)
            .await
            .expect("booked")
            <= interval,
        "an idle pace starts now"
    );
    stores[0]
        .defer("route:a", Duration::from_mins(1))
        .await
        .expect("deferred");
    // A shorter deferral does not bring it forward.
    stores[1]
        .defer("route:a", Duration::from_secs(1))
        .await
        .expect("deferred");
    let wait = stores[2]
        .next_start("route:a", interval)
        .await
        .expect("booked");
    assert!(
        wait > Duration::from_secs(58) && wait <= Duration::from_mins(1),
        "{wait:?}"
    );
    let other = stores[1]
        .next_start("route:b", interval)
        .await
        .expect("booked");
    assert!(other <= interval, "names apart: {other:?}");
}

async fn a_cap_counts_what_every_server_admitted_until_it_leaves_or_lapses(engine: &Engine) {
    let _alone = TIMING.lock().await;
    let stores = three_stores(engine).await;
    let caps: Vec<Cap> = stores.iter().map(|s| Cap::new(Arc::clone(s), 10)).collect();
    let long = Duration::from_secs(30);
    let first = caps[0].admit("live:1", 6, long).await.expect("room");
    let refused = caps[1]
        .admit("live:1", 5, long)
        .await
        .expect_err("6 + 5 > 10");
    assert_eq!((refused.in_flight, refused.most), (6, 10));
    assert!(
        refused.retry_after > Duration::from_secs(25) && refused.retry_after <= long,
        "{refused:?}"
    );
    let second = caps[2].admit("live:1", 4, long).await.expect("6 + 4");
    assert!(
        caps[1].admit("live:2", 10, long).await.is_ok(),
        "names apart"
    );
    first.leave().await;
    second.leave().await;
    let alone = caps[1]
        .admit("live:1", 25, Duration::from_millis(300))
        .await
        .expect("larger than the cap, admitted alone");
    assert!(caps[0].admit("live:1", 1, long).await.is_err());
    std::mem::forget(alone); // as a server that died would: nothing leaves
    // Its 300 ms lapse, and the admission stops counting.
    let _full = test_support::eventually(
        Duration::from_secs(5),
        "the lapsed admission still counts",
        || async { caps[0].admit("live:1", 10, long).await.ok() },
    )
    .await;
    match stores[2].admit("live:1", 1, 10, long).await.expect("asked") {
        Admission::AtCap { in_flight, .. } => assert_eq!(in_flight, 10),
        Admission::Admitted(ticket) => panic!("over the cap: {ticket:?}"),
    }
}

test_support::engine_tests! {
    a_bucket_gives_its_burst_then_asks_to_wait_and_takes_back_what_was_unused,
    a_rate_is_a_total_for_three_servers_within_ten_percent(flavor = "multi_thread", worker_threads = 6),
    paced_starts_on_three_servers_are_spaced_as_one,
    a_pace_deferred_on_one_server_waits_on_every_server,
    a_cap_counts_what_every_server_admitted_until_it_leaves_or_lapses,
}
