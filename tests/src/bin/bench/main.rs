//! `just bench`: the service measured side by side with this machine's limit and with typical peers, in one run.
//! Writes `docs/benchmarks.md` and `target/bench.json` (`--out`, `--json` to change; `--quick` for a run under a
//! minute that only proves the harness works; `--profile-live N` for N live batches alone, to profile;
//! `--round-trips` for the database round trips of section 8 alone, `--jobs` for section 9 alone).
//!
//! 1. Stored path: single-URL requests with `maxAgeHours: 24` on a warm snapshot, driven by a load generator over
//!    loopback (oha, or with `--quick` the benchmark's own client, [`load`]),
//!    versus a bare hyper server returning the same response bytes; then the service at half its throughput.
//! 2. A 200-URL stored batch: request time p50/p99.
//! 3. A 200-URL live batch against a loopback origin answering each page after 250–350 ms: total / slowest page.
//! 4. Parsing, per core, over every captured page: `parse_page`, html5ever's tokenizer alone, and two Python peers.
//! 5. Auth: stored-path throughput of the API library in this process with the service's key verification vs.
//!    with an authenticator that accepts the key unchecked (no build of the service can skip the check).
//! 6. Peak RSS of the server during 1 and 3.
//! 7. Cost growth: one request of 1, 10, 50, 200 URLs, stored and live.
//! 8. PostgreSQL: the stored path with one and three servers on one database beside SQLite with one (oha and the
//!    servers pinned to separate cores with `taskset`), database round trips per stored and live request, and the
//!    200-URL stored batch ([`postgres`]).
//! 9. Bulk jobs: a job's pages per second against `--origin-rate`, and the stored path at a fixed rate alone and
//!    beside a running job ([`jobs`]).
//! 10. Auth under a flood: a legitimate key's stored-path p50/p99 alone and while 64 clients send made-up keys
//!     ([`flood`]); `--flood` runs it alone and replaces its section of `docs/benchmarks.md`.
//! 11. A large job's download: the server's resident set while it streams 100,000 rows ([`jobs`]).
//! 12. Live fetching against a hostile origin through real forward proxies, the fetcher before the route pool
//!     beside today's, then today's with a proxy banned and the budget halved mid-run ([`pool`]); `--pool` runs
//!     it alone and replaces its section.
//! 13. From a domain to the page: a labelled set of generated company websites in fourteen shapes resolved live,
//!     precision, recall by shape and domains per second ([`resolve`]); `--resolve` runs it alone and replaces
//!     its section.
//! 14. Searching stored companies: 100,000 generated companies on SQLite and on PostgreSQL, the common searches'
//!     p50 and p99, again after a tenth of them is fetched again, and what the index adds to a snapshot's write
//!     ([`search`]); `--search` runs it alone and replaces its section.
//!
//! `--stored-only` runs section 1's load alone on the binary `COMPANY_DATA_BIN` names and prints its figures:
//! two builds of the server compared side by side, e.g. before and after a change to the request path.
//!
//! It builds and installs nothing: `tests/ci bench` builds it in release beside `company-data` and the
//! `parse_throughput` example, installs oha (`$OHA`) and the Python peers beautifulsoup4, lxml and selectolax
//! (`$BENCH_PYTHON`) into `target/tools/`, then runs it. Without `$OHA` the load comes from [`load`]; `tests/ci`
//! runs `--quick` that way, from the build its tests made, to prove the harness works.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a benchmark reports on stdout

mod flood;
mod jobs;
mod load;
mod pool;
mod postgres;
mod resolve;
mod search;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use e2e_harness::{Service, ServiceOptions, TestOrigin, target_dir, workspace};
use serde_json::{Value, json};

const GOOGLE: &str = "https://www.linkedin.com/company/google";

type Error = Box<dyn std::error::Error>;

/// How long and how often each measurement runs.
#[derive(Clone, Copy)]
struct Plan {
    quick: bool,
    /// Runs per figure (the report gives the median, min and max).
    runs: usize,
    /// Seconds of each load-generator run.
    load_seconds: u32,
    /// Requests per run of the 200-URL stored batch.
    batch_requests: usize,
    /// Seconds per round of the parsing benchmarks.
    parse_seconds: f64,
}

/// Median, min and max.
fn spread(values: &[f64]) -> Value {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN);
    json!({
        "median": median,
        "min": sorted.first().copied().unwrap_or(f64::NAN),
        "max": sorted.last().copied().unwrap_or(f64::NAN),
        "runs": values,
    })
}

fn median(value: &Value) -> f64 {
    value["median"].as_f64().unwrap_or(f64::NAN)
}

/// The value at quantile `q` (0..=1) of `values`.
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let index = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(index).copied().unwrap_or(f64::NAN)
}

fn machine() -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    json!({ "cores": cores, "cpu": cpu })
}

/// Peak resident set of a process (`VmHWM`), in MB.
fn peak_rss_mb(pid: u32) -> f64 {
    status_mb(pid, "VmHWM:")
}

/// A size line of a process's `/proc/<pid>/status` (`VmHWM:`, `VmRSS:`), in MB; NaN when unreadable.
fn status_mb(pid: u32, field: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

// ---------------------------------------------------------------- tools and builds

/// The load generator: oha where `$OHA` names it (the full `just bench`, whose `tests/ci bench` installs it), else this
/// binary's own small client (`bench load`, [`load`]), which needs nothing installed (`--quick` in CI).
fn load_generator() -> (PathBuf, &'static str) {
    match std::env::var_os("OHA") {
        Some(oha) => (PathBuf::from(oha), "oha"),
        None => (
            std::env::current_exe().unwrap_or_else(|_| PathBuf::from("bench")),
            "bench load",
        ),
    }
}

/// The Python interpreter with beautifulsoup4, lxml and selectolax (`bench/requirements.txt`): `$BENCH_PYTHON`,
/// else the venv `tests/ci bench` makes under `target/tools/bench-peers`.
fn python_peers() -> Result<PathBuf, Error> {
    if let Some(python) = std::env::var_os("BENCH_PYTHON") {
        return Ok(PathBuf::from(python));
    }
    let python = target_dir().join("tools/bench-peers/bin/python");
    if python.exists() {
        Ok(python)
    } else {
        Err(format!(
            "no Python peers at {}: run `tests/ci bench` (it installs them), or set BENCH_PYTHON",
            python.display()
        )
        .into())
    }
}

/// An example Cargo built beside this benchmark, in the same profile folder (`examples/NAME`): the benchmark
/// builds nothing itself (the server it runs is [`e2e_harness::binary`], found the same way).
fn built_beside(name: &str) -> Result<PathBuf, Error> {
    let path = std::env::current_exe()?
        .parent()
        .ok_or("the benchmark's folder")?
        .join(name);
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} is not built: `tests/ci bench` builds it with the benchmark (`cargo build --release -p tests \
             --bin bench -p company-data --bin company-data -p page-parser --example parse_throughput`)",
            path.display()
        )
        .into())
    }
}

