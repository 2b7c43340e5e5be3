//! `company-data`: run the service, manage keys and credits, parse a saved page.
#![allow(clippy::print_stdout, clippy::print_stderr)] // the binary is the one place that talks to the user

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use api_keys::{ApiKeys, KeyId, SqliteKeyStore};
use clap::{Args, Parser, Subcommand};
use company_data::{App, ConnectionLimits, Settings, lock_database, serve};
use credit_ledger::{Credits, Ledger, SqliteLedger};
use dashboard_auth::{SqliteUserStore, Users};
use page_scraper::{FetcherSettings, Origin, parse_page};
use page_url::{NetworkDomain, PageUrl};
use snapshot_cache::{SnapshotStore, SqliteSnapshotStore};
use sqlite_pool::SqlitePool;
use tracing_subscriber::EnvFilter;

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
    Serve(ServeArgs),
    /// Create, list and revoke API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Grant and show credits.
    #[command(subcommand)]
    Credits(CreditsCommand),
    /// Create and list dashboard sign-ins (email and password).
    #[command(subcommand)]
    Accounts(AccountsCommand),
    /// Print the record parsed from a saved page (no network).
    Scrape(ScrapeArgs),
    /// Parse every stored page again and replace its record, so a parser fix reaches stored data without
    /// fetching again.
    Reparse {
        #[command(flatten)]
        db: DbArg,
    },
}

#[derive(Args)]
struct DbArg {
    /// The SQLite database file.
    #[arg(long, env = "COMPANY_DATA_DB", default_value = "company-data.db")]
    db: PathBuf,
}

