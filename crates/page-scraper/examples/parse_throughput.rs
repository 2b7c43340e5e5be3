//! Parsing throughput over captured pages: `cargo run --release -p page-scraper --example parse_throughput --
//! [--out FILE] DIR...`. Parses every `*.html` under the folders (company pages and the pages the network
//! shows instead) for about two seconds each round, three rounds, and reports pages per second on one core.
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use page_scraper::parse_page;
use page_url::{NetworkDomain, PageUrl};

fn html_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            html_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "html") {
            into.push(path);
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let out = args.iter().position(|a| a == "--out").map(|i| {
        let file = args.get(i + 1).cloned().unwrap_or_default();
        args.drain(i..=(i + 1).min(args.len() - 1));
        PathBuf::from(file)
    });
    let mut files = Vec::new();
    for dir in &args {
        html_files(Path::new(dir), &mut files);
    }
    files.sort();
    let pages: Vec<(String, String)> = files
        .iter()
        .map(|f| Ok((f.display().to_string(), std::fs::read_to_string(f)?)))
        .collect::<std::io::Result<_>>()?;
    if pages.is_empty() {
        return Err("no .html files under the given folders".into());
    }
    let bytes: usize = pages.iter().map(|(_, html)| html.len()).sum();
    let domain = NetworkDomain::default();
    let url = PageUrl::parse_submitted("https://www.linkedin.com/company/benchmark", &domain)?;
    let mut rounds = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let mut parsed = 0usize;
        while started.elapsed() < Duration::from_secs(2) {
            for (_, html) in &pages {
                let _ = std::hint::black_box(parse_page(html, &url, &domain));
                parsed += 1;
            }
        }
        rounds.push(parsed as f64 / started.elapsed().as_secs_f64());
    }
    rounds.sort_by(f64::total_cmp);
    let (min, median, max) = (rounds[0], rounds[1], rounds[2]);
    let mb_per_s = median * (bytes as f64 / pages.len() as f64) / 1e6;
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let report = format!(
        "# Benchmarks\n\nWritten by `just bench`. Machine: {cores} cores, {cpu}. Each figure is the median of \
         three two-second rounds, with min and max.\n\n\
         ## Parsing throughput (one core)\n\n\
         {} pages, {:.1} MB in all ({}).\n\n\
         | figure | median | min | max |\n|---|---|---|---|\n\
         | pages per second | {median:.0} | {min:.0} | {max:.0} |\n\
         | MB of HTML per second | {mb_per_s:.1} | | |\n\
         | ms per page (mean) | {:.2} | | |\n",
        pages.len(),
        bytes as f64 / 1e6,
        args.join(", "),
        1000.0 / median,
    );
    println!("{report}");
    if let Some(out) = out {
        std::fs::write(&out, report)?;
        println!("written to {}", out.display());
    }
    Ok(())
}