// ---------------------------------------------------------------- load generation

/// One load run: requests per second, p50 and p99 in ms.
struct Load {
    rps: f64,
    p50_ms: f64,
    p99_ms: f64,
}

/// Runs the load generator against `url` with the company-data request `body` for `seconds`; `rate` caps requests per second.
fn load_run(
    url: &str,
    key: &str,
    body: &str,
    seconds: u32,
    rate: Option<f64>,
) -> Result<Load, Error> {
    let output = load_command(url, key, body, seconds, rate, &Pinning::default()).output()?;
    load_report(&output)
}

/// Where the load generator runs, and with how many connections.
#[derive(Clone, Debug)]
struct Pinning {
    /// `taskset -c` CPUs for oha; `None` for anywhere.
    cpus: Option<String>,
    /// Connections oha keeps open.
    connections: u32,
}

impl Default for Pinning {
    fn default() -> Self {
        Self {
            cpus: None,
            connections: 32,
        }
    }
}

/// The load generator's command line for one run (oha's flags, which `bench load` takes too).
fn load_command(
    url: &str,
    key: &str,
    body: &str,
    seconds: u32,
    rate: Option<f64>,
    pinning: &Pinning,
) -> Command {
    let (generator, name) = load_generator();
    let mut command = match &pinning.cpus {
        Some(cpus) => {
            let mut taskset = Command::new("taskset");
            taskset.args(["-c", cpus]).arg(generator);
            taskset
        }
        None => Command::new(generator),
    };
    if name == "bench load" {
        command.arg("load");
    }
    command
        .args(["--no-tui", "--output-format", "json", "-z"])
        .arg(format!("{seconds}s"))
        .args(["-c", &pinning.connections.to_string()])
        .args(["-m", "POST", "-T", "application/json"])
        .args(["-H", &format!("authorization: Bearer {key}")])
        .args(["-d", body]);
    if let Some(rate) = rate {
        command.args(["-q", &format!("{rate:.0}"), "--latency-correction"]);
    }
    command.arg(url);
    command
}

