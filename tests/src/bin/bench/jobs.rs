//! Section 9, bulk jobs: a job's pages per second against the origin's own limit (`--origin-rate`), and the
//! stored path's latency at a fixed request rate, alone and while a job runs beside it.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tests::{Service, TestOrigin};

use crate::{
    Error, GOOGLE, Load, Plan, load_json, load_run, page_urls, service_options, spread, timed,
};

/// The origin's own limit in the runs: requests per second.
const ORIGIN_RATE: f64 = 40.0;
/// The synchronous stored requests per second sent beside the job (and alone, to compare).
const STORED_RATE: f64 = 200.0;

const JOBS: &str = "/v1/network/company-data/jobs";

/// Submits a job of `urls` and returns its id.
async fn submit(service: &Service, key: &str, urls: &[String]) -> Result<String, Error> {
    let reply: Value = tests::client()
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

async fn status(service: &Service, key: &str, id: &str) -> Result<Value, Error> {
    Ok(tests::client()
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
        tests::client()
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
