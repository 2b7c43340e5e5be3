//! Live batch benchmark: 200 distinct URLs in one request against a loopback origin that answers each page after
//! 250-350 ms, with `--origin-concurrency 200`. Reports total request time over the slowest page's time (target:
//! at most 1.1). Run by `just bench` with `COMPANY_DATA_BIN` set to a release build; `--append FILE` adds the
//! figures to the report.
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::io::Write;
use std::time::Instant;

use serde_json::json;
use tests::{Service, ServiceOptions, TestOrigin};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let append = std::env::args().skip_while(|a| a != "--append").nth(1);
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--origin-concurrency", "200"],
        ..ServiceOptions::default()
    });
    let key = service.key("bench", "100000");
    let mut ratios = Vec::new();
    let mut totals = Vec::new();
    for run in 0..5 {
        let urls: Vec<String> = (0..200)
            .map(|i| format!("https://www.linkedin.com/company/p{}", run * 1000 + i))
            .collect();
        origin.take_slowest();
        let started = Instant::now();
        let reply = service.post(&key, &json!({ "liUrls": urls })).await;
        let total = started.elapsed();
        let resolved = reply.json["results"].as_array().map_or(0, Vec::len);
        if reply.status != 200 || resolved != 200 {
            return Err(format!(
                "run {run}: status {}, {resolved} of 200 resolved",
                reply.status
            )
            .into());
        }
        let slowest = origin.take_slowest();
        ratios.push(total.as_secs_f64() / slowest.as_secs_f64());
        totals.push(total.as_secs_f64() * 1000.0);
    }
    let median = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        (
            values[values.len() / 2],
            values[0],
            values[values.len() - 1],
        )
    };
    let (ratio, ratio_min, ratio_max) = median(&mut ratios);
    let (total, total_min, total_max) = median(&mut totals);
    let report = format!(
        "\n## Live batch: 200 URLs, origin latency 250-350 ms, --origin-concurrency 200\n\n\
         Release build, five runs, one request each, all 200 resolved every run.\n\n\
         | figure | median | min | max |\n|---|---|---|---|\n\
         | request time (ms) | {total:.0} | {total_min:.0} | {total_max:.0} |\n\
         | request time / slowest page (target ≤ 1.1) | {ratio:.2} | {ratio_min:.2} | {ratio_max:.2} |\n"
    );
    println!("{report}");
    if let Some(file) = append {
        std::fs::OpenOptions::new()
            .append(true)
            .open(&file)?
            .write_all(report.as_bytes())?;
        println!("appended to {file}");
    }
    Ok(())
}