/// The figures of one finished load run (oha's JSON report, which `bench load` writes too); an error unless
/// every answer was a 200.
fn load_report(output: &std::process::Output) -> Result<Load, Error> {
    if !output.status.success() {
        return Err(format!(
            "the load generator failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let report: Value = serde_json::from_slice(&output.stdout)?;
    let statuses = &report["statusCodeDistribution"];
    let ok = statuses["200"].as_u64().unwrap_or(0);
    let all: u64 = statuses
        .as_object()
        .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
    if ok == 0 || ok != all {
        return Err(format!("the load generator saw non-200 answers: {statuses}").into());
    }
    let seconds_to_ms = |v: &Value| v.as_f64().map_or(f64::NAN, |s| s * 1000.0);
    Ok(Load {
        rps: report["summary"]["requestsPerSec"]
            .as_f64()
            .unwrap_or(f64::NAN),
        p50_ms: seconds_to_ms(&report["latencyPercentiles"]["p50"]),
        p99_ms: seconds_to_ms(&report["latencyPercentiles"]["p99"]),
    })
}

/// Runs `load_run` `plan.runs` times; returns the spreads of rps, p50 and p99.
fn load_figures(
    url: &str,
    key: &str,
    body: &str,
    plan: Plan,
    rate: Option<f64>,
) -> Result<Value, Error> {
    let mut runs = Vec::new();
    for _ in 0..plan.runs {
        runs.push(load_run(url, key, body, plan.load_seconds, rate)?);
    }
    Ok(load_json(&runs))
}

/// Requests per second, p50 and p99 of some runs, each as median, min and max.
fn load_json(runs: &[Load]) -> Value {
    json!({
        "requests_per_second": spread(&runs.iter().map(|r| r.rps).collect::<Vec<_>>()),
        "p50_ms": spread(&runs.iter().map(|r| r.p50_ms).collect::<Vec<_>>()),
        "p99_ms": spread(&runs.iter().map(|r| r.p99_ms).collect::<Vec<_>>()),
    })
}

/// A bare hyper server that answers every request with `response` (status 200, the same headers and body as the
/// service's stored answer) and does nothing else: the most this machine serves over loopback with hyper.
async fn bare_hyper(headers: Vec<(String, String)>, body: bytes::Bytes) -> Result<String, Error> {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let headers = std::sync::Arc::new(headers);
    tokio::spawn(async move {
        let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
        while let Ok((stream, _)) = listener.accept().await {
            let (builder, headers, body) = (builder.clone(), headers.clone(), body.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let (headers, body) = (headers.clone(), body.clone());
                        async move {
                            // Read the body, as the service does.
                            let _ = http_body_util::BodyExt::collect(request.into_body()).await;
                            let mut response =
                                hyper::Response::new(http_body_util::Full::new(body));
                            for (name, value) in headers.iter() {
                                if let (Ok(name), Ok(value)) = (
                                    hyper::header::HeaderName::from_bytes(name.as_bytes()),
                                    hyper::header::HeaderValue::from_str(value),
                                ) {
                                    response.headers_mut().insert(name, value);
                                }
                            }
                            Ok::<_, std::convert::Infallible>(response)
                        }
                    },
                );
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(format!("http://{address}/v1/network/company-data"))
}

// ---------------------------------------------------------------- the measurements

fn service_options(binary: &Path, origin: Option<&str>) -> ServiceOptions<'static> {
    let mut options = ServiceOptions {
        binary: Some(binary.to_path_buf()),
        // A load generator's rate, and the 200-page batches, are not what the per-key and per-account limits
        // are for; per-request info logs are off as in a quiet production setting.
        args: vec![
            "--key-rate",
            "0",
            "--origin-concurrency",
            "200",
            "--log",
            "warn",
        ],
        // A live time-out well past any batch's time: the benchmark measures how long a batch takes, so a page
        // dropped at the harness's 10 s (a debug build at the lowest CPU priority, as `--quick` runs in CI, can
        // take that long for 200 pages) would fail the run instead of showing in its figures.
        live_timeout: "120",
        ..ServiceOptions::default()
    };
    if let Some(origin) = origin {
        origin.clone_into(&mut options.origin);
    }
    options
}

/// 1, 5 and 6: the stored path against the bare-hyper limit, at half load, and without auth.
async fn stored_path(plan: Plan, release: &Path) -> Result<Value, Error> {
    let body = json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 }).to_string();
    let service = Service::start(service_options(release, None));
    // Kept after the server stops: the auth figures reuse its database, key and warm snapshot.
    let (db_dir, db) = (service.dir(), service.db.clone());
    let key = service.key("bench", "100000000");
    // Warm the snapshot, and keep the exact answer for the bare server.
    let warm = e2e_harness::client()
        .post(format!("{}/v1/network/company-data", service.base))
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json")
        .body(json!({ "liUrls": [GOOGLE] }).to_string())
        .send()
        .await?;
    if warm.status() != 200 {
        return Err(format!("warming the snapshot gave {}", warm.status()).into());
    }
    let stored = e2e_harness::client()
        .post(format!("{}/v1/network/company-data", service.base))
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json")
        .body(body.clone())
        .send()
        .await?;
    let headers: Vec<(String, String)> = stored
        .headers()
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "content-length" | "date"))
        .filter_map(|(name, value)| Some((name.to_string(), value.to_str().ok()?.to_owned())))
        .collect();
    let stored_bytes = stored.bytes().await?;
    let url = format!("{}/v1/network/company-data", service.base);

    let service_load = load_figures(&url, &key, &body, plan, None)?;
    let rss = peak_rss_mb(service.pid());
    let half_rate = median(&service_load["requests_per_second"]) / 2.0;
    let half_load = load_figures(&url, &key, &body, plan, Some(half_rate))?;
    drop(service);
    let _keep = db_dir;

    let baseline_url = bare_hyper(headers, stored_bytes.clone()).await?;
    let baseline = load_figures(&baseline_url, &key, &body, plan, None)?;

    let (with_auth, without_auth) = auth_cost(Path::new(&db), &key, &body, plan).await?;

    Ok(json!({
        "response_bytes": stored_bytes.len(),
        "service": service_load,
        "bare_hyper": baseline,
        "service_at_half_load": { "rate": half_rate, "figures": half_load },
        "api_with_auth": with_auth,
        "api_without_auth": without_auth,
        "throughput_ratio": median(&service_load["requests_per_second"]) / median(&baseline["requests_per_second"]),
        "auth_ratio": median(&with_auth["requests_per_second"]) / median(&without_auth["requests_per_second"]),
        "peak_rss_mb": rss,
    }))
}

/// Section 1's load alone (requests per second, p50 and p99 of one stored URL), on the binary `COMPANY_DATA_BIN`
/// names: two builds compared side by side (`--stored-only`), without the rest of the report.
async fn stored_only(plan: Plan, release: &Path) -> Result<Value, Error> {
    let body = json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 }).to_string();
    let service = Service::start(service_options(release, None));
    let key = service.key("bench", "100000000");
    let url = format!("{}/v1/network/company-data", service.base);
    let warm = e2e_harness::client()
        .post(&url)
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json")
        .body(json!({ "liUrls": [GOOGLE] }).to_string())
        .send()
        .await?;
    if warm.status() != 200 {
        return Err(format!("warming the snapshot gave {}", warm.status()).into());
    }
    load_figures(&url, &key, &body, plan, None)
}

/// Accepts the one key it was made with, without any check: the cost of verifying a key, taken out.
#[derive(Debug)]
struct UncheckedKey(api_keys::VerifiedKey);

#[async_trait::async_trait]
impl http_api::Authenticator for UncheckedKey {
    async fn authenticate(
        &self,
        _presented: &str,
        _client: Option<std::net::IpAddr>,
    ) -> Result<api_keys::VerifiedKey, api_keys::KeyError> {
        Ok(self.0)
    }
}

/// 5: the stored-path load against two APIs over one lookup service on `db`, in this process: one verifying
/// keys with the service's `ApiKeys`, one accepting the key unchecked. Each is served on a runtime of its own
/// (two workers, as the service's), so the load generator's waiting never runs on the servers' threads.
async fn auth_cost(db: &Path, key: &str, body: &str, plan: Plan) -> Result<(Value, Value), Error> {
    let stores =
        server_assembly::Stores::open(&server_assembly::Database::Sqlite(db.to_owned())).await?;
    let keys = std::sync::Arc::clone(stores.accounts.keys());
    let verified = keys.verify(key).await?;
    let fetcher = page_scraper::Fetcher::new(page_scraper::FetcherSettings::new(
        page_scraper::Origin::parse(&e2e_harness::fixtures().join("origin").display().to_string())?,
        page_url::NetworkDomain::default(),
    ))?;
    let lookup = std::sync::Arc::new(company_lookup::LookupService::new(
        fetcher,
        stores.snapshots,
        std::sync::Arc::clone(stores.accounts.ledger()),
        company_lookup::LookupSettings::default(),
    ));
    let settings = http_api::ApiSettings {
        key_rate: None,
        ..http_api::ApiSettings::default()
    };
    let authenticators: [std::sync::Arc<dyn http_api::Authenticator>; 2] =
        [keys, std::sync::Arc::new(UncheckedKey(verified))];
    let mut servers = Vec::new();
    for authenticator in authenticators {
        let api = http_api::Api::new(
            std::sync::Arc::clone(&lookup),
            authenticator,
            page_url::NetworkDomain::default(),
            settings.clone(),
        );
        servers.push(serve_on_own_runtime(api)?);
    }
    // Runs alternate between the two, so that neither gains from going second (warm caches, a quieter machine).
    let mut runs: [Vec<Load>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..plan.runs {
        for ((url, _), runs) in servers.iter().zip(runs.iter_mut()) {
            runs.push(load_run(url, key, body, plan.load_seconds, None)?);
        }
    }
    let [with, without] = runs.map(|runs| load_json(&runs));
    Ok((with, without))
}

/// Serves `api` on a loopback port from a thread with its own two-worker runtime until the sender is dropped.
fn serve_on_own_runtime(
    api: http_api::Api,
) -> Result<(String, tokio::sync::oneshot::Sender<()>), Error> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let url = format!("http://{}/v1/network/company-data", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    std::thread::spawn(move || {
        runtime.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                return;
            };
            let handler = move |request| {
                let api = api.clone();
                async move { api.handle(request).await }
            };
            let shutdown = async move {
                let _ = stopped.await;
            };
            let _ = http_serve::serve(
                listener,
                http_serve::ConnectionLimits::default(),
                handler,
                shutdown,
            )
            .await;
        });
    });
    Ok((url, stop))
}

