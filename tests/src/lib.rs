//! Harness for the end-to-end tests: starts the `company-data` server on loopback with its own SQLite file (in
//! this process by default, from the same library the binary runs; as the real binary where a test needs a
//! process: its output, its environment, a kill), runs its command line, and serves captured pages from a real
//! HTTP origin with injected behaviour.
#![allow(clippy::missing_panics_doc)] // test harness: a failed set-up is a failed test

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub use test_support::{eventually, stays};

pub mod hostile;
pub mod receiver;
pub mod websites;

/// The repository's `tests/fixtures` folder.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The workspace's root folder.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Cargo's target folder: `$CARGO_TARGET_DIR`, else `target/` in the workspace.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace().join("target"), PathBuf::from)
}

/// The `company-data` binary: `$COMPANY_DATA_BIN` when set, else the one Cargo built beside the running program.
/// The end-to-end tests are integration tests of the binary's own package, so Cargo builds it before running them,
/// into the profile folder above the test executable's `deps/` (the tests check this is
/// `CARGO_BIN_EXE_company-data`); the benchmark is built into that folder itself. Nothing is built here.
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        if let Some(path) = std::env::var_os("COMPANY_DATA_BIN") {
            return PathBuf::from(path);
        }
        let name = format!("company-data{}", std::env::consts::EXE_SUFFIX);
        let beside = std::env::current_exe().ok().and_then(|exe| {
            let folder = exe.parent()?;
            [Some(folder), folder.parent()]
                .into_iter()
                .flatten()
                .map(|folder| folder.join(&name))
                .find(|path| path.exists())
        });
        beside.unwrap_or_else(|| {
            panic!(
                "no company-data binary beside this test executable: run the end-to-end tests with \
                 `cargo test -p company-data`, which builds it, or set COMPANY_DATA_BIN"
            )
        })
    })
}

/// An outside tool a test needs (a browser, Schemathesis), at the path `variable` names, as the provisioning
/// command (`tests/ci`) sets it. `None` when the variable is unset: the test is reported as not run, or fails in
/// strict mode ([`test_support::not_run`]); nothing is installed here.
pub fn tool(variable: &str, what: &str) -> Option<PathBuf> {
    let Some(path) = std::env::var_os(variable).map(PathBuf::from) else {
        test_support::not_run(&format!(
            "{what} is not provided: set {variable} to it (`tests/ci` installs it and sets it)"
        ));
        return None;
    };
    assert!(
        path.exists(),
        "{variable} names {}, which does not exist",
        path.display()
    );
    Some(path)
}