#[derive(Args)]
struct DomainArg {
    /// The professional network's domain; records carry `https://www.<domain>/...` URLs.
    #[arg(long, env = "COMPANY_DATA_NETWORK_DOMAIN", default_value = "linkedin.com", value_parser = parse_domain)]
    network_domain: NetworkDomain,
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "COMPANY_DATA_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    #[command(flatten)]
    db: DbArg,
    /// Where live pages come from: an http(s) base URL (the page's path is appended) or a folder of captured
    /// pages laid out as DIR/<company|school|showcase>/<slug>.html.
    #[arg(
        long,
        env = "COMPANY_DATA_ORIGIN",
        default_value = "https://www.linkedin.com"
    )]
    origin: String,
    #[command(flatten)]
    domain: DomainArg,
    /// Seconds one live lookup may take before it is abandoned (fractions allowed).
    #[arg(long, env = "COMPANY_DATA_LIVE_TIMEOUT", default_value = "25", value_parser = parse_seconds)]
    live_timeout: Duration,
    /// Requests to the origin in flight at once.
    #[arg(long, env = "COMPANY_DATA_ORIGIN_CONCURRENCY", default_value = "16", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    origin_concurrency: u32,
    /// Request starts per second to the origin, spread evenly (0 for no limit; fractions allowed).
    #[arg(long, env = "COMPANY_DATA_ORIGIN_RATE", default_value = "0", value_parser = parse_rate)]
    origin_rate: f64,
    /// Attempts per page, the first included (retries only on blocks, server errors and connection failures,
    /// and only inside the live time-out).
    #[arg(long, env = "COMPANY_DATA_ORIGIN_ATTEMPTS", default_value = "4", value_parser = clap::value_parser!(u32).range(1..=20))]
    origin_attempts: u32,
    /// A User-Agent to send; repeat for several, used in turn when the site blocks (environment: separated by `|`).
    #[arg(
        long = "user-agent",
        env = "COMPANY_DATA_USER_AGENTS",
        value_delimiter = '|'
    )]
    user_agents: Vec<String>,
    /// An outbound proxy (http://, https:// or socks5:// URL); repeat for several, used in turn when the site
    /// blocks (environment: separated by `,`).
    #[arg(long = "proxy", env = "COMPANY_DATA_PROXIES", value_delimiter = ',')]
    proxies: Vec<String>,
    /// Requests per second each API key may make, on average (0 for no limit; fractions allowed).
    #[arg(long, env = "COMPANY_DATA_KEY_RATE", default_value = "10", value_parser = parse_rate)]
    key_rate: f64,
    /// Requests an API key may make at once before the rate applies.
    #[arg(long, env = "COMPANY_DATA_KEY_BURST", default_value = "20", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    key_burst: u32,
    /// Seconds a client has to send a request's headers, and the longest a kept-alive connection may sit idle.
    #[arg(long, env = "COMPANY_DATA_HEADER_TIMEOUT", default_value = "10", value_parser = parse_seconds)]
    header_timeout: Duration,
    /// Seconds a client has to send a request's body.
    #[arg(long, env = "COMPANY_DATA_BODY_TIMEOUT", default_value = "30", value_parser = parse_seconds)]
    body_timeout: Duration,
    /// Client connections open at once; further ones wait in the listen backlog until one closes.
    #[arg(long, env = "COMPANY_DATA_MAX_CONNECTIONS", default_value = "4096", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_connections: u32,
    /// Live lookups each account may have in flight at once, over all its requests (0 for no cap). A request
    /// that would go over it is answered 429 `too_many_live_lookups`, unless the account has nothing else in flight.
    #[arg(long, env = "COMPANY_DATA_ACCOUNT_LIVE_LOOKUPS", default_value_t = company_lookup::DEFAULT_LIVE_LOOKUPS_PER_ACCOUNT)]
    account_live_lookups: usize,
    /// Log filter (tracing's EnvFilter syntax), e.g. `info` or `company_data=debug`.
    #[arg(long, env = "COMPANY_DATA_LOG", default_value = "info")]
    log: String,
    /// Mark the dashboard's cookies `Secure` on every response: set it when a TLS proxy is in front (they are
    /// marked on any request whose `X-Forwarded-Proto` is `https` anyway).
    #[arg(long, env = "COMPANY_DATA_SECURE_COOKIES")]
    secure_cookies: bool,
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Create a key; prints the full key as the last line (it is shown only this once).
    Create {
        #[command(flatten)]
        db: DbArg,
        /// The account the key spends from (created if missing).
        #[arg(long, default_value = "default")]
        account: String,
        /// Credits to grant the account now (e.g. 100 or 0.5).
        #[arg(long)]
        credits: Option<Credits>,
        /// A label for the key.
        #[arg(long)]
        name: Option<String>,
    },
    /// List keys (never the secrets).
    List {
        #[command(flatten)]
        db: DbArg,
    },
    /// Revoke a key by id or by its prefix (e.g. `cdk_AbCd1234`); running servers stop accepting it within
    /// seconds.
    Revoke {
        #[command(flatten)]
        db: DbArg,
        /// Key id (from `keys list`) or prefix.
        key: String,
    },
}

#[derive(Subcommand)]
enum CreditsCommand {
    /// Add credits to an account.
    Grant {
        #[command(flatten)]
        db: DbArg,
        /// The account.
        #[arg(long)]
        account: String,
        /// Credits to add (e.g. 100 or 0.5).
        amount: Credits,
    },
    /// Show balances (of one account, or all) and the newest ledger rows.
    Show {
        #[command(flatten)]
        db: DbArg,
        /// Only this account.
        #[arg(long)]
        account: Option<String>,
    },
}

#[derive(Subcommand)]
enum AccountsCommand {
    /// Create a dashboard sign-in. The password is read from standard input (typed twice without echo on a
    /// terminal, or the first line of a pipe), never from the command line, where other users could see it.
    Create {
        #[command(flatten)]
        db: DbArg,
        /// The email to sign in with.
        #[arg(long)]
        email: String,
        /// The billing account it manages (created if missing); defaults to one named by the email.
        #[arg(long)]
        account: Option<String>,
        /// Make it an admin: sees every account, grants credits, invites people.
        #[arg(long)]
        admin: bool,
        /// Credits to grant the account now (e.g. 100).
        #[arg(long)]
        credits: Option<Credits>,
    },
    /// List dashboard sign-ins.
    List {
        #[command(flatten)]
        db: DbArg,
    },
}