fn page_urls(first: usize, count: usize) -> Vec<String> {
    (first..first + count)
        .map(|n| format!("https://www.linkedin.com/company/p{n}"))
        .collect()
}

/// Times one request; fails unless every URL resolved.
/// Milliseconds from sending the request to having its whole body; the body is parsed (to check the records)
/// only after the clock stops, so the figure is the service's time plus loopback, not the client's JSON parse.
async fn timed(service: &Service, key: &str, body: &Value, expected: usize) -> Result<f64, Error> {
    let started = Instant::now();
    let response = e2e_harness::client()
        .post(format!("{}/v1/network/company-data", service.base))
        .header("x-api-key", key)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await?;
    let status = response.status();
    let bytes = response.bytes().await?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let reply: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let resolved = reply["results"].as_array().map_or(0, Vec::len);
    if status != 200 || resolved != expected {
        return Err(format!("status {status}, {resolved} of {expected} resolved").into());
    }
    Ok(ms)
}

/// One live batch of `urls` (pages the service has not seen): its request time in ms, and that over the slowest
/// page's time at the origin.
async fn live_batch(
    service: &Service,
    key: &str,
    origin: &TestOrigin,
    urls: &[String],
) -> Result<(f64, f64), Error> {
    origin.take_slowest();
    let ms = timed(service, key, &json!({ "liUrls": urls }), urls.len()).await?;
    Ok((ms, ms / (origin.take_slowest().as_secs_f64() * 1000.0)))
}

/// 2, 3, 6 and 7: batches against a loopback origin that answers each page after 250–350 ms.
async fn batches(plan: Plan, release: &Path) -> Result<Value, Error> {
    let origin = TestOrigin::start().await;
    let service = Service::start(service_options(release, Some(&origin.base)));
    let key = service.key("bench", "100000000");
    let mut next = 0usize;
    let mut fresh = |count: usize| {
        next += count;
        page_urls(next - count, count)
    };

    // 3: live batches of 200 fresh pages.
    let mut live_ms = Vec::new();
    let mut ratios = Vec::new();
    let mut warm_200 = Vec::new();
    for _ in 0..plan.runs {
        let urls = fresh(200);
        let (ms, ratio) = live_batch(&service, &key, &origin, &urls).await?;
        ratios.push(ratio);
        live_ms.push(ms);
        warm_200 = urls;
    }
    let live_rss = peak_rss_mb(service.pid());

    // 2: the last 200 pages, now stored.
    let stored_body = json!({ "liUrls": warm_200, "maxAgeHours": 24 });
    let (mut p50s, mut p99s) = (Vec::new(), Vec::new());
    for _ in 0..plan.runs {
        let mut times = Vec::new();
        for _ in 0..plan.batch_requests {
            times.push(timed(&service, &key, &stored_body, 200).await?);
        }
        p50s.push(quantile(&times, 0.5));
        p99s.push(quantile(&times, 0.99));
    }

    // 7: growth with the URL count.
    let mut growth = serde_json::Map::new();
    for count in [1usize, 10, 50, 200] {
        let stored_urls = &warm_200[..count];
        let mut stored = Vec::new();
        let mut live = Vec::new();
        for _ in 0..plan.runs {
            stored.push(
                timed(
                    &service,
                    &key,
                    &json!({ "liUrls": stored_urls, "maxAgeHours": 24 }),
                    count,
                )
                .await?,
            );
            live.push(timed(&service, &key, &json!({ "liUrls": fresh(count) }), count).await?);
        }
        growth.insert(
            count.to_string(),
            json!({ "stored_ms": spread(&stored), "live_ms": spread(&live) }),
        );
    }

    Ok(json!({
        "live_batch": {
            "request_ms": spread(&live_ms),
            "ratio_to_slowest_page": spread(&ratios),
            "peak_rss_mb": live_rss,
        },
        "stored_batch": { "p50_ms": spread(&p50s), "p99_ms": spread(&p99s), "requests_per_run": plan.batch_requests },
        "growth": growth,
    }))
}

