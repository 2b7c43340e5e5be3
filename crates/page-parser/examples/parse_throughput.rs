//! Parsing throughput over captured pages, on one core:
//! `cargo run --release -p page-parser --example parse_throughput -- [--seconds S] [--rounds N] DIR...`.
//!
//! Measures, over every `*.html` under the folders (company pages and the pages the network shows instead):
//! `parse_page` (the full extraction: tree build, then every field), and html5ever's tokenizer alone over the
//! same bytes with a sink that drops every token (the floor any html5ever-based extractor pays). Prints one JSON
//! object: pages per second per round for each, the page count and bytes. `just bench` reads it.
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use page_parser::parse_page;
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

/// Drops every token: what is left is the cost of tokenizing.
struct Discard;

impl TokenSink for Discard {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        std::hint::black_box(token);
        TokenSinkResult::Continue
    }
}

fn tokenize(html: &str) {
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let tokenizer = Tokenizer::new(Discard, TokenizerOpts::default());
    let _ = tokenizer.feed(&input);
    tokenizer.end();
}

/// Pages per second of `work` over all pages, for `rounds` rounds of `seconds` each.
fn rounds(pages: &[String], rounds: u32, seconds: f64, mut work: impl FnMut(&str)) -> Vec<f64> {
    (0..rounds)
        .map(|_| {
            let started = Instant::now();
            let mut done = 0usize;
            while started.elapsed() < Duration::from_secs_f64(seconds) {
                for html in pages {
                    work(html);
                    done += 1;
                }
            }
            done as f64 / started.elapsed().as_secs_f64()
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut option = |name: &str, default: f64| -> Result<f64, Box<dyn std::error::Error>> {
        match args.iter().position(|a| a == name) {
            Some(i) if i + 1 < args.len() => {
                let value = args[i + 1].parse()?;
                args.drain(i..=i + 1);
                Ok(value)
            }
            Some(_) => Err(format!("{name} needs a value").into()),
            None => Ok(default),
        }
    };
    let seconds = option("--seconds", 2.0)?;
    let round_count = option("--rounds", 3.0)? as u32;
    let mut files = Vec::new();
    for dir in &args {
        html_files(Path::new(dir), &mut files);
    }
    files.sort();
    let pages: Vec<String> = files
        .iter()
        .map(std::fs::read_to_string)
        .collect::<std::io::Result<_>>()?;
    if pages.is_empty() {
        return Err("no .html files under the given folders".into());
    }
    let bytes: usize = pages.iter().map(String::len).sum();
    let domain = NetworkDomain::default();
    let url = PageUrl::parse_submitted("https://www.linkedin.com/company/benchmark", &domain)?;
    let full = rounds(&pages, round_count, seconds, |html| {
        let _ = std::hint::black_box(parse_page(html, &url, &domain));
    });
    let tokenizer = rounds(&pages, round_count, seconds, tokenize);
    let report = serde_json::json!({
        "pages": pages.len(),
        "bytes": bytes,
        "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "parse_page_per_second": full,
        "tokenizer_per_second": tokenizer,
    });
    println!("{report}");
    Ok(())
}
