//! `company-data scrape FILE --url URL`: the record parsed from a saved page.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use page_scraper::parse_page;
use page_url::PageUrl;

use super::DomainArg;

#[derive(Args)]
pub(crate) struct ScrapeArgs {
    /// A saved page (HTML).
    file: PathBuf,
    /// The page's URL.
    #[arg(long)]
    url: String,
    #[command(flatten)]
    domain: DomainArg,
}

pub(crate) fn run(args: &ScrapeArgs) -> anyhow::Result<()> {
    let domain = &args.domain.network_domain;
    let html = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let url = PageUrl::parse_submitted(&args.url, domain)
        .map_err(|e| anyhow::anyhow!("--url: {e}; {}", e.fix()))?;
    let record = parse_page(&String::from_utf8_lossy(&html), &url, domain)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    println!("{}", serde_json::to_string_pretty(&record)?);
    Ok(())
}
