//! Section 8, several servers on one PostgreSQL database: the stored path with one and three servers beside
//! SQLite with one (load generator and servers pinned to separate cores), database round trips per stored and
//! per live request (counted by a proxy that reads the wire protocol), and the 200-URL stored batch.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use e2e_harness::{Service, TestOrigin};
use serde_json::{Value, json};
use test_support::TestDatabase;

use crate::{
    Error, GOOGLE, Load, Pinning, Plan, load_command, load_json, load_report, median, page_urls,
    quantile, service_options, spread, timed,
};

/// Which CPUs the load generator and the servers get: the first core for oha, the rest for the servers, when
/// there are at least two.
struct Cores {
    load: Option<String>,
    servers: Option<String>,
}

fn cores() -> Cores {
    let count = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if count < 2 {
        return Cores {
            load: None,
            servers: None,
        };
    }
    Cores {
        load: Some("0".to_owned()),
        servers: Some(format!("1-{}", count - 1)),
    }
}

/// Moves every thread of `pid` onto `cpus`.
fn pin(pid: u32, cpus: Option<&str>) -> Result<(), Error> {
    if let Some(cpus) = cpus {
        let status = std::process::Command::new("taskset")
            .args(["-a", "-p", "-c", cpus, &pid.to_string()])
            .stdout(std::process::Stdio::null())
            .status()?;
        if !status.success() {
            return Err(format!("taskset could not pin {pid} to {cpus}").into());
        }
    }
    Ok(())
}

/// A server of the release build on `db` (a PostgreSQL URL, or `None` for its own SQLite file).
fn server(release: &Path, db: Option<&str>, origin: &TestOrigin) -> Service {
    let mut options = service_options(release, Some(&origin.base));
    options.database_url = db.map(str::to_owned);
    Service::start(options)
}

/// Fetches Google's page once, so that the stored path has its snapshot.
async fn warm(service: &Service, key: &str) -> Result<(), Error> {
    timed(service, key, &json!({ "liUrls": [GOOGLE] }), 1).await?;
    Ok(())
}

/// Full load, then half of it, from oha pinned to `cores.load`, against every server in `servers` at once (one oha
/// each, the 32 connections shared out): summed requests/s, the worst p50 and p99.
fn stored_load(servers: &[&Service], key: &str, plan: Plan, cores: &Cores) -> Result<Value, Error> {
    let body = json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 }).to_string();
    let connections = u32::try_from(32 / servers.len().max(1)).unwrap_or(32);
    let pinning = Pinning {
        cpus: cores.load.clone(),
        connections,
    };
    let run = |rate: Option<f64>| -> Result<Load, Error> {
        let children = servers
            .iter()
            .map(|service| {
                load_command(
                    &format!("{}/v1/network/company-data", service.base),
                    key,
                    &body,
                    plan.load_seconds,
                    rate.map(|r| r / servers.len() as f64),
                    &pinning,
                )
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut loads = Vec::new();
        for child in children {
            loads.push(load_report(&child.wait_with_output()?)?);
        }
        Ok(Load {
            rps: loads.iter().map(|l| l.rps).sum(),
            p50_ms: loads.iter().map(|l| l.p50_ms).fold(0.0, f64::max),
            p99_ms: loads.iter().map(|l| l.p99_ms).fold(0.0, f64::max),
        })
    };
    let full: Vec<Load> = (0..plan.runs)
        .map(|_| run(None))
        .collect::<Result<_, _>>()?;
    let full = load_json(&full);
    let half_rate = median(&full["requests_per_second"]) / 2.0;
    let half: Vec<Load> = (0..plan.runs)
        .map(|_| run(Some(half_rate)))
        .collect::<Result<_, _>>()?;
    Ok(json!({ "full": full, "half": { "rate": half_rate, "figures": load_json(&half) } }))
}

/// A TCP proxy in front of PostgreSQL that counts its clients' round trips: each extended-protocol `Sync` and each
/// simple `Query` is one request the client waits on.
struct CountingProxy {
    port: u16,
    round_trips: Arc<AtomicU64>,
}

impl CountingProxy {
    async fn start(upstream: String) -> Result<Self, Error> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let round_trips = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&round_trips);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (upstream, counter) = (upstream.clone(), Arc::clone(&counter));
                tokio::spawn(async move {
                    if let Ok(server) = tokio::net::TcpStream::connect(&upstream).await {
                        let _ = relay(client, server, &counter).await;
                    }
                });
            }
        });
        Ok(Self { port, round_trips })
    }

    fn count(&self) -> u64 {
        self.round_trips.load(Ordering::SeqCst)
    }
}

/// Copies both ways; reads the client's messages to count `Sync` (`S`) and `Query` (`Q`). Each message is passed
/// on in one write, with Nagle's algorithm off: its kind, length and body written apart waited on the server's
/// delayed acknowledgement (40 ms a message, most of this section's time).
async fn relay(
    client: tokio::net::TcpStream,
    server: tokio::net::TcpStream,
    counter: &AtomicU64,
) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_server, mut to_server) = server.into_split();
    let back = tokio::spawn(async move { tokio::io::copy(&mut from_server, &mut to_client).await });
    // Untyped messages first: SSL or GSS requests, then the startup message (protocol 3.0).
    loop {
        let length = from_client.read_u32().await?;
        let mut message = length.to_be_bytes().to_vec();
        message.resize(usize::try_from(length).unwrap_or(0).max(4), 0);
        from_client.read_exact(&mut message[4..]).await?;
        to_server.write_all(&message).await?;
        if message.get(4..8) == Some(&196_608u32.to_be_bytes()[..]) {
            break;
        }
    }
    loop {
        let kind = from_client.read_u8().await?;
        let length = from_client.read_u32().await?;
        let mut message = vec![kind];
        message.extend_from_slice(&length.to_be_bytes());
        message.resize(1 + usize::try_from(length).unwrap_or(0).max(4), 0);
        from_client.read_exact(&mut message[5..]).await?;
        if matches!(kind, b'S' | b'Q') {
            counter.fetch_add(1, Ordering::SeqCst);
        }
        to_server.write_all(&message).await?;
        if kind == b'X' {
            break;
        }
    }
    back.abort();
    Ok(())
}

