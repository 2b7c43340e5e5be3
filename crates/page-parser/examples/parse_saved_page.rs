//! Embedding the parser alone: a saved company page in, a record out. No tokio, no reqwest, no network.
//!
//! `cargo run -p page-parser --example parse_saved_page -- PAGE.html URL`
//!
//! Prints the record as JSON, then one line per field that the page did not have.
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example reports on stdout

use page_parser::parse_page;
use page_url::{NetworkDomain, PageUrl};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(file), Some(url)) = (args.next(), args.next()) else {
        return Err("usage: parse_saved_page PAGE.html URL".into());
    };
    let domain = NetworkDomain::default();
    // The URL the page was saved from: it names the page kind and gives `final_li_url` when the page lacks a
    // canonical link.
    let url = PageUrl::parse_submitted(&url, &domain).map_err(|e| format!("{e}; {}", e.fix()))?;
    let html = std::fs::read(&file)?;
    let record = parse_page(&String::from_utf8_lossy(&html), &url, &domain)?;
    println!("{}", serde_json::to_string_pretty(&record)?);
    let json = serde_json::to_value(&record)?;
    for field in [
        "company_name",
        "website",
        "industries",
        "company_size",
        "headquarters",
    ] {
        if json.get(field).is_none() {
            println!("absent: {field}");
        }
    }
    Ok(())
}