#[derive(Args)]
struct ScrapeArgs {
    /// A saved page (HTML).
    file: PathBuf,
    /// The page's URL.
    #[arg(long)]
    url: String,
    #[command(flatten)]
    domain: DomainArg,
}

fn parse_domain(text: &str) -> Result<NetworkDomain, String> {
    NetworkDomain::parse(text).map_err(|e| e.to_string())
}

fn parse_rate(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r >= 0.0)
        .ok_or_else(|| format!("`{text}` is not a number of requests per second (0 for no limit)"))
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 3600.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| format!("`{text}` is not a number of seconds between 0 and 3600"))
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => run_server(args).await,
            Command::Keys(command) => keys(command).await,
            Command::Credits(command) => credits(command).await,
            Command::Accounts(command) => accounts(command).await,
            Command::Scrape(args) => scrape(&args),
            Command::Reparse { db } => reparse(&db).await,
        }
    })
}

async fn run_server(args: ServeArgs) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_new(&args.log).context("--log is not a valid filter")?)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let mut fetcher =
        FetcherSettings::new(Origin::parse(&args.origin)?, args.domain.network_domain);
    fetcher.max_concurrency = args.origin_concurrency as usize;
    fetcher.rate_per_second = (args.origin_rate > 0.0).then_some(args.origin_rate);
    fetcher.max_attempts = args.origin_attempts;
    let user_agents: Vec<String> = args
        .user_agents
        .into_iter()
        .map(|ua| ua.trim().to_owned())
        .filter(|ua| !ua.is_empty())
        .collect();
    if !user_agents.is_empty() {
        fetcher.user_agents = user_agents;
    }
    fetcher.proxies = args
        .proxies
        .into_iter()
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect();
    let settings = Settings {
        db: args.db.db,
        fetcher,
        live_timeout: args.live_timeout,
        key_rate: (args.key_rate > 0.0).then_some((args.key_rate, args.key_burst)),
        live_lookups_per_account: (args.account_live_lookups > 0)
            .then_some(args.account_live_lookups),
        connections: ConnectionLimits {
            header_timeout: args.header_timeout,
            body_timeout: args.body_timeout,
            max_connections: args.max_connections as usize,
        },
        secure_cookies: args.secure_cookies,
    };
    #[cfg(feature = "bench-no-auth")]
    tracing::warn!(
        "benchmark build (--features bench-no-auth): requests are NOT authenticated; never serve real traffic"
    );
    let _lock = lock_database(&settings.db)?;
    let app = Arc::new(App::open(&settings).await.context("starting the service")?);
    if let Some(first) = app.ensure_first_key().await? {
        println!(
            "First start: created account `{}` with {} credits and this API key (shown once, keep it):",
            first.account, first.credits
        );
        println!("{}", first.key.expose());
    }
    let released = app.release_all_holds().await?;
    if released > 0 {
        tracing::warn!(released, "released credit holds left by a stopped server");
    }
    let sweeper = Arc::clone(&app);
    tokio::spawn(async move {
        let mut every_minute = tokio::time::interval(Duration::from_mins(1));
        loop {
            every_minute.tick().await;
            if let Err(error) = sweeper.release_stale_holds().await {
                tracing::warn!(error = format!("{error:#}"), "stale-hold sweep failed");
            }
            if let Err(error) = sweeper.delete_expired_sessions().await {
                tracing::warn!(error = format!("{error:#}"), "expired-session sweep failed");
            }
        }
    });
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| {
            format!(
                "cannot listen on {}; choose another address with --listen",
                args.listen
            )
        })?;
    let address = listener.local_addr()?;
    tracing::info!(%address, db = %settings.db.display(), origin = ?settings.fetcher.origin, "listening");
    eprintln!("company-data listening on http://{address}");
    serve(listener, app, shutdown_signal()).await?;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

async fn open_stores(db: &DbArg) -> anyhow::Result<(ApiKeys, SqliteLedger)> {
    let pool = SqlitePool::open(&db.db).await?;
    let keys = ApiKeys::new(Arc::new(SqliteKeyStore::with_pool(pool.clone()).await?));
    let ledger = SqliteLedger::with_pool(pool).await?;
    Ok((keys, ledger))
}