/// The database's URL with its host and port replaced by the proxy's.
fn through(url: &str, port: u16) -> Result<String, Error> {
    let mut url = reqwest::Url::parse(url)?;
    url.set_host(Some("127.0.0.1"))?;
    url.set_port(Some(port))
        .map_err(|()| "the database URL takes no port")?;
    Ok(url.to_string())
}

/// Requests counted for the stored and the live figure.
const STORED: u64 = 200;
const LIVE: usize = 20;

/// Round trips per request: stored (one warm snapshot) and live (a new page each), through the counting proxy.
async fn round_trips(release: &Path, origin: &TestOrigin) -> Result<Value, Error> {
    let database = TestDatabase::create()
        .await
        .ok_or("the PostgreSQL section needs a server (`tests/ci bench` starts one)")?;
    let upstream = reqwest::Url::parse(&database.url)?;
    let proxy = CountingProxy::start(format!(
        "{}:{}",
        upstream.host_str().unwrap_or("127.0.0.1"),
        upstream.port().unwrap_or(5432)
    ))
    .await?;
    let service = server(release, Some(&through(&database.url, proxy.port)?), origin);
    let key = service.key("bench", "100000");
    warm(&service, &key).await?;
    let stored_body = json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 });
    timed(&service, &key, &stored_body, 1).await?; // the key's first check, outside the count

    let before = proxy.count();
    for _ in 0..STORED {
        timed(&service, &key, &stored_body, 1).await?;
    }
    let stored = (proxy.count() - before) as f64 / STORED as f64;

    let before = proxy.count();
    for url in page_urls(10_000, LIVE) {
        timed(&service, &key, &json!({ "liUrls": [url] }), 1).await?;
    }
    let live = (proxy.count() - before) as f64 / LIVE as f64;
    Ok(json!({ "stored": stored, "live": live, "stored_requests": STORED, "live_requests": LIVE }))
}

/// `--round-trips`: the round-trip counts alone.
pub(crate) async fn round_trips_alone(release: &Path) -> Result<Value, Error> {
    round_trips(release, &TestOrigin::start().await).await
}

/// The 200-URL stored batch on one server: p50 and p99 per run.
async fn stored_batch(service: &Service, key: &str, plan: Plan) -> Result<Value, Error> {
    let urls = page_urls(20_000, 200);
    timed(service, key, &json!({ "liUrls": urls }), 200).await?;
    let body = json!({ "liUrls": urls, "maxAgeHours": 24 });
    let (mut p50s, mut p99s) = (Vec::new(), Vec::new());
    for _ in 0..plan.runs {
        let mut times = Vec::new();
        for _ in 0..plan.batch_requests {
            times.push(timed(service, key, &body, 200).await?);
        }
        p50s.push(quantile(&times, 0.5));
        p99s.push(quantile(&times, 0.99));
    }
    Ok(json!({ "p50_ms": spread(&p50s), "p99_ms": spread(&p99s) }))
}

/// Section 8.
pub(crate) async fn postgres(plan: Plan, release: &Path) -> Result<Value, Error> {
    let cores = cores();
    let origin = TestOrigin::start().await;

    eprintln!("8: SQLite, one server, pinned");
    let sqlite = server(release, None, &origin);
    pin(sqlite.pid(), cores.servers.as_deref())?;
    let key = sqlite.key("bench", "100000000");
    warm(&sqlite, &key).await?;
    let sqlite_load = stored_load(&[&sqlite], &key, plan, &cores)?;
    drop(sqlite);

    eprintln!("8: PostgreSQL, one server, pinned");
    let database = TestDatabase::create()
        .await
        .ok_or("the PostgreSQL section needs a server (`tests/ci bench` starts one)")?;
    let first = server(release, Some(&database.url), &origin);
    pin(first.pid(), cores.servers.as_deref())?;
    let key = first.key("bench", "100000000");
    warm(&first, &key).await?;
    let one = stored_load(&[&first], &key, plan, &cores)?;
    let batch = stored_batch(&first, &key, plan).await?;

    eprintln!("8: PostgreSQL, three servers");
    let others = [
        server(release, Some(&database.url), &origin),
        server(release, Some(&database.url), &origin),
    ];
    for service in &others {
        pin(service.pid(), cores.servers.as_deref())?;
    }
    let three = stored_load(&[&first, &others[0], &others[1]], &key, plan, &cores)?;
    drop(others);
    drop(first);

    eprintln!("8: round trips");
    let trips = round_trips(release, &origin).await?;
    Ok(json!({
        "pinning": { "load": cores.load, "servers": cores.servers },
        "sqlite_one": sqlite_load,
        "postgres_one": one,
        "postgres_three": three,
        "postgres_stored_batch": batch,
        "round_trips": trips,
    }))
}