/// Runs `company-data <args>` to completion; returns stdout, panics with stderr on failure.
pub fn cli(args: &[&str]) -> String {
    let output = Command::new(binary())
        .args(args)
        .output()
        .expect("company-data runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "company-data {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Runs `company-data <args>` expecting failure; returns stderr.
pub fn cli_fails(args: &[&str]) -> String {
    let output = Command::new(binary())
        .args(args)
        .output()
        .expect("company-data runs");
    assert!(
        !output.status.success(),
        "company-data {args:?} should have failed"
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A running server with its own database, stopped on drop.
pub struct Service {
    running: Running,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The database as `--db` takes it: the SQLite file's path, or the PostgreSQL URL.
    pub db: String,
    /// What the server printed on stdout.
    stdout: Arc<Mutex<String>>,
    /// Every line the server logged on stderr so far.
    pub log: Arc<Mutex<Vec<String>>>,
    dir: Arc<tempfile::TempDir>,
}

/// How to start a [`Service`].
#[derive(Clone)]
pub struct ServiceOptions<'a> {
    /// `--origin`.
    pub origin: String,
    /// `--live-timeout`, in seconds.
    pub live_timeout: &'a str,
    /// Extra environment, e.g. the log filter.
    pub env: Vec<(&'a str, &'a str)>,
    /// Extra `serve` flags.
    pub args: Vec<&'a str>,
    /// An existing database folder to reuse (for restarts); a new one otherwise.
    pub dir: Option<Arc<tempfile::TempDir>>,
    /// Another `company-data` build to run (benchmarks); [`binary`] otherwise. Implies `real_process`.
    pub binary: Option<PathBuf>,
    /// A PostgreSQL database (`postgres://…`) instead of a new SQLite file in the server's folder.
    pub database_url: Option<String>,
    /// Run the real binary as a process of its own, for tests that read its output, set its environment or kill
    /// it; otherwise the server runs in this process ([`server_assembly::Server`], as `serve` runs it), on a
    /// runtime of its own.
    pub real_process: bool,
}

impl ServiceOptions<'_> {
    /// `serve` and its flags: a free loopback port, the origin, the live time-out, the database, the extra flags.
    fn serve_args(&self, db: &str) -> Vec<String> {
        let mut argv: Vec<String> = [
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--origin",
            &self.origin,
            "--live-timeout",
            self.live_timeout,
            "--db",
        ]
        .map(str::to_owned)
        .into();
        argv.push(db.to_owned());
        argv.extend(self.args.iter().map(|a| (*a).to_owned()));
        argv
    }
}

/// Where a [`Service`] runs.
enum Running {
    Process(Child),
    /// In this process; dropping the sender stops it (requests in flight finish).
    InProcess {
        stop: Option<tokio::sync::oneshot::Sender<()>>,
        first_key: Option<String>,
    },
}

impl Default for ServiceOptions<'_> {
    fn default() -> Self {
        Self {
            origin: fixtures().join("origin").display().to_string(),
            live_timeout: "10",
            env: Vec::new(),
            args: Vec::new(),
            dir: None,
            binary: None,
            database_url: None,
            real_process: false,
        }
    }
}

impl Service {
    /// Starts `company-data serve` on a free loopback port and waits until it listens.
    pub fn start(options: ServiceOptions<'_>) -> Self {
        let dir = options
            .dir
            .clone()
            .unwrap_or_else(|| Arc::new(tempfile::tempdir().expect("temp dir")));
        let db = options
            .database_url
            .clone()
            .unwrap_or_else(|| dir.path().join("company-data.db").display().to_string());
        if options.real_process || options.binary.is_some() {
            Self::start_process(options, dir, db)
        } else {
            Self::start_in_process(&options, dir, db)
        }
    }

    /// The server in this process, configured by the same flags as `serve`, on its own two-worker runtime.
    fn start_in_process(
        options: &ServiceOptions<'_>,
        dir: Arc<tempfile::TempDir>,
        db: String,
    ) -> Self {
        use clap::Parser;
        /// `serve`'s flags.
        #[derive(Parser)]
        struct Serve {
            #[command(flatten)]
            args: company_data::config::ServeArgs,
        }
        assert!(
            options.env.is_empty(),
            "environment variables are for a server in a process of its own (real_process: true)"
        );
        let args = Serve::try_parse_from(options.serve_args(&db))
            .unwrap_or_else(|error| panic!("serve flags {:?}: {error}", options.args))
            .args;
        let settings = args.settings().expect("settings");
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let started = async {
                    let server = server_assembly::Server::start(&settings).await?;
                    let listener = tokio::net::TcpListener::bind(args.listen).await?;
                    anyhow::Ok((server, listener))
                };
                let (server, listener) = match started.await {
                    Ok(started) => started,
                    Err(error) => {
                        let _ = ready_tx.send(Err(format!("{error:#}")));
                        return;
                    }
                };
                let address = listener.local_addr().map(|a| format!("http://{a}"));
                let first_key = server.first_key().map(|k| k.key.expose().to_owned());
                let _ = ready_tx.send(address.map(|a| (a, first_key)).map_err(|e| e.to_string()));
                let _ = server
                    .serve(listener, async move {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        let (base, first_key) = ready_rx
            .recv_timeout(Duration::from_mins(1))
            .expect("the server starts in time")
            .unwrap_or_else(|error| panic!("the server did not start: {error}"));
        Self {
            running: Running::InProcess {
                stop: Some(stop),
                first_key,
            },
            base,
            db,
            stdout: Arc::new(Mutex::new(String::new())),
            log: Arc::new(Mutex::new(Vec::new())),
            dir,
        }
    }

    /// The real binary, as a process of its own.
    fn start_process(options: ServiceOptions<'_>, dir: Arc<tempfile::TempDir>, db: String) -> Self {
        let mut child = Command::new(options.binary.as_deref().unwrap_or_else(|| binary()))
            .args(options.serve_args(&db))
            .envs(options.env)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("server starts");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().expect("stderr piped");
        let lines = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(address) = line.strip_prefix("company-data listening on ") {
                    let _ = ready_tx.send(address.to_owned());
                }
                lines.lock().expect("log lock").push(line);
            }
        });
        let base = ready_rx
            .recv_timeout(Duration::from_mins(1))
            .unwrap_or_else(|_| {
                panic!(
                    "server did not start:\n{}",
                    log.lock().expect("log lock").join("\n")
                )
            });
        let stdout = Arc::new(Mutex::new(String::new()));
        if let Some(out) = child.stdout.take() {
            let text = Arc::clone(&stdout);
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    let mut text = text.lock().expect("stdout lock");
                    text.push_str(&line);
                    text.push('\n');
                }
            });
        }
        Self {
            running: Running::Process(child),
            base,
            db,
            stdout,
            log,
            dir,
        }
    }

    /// The key a first start printed (made, in this process), if any (waits briefly for the output to arrive).
    pub fn first_key(&self) -> Option<String> {
        if let Running::InProcess { first_key, .. } = &self.running {
            return first_key.clone();
        }
        for _ in 0..40 {
            let text = self.stdout.lock().expect("stdout lock").clone();
            if let Some(key) = text.lines().find(|l| l.starts_with("cdk_")) {
                return Some(key.to_owned());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// Waits until the lines the server (a real process) has logged satisfy `done`, then returns them: lines are
    /// read from its standard error as they come, so one can land just after the answer it belongs to.
    pub async fn log_until(&self, what: &str, done: impl Fn(&[String]) -> bool) -> Vec<String> {
        eventually(Duration::from_secs(10), what, || {
            let log = self.log.lock().expect("log lock");
            std::future::ready(done(&log).then(|| log.clone()))
        })
        .await
    }

    /// [`Service::log_until`] a line contains `text`.
    pub async fn log_until_line(&self, text: &str) -> Vec<String> {
        self.log_until(&format!("no log line with {text:?}"), |log| {
            log.iter().any(|line| line.contains(text))
        })
        .await
    }

    /// Starts with the default options: the captured pages as a folder origin.
    pub fn with_captured_pages() -> Self {
        Self::start(ServiceOptions::default())
    }

    /// The folder holding the database, to restart a server on it.
    pub fn dir(&self) -> Arc<tempfile::TempDir> {
        Arc::clone(&self.dir)
    }

    /// Creates a key on this server's database with `credits` for a new account; returns the full key.
    pub fn key(&self, account: &str, credits: &str) -> String {
        let out = cli(&[
            "keys",
            "create",
            "--db",
            &self.db,
            "--account",
            account,
            "--credits",
            credits,
        ]);
        out.lines().last().expect("key line").trim().to_owned()
    }

    /// Creates a test-mode key (`cdk_test_…`) for the existing `account` on this server's database; returns the
    /// full key.
    pub fn test_key(&self, account: &str) -> String {
        let made = self.cli(&[
            "keys",
            "create",
            "--account",
            account,
            "--test",
            "--name",
            "ci",
        ]);
        let key = made
            .lines()
            .last()
            .expect("the key's line")
            .trim()
            .to_owned();
        assert!(key.starts_with("cdk_test_"), "{made}");
        key
    }

    /// Creates a dashboard sign-in on this server's database with `company-data accounts create`, the password
    /// given on standard input as a script would; returns what the command printed.
    pub fn create_sign_in(&self, email: &str, password: &str, extra: &[&str]) -> String {
        use std::io::Write;
        let mut child = Command::new(binary())
            .args(["accounts", "create", "--db"])
            .arg(&self.db)
            .args(["--email", email])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("company-data runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(format!("{password}\n").as_bytes())
            .expect("password written");
        let output = child.wait_with_output().expect("company-data ends");
        assert!(
            output.status.success(),
            "accounts create failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `company-data <args> --db <this db>`.
    pub fn cli(&self, args: &[&str]) -> String {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--db", &self.db]);
        cli(&all)
    }

    /// POSTs `body` to the endpoint with the key in `x-api-key`.
    pub async fn post(&self, key: &str, body: &serde_json::Value) -> Reply {
        let request = client()
            .post(format!("{}/v1/network/company-data", self.base))
            .header("x-api-key", key)
            .header("content-type", "application/json")
            .body(body.to_string());
        Reply::from(request.send().await.expect("request sent")).await
    }

    /// The credits the service says the key's account can spend now (balance minus the holds of its requests
    /// in flight, e.g. `"39.5"`), read from the 402 answer to 200 distinct live URLs. Holds live in the server's
    /// memory, so this is how a test sees them. Panics if the account could pay for the probe (200 or more
    /// available), which would spend its credits.
    pub async fn available_credits(&self, key: &str) -> String {
        let urls: Vec<String> = (0..200)
            .map(|i| format!("https://www.linkedin.com/company/credit-probe-{i}"))
            .collect();
        let reply = self.post(key, &serde_json::json!({ "liUrls": urls })).await;
        assert_eq!(
            reply.status, 402,
            "the probe must be refused: {}",
            reply.json
        );
        let message = reply.json["message"].as_str().unwrap_or_default();
        message
            .split("the account has ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("no available amount in {message:?}"))
            .to_owned()
    }

    /// Sends `method path` with the key in `x-api-key`, a JSON body and an `Accept` header if given; the reply and
    /// its body's text.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        key: &str,
        body: Option<&serde_json::Value>,
        accept: Option<&str>,
    ) -> (Reply, String) {
        let mut request = client()
            .request(method, format!("{}{path}", self.base))
            .header("x-api-key", key);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        Reply::with_text(request.send().await.expect("request sent")).await
    }

    /// GETs `path` (e.g. `/healthz`) without a key.
    pub async fn get(&self, path: &str) -> Reply {
        Reply::from(
            client()
                .get(format!("{}{path}", self.base))
                .send()
                .await
                .expect("request sent"),
        )
        .await
    }

    /// The server's process id (a server started with `real_process`).
    pub fn pid(&self) -> u32 {
        match &self.running {
            Running::Process(child) => child.id(),
            Running::InProcess { .. } => panic!("a server in this process has no pid of its own"),
        }
    }

    /// Stops the server: abruptly (SIGKILL) when it is a process; in this process, it stops accepting and
    /// lets requests in flight finish.
    pub fn kill(&mut self) {
        match &mut self.running {
            Running::Process(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            Running::InProcess { stop, .. } => drop(stop.take()),
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A shared HTTP client with no proxy and a generous time-out.
pub fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_mins(1))
            .build()
            .expect("client")
    })
}

/// Credits as the service writes them (`"1.5"`, in headers and messages) in thousandths. Panics on other text.
pub fn credits_millis(text: &str) -> i64 {
    let value: f64 = text
        .parse()
        .unwrap_or_else(|_| panic!("{text:?} is not an amount of credits"));
    (value * 1000.0).round() as i64
}

/// Thousandths of a credit as the service writes them: `1500` → `"1.5"`, `2000` → `"2"`.
pub fn format_credits(millis: i64) -> String {
    if millis % 1000 == 0 {
        (millis / 1000).to_string()
    } else {
        format!("{}", millis as f64 / 1000.0)
    }
}

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Headers, names in lower case.
    pub headers: HashMap<String, String>,
    /// The body as JSON (`Null` when it is not JSON).
    pub json: serde_json::Value,
}

impl Reply {
    /// Reads a reqwest response.
    pub async fn from(response: reqwest::Response) -> Self {
        Self::with_text(response).await.0
    }

    /// Reads a reqwest response, keeping the body's text too (for bodies that are not one JSON value).
    pub async fn with_text(response: reqwest::Response) -> (Self, String) {
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    v.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        let text = response.text().await.expect("body");
        let reply = Self {
            status,
            headers,
            json: serde_json::from_str(&text).unwrap_or_default(),
        };
        (reply, text)
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// What the test origin does for a path.
#[derive(Clone, Debug)]
pub enum Behaviour {
    /// 200 with this file of `tests/fixtures`, after a delay (plus up to `jitter` more).
    Page {
        /// The file.
        file: &'static str,
        /// Time before the answer.
        delay: Duration,
        /// Random extra delay, up to this much.
        jitter: Duration,
    },
    /// A redirect (301) to this path.
    Redirect(&'static str),
    /// This status with this file (or an empty body), and a `Retry-After` of this many seconds if given.
    Status(u16, Option<&'static str>, Option<u64>),
    /// The first `failures` requests get HTTP 503; later ones this page.
    Flaky {
        /// How many requests fail first.
        failures: usize,
        /// The page served after that.
        file: &'static str,
    },
    /// The connection is reset (TCP RST) after the request is read.
    Reset,
    /// A 200 whose body stops half-way (the `Content-Length` promises more).
    Truncated(&'static str),
    /// A 200 whose chunked body never ends.
    Endless,
    /// A 200 with this page uncompressed whatever the request accepts (a server that does not compress).
    Uncompressed(&'static str),
    /// A 200 whose `Content-Encoding` is this coding, which the fetcher did not ask for.
    Encoded(&'static str),
    /// A 200 whose gzip body is 9 KB on the wire and 9 MiB of HTML once decompressed.
    GzipBomb,
}

/// A real HTTP/1.1 origin on loopback that serves captured pages per path, injects faults, and counts requests.
pub struct TestOrigin {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    hits: Arc<Mutex<Hits>>,
    slowest: Arc<Mutex<Duration>>,
    abandoned: Arc<std::sync::atomic::AtomicUsize>,
    /// While `true`, delayed pages are not answered ([`TestOrigin::hold`]).
    held: Arc<tokio::sync::watch::Sender<bool>>,
    in_flight: Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl TestOrigin {
    /// The captured pages plus the faults the tests need:
    /// `/company/google`, `/company/audiense` (pages), `/company/1441` (redirects to Google), `/company/slow`
    /// (3 s), `/company/walled` (redirect to the sign-in wall), `/company/blocked` (999), `/company/limited`
    /// (429 with `Retry-After: 1`), `/company/flaky` (one 503, then Google), `/company/reset`,
    /// `/company/truncated`, `/company/endless`, `/company/brotli` (a coding not asked for), `/company/bomb` (a gzip
    /// bomb), `/company/p<N>` (Google after 300 ms ± 50 ms), `/jobs/search` (a real guest job search that counts
    /// "2000+", for any company); anything else a 404. Pages are sent gzip-compressed
    /// when the request accepts gzip, as the network sends them, except Audiense, which is always sent
    /// uncompressed.
    pub async fn start() -> Self {
        let page = |file, delay| Behaviour::Page {
            file,
            delay,
            jitter: Duration::ZERO,
        };
        let routes: HashMap<String, Behaviour> = HashMap::from([
            (
                "/company/google".to_owned(),
                page("origin/company/google.html", Duration::ZERO),
            ),
            (
                "/company/audiense".to_owned(),
                Behaviour::Uncompressed("origin/company/audiense.html"),
            ),
            (
                "/company/1441".to_owned(),
                Behaviour::Redirect("/company/google"),
            ),
            (
                "/company/slow".to_owned(),
                page("origin/company/google.html", Duration::from_secs(3)),
            ),
            (
                "/company/walled".to_owned(),
                Behaviour::Redirect("/authwall?trk=test"),
            ),
            (
                "/authwall".to_owned(),
                Behaviour::Status(200, Some("pages/authwall-profile-2026.html"), None),
            ),
            (
                page_url::JOB_SEARCH_PATH.to_owned(),
                page("pages/jobs-guest-search-2026.html", Duration::ZERO),
            ),
            (
                "/company/blocked".to_owned(),
                Behaviour::Status(999, Some("pages/blocked-999-2021.html"), None),
            ),
            (
                "/company/limited".to_owned(),
                Behaviour::Status(429, None, Some(1)),
            ),
            (
                "/company/flaky".to_owned(),
                Behaviour::Flaky {
                    failures: 1,
                    file: "origin/company/google.html",
                },
            ),
            ("/company/reset".to_owned(), Behaviour::Reset),
            (
                "/company/truncated".to_owned(),
                Behaviour::Truncated("origin/company/google.html"),
            ),
            ("/company/endless".to_owned(), Behaviour::Endless),
            ("/company/brotli".to_owned(), Behaviour::Encoded("br")),
            ("/company/bomb".to_owned(), Behaviour::GzipBomb),
        ]);
        Self::with_routes(routes).await
    }

    /// An origin with these routes; `/company/p<N>` paths are added (Google after 300 ms ± 50 ms).
    pub async fn with_routes(routes: HashMap<String, Behaviour>) -> Self {
        let routes = Arc::new(routes);
        let hits = Arc::new(Mutex::new(Hits::default()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address: SocketAddr = listener.local_addr().expect("address");
        let counter = Arc::clone(&hits);
        let slowest = Arc::new(Mutex::new(Duration::ZERO));
        let slowest_seen = Arc::clone(&slowest);
        let abandoned = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let held = Arc::new(tokio::sync::watch::Sender::new(false));
        let in_flight = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let shared = Arc::new(Shared {
            hits: Arc::clone(&counter),
            abandoned: Arc::clone(&abandoned),
            held: Arc::clone(&held),
            in_flight: Arc::clone(&in_flight),
        });
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let routes = Arc::clone(&routes);
                let slowest = Arc::clone(&slowest_seen);
                let shared = Arc::clone(&shared);
                tokio::spawn(async move {
                    let started = std::time::Instant::now();
                    let _ = serve_one(stream, &routes, &shared).await;
                    let mut slowest = slowest.lock().expect("slowest lock");
                    *slowest = (*slowest).max(started.elapsed());
                });
            }
        });
        Self {
            base: format!("http://{address}"),
            hits,
            slowest,
            abandoned,
            held,
            in_flight,
            task,
        }
    }

    /// From now on, delayed pages (`Behaviour::Page`, such as `/company/p<N>` and `/company/slow`) are not
    /// answered until [`TestOrigin::release`]: lookups of them stay in flight for as long as a test needs, so
    /// that what happens meanwhile does not depend on timing.
    pub fn hold(&self) {
        self.held.send_replace(true);
    }

    /// Answers the pages held since [`TestOrigin::hold`] (each once its own delay has passed).
    pub fn release(&self) {
        self.held.send_replace(false);
    }

    /// Waits until the origin has received `count` requests in all (within 30 s).
    pub async fn reached(&self, count: usize) {
        eventually(
            Duration::from_secs(30),
            &format!("the origin never received {count} requests"),
            || std::future::ready((self.hits_total() >= count).then_some(())),
        )
        .await;
    }

    /// Waits until no request is in flight and none has arrived for `quiet` (within 30 s); returns how many
    /// requests arrived in all.
    pub async fn settled(&self, quiet: Duration) -> usize {
        let last = Mutex::new((self.hits_total(), std::time::Instant::now()));
        eventually(Duration::from_secs(30), "the origin never settled", || {
            let mut last = last.lock().expect("last lock");
            let hits = self.hits_total();
            if hits != last.0 || self.in_flight() > 0 {
                *last = (hits, std::time::Instant::now());
            }
            std::future::ready((last.1.elapsed() >= quiet).then_some(hits))
        })
        .await
    }

    /// Requests received and not yet answered (nor abandoned).
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Requests for delayed pages whose client closed the connection before the page was sent.
    pub fn abandoned(&self) -> usize {
        self.abandoned.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The longest time one connection took to be answered since the last call, and a reset of that figure.
    pub fn take_slowest(&self) -> Duration {
        std::mem::take(&mut *self.slowest.lock().expect("slowest lock"))
    }

    /// Requests received for any path so far.
    pub fn hits_total(&self) -> usize {
        self.hits.lock().expect("hits lock").per_path.values().sum()
    }

    /// When each request so far arrived, in order.
    pub fn arrivals(&self) -> Vec<std::time::Instant> {
        self.hits.lock().expect("hits lock").arrivals.clone()
    }

    /// Requests received for `path` so far (counted when the request arrives, before any delay).
    pub fn hits(&self, path: &str) -> usize {
        self.hits
            .lock()
            .expect("hits lock")
            .per_path
            .get(path)
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for TestOrigin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).expect("compresses");
    encoder.finish().expect("compresses")
}

/// A fixture gzip-compressed, compressed once per process (the origin shares the cores with what it serves).
fn gzipped(file: &'static str) -> Arc<Vec<u8>> {
    type Compressed = Mutex<HashMap<&'static str, Arc<Vec<u8>>>>;
    static CACHE: std::sync::OnceLock<Compressed> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(bytes) = cache.lock().expect("gzip cache lock").get(file) {
        return Arc::clone(bytes);
    }
    let bytes = Arc::new(gzip(
        &std::fs::read(fixtures().join(file)).expect("fixture"),
    ));
    cache
        .lock()
        .expect("gzip cache lock")
        .insert(file, Arc::clone(&bytes));
    bytes
}

/// A whole HTTP/1.1 answer: `status`, the `extra` header lines (each ending in CRLF), `body` as HTML, and
/// `Connection: close` (one request per connection).
fn response(status: u16, extra: &str, body: &[u8]) -> Vec<u8> {
    let mut response = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n",
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(body);
    response
}

/// What a test origin needs of a request head.
struct RequestHead {
    /// The target's path, without its query; through a proxy (whose request line holds the whole URL), the
    /// URL's path.
    path: String,
    /// `Accept-Encoding` names gzip.
    accepts_gzip: bool,
}

/// Reads one request head (at most 64 KiB); `None` when the client went away first.
async fn read_head(stream: &mut tokio::net::TcpStream) -> std::io::Result<Option<RequestHead>> {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = stream.read(&mut buffer).await?;
        if read == 0 || head.len() > 64 * 1024 {
            return Ok(None);
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let head = String::from_utf8_lossy(&head);
    let target = head.split_whitespace().nth(1).unwrap_or("/");
    let path = target
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|at| &rest[at..]))
        .unwrap_or(target);
    Ok(Some(RequestHead {
        path: path.split('?').next().unwrap_or("/").to_owned(),
        accepts_gzip: head.lines().any(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("accept-encoding:")
                .is_some_and(|codings| codings.contains("gzip"))
        }),
    }))
}

/// What a [`TestOrigin`] was asked.
#[derive(Default)]
struct Hits {
    per_path: HashMap<String, usize>,
    arrivals: Vec<std::time::Instant>,
}

/// What every connection of a [`TestOrigin`] shares.
struct Shared {
    hits: Arc<Mutex<Hits>>,
    abandoned: Arc<std::sync::atomic::AtomicUsize>,
    held: Arc<tokio::sync::watch::Sender<bool>>,
    in_flight: Arc<std::sync::atomic::AtomicUsize>,
}

/// Counts one request in flight for as long as it lives.
struct InFlight<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

async fn serve_one(
    mut stream: tokio::net::TcpStream,
    routes: &HashMap<String, Behaviour>,
    shared: &Shared,
) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (hits, abandoned) = (&shared.hits, &shared.abandoned);
    let Some(RequestHead { path, accepts_gzip }) = read_head(&mut stream).await? else {
        return Ok(());
    };
    shared
        .in_flight
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let _in_flight = InFlight(&shared.in_flight);
    let count = {
        let mut hits = hits.lock().expect("hits lock");
        hits.arrivals.push(std::time::Instant::now());
        let count = hits.per_path.entry(path.clone()).or_insert(0);
        *count += 1;
        *count
    };
    let read = |file: &str| std::fs::read(fixtures().join(file)).expect("fixture");
    let behaviour = routes.get(&path).cloned().or_else(|| {
        path.strip_prefix("/company/p")
            .filter(|n| n.parse::<u32>().is_ok())
            .map(|_| Behaviour::Page {
                file: "origin/company/google.html",
                delay: Duration::from_millis(250),
                jitter: Duration::from_millis(100),
            })
    });
    let respond = response;
    // A captured page, compressed when the client accepts gzip (as the network does).
    let page = |status: u16, extra: &str, file: &'static str| {
        if accepts_gzip {
            respond(
                status,
                &format!("content-encoding: gzip\r\n{extra}"),
                &gzipped(file),
            )
        } else {
            respond(status, extra, &read(file))
        }
    };
    let not_found = b"<html><head><title>Page Not Found | LinkedIn</title></head></html>";
    let bytes = match behaviour {
        Some(Behaviour::Page {
            file,
            delay,
            jitter,
        }) => {
            let extra = jitter.mul_f64(f64::from(u32::try_from(count % 7).unwrap_or(0)) / 6.0);
            // While "working" (and held), notice a client that gives up (end of stream or reset).
            let mut probe = [0u8; 1];
            let mut held = shared.held.subscribe();
            let answer = async {
                tokio::time::sleep(delay + extra).await;
                let _ = held.wait_for(|held| !*held).await;
            };
            tokio::select! {
                () = answer => {}
                read = stream.read(&mut probe) => if matches!(read, Ok(0) | Err(_)) {
                    abandoned.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    return Ok(());
                },
            }
            page(200, "", file)
        }
        Some(Behaviour::Redirect(to)) => respond(301, &format!("location: {to}\r\n"), b""),
        Some(Behaviour::Status(status, file, retry_after)) => {
            let extra = retry_after
                .map(|s| format!("retry-after: {s}\r\n"))
                .unwrap_or_default();
            match file {
                Some(file) => page(status, &extra, file),
                None => respond(status, &extra, b""),
            }
        }
        Some(Behaviour::Flaky { failures, file }) if count > failures => page(200, "", file),
        Some(Behaviour::Flaky { .. }) => respond(503, "", b"busy"),
        Some(Behaviour::Reset) => {
            stream.set_zero_linger()?;
            return Ok(()); // dropping with linger 0 sends RST
        }
        Some(Behaviour::Truncated(file)) => {
            let body = read(file);
            let mut response = respond(200, "", &body);
            response.truncate(response.len() - body.len() / 2);
            response
        }
        Some(Behaviour::Endless) => {
            stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\n\r\n")
                .await?;
            loop {
                stream.write_all(b"11\r\n<p>still here</p>\r\n").await?; // 0x11 = 17 bytes
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        Some(Behaviour::Uncompressed(file)) => respond(200, "", &read(file)),
        Some(Behaviour::Encoded(coding)) => respond(
            200,
            &format!("content-encoding: {coding}\r\n"),
            b"\x1b\x00\x00not a page",
        ),
        Some(Behaviour::GzipBomb) => {
            let mut html = b"<html><body>".to_vec();
            html.resize(9 * 1024 * 1024, b' ');
            respond(200, "content-encoding: gzip\r\n", &gzip(&html))
        }
        None => respond(404, "", not_found),
    };
    stream.write_all(&bytes).await?;
    stream.shutdown().await
}