/// The new password: typed twice without echo on a terminal, else the first line of standard input.
fn read_new_password() -> anyhow::Result<String> {
    use std::io::{BufRead, IsTerminal};
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("Password: ")?;
        let second = rpassword::prompt_password("The same password again: ")?;
        if first != second {
            bail!("the two passwords differ; run the command again");
        }
        return Ok(first);
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("reading the password from standard input")?;
    let password = line.strip_suffix('\n').unwrap_or(&line);
    Ok(password.strip_suffix('\r').unwrap_or(password).to_owned())
}

async fn accounts(command: AccountsCommand) -> anyhow::Result<()> {
    let open = |db: DbArg| async move {
        let pool = SqlitePool::open(&db.db).await?;
        let users = Users::new(Arc::new(SqliteUserStore::with_pool(pool.clone()).await?));
        let ledger = SqliteLedger::with_pool(pool).await?;
        anyhow::Ok((users, ledger))
    };
    match command {
        AccountsCommand::Create {
            db,
            email,
            account,
            admin,
            credits,
        } => {
            let email = dashboard_auth::normalize_email(&email)?;
            let password = read_new_password()?;
            let (users, ledger) = open(db).await?;
            let account = ledger
                .ensure_account(account.as_deref().unwrap_or(&email))
                .await?;
            if let Some(credits) = credits.filter(|c| c.millis() > 0) {
                ledger
                    .grant(account.id, credits, "granted with a new sign-in")
                    .await?;
            }
            let user = users.create(&email, &password, account.id, admin).await?;
            println!(
                "Created {}{} for account `{}`. Sign in at http://<server>/dashboard.",
                if user.admin { "admin " } else { "" },
                user.email,
                account.name
            );
        }
        AccountsCommand::List { db } => {
            let (users, ledger) = open(db).await?;
            let accounts = ledger.accounts().await?;
            println!("{:<32} {:<24} {:<6} created", "email", "account", "admin");
            for user in users.store().users().await? {
                let account = accounts
                    .iter()
                    .find(|a| a.id == user.account)
                    .map_or("?", |a| a.name.as_str());
                println!(
                    "{:<32} {:<24} {:<6} {}",
                    user.email,
                    account,
                    if user.admin { "yes" } else { "no" },
                    user.created_at
                );
            }
        }
    }
    Ok(())
}

async fn keys(command: KeysCommand) -> anyhow::Result<()> {
    match command {
        KeysCommand::Create {
            db,
            account,
            credits,
            name,
        } => {
            let (keys, ledger) = open_stores(&db).await?;
            let account = ledger.ensure_account(&account).await?;
            if let Some(credits) = credits.filter(|c| c.millis() > 0) {
                ledger
                    .grant(account.id, credits, "granted with a new key")
                    .await?;
            }
            let (key, record) = keys.create(account.id, name.as_deref()).await?;
            let balance = ledger
                .account(account.id)
                .await?
                .map_or(Credits::ZERO, |a| a.balance);
            println!(
                "Created key {} ({}) for account `{}` (balance {balance} credits).",
                record.id,
                record.masked(),
                account.name
            );
            println!("The full key is shown only now:");
            println!("{}", key.expose());
        }
        KeysCommand::List { db } => {
            let (keys, ledger) = open_stores(&db).await?;
            let accounts = ledger.accounts().await?;
            println!(
                "{:<4} {:<22} {:<16} {:<12} {:<25} {:<25} status",
                "id", "key", "account", "name", "created", "last used"
            );
            for key in keys.list().await? {
                let account = accounts
                    .iter()
                    .find(|a| a.id == key.account)
                    .map_or("?", |a| a.name.as_str());
                let status = key
                    .revoked_at
                    .map_or("active".to_owned(), |at| format!("revoked {at}"));
                let last_used = key
                    .last_used_at
                    .map_or("never".to_owned(), |at| at.to_string());
                println!(
                    "{:<4} {:<22} {:<16} {:<12} {:<25} {:<25} {status}",
                    key.id.0,
                    key.masked(),
                    account,
                    key.name.as_deref().unwrap_or("-"),
                    key.created_at.to_string(),
                    last_used
                );
            }
        }
        KeysCommand::Revoke { db, key } => {
            let (keys, _) = open_stores(&db).await?;
            let id = if let Ok(id) = key.parse::<i64>() {
                KeyId(id)
            } else {
                let prefix: String = key.chars().take(12).collect();
                let matches = keys.store().by_prefix(&prefix).await?;
                match matches.as_slice() {
                    [one] => one.id,
                    [] => bail!("no key starts with `{prefix}`; see `company-data keys list`"),
                    _ => bail!(
                        "several keys start with `{prefix}`; revoke by id (see `company-data keys list`)"
                    ),
                }
            };
            if keys.revoke(id).await? {
                println!("Revoked key {id}. Running servers stop accepting it within seconds.");
            } else {
                bail!(
                    "key {id} does not exist or is already revoked; see `company-data keys list`"
                );
            }
        }
    }
    Ok(())
}

