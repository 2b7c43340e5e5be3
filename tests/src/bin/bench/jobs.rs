//! Section 9, bulk jobs: a job's pages per second against the origin's own limit (`--origin-rate`), and the
//! stored path's latency at a fixed request rate, alone and while a job runs beside it.

use std::path::Path;
use std::time::{Duration, Instant};

use e2e_harness::{Service, TestOrigin};
use serde_json::{Value, json};

use crate::{
    Error, GOOGLE, Load, Plan, load_json, load_run, page_urls, service_options, spread, timed,
};

/// The origin's own limit in the runs: requests per second.
const ORIGIN_RATE: f64 = 40.0;
/// The synchronous stored requests per second sent beside the job (and alone, to compare).
const STORED_RATE: f64 = 200.0;

const JOBS: &str = "/v1/network/company-data/jobs";

/// Submits a job of `urls` and returns its id.
pub(crate) async fn submit(service: &Service, key: &str, urls: &[String]) -> Result<String, Error> {
    let reply: Value = e2e_harness::client()
        .post(format!("{}{JOBS}", service.base))
        .header("x-api-key", key)
        .json(&json!({ "liUrls": urls }))
        .send()
        .await?
        .json()
        .await?;
    reply["id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("no job id in {reply}").into())
}

/// The job's status body.
pub(crate) async fn status(service: &Service, key: &str, id: &str) -> Result<Value, Error> {
    Ok(e2e_harness::client()
        .get(format!("{}{JOBS}/{id}", service.base))
        .header("x-api-key", key)
        .send()
        .await?
        .json()
        .await?)
}

pub(crate) async fn jobs(plan: Plan, release: &Path) -> Result<Value, Error> {
    eprintln!("9: bulk jobs");
    // The test origin serves `/company/p<N>` in 300 ± 50 ms, like the network.
    let origin = TestOrigin::start().await;
    let mut options = service_options(release, Some(&origin.base));
    options.args.extend(["--origin-rate", "40"]);
    let service = Service::start(options);
    let key = service.key("bench", "1000000");
    timed(&service, &key, &json!({ "liUrls": [GOOGLE] }), 1).await?;

    let pages = if plan.quick { 80 } else { 400 };
    let mut per_second = Vec::new();
    let mut next_page = 100_000;
    for _ in 0..plan.runs {
        let urls = page_urls(next_page, pages);
        next_page += pages;
        let started = Instant::now();
        let id = submit(&service, &key, &urls).await?;
        loop {
            let job = status(&service, &key, &id).await?;
            if job["status"] == "done" {
                if job["resolved"].as_u64() != Some(pages as u64) {
                    return Err(format!("the job did not resolve every page: {job}").into());
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        per_second.push(pages as f64 / started.elapsed().as_secs_f64());
    }
    let ratios: Vec<f64> = per_second.iter().map(|p| p / ORIGIN_RATE).collect();

    let url = format!("{}/v1/network/company-data", service.base);
    let body = json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 }).to_string();
    let alone: Vec<Load> = (0..plan.runs)
        .map(|_| load_run(&url, &key, &body, plan.load_seconds, Some(STORED_RATE)))
        .collect::<Result<_, _>>()?;
    let mut beside = Vec::new();
    for _ in 0..plan.runs {
        // Enough pages to keep the job running through the load.
        let count = (ORIGIN_RATE * f64::from(plan.load_seconds + 5)) as usize;
        let urls = page_urls(next_page, count);
        next_page += count;
        let id = submit(&service, &key, &urls).await?;
        let (load_url, load_key, load_body, seconds) =
            (url.clone(), key.clone(), body.clone(), plan.load_seconds);
        let load = tokio::task::spawn_blocking(move || {
            load_run(&load_url, &load_key, &load_body, seconds, Some(STORED_RATE))
                .map_err(|e| e.to_string())
        })
        .await?
        .map_err(Error::from)?;
        let job = status(&service, &key, &id).await?;
        if job["status"] == "done" {
            return Err(format!("the job ended before the load did: {job}").into());
        }
        e2e_harness::client()
            .delete(format!("{}{JOBS}/{id}", service.base))
            .header("x-api-key", &key)
            .send()
            .await?;
        beside.push(load);
    }
    Ok(json!({
        "origin_rate": ORIGIN_RATE,
        "stored_rate": STORED_RATE,
        "pages_per_job": pages,
        "throughput": {
            "pages_per_second": spread(&per_second),
            "ratio_to_origin_rate": spread(&ratios),
        },
        "stored_alone": load_json(&alone),
        "stored_beside_job": load_json(&beside),
    }))
}

/// The report's section 9.
pub(crate) fn markdown(jobs: &Value) -> String {
    let head = "| figure | median | min | max |\n|---|---|---|---|\n";
    let mut out = format!(
        "\n## 9. Bulk jobs\n\nA job of {} new pages from the test origin (300 ± 50 ms a page) on a server with \
         `--origin-rate {}`: pages per second from submission to `done`, and that over the origin's rate (the \
         most a job can reach; jobs book one start at a time behind synchronous requests). Then the stored path at \
         a fixed {} requests/s, alone and while a job fetches beside it.\n\n{head}",
        jobs["pages_per_job"], jobs["origin_rate"], jobs["stored_rate"],
    );
    out += &crate::row("job pages/s", &jobs["throughput"]["pages_per_second"], 1);
    out += &crate::row(
        "job pages/s ÷ --origin-rate",
        &jobs["throughput"]["ratio_to_origin_rate"],
        2,
    );
    for (label, figures) in [
        ("stored alone", &jobs["stored_alone"]),
        ("stored beside a job", &jobs["stored_beside_job"]),
    ] {
        out += &crate::row(&format!("{label}: p50 ms"), &figures["p50_ms"], 2);
        out += &crate::row(&format!("{label}: p99 ms"), &figures["p99_ms"], 2);
    }
    out
}

/// The server's resident set now (`VmRSS`), in MB.
fn rss_mb(pid: u32) -> f64 {
    crate::status_mb(pid, "VmRSS:")
}

/// Section 11: a job of many rows downloaded whole, page after page of the results endpoint (10,000 rows a page,
/// streamed): the server's resident set while it writes them, over its resident set at rest once the job ended.
pub(crate) async fn download(plan: Plan, release: &Path) -> Result<Value, Error> {
    eprintln!("11: a large job's download");
    let rows: usize = if plan.quick { 5_000 } else { 100_000 };
    // Rows over 20 pages of the test origin: the job fetches 20 pages and answers every position.
    let origin = TestOrigin::start().await;
    let service = Service::start(service_options(release, Some(&origin.base)));
    let key = service.key("bench", "1000000");
    let pages = page_urls(200_000, 20);
    let urls: Vec<String> = (0..rows).map(|n| pages[n % pages.len()].clone()).collect();
    let id = submit(&service, &key, &urls).await?;
    loop {
        let job = status(&service, &key, &id).await?;
        if job["status"] == "done" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid = service.pid();
    let at_rest = rss_mb(pid);
    // The resident set, polled while the pages are read.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let done = std::sync::Arc::clone(&done);
        std::thread::spawn(move || {
            let mut peak = 0.0_f64;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(rss_mb(pid));
                std::thread::sleep(Duration::from_millis(2));
            }
            peak
        })
    };
    let started = Instant::now();
    let (mut read_rows, mut bytes) = (0_usize, 0_usize);
    let mut next = Some(format!("{JOBS}/{id}/results"));
    while let Some(path) = next.take() {
        let reply = e2e_harness::client()
            .get(format!("{}{path}", service.base))
            .header("x-api-key", &key)
            .send()
            .await?;
        next = reply
            .headers()
            .get("link")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once('<'))
            .and_then(|(_, rest)| rest.split_once('>'))
            .map(|(target, _)| target.to_owned());
        let text = reply.text().await?;
        bytes += text.len();
        read_rows += text.lines().count();
    }
    let seconds = started.elapsed().as_secs_f64();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak = watcher.join().map_err(|_| "the RSS watcher panicked")?;
    if read_rows != rows {
        return Err(format!("downloaded {read_rows} rows of {rows}").into());
    }
    Ok(json!({
        "rows": rows,
        "rows_per_page": bulk_jobs::MOST_ROWS_PER_READ,
        "rows_per_chunk": bulk_jobs::output::ROWS_PER_CHUNK,
        "mb_downloaded": bytes as f64 / 1e6,
        "seconds": seconds,
        "rss_at_rest_mb": at_rest,
        "rss_peak_mb": peak,
        "rss_over_rest_mb": (peak - at_rest).max(0.01),
    }))
}

/// The report's section 11.
pub(crate) fn download_markdown(download: &Value) -> String {
    let over = download["rss_over_rest_mb"].as_f64().unwrap_or(f64::NAN);
    format!(
        "\n## 11. A large job's download\n\nA done job of {} rows (20 pages of the test origin, every row a whole \
         record) read page after page from the results endpoint ({} rows a page, each streamed {} rows at a \
         time): {:.0} MB in {:.1} s. The server's resident set at rest after the job: **{:.1} MB**; at its peak \
         during the download: **{:.1} MB**, **{over:.1} MB** over rest (target ≤ 20 MB: {}).\n",
        download["rows"],
        download["rows_per_page"],
        download["rows_per_chunk"],
        download["mb_downloaded"].as_f64().unwrap_or(f64::NAN),
        download["seconds"].as_f64().unwrap_or(f64::NAN),
        download["rss_at_rest_mb"].as_f64().unwrap_or(f64::NAN),
        download["rss_peak_mb"].as_f64().unwrap_or(f64::NAN),
        if over <= 20.0 { "met" } else { "not met" },
    )
}
