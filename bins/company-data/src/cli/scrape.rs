//! `company-data scrape FILE --url URL [--explain]`: the record parsed from a saved page, or where each of its
//! fields came from.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use page_scraper::{ParsedPage, ScrapeError, parse_page_explained};
use page_url::PageUrl;

use super::DomainArg;

#[derive(Args)]
pub(crate) struct ScrapeArgs {
    /// A saved page (HTML).
    file: PathBuf,
    /// The page's URL.
    #[arg(long)]
    url: String,
    /// Instead of the record, print each field with the signal it was read from, or the signals tried when the
    /// page had none, and the sections a company page carries that this one lacks.
    #[arg(long)]
    explain: bool,
    #[command(flatten)]
    domain: DomainArg,
}

pub(crate) fn run(args: &ScrapeArgs) -> anyhow::Result<()> {
    let domain = &args.domain.network_domain;
    let html = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let url = PageUrl::parse_submitted(&args.url, domain)
        .map_err(|e| anyhow::anyhow!("--url: {e}; {}", e.fix()))?;
    let parsed = parse_page_explained(&String::from_utf8_lossy(&html), &url, domain)
        .map_err(|e| anyhow::anyhow!("{}: {}", args.file.display(), plainly(&e)))?;
    if args.explain {
        explain(&parsed);
    } else {
        println!("{}", serde_json::to_string_pretty(&parsed.record)?);
    }
    Ok(())
}

/// What the saved page is, when it is not a guest company, school or showcase page, and what to do instead.
fn plainly(error: &ScrapeError) -> String {
    let instead =
        "or let the service fetch the page itself (POST /v1/network/company-data with its URL)";
    match error {
        ScrapeError::SignedIn => format!(
            "this page was saved while signed in (the network's signed-in app), which scrape does not read; save \
             the company page from a signed-out (private) browser window, {instead}"
        ),
        ScrapeError::Authwall => format!(
            "this is the network's sign-in wall, not a company page; save the page again from a signed-out \
             window once the company page itself shows, {instead}"
        ),
        ScrapeError::Blocked { by } => format!(
            "this is the page the network shows a client it refuses ({by}), not a company page; save it \
             again later, {instead}"
        ),
        ScrapeError::NotFound => {
            "this is the network's \"page not found\" page: no company page exists at that address; check \
             the page name"
                .to_owned()
        }
        ScrapeError::WrongPageKind { found } => {
            let kind = page_url::other_page_kind(found);
            format!(
                "this is {kind} ({found}), not a company, school or showcase page; scrape reads those only: save \
                 the organisation's page (/company/NAME, /school/NAME or /showcase/NAME)"
            )
        }
        ScrapeError::Unparseable => "the page holds none of the markup of a guest company page (no JSON-LD \
             organization, no top card); if it is a company page the parser does not know, report it with the \
             page attached"
            .to_owned(),
        other => other.to_string(),
    }
}

/// One line per field, `field  source`, then the missing sections.
fn explain(parsed: &ParsedPage) {
    let width = parsed
        .fields
        .iter()
        .map(|f| f.field.len())
        .max()
        .unwrap_or(0);
    for field in &parsed.fields {
        let source = match (field.signal, field.tried.as_slice()) {
            (Some(signal), _) => signal.to_owned(),
            (None, []) => "absent: logged-out pages do not show it".to_owned(),
            (None, tried) => format!("absent: not in {}", tried.join("; nor in ")),
        };
        println!("{:<width$}  {source}", field.field);
    }
    let missing = if parsed.missing_sections.is_empty() {
        "none".to_owned()
    } else {
        parsed.missing_sections.join(", ")
    };
    println!("\nSections a company page carries that this one lacks: {missing}");
}