async fn credits(command: CreditsCommand) -> anyhow::Result<()> {
    match command {
        CreditsCommand::Grant {
            db,
            account,
            amount,
        } => {
            let (_, ledger) = open_stores(&db).await?;
            let Some(found) = ledger.account_by_name(&account).await? else {
                bail!(
                    "no account `{account}`; create it with `company-data keys create --account {account}`"
                );
            };
            let balance = ledger
                .grant(found.id, amount, "granted from the command line")
                .await?;
            println!("Granted {amount} credits to `{account}`; balance {balance}.");
        }
        CreditsCommand::Show { db, account } => {
            let (_, ledger) = open_stores(&db).await?;
            let accounts = match account {
                Some(name) => vec![
                    ledger
                        .account_by_name(&name)
                        .await?
                        .with_context(|| format!("no account `{name}`"))?,
                ],
                None => ledger.accounts().await?,
            };
            for account in accounts {
                println!("{}: {} credits", account.name, account.balance);
                for entry in ledger.entries(account.id, None, 10).await? {
                    let what = match (&entry.charge, &entry.note) {
                        (Some(charge), _) => format!(
                            "{} request, {} URLs, {} returned",
                            if charge.live { "live" } else { "stored" },
                            charge.urls_requested,
                            charge.urls_returned
                        ),
                        (None, note) => format!("grant: {}", note.as_deref().unwrap_or("")),
                    };
                    println!(
                        "  {}  {:>8}  balance {:>8}  {what}",
                        entry.at,
                        entry.delta.to_string(),
                        entry.balance_after.to_string()
                    );
                }
            }
        }
    }
    Ok(())
}

fn scrape(args: &ScrapeArgs) -> anyhow::Result<()> {
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

async fn reparse(db: &DbArg) -> anyhow::Result<()> {
    let store = SqliteSnapshotStore::with_pool(SqlitePool::open(&db.db).await?).await?;
    let (mut reparsed, mut changed, mut failed) = (0u64, 0u64, 0u64);
    let mut after: Option<PageUrl> = None;
    loop {
        let pages = store.stored_pages(after.as_ref(), 100).await?;
        let Some(last) = pages.last() else { break };
        after = Some(last.url.clone());
        for page in pages {
            let domain = NetworkDomain::parse(
                page.url
                    .as_str()
                    .trim_start_matches("https://www.")
                    .split('/')
                    .next()
                    .unwrap_or_default(),
            )?;
            let parsed = tokio::task::spawn_blocking(move || {
                let record = parse_page(&page.html, &page.url, &domain);
                (page, record)
            })
            .await?;
            match parsed {
                (page, Ok(record)) => {
                    reparsed += 1;
                    if store
                        .replace_record(&page.url, page.fetched_at, &record)
                        .await?
                    {
                        changed += 1;
                    }
                }
                (page, Err(error)) => {
                    failed += 1;
                    eprintln!("{}: {error}; its stored record is kept", page.url);
                }
            }
        }
    }
    println!("Reparsed {reparsed} stored pages ({changed} records replaced, {failed} failed).");
    Ok(())
}
