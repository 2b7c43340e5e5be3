//! Harness for the end-to-end tests: starts the real `company-data` binary on loopback with its own SQLite
//! file, runs its command line, and serves captured pages from a real HTTP origin with injected behaviour.
#![allow(clippy::missing_panics_doc)] // test harness: a failed set-up is a failed test

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};

/// The repository's `tests/fixtures` folder.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The `company-data` binary, built once per test run with the same profile as the tests.
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "--quiet",
                "-p",
                "company-data",
                "--bin",
                "company-data",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building company-data failed");
        let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"),
            PathBuf::from,
        );
        target.join("debug").join("company-data")
    })
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

/// A running server with its own database, killed on drop.
pub struct Service {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The database file.
    pub db: PathBuf,
    /// What the server printed on stdout.
    stdout: Arc<Mutex<String>>,
    /// Every line the server logged on stderr so far.
    pub log: Arc<Mutex<Vec<String>>>,
    dir: Arc<tempfile::TempDir>,
}

/// How to start a [`Service`].
pub struct ServiceOptions<'a> {
    /// `--origin`.
    pub origin: String,
    /// `--live-timeout`, in seconds.
    pub live_timeout: &'a str,
    /// Extra environment, e.g. the log filter.
    pub env: Vec<(&'a str, &'a str)>,
    /// An existing database folder to reuse (for restarts); a new one otherwise.
    pub dir: Option<Arc<tempfile::TempDir>>,
}

impl Default for ServiceOptions<'_> {
    fn default() -> Self {
        Self {
            origin: fixtures().join("origin").display().to_string(),
            live_timeout: "10",
            env: Vec::new(),
            dir: None,
        }
    }
}

impl Service {
    /// Starts `company-data serve` on a free loopback port and waits until it listens.
    pub fn start(options: ServiceOptions<'_>) -> Self {
        let dir = options
            .dir
            .unwrap_or_else(|| Arc::new(tempfile::tempdir().expect("temp dir")));
        let db = dir.path().join("company-data.db");
        let mut child = Command::new(binary())
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--origin",
                &options.origin,
                "--live-timeout",
                options.live_timeout,
            ])
            .arg("--db")
            .arg(&db)
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
            child,
            base,
            db,
            stdout,
            log,
            dir,
        }
    }

    /// The key a first start printed, if any (waits briefly for the output to arrive).
    pub fn first_key(&self) -> Option<String> {
        for _ in 0..40 {
            let text = self.stdout.lock().expect("stdout lock").clone();
            if let Some(key) = text.lines().find(|l| l.starts_with("cdk_")) {
                return Some(key.to_owned());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
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
            &self.db.display().to_string(),
            "--account",
            account,
            "--credits",
            credits,
        ]);
        out.lines().last().expect("key line").trim().to_owned()
    }

    /// `company-data <args> --db <this db>`.
    pub fn cli(&self, args: &[&str]) -> String {
        let mut all: Vec<&str> = args.to_vec();
        let db = self.db.display().to_string();
        all.extend(["--db", &db]);
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

    /// Stops the server abruptly (SIGKILL).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
        let bytes = response.bytes().await.expect("body");
        Self {
            status,
            headers,
            json: serde_json::from_slice(&bytes).unwrap_or_default(),
        }
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// What the test origin does for a path.
#[derive(Clone, Debug)]
pub enum Behaviour {
    /// 200 with this file of `tests/fixtures`, after an optional delay.
    Page { file: &'static str, delay: Duration },
    /// A redirect (301) to this path.
    Redirect(&'static str),
    /// This status with this file (or an empty body).
    Status(u16, Option<&'static str>),
}

/// A real HTTP origin on loopback that serves captured pages per path and counts the requests per path.
pub struct TestOrigin {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    hits: Arc<Mutex<HashMap<String, usize>>>,
    task: tokio::task::JoinHandle<()>,
}

impl TestOrigin {
    /// The captured pages plus the faults the tests need: `/company/1441` redirects to Google, `/company/slow`
    /// answers after 3 s, `/company/walled` redirects to the sign-in wall, `/company/blocked` is an HTTP 999,
    /// `/company/limited` a 429, anything else a 404.
    pub async fn start() -> Self {
        let slow = Duration::from_secs(3);
        let routes: HashMap<&'static str, Behaviour> = HashMap::from([
            (
                "/company/google",
                Behaviour::Page {
                    file: "origin/company/google.html",
                    delay: Duration::ZERO,
                },
            ),
            (
                "/company/audiense",
                Behaviour::Page {
                    file: "origin/company/audiense.html",
                    delay: Duration::ZERO,
                },
            ),
            ("/company/1441", Behaviour::Redirect("/company/google")),
            (
                "/company/slow",
                Behaviour::Page {
                    file: "origin/company/google.html",
                    delay: slow,
                },
            ),
            ("/company/walled", Behaviour::Redirect("/authwall?trk=test")),
            (
                "/authwall",
                Behaviour::Status(200, Some("pages/authwall-profile-2026.html")),
            ),
            (
                "/company/blocked",
                Behaviour::Status(999, Some("pages/blocked-999-2021.html")),
            ),
            ("/company/limited", Behaviour::Status(429, None)),
        ]);
        let routes = Arc::new(routes);
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address: SocketAddr = listener.local_addr().expect("address");
        let counter = Arc::clone(&hits);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (routes, counter) = (Arc::clone(&routes), Arc::clone(&counter));
                let service =
                    hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                        let (routes, counter) = (Arc::clone(&routes), Arc::clone(&counter));
                        async move {
                            let path = request.uri().path().to_owned();
                            *counter
                                .lock()
                                .expect("hits lock")
                                .entry(path.clone())
                                .or_insert(0) += 1;
                            Ok::<_, std::convert::Infallible>(
                                answer(routes.get(path.as_str()).cloned()).await,
                            )
                        }
                    });
                tokio::spawn(async move {
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self {
            base: format!("http://{address}"),
            hits,
            task,
        }
    }

    /// Requests served for `path` so far.
    pub fn hits(&self, path: &str) -> usize {
        self.hits
            .lock()
            .expect("hits lock")
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

async fn answer(behaviour: Option<Behaviour>) -> Response<Full<Bytes>> {
    let read = |file: &str| Bytes::from(std::fs::read(fixtures().join(file)).expect("fixture"));
    let (status, location, body) = match behaviour {
        Some(Behaviour::Page { file, delay }) => {
            tokio::time::sleep(delay).await;
            (200, None, read(file))
        }
        Some(Behaviour::Redirect(to)) => (301, Some(to), Bytes::new()),
        Some(Behaviour::Status(status, file)) => (status, None, file.map(read).unwrap_or_default()),
        None => (
            404,
            None,
            Bytes::from_static(
                b"<html><head><title>Page Not Found | LinkedIn</title></head></html>",
            ),
        ),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = StatusCode::from_u16(status).expect("valid status");
    response.headers_mut().insert(
        "content-type",
        "text/html; charset=utf-8".parse().expect("header"),
    );
    if let Some(location) = location {
        response
            .headers_mut()
            .insert("location", location.parse().expect("header"));
    }
    response
}
