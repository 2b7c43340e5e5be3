//! `bench load`: the benchmark's own small HTTP load generator, so that `bench --quick` needs nothing compiled or
//! installed besides this workspace (the full `just bench` uses oha, through `$OHA`).
//!
//! It takes the subset of oha's flags the benchmark passes (`-z 5s`, `-c 32`, `-m POST`, `-T TYPE`, `-H 'name:
//! value'`, `-d BODY`, `-q RATE`, the URL; `--no-tui`, `--output-format json` and `--latency-correction` are
//! accepted and implied) and prints the part of oha's JSON report the benchmark reads: `summary.requestsPerSec`,
//! `latencyPercentiles.p50`/`p99` in seconds, and `statusCodeDistribution`.
//!
//! Each of `-c` tasks sends its requests one after another over keep-alive connections. With `-q`, request `n` is
//! due at `start + n / rate` and its latency counts from when it was due, not from when it was sent (oha's
//! `--latency-correction`), so a slow server is not hidden by the generator waiting for it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::{Error, quantile};

/// One run's settings, from oha's flags.
struct Settings {
    url: String,
    method: reqwest::Method,
    headers: reqwest::header::HeaderMap,
    body: String,
    duration: Duration,
    connections: usize,
    rate: Option<f64>,
}

fn parse(args: &[String]) -> Result<Settings, Error> {
    let mut settings = Settings {
        url: String::new(),
        method: reqwest::Method::GET,
        headers: reqwest::header::HeaderMap::new(),
        body: String::new(),
        duration: Duration::from_secs(5),
        connections: 32,
        rate: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} takes a value"));
        match arg.as_str() {
            "--no-tui" | "--latency-correction" => {}
            "--output-format" => {
                if value()? != "json" {
                    return Err("bench load writes JSON only".into());
                }
            }
            "-z" => {
                let text = value()?;
                let seconds: f64 = text
                    .strip_suffix('s')
                    .unwrap_or(text)
                    .parse()
                    .map_err(|_| format!("-z takes seconds, like 5s, not {text}"))?;
                settings.duration = Duration::from_secs_f64(seconds);
            }
            "-c" => settings.connections = value()?.parse()?,
            "-q" => settings.rate = Some(value()?.parse()?),
            "-m" => settings.method = reqwest::Method::from_bytes(value()?.as_bytes())?,
            "-T" => {
                settings
                    .headers
                    .insert(reqwest::header::CONTENT_TYPE, value()?.parse()?);
            }
            "-H" => {
                let header = value()?;
                let (name, content) = header
                    .split_once(':')
                    .ok_or_else(|| format!("-H takes 'name: value', not {header}"))?;
                settings.headers.insert(
                    reqwest::header::HeaderName::from_bytes(name.trim().as_bytes())?,
                    content.trim().parse()?,
                );
            }
            "-d" => value()?.clone_into(&mut settings.body),
            url if !url.starts_with('-') => url.clone_into(&mut settings.url),
            other => return Err(format!("bench load does not take {other}").into()),
        }
    }
    if settings.url.is_empty() {
        return Err("bench load needs a URL".into());
    }
    Ok(settings)
}

/// Runs the load `args` describe and prints its report.
pub(crate) async fn main(args: &[String]) -> Result<(), Error> {
    let settings = Arc::new(parse(args)?);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(settings.connections)
        .build()?;
    let started = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..settings.connections.max(1))
        .map(|_| {
            let (settings, client, next) =
                (Arc::clone(&settings), client.clone(), Arc::clone(&next));
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
                loop {
                    let due = match settings.rate {
                        Some(rate) => {
                            let n = next.fetch_add(1, Ordering::Relaxed);
                            let due = started + Duration::from_secs_f64(n as f64 / rate);
                            tokio::time::sleep_until(due.into()).await;
                            due
                        }
                        None => Instant::now(),
                    };
                    if due.duration_since(started) >= settings.duration {
                        break;
                    }
                    // A transport error counts as status 0, a failed answer.
                    let status: u16 = client
                        .request(settings.method.clone(), &settings.url)
                        .headers(settings.headers.clone())
                        .body(settings.body.clone())
                        .send()
                        .await
                        .map(|response| response.status().as_u16())
                        .unwrap_or_default();
                    latencies.push(due.elapsed().as_secs_f64());
                    *statuses.entry(status).or_default() += 1;
                }
                (latencies, statuses)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
    for task in tasks {
        let (task_latencies, task_statuses) = task.await?;
        latencies.extend(task_latencies);
        for (status, count) in task_statuses {
            *statuses.entry(status).or_default() += count;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let distribution: serde_json::Map<String, serde_json::Value> = statuses
        .into_iter()
        .map(|(status, count)| (status.to_string(), json!(count)))
        .collect();
    let report = json!({
        "summary": { "requestsPerSec": latencies.len() as f64 / seconds, "total": seconds },
        "latencyPercentiles": { "p50": quantile(&latencies, 0.5), "p99": quantile(&latencies, 0.99) },
        "statusCodeDistribution": distribution,
    });
    println!("{report}");
    Ok(())
}
