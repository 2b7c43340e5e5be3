//! `company-data`: run the service, manage keys, credits and sign-ins, parse a saved page.
#![allow(clippy::print_stdout, clippy::print_stderr)] // the binary is the one place that talks to the user

mod cli;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "company-data",
    version,
    about = "Company records from professional-network page URLs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service.
    Serve(Box<company_data::config::ServeArgs>),
    /// Create, list and revoke API keys.
    #[command(subcommand)]
    Keys(cli::keys::KeysCommand),
    /// Grant and show credits.
    #[command(subcommand)]
    Credits(cli::credits::CreditsCommand),
    /// Create and list dashboard sign-ins (email and password).
    #[command(subcommand)]
    Accounts(cli::accounts::AccountsCommand),
    /// Look up a whole list (CSV, NDJSON or URLs one per line) as one bulk job and write each row's result beside
    /// its own columns; on a server (--server, --key) or here on --db.
    Enrich(Box<cli::enrich::EnrichArgs>),
    /// Show or rotate an account's webhook secret (watches sign their change events with it).
    #[command(subcommand)]
    Webhooks(cli::webhooks::WebhooksCommand),
    /// Serve the API's tools to an agent host over MCP on standard input and output: on the database here, or
    /// relayed to a server (--server, --key).
    Mcp(Box<cli::mcp::McpArgs>),
    /// Search the stored companies by filters and words, as NDJSON or CSV rows; on a server (--server, --key) or
    /// here on --db for an account.
    Search(Box<cli::search::SearchArgs>),
    /// Print the record parsed from a saved page (no network).
    Scrape(cli::scrape::ScrapeArgs),
    /// Parse every stored page again and replace its record, so a parser fix reaches stored data without
    /// fetching again.
    Reparse {
        #[command(flatten)]
        db: cli::DbArg,
    },
}

/// Runs the command; an error is one line on standard error and exit code 1 — never a backtrace, whatever
/// `RUST_BACKTRACE` says: the errors a command returns are about its input (a page, a file, a flag), not bugs.
fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => cli::serve::run(*args).await,
            Command::Keys(command) => cli::keys::run(command).await,
            Command::Credits(command) => cli::credits::run(command).await,
            Command::Accounts(command) => cli::accounts::run(command).await,
            Command::Enrich(args) => cli::enrich::run(*args).await,
            Command::Webhooks(command) => cli::webhooks::run(command).await,
            Command::Mcp(args) => cli::mcp::run(*args).await,
            Command::Search(args) => cli::search::run(*args).await,
            Command::Scrape(args) => cli::scrape::run(&args),
            Command::Reparse { db } => cli::reparse::run(&db).await,
        }
    })
}