/// 4: the Rust parser and html5ever's tokenizer, then the Python peers, over the same pages.
fn parsing(plan: Plan) -> Result<Value, Error> {
    let pages = workspace().join("../shared/fixtures/pages");
    let seconds = plan.parse_seconds.to_string();
    let rounds = plan.runs.to_string();
    let rust = Command::new(built_beside("examples/parse_throughput")?)
        .args(["--seconds", &seconds, "--rounds", &rounds])
        .arg(&pages)
        .output()?;
    if !rust.status.success() {
        return Err(format!(
            "parse_throughput failed: {}",
            String::from_utf8_lossy(&rust.stderr)
        )
        .into());
    }
    let rust: Value = serde_json::from_slice(&rust.stdout)?;
    let peers = Command::new(python_peers()?)
        .arg(workspace().join("bench/peers.py"))
        .args(["--seconds", &seconds, "--rounds", &rounds])
        .arg(&pages)
        .output()?;
    if !peers.status.success() {
        return Err(format!(
            "bench/peers.py failed: {}",
            String::from_utf8_lossy(&peers.stderr)
        )
        .into());
    }
    let peers: Value = serde_json::from_slice(&peers.stdout)?;
    let per_second = |v: &Value| -> Vec<f64> {
        v.as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    let parse_page = spread(&per_second(&rust["parse_page_per_second"]));
    let tokenizer = spread(&per_second(&rust["tokenizer_per_second"]));
    let bs4 = spread(&per_second(&peers["beautifulsoup_lxml"]["per_second"]));
    let selectolax = spread(&per_second(&peers["selectolax_lexbor"]["per_second"]));
    Ok(json!({
        "pages": rust["pages"],
        "bytes": rust["bytes"],
        "parse_page": parse_page,
        "html5ever_tokenizer": tokenizer,
        "beautifulsoup_lxml": bs4,
        "selectolax_lexbor": selectolax,
        "names_found": {
            "beautifulsoup_lxml": peers["beautifulsoup_lxml"]["names_found"],
            "selectolax_lexbor": peers["selectolax_lexbor"]["names_found"],
        },
        "ratio_to_beautifulsoup": median(&parse_page) / median(&bs4),
        "ratio_to_selectolax": median(&parse_page) / median(&selectolax),
        "ratio_to_tokenizer": median(&parse_page) / median(&tokenizer),
    }))
}

// ---------------------------------------------------------------- the report

fn row(name: &str, figure: &Value, digits: usize) -> String {
    format!(
        "| {name} | {:.digits$} | {:.digits$} | {:.digits$} |\n",
        figure["median"].as_f64().unwrap_or(f64::NAN),
        figure["min"].as_f64().unwrap_or(f64::NAN),
        figure["max"].as_f64().unwrap_or(f64::NAN),
    )
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "**not met**" }
}

#[allow(clippy::format_push_string)] // a report, built once
fn markdown(report: &Value, plan: Plan) -> String {
    let machine = &report["machine"];
    let stored = &report["stored_path"];
    let batch = &report["batches"];
    let parse = &report["parsing"];
    let head = "| figure | median | min | max |\n|---|---|---|---|\n";
    let mut out = format!(
        "# Benchmarks\n\nWritten by `just bench`{} on {}. Machine: {} cores, {}. Every figure is the median of {} \
         run(s), with min and max; these machines are noisy, so the ratios matter more than the absolute numbers. \
         Machine-readable: `target/bench.json`. {} builds; load from `{}` (32 connections, {} s per run) on \
         the same machine.\n\n",
        if plan.quick {
            " --quick (too short to quote)"
        } else {
            ""
        },
        report["date"].as_str().unwrap_or(""),
        machine["cores"],
        machine["cpu"].as_str().unwrap_or(""),
        plan.runs,
        // This benchmark's own build profile is the service's and the example's (built beside it).
        if cfg!(debug_assertions) {
            "Debug (test)"
        } else {
            "Release"
        },
        report["load_generator"].as_str().unwrap_or(""),
        plan.load_seconds,
    );
    let throughput = stored["throughput_ratio"].as_f64().unwrap_or(f64::NAN);
    let half_p99 = median(&stored["service_at_half_load"]["figures"]["p99_ms"]);
    let auth = stored["auth_ratio"].as_f64().unwrap_or(f64::NAN);
    out += &format!(
        "## 1. Stored path: one URL, `maxAgeHours: 24`, warm snapshot\n\nversus a bare hyper server that returns the \
         same {} response bytes and does nothing else (this machine's limit).\n\n{head}",
        stored["response_bytes"]
    );
    out += &row(
        "service, requests/s",
        &stored["service"]["requests_per_second"],
        0,
    );
    out += &row("service, p50 ms", &stored["service"]["p50_ms"], 2);
    out += &row("service, p99 ms", &stored["service"]["p99_ms"], 2);
    out += &row(
        "bare hyper, requests/s",
        &stored["bare_hyper"]["requests_per_second"],
        0,
    );
    out += &row("bare hyper, p50 ms", &stored["bare_hyper"]["p50_ms"], 2);
    out += &row("bare hyper, p99 ms", &stored["bare_hyper"]["p99_ms"], 2);
    out += &format!(
        "| service at half load ({:.0} req/s), p99 ms | {:.2} | {:.2} | {:.2} |\n\n",
        stored["service_at_half_load"]["rate"]
            .as_f64()
            .unwrap_or(f64::NAN),
        half_p99,
        stored["service_at_half_load"]["figures"]["p99_ms"]["min"]
            .as_f64()
            .unwrap_or(f64::NAN),
        stored["service_at_half_load"]["figures"]["p99_ms"]["max"]
            .as_f64()
            .unwrap_or(f64::NAN),
    );
    out += &format!(
        "Service / limit throughput: **{throughput:.2}** (target ≥ 0.5: {}). p99 at half load: **{half_p99:.2} ms** \
         (target < 5 ms: {}).\n\n",
        verdict(throughput >= 0.5),
        verdict(half_p99 < 5.0)
    );
    let batch_p50 = median(&batch["stored_batch"]["p50_ms"]);
    out += &format!(
        "## 2. A 200-URL stored batch\n\nFrom sending the request to holding the whole answer (~10 MB), over \
         loopback ({} requests per run; the client's JSON parse is not counted).\n\n{head}",
        batch["stored_batch"]["requests_per_run"]
    );
    out += &row("p50 ms", &batch["stored_batch"]["p50_ms"], 1);
    out += &row("p99 ms", &batch["stored_batch"]["p99_ms"], 1);
    out += &format!("\nTarget p50 < 20 ms: {}.\n\n", verdict(batch_p50 < 20.0));
    let live_ratio = median(&batch["live_batch"]["ratio_to_slowest_page"]);
    out += &format!(
        "## 3. Live batch: 200 URLs, origin latency 250–350 ms, `--origin-concurrency 200`\n\n{head}"
    );
    out += &row("request time, ms", &batch["live_batch"]["request_ms"], 0);
    out += &row(
        "request time / slowest page",
        &batch["live_batch"]["ratio_to_slowest_page"],
        2,
    );
    out += &format!("\nTarget ≤ 1.1: {}.\n\n", verdict(live_ratio <= 1.1));
    let to_bs4 = parse["ratio_to_beautifulsoup"].as_f64().unwrap_or(f64::NAN);
    let to_selectolax = parse["ratio_to_selectolax"].as_f64().unwrap_or(f64::NAN);
    out += &format!(
        "## 4. Parsing, pages per second on one core\n\n{} captured pages ({:.1} MB) from `../shared/fixtures/pages`. \
         `parse_page` is the full extraction (every field of the record); the Python peers (`bench/peers.py`) \
         extract the core fields (name, description, slogan, About rows, followers, logo, similar pages); the \
         tokenizer alone drops every token.\n\n{head}",
        parse["pages"],
        parse["bytes"].as_f64().unwrap_or(0.0) / 1e6
    );
    out += &row("company-data `parse_page`", &parse["parse_page"], 1);
    out += &row(
        "html5ever tokenizer alone",
        &parse["html5ever_tokenizer"],
        1,
    );
    out += &row("selectolax (lexbor)", &parse["selectolax_lexbor"], 1);
    out += &row("BeautifulSoup + lxml", &parse["beautifulsoup_lxml"], 1);
    out += &format!(
        "\n`parse_page` / BeautifulSoup: **{to_bs4:.1}×** (target ≥ 20: {}); / selectolax: **{to_selectolax:.2}×** \
         (target ≥ 1: {}); / tokenizer alone: {:.2}.\n\n",
        verdict(to_bs4 >= 20.0),
        verdict(to_selectolax >= 1.0),
        parse["ratio_to_tokenizer"].as_f64().unwrap_or(f64::NAN)
    );
    out += &format!(
        "## 5. Auth\n\nStored-path throughput of the API library served from the benchmark's own process, once with \
         the service's key verification (`ApiKeys`: the key found in its in-memory record) and once with an \
         authenticator that accepts the key unchecked. No build of the service itself can skip the check.\n\n{head}"
    );
    out += &row(
        "with auth, requests/s",
        &stored["api_with_auth"]["requests_per_second"],
        0,
    );
    out += &row(
        "without auth, requests/s",
        &stored["api_without_auth"]["requests_per_second"],
        0,
    );
    out += &format!(
        "\nWith / without: **{auth:.2}** (target ≥ 0.95 since keys are found by their HMAC digest: {}).\n\n",
        verdict(auth >= 0.95)
    );
    let rss_stored = stored["peak_rss_mb"].as_f64().unwrap_or(f64::NAN);
    let rss_live = batch["live_batch"]["peak_rss_mb"]
        .as_f64()
        .unwrap_or(f64::NAN);
    out += &format!(
        "## 6. Memory\n\nPeak RSS (`VmHWM`) of the server: **{rss_stored:.1} MB** after the stored-path load, \
         **{rss_live:.1} MB** after the live batches (target < 100 MB: {}).\n\n",
        verdict(rss_stored < 100.0 && rss_live < 100.0)
    );
    out += "## 7. Cost growth: one request of N URLs (ms, median)\n\n| URLs | stored | live |\n|---|---|---|\n";
    let mut stored_per_url = Vec::new();
    for count in ["1", "10", "50", "200"] {
        let g = &batch["growth"][count];
        let stored_ms = median(&g["stored_ms"]);
        stored_per_url.push(stored_ms / count.parse::<f64>().unwrap_or(1.0));
        out += &format!(
            "| {count} | {stored_ms:.1} | {:.0} |\n",
            median(&g["live_ms"])
        );
    }
    let live_1 = median(&batch["growth"]["1"]["live_ms"]);
    let live_200 = median(&batch["growth"]["200"]["live_ms"]);
    out += &format!(
        "\nStored: {:.2} ms per URL at 1, {:.2} at 200 (no faster than linear: {}). Live: 200 URLs take {:.2}× one \
         URL (flat means close to 1).\n",
        stored_per_url.first().copied().unwrap_or(f64::NAN),
        stored_per_url.last().copied().unwrap_or(f64::NAN),
        verdict(stored_per_url.last() <= stored_per_url.first().map(|v| v * 1.5).as_ref()),
        live_200 / live_1,
    );
    out += &postgres_markdown(&report["postgres"], &report["stored_path"]);
    out += &jobs::markdown(&report["jobs"]);
    out += &flood::markdown(&report["flood"]);
    out += &jobs::download_markdown(&report["download"]);
    out += &pool::markdown(&report["pool"]);
    out += &resolve::markdown(&report["resolve"]);
    out += &search::markdown(&report["search"]);
    out
}

/// Replaces the section of the report at `path` that starts with `heading` (up to the next `\n## ` or the closing
/// line) with `section`, or adds it before the closing line: for a section run alone with `flag`.
fn replace_section(path: &Path, heading: &str, flag: &str, section: &str) -> Result<(), Error> {
    const CLOSING: &str = "\nWhat limits each figure";
    let text = std::fs::read_to_string(path)?;
    let end_of_report = text.find(CLOSING).unwrap_or(text.len());
    let (start, end) = match text.find(heading) {
        Some(start) => {
            let after = start + heading.len();
            let end = text[after..]
                .find("\n## ")
                .map_or(end_of_report, |i| after + i)
                .min(end_of_report);
            (start, end)
        }
        None => (end_of_report, end_of_report),
    };
    let updated = format!(
        "{}{}\n\n_Section {} written by `just bench {}` on {}._\n{}",
        &text[..start],
        section.trim_end(),
        heading
            .trim()
            .trim_start_matches("## ")
            .trim_end_matches('.'),
        flag,
        today(),
        &text[end..]
    );
    std::fs::write(path, updated)?;
    Ok(())
}

#[allow(clippy::format_push_string)] // a report, built once
fn postgres_markdown(pg: &Value, stored: &Value) -> String {
    let head = "| figure | median | min | max |\n|---|---|---|---|\n";
    let pinned = match (
        pg["pinning"]["load"].as_str(),
        pg["pinning"]["servers"].as_str(),
    ) {
        (Some(load), Some(servers)) => {
            format!("oha pinned to CPU {load}, the servers to CPUs {servers}")
        }
        _ => "unpinned (one core)".to_owned(),
    };
    let mut out = format!(
        "\n## 8. Several servers on one PostgreSQL database\n\nThe stored path as in 1, {pinned} (`taskset`); \
         the three servers get one oha each, the 32 connections shared out, figures summed (requests/s) or the worst \
         of the three (latency). PostgreSQL on loopback, unpinned.\n\n{head}"
    );
    for (label, figures) in [
        ("SQLite, 1 server", &pg["sqlite_one"]),
        ("PostgreSQL, 1 server", &pg["postgres_one"]),
        ("PostgreSQL, 3 servers", &pg["postgres_three"]),
    ] {
        out += &row(
            &format!("{label}: requests/s"),
            &figures["full"]["requests_per_second"],
            0,
        );
        out += &row(&format!("{label}: p99 ms"), &figures["full"]["p99_ms"], 2);
        out += &row(
            &format!(
                "{label}: p99 ms at half load ({:.0} req/s)",
                figures["half"]["rate"].as_f64().unwrap_or(f64::NAN)
            ),
            &figures["half"]["figures"]["p99_ms"],
            2,
        );
    }
    let sqlite_unpinned = median(&stored["service"]["requests_per_second"]);
    let one = median(&pg["postgres_one"]["full"]["requests_per_second"]);
    let three = median(&pg["postgres_three"]["full"]["requests_per_second"]);
    let half_p99 = median(&pg["postgres_one"]["half"]["figures"]["p99_ms"]);
    let trips = &pg["round_trips"];
    let stored_trips = trips["stored"].as_f64().unwrap_or(f64::NAN);
    out += &format!(
        "\nPostgreSQL, 1 server / SQLite (pinned): **{:.2}**; 3 servers / 1: **{:.2}** (the servers share the cores \
         left after oha, so this is what the database sustains, not more machines). SQLite unpinned in 1: {sqlite_unpinned:.0} \
         req/s. PostgreSQL p99 at half load: **{half_p99:.2} ms** (target < 5 ms: {}).\n\n",
        one / median(&pg["sqlite_one"]["full"]["requests_per_second"]),
        three / one,
        verdict(half_p99 < 5.0),
    );
    out += &format!(
        "Database round trips per request (client `Sync` and `Query` messages counted by a proxy; {} stored \
         requests on a warm snapshot, {} live requests of new pages): stored **{stored_trips:.2}** (target ≤ 2: \
         {}), live **{:.2}**. The key's row is re-read every 2 s and the upkeep sweeps every 10 s, which the \
         figures include.\n\n",
        trips["stored_requests"],
        trips["live_requests"],
        verdict(stored_trips <= 2.0),
        trips["live"].as_f64().unwrap_or(f64::NAN),
    );
    out += &format!("200-URL stored batch on PostgreSQL, one server:\n\n{head}");
    out += &row("p50 ms", &pg["postgres_stored_batch"]["p50_ms"], 1);
    out += &row("p99 ms", &pg["postgres_stored_batch"]["p99_ms"], 1);
    out
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "load") {
        return load::main(&args[1..]).await;
    }
    let value_of = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(PathBuf::from)
    };
    let quick = args.iter().any(|a| a == "--quick");
    let out = value_of("--out").unwrap_or_else(|| workspace().join("docs/benchmarks.md"));
    let json_out = value_of("--json").unwrap_or_else(|| target_dir().join("bench.json"));
    let plan = if quick {
        Plan {
            quick,
            runs: 1,
            load_seconds: 2,
            batch_requests: 5,
            parse_seconds: 0.5,
        }
    } else {
        Plan {
            quick,
            runs: 3,
            load_seconds: 5,
            batch_requests: 30,
            parse_seconds: 2.0,
        }
    };
    if let Some(batches) = value_of("--profile-live") {
        let batches: usize = batches
            .to_str()
            .and_then(|n| n.parse().ok())
            .ok_or("--profile-live takes a number of batches")?;
        return profile_live(batches).await;
    }
    if args.iter().any(|a| a == "--jobs") {
        let release = e2e_harness::binary().to_path_buf();
        let figures = jobs::jobs(plan, &release).await?;
        println!("{}\n{figures:#}", jobs::markdown(&figures));
        return Ok(());
    }
    // A section run alone replaces its part of the report.
    let alone = [
        ("--flood", 10),
        ("--download", 11),
        ("--pool", 12),
        ("--resolve", 13),
        ("--search", 14),
    ]
    .into_iter()
    .find(|(flag, _)| args.iter().any(|a| a == flag));
    if let Some((flag, number)) = alone {
        let release = e2e_harness::binary().to_path_buf();
        let section = match number {
            10 => flood::markdown(&flood::flood(plan, &release).await?),
            11 => jobs::download_markdown(&jobs::download(plan, &release).await?),
            12 => pool::markdown(&pool::pool(plan, &release).await?),
            13 => resolve::markdown(&resolve::resolve(plan, &release).await?),
            _ => search::markdown(&search::search(plan, &release).await?),
        };
        if !quick {
            replace_section(&out, &format!("\n## {number}. "), flag, &section)?;
        }
        println!("{section}");
        return Ok(());
    }
    if args.iter().any(|a| a == "--stored-only") {
        let release = e2e_harness::binary().to_path_buf();
        println!("{:#}", stored_only(plan, &release).await?);
        return Ok(());
    }
    if args.iter().any(|a| a == "--round-trips") {
        let release = e2e_harness::binary().to_path_buf();
        println!("{:#}", postgres::round_trips_alone(&release).await?);
        return Ok(());
    }
    let started = Instant::now();
    // Everything it needs, before anything is timed.
    python_peers()?;
    let release = e2e_harness::binary().to_path_buf();

    eprintln!("1, 5, 6: stored path");
    let stored = stored_path(plan, &release).await?;
    eprintln!("2, 3, 6, 7: batches");
    let batches = batches(plan, &release).await?;
    eprintln!("4: parsing");
    let parsing = parsing(plan)?;
    let postgres = postgres::postgres(plan, &release).await?;
    let jobs = jobs::jobs(plan, &release).await?;
    let download = jobs::download(plan, &release).await?;
    eprintln!("10: auth under a flood");
    let flood = flood::flood(plan, &release).await?;
    let pool = pool::pool(plan, &release).await?;
    let resolve = resolve::resolve(plan, &release).await?;
    let search = search::search(plan, &release).await?;
    let report = json!({
        "date": today(),
        "quick": quick,
        "machine": machine(),
        "load_generator": load_generator().1,
        "stored_path": stored,
        "batches": batches,
        "parsing": parsing,
        "postgres": postgres,
        "jobs": jobs,
        "flood": flood,
        "download": download,
        "pool": pool,
        "resolve": resolve,
        "search": search,
        "harness_seconds": started.elapsed().as_secs_f64(),
    });
    if let Some(parent) = json_out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&json_out, serde_json::to_string_pretty(&report)?)?;
    let mut text = markdown(&report, plan);
    text.push_str(
        "\nWhat limits each figure, the profiles behind them and what would change the design: \
         [performance.md](performance.md).\n",
    );
    std::fs::write(&out, &text)?;
    println!("{text}");
    complete(&report, &text)?;
    println!(
        "written to {} and {} in {:.0} s",
        out.display(),
        json_out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Every figure the report promises is there and positive, and every section is written: what `tests/ci` checks
/// of `--quick`, whose figures themselves mean nothing on a shared machine.
fn complete(report: &Value, text: &str) -> Result<(), Error> {
    let figures = [
        "/stored_path/service/requests_per_second/median",
        "/stored_path/service/p99_ms/median",
        "/stored_path/bare_hyper/requests_per_second/median",
        "/stored_path/service_at_half_load/figures/p99_ms/median",
        "/stored_path/api_with_auth/requests_per_second/median",
        "/stored_path/api_without_auth/requests_per_second/median",
        "/stored_path/peak_rss_mb",
        "/batches/stored_batch/p50_ms/median",
        "/batches/stored_batch/p99_ms/median",
        "/batches/live_batch/ratio_to_slowest_page/median",
        "/batches/live_batch/peak_rss_mb",
        "/batches/growth/1/stored_ms/median",
        "/batches/growth/200/live_ms/median",
        "/parsing/parse_page/median",
        "/parsing/html5ever_tokenizer/median",
        "/parsing/beautifulsoup_lxml/median",
        "/parsing/selectolax_lexbor/median",
        "/postgres/sqlite_one/full/requests_per_second/median",
        "/postgres/postgres_one/full/requests_per_second/median",
        "/postgres/postgres_one/half/figures/p99_ms/median",
        "/postgres/postgres_three/full/requests_per_second/median",
        "/postgres/postgres_stored_batch/p50_ms/median",
        "/postgres/round_trips/stored",
        "/postgres/round_trips/live",
        "/jobs/throughput/pages_per_second/median",
        "/jobs/throughput/ratio_to_origin_rate/median",
        "/jobs/stored_alone/p99_ms/median",
        "/jobs/stored_beside_job/p99_ms/median",
        "/flood/alone/p50_ms",
        "/flood/alone/p99_ms",
        "/flood/spread_flood/p99_ms",
        "/flood/spread_flood/flood_401_per_second",
        "/flood/one_address_flood/p99_ms",
        "/flood/one_address_flood/flood_429_per_second",
        "/flood/password_form_flood/p99_ms",
        "/flood/password_form_flood/flood_429_per_second",
        "/download/rss_at_rest_mb",
        "/download/rss_over_rest_mb",
        "/pool/pool/pages_per_second",
        "/pool/pool/requests_per_page",
        "/pool/disturbed/pages_per_second",
        "/pool/disturbed/halved/to_the_end/share_of_most",
        "/resolve/precision",
        "/resolve/recall",
        "/resolve/domains_per_second",
        "/search/sqlite/searches/one industry/p99_ms",
        "/search/postgres/searches/a word, by relevance/p99_ms",
        "/search/sqlite/searches_after_refetch/two words, by relevance/p99_ms",
        "/search/postgres/searches_after_refetch/two words, by relevance/p99_ms",
        "/search/sqlite/write_ms_without_index",
        "/search/sqlite/pages_per_write_indexed",
        "/search/sqlite/pages_per_write_without_index",
        "/search/postgres/write_ms_indexed",
    ];
    let missing: Vec<&str> = figures
        .into_iter()
        .filter(|pointer| {
            !report
                .pointer(pointer)
                .and_then(Value::as_f64)
                .is_some_and(|v| v.is_finite() && v > 0.0)
        })
        .collect();
    let sections: Vec<String> = (1..=14)
        .map(|n| format!("## {n}."))
        .filter(|section| !text.contains(section.as_str()))
        .collect();
    if missing.is_empty() && sections.is_empty() {
        Ok(())
    } else {
        Err(format!("the report lacks figures {missing:?} and sections {sections:?}").into())
    }
}

/// `--profile-live N`: only N live batches of 200 pages, each figure printed, for a profiler attached to the whole
/// run (`perf record -a -g -- cargo run --release -p tests --bin bench -- --profile-live 5`); writes no report.
async fn profile_live(batches: usize) -> Result<(), Error> {
    let release = e2e_harness::binary().to_path_buf();
    let origin = TestOrigin::start().await;
    let service = Service::start(service_options(&release, Some(&origin.base)));
    println!("server pid {}", service.pid());
    let key = service.key("bench", "100000000");
    for batch in 0..batches {
        let (ms, ratio) = live_batch(&service, &key, &origin, &page_urls(batch * 200, 200)).await?;
        println!("batch {batch}: {ms:.0} ms, {ratio:.2} x the slowest page");
    }
    println!("peak RSS {:.1} MB", peak_rss_mb(service.pid()));
    Ok(())
}

/// Today's date (UTC) from `date`, without another dependency.
fn today() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}
