//! `company-data enrich INPUT --out OUTPUT`: a whole list as one bulk job, against a server (the jobs API, through
//! the Rust client) or embedded on a database, with a progress bar, `--resume`, and the results beside each
//! input row (`list-enrich`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use api_contract::{Include, Includes, RecordFields};
use clap::{Args, ValueEnum};
use company_data::config::ServeArgs;
use company_lookup::Caller;
use credit_ledger::Tenant;
use list_enrich::{
    CsvCells, Embedded, EmbeddedResolver, Enrichment, JobTarget, List, ListFormat, QueryColumns,
    QueryList, Remote, ResolveTarget,
};
use server_assembly::Server;

/// The flags of `company-data enrich`.
#[derive(Args, Debug)]
pub(crate) struct EnrichArgs {
    /// The list: a CSV with a header row (`.csv`), NDJSON (`.ndjson`, `.jsonl`), or page URLs one per line.
    input: PathBuf,
    /// Where to write one result per input row, the row's own columns beside the record's.
    #[arg(long)]
    out: PathBuf,
    /// The column (CSV) or member (NDJSON) holding the URL. Default: the first whose first value is a page URL.
    #[arg(long, conflicts_with_all = ["domain_column", "name_column"])]
    column: Option<String>,
    /// The column holding each row's website domain (or site URL): rows are resolved to their company page
    /// (with the evidence) instead of read as page URLs. A text list with this flag is one domain per line.
    #[arg(long)]
    domain_column: Option<String>,
    /// The column holding each row's company name, used for rows without a domain (or for every row, alone).
    #[arg(long)]
    name_column: Option<String>,
    /// With --name-column: the column holding a location hint (a country, region or city) for the name.
    #[arg(long, requires = "name_column")]
    location_column: Option<String>,
    /// The output's format. Default: CSV for a `.csv` OUTPUT, NDJSON otherwise.
    #[arg(long, value_enum)]
    format: Option<OutputFormat>,
    /// Freshness window in hours (0 to 24): above 0, snapshots stored within it answer at the stored price.
    #[arg(long, default_value = "0")]
    max_age_hours: f64,
    /// Run the job on a server (its jobs API) or here.
    #[command(flatten)]
    remote: super::ServerArg,
    /// The account billed when the job runs here (no `--server`).
    #[arg(long, default_value = "default")]
    account: String,
    /// Keep only these record members in each answer, comma-separated (e.g. `company_name,website,industries`;
    /// `original_li_url` and `final_li_url` are always kept). Billing is the same. URL lists only.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["domain_column", "name_column"])]
    fields: Option<Vec<String>>,
    /// Fetch these parts of each record beyond its page, comma-separated (`job_count`: one more request to the
    /// network per company fetched live; billing is the same). URL lists only.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["domain_column", "name_column"])]
    include: Option<Vec<String>>,
    /// Write the CSV output's cells exactly as the data has them. By default a cell of the answer (a page's
    /// text is someone else's) that starts with `=`, `+`, `-`, `@`, a tab or a carriage return, and is not a
    /// number, gets a leading `'` so that a spreadsheet opens it as text instead of running it as a formula.
    #[arg(long)]
    raw_csv: bool,
    /// Continue the job an interrupted run of the same command started (kept in `OUTPUT.job`): pages already
    /// looked up are not looked up or paid for again.
    #[arg(long)]
    resume: bool,
    /// Without `--server`: the database and every `serve` setting of the lookup (origin, rates, time-outs).
    #[command(flatten)]
    serve: ServeArgs,
}

/// How the CSV output's cells are written, from `--raw-csv`.
fn csv_cells(args: &EnrichArgs) -> CsvCells {
    if args.raw_csv {
        CsvCells::Raw
    } else {
        CsvCells::SpreadsheetSafe
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum OutputFormat {
    Ndjson,
    Csv,
}

pub(crate) async fn run(args: EnrichArgs) -> anyhow::Result<()> {
    let settings = args.serve.settings()?;
    if args.domain_column.is_some() || args.name_column.is_some() {
        return resolve_list(args, &settings).await;
    }
    let list = List::read(
        &args.input,
        args.column.as_deref(),
        &settings.fetcher.domain,
    )
    .with_context(|| format!("reading {}", args.input.display()))?;
    let skipped = list.rows.len() - list.to_send().0.len();
    eprintln!(
        "{}: {} rows, URLs in `{}`{}",
        args.input.display(),
        list.rows.len(),
        list.url_column,
        if skipped > 0 {
            format!(", {skipped} without a valid page URL (written as invalid_url, not sent)")
        } else {
            String::new()
        }
    );
    let format = output_format(&args);
    let fields = args
        .fields
        .as_deref()
        .map(RecordFields::new)
        .transpose()
        .context("--fields")?;
    let include = included(args.include.as_deref().unwrap_or_default())?;
    let mut what = Enrichment {
        list: &list,
        out: &args.out,
        format,
        max_age_hours: args.max_age_hours,
        target_name: settings.db.to_string(),
        resume: args.resume,
        poll: Duration::from_millis(500),
        fields,
        include,
        csv_cells: csv_cells(&args),
    };
    let mut embedded = None;
    let target: Box<dyn JobTarget> = if let Some(client) = args.remote.client()? {
        what.target_name = args.remote.server.clone().unwrap_or_default();
        Box::new(Remote(client))
    } else {
        let server = Server::start(&settings).await?;
        let account = account_named(&server, &args.account, &settings).await?;
        let target = Embedded {
            jobs: std::sync::Arc::clone(&server.app().jobs),
            caller: Caller {
                tenant: Tenant::live(account),
                key_id: None,
            },
            domain: settings.fetcher.domain.clone(),
        };
        embedded = Some(server);
        Box::new(target)
    };
    let bar = progress_bar(list.to_send().0.len() as u64);
    let enriched = tokio::select! {
        enriched = list_enrich::enrich(target.as_ref(), &what, |job| bar.show(job)) => enriched,
        _ = tokio::signal::ctrl_c() => {
            let what = if embedded.is_some() { "the job is kept in the database" } else { "the job goes on on the server" };
            bail!("interrupted: {what}; run the same command with --resume to continue it without paying again");
        }
    };
    bar.finish();
    if let Some(server) = embedded {
        server.stop().await;
    }
    let summary = enriched?;
    eprintln!("wrote {}: {summary}", args.out.display());
    Ok(())
}

/// The job's progress: a bar on a terminal, a line every 5 s otherwise.
struct Progress {
    bar: indicatif::ProgressBar,
    last_line: std::sync::Mutex<std::time::Instant>,
}

fn progress_bar(total: u64) -> Progress {
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} rows  {per_sec}  ETA {eta}  {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Progress {
        bar,
        last_line: std::sync::Mutex::new(std::time::Instant::now()),
    }
}

impl Progress {
    fn show(&self, job: &api_contract::JobInfo) {
        let paused = job
            .paused_reason
            .as_deref()
            .map(|why| format!(" (paused: {why})"))
            .unwrap_or_default();
        self.bar.set_position(job.done);
        self.bar
            .set_message(format!("{} credits{paused}", job.credits_charged));
        let Ok(mut last_line) = self.last_line.lock() else {
            return;
        };
        if self.bar.is_hidden()
            && (last_line.elapsed() >= Duration::from_secs(5) || job.status.is_final())
        {
            eprintln!(
                "job {}: {}/{} rows, {}{paused}, {} credits",
                job.id,
                job.done,
                job.total,
                job.status.as_str(),
                job.credits_charged
            );
            *last_line = std::time::Instant::now();
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The output's format: `--format`, else CSV for a `.csv` OUTPUT, NDJSON otherwise.
fn output_format(args: &EnrichArgs) -> ListFormat {
    match args.format {
        Some(OutputFormat::Csv) => ListFormat::Csv,
        None if ListFormat::of(&args.out) == ListFormat::Csv => ListFormat::Csv,
        Some(OutputFormat::Ndjson) | None => ListFormat::Ndjson,
    }
}

/// The account billed when the work runs here, with how to make it when it is missing.
async fn account_named(
    server: &Server,
    name: &str,
    settings: &server_assembly::Settings,
) -> anyhow::Result<credit_ledger::AccountId> {
    let account = server
        .app()
        .accounts
        .ledger()
        .account_by_name(name)
        .await?
        .with_context(|| {
            format!(
                "no account `{name}` in {}; create it with `company-data keys create --account {name}` and grant \
                 it credits with `company-data credits grant --account {name} <amount>`, or name another with \
                 --account",
                settings.db
            )
        })?;
    Ok(account.id)
}

/// `enrich --domain-column` / `--name-column`: each row's query resolved to its page, the record beside it.
async fn resolve_list(
    args: EnrichArgs,
    settings: &server_assembly::Settings,
) -> anyhow::Result<()> {
    let columns = QueryColumns {
        domain: args.domain_column.clone(),
        name: args.name_column.clone(),
        location: args.location_column.clone(),
    };
    let list = QueryList::read(&args.input, &columns)
        .with_context(|| format!("reading {}", args.input.display()))?;
    let empty = list.rows.iter().filter(|row| row.query.is_none()).count();
    eprintln!(
        "{}: {} rows{}",
        args.input.display(),
        list.rows.len(),
        if empty > 0 {
            format!(", {empty} with neither a domain nor a name (written as no_query, not sent)")
        } else {
            String::new()
        }
    );
    let format = output_format(&args);
    let mut embedded = None;
    let target: Box<dyn ResolveTarget> = if let Some(client) = args.remote.client()? {
        Box::new(Remote(client))
    } else {
        let server = Server::start(settings).await?;
        let account = account_named(&server, &args.account, settings).await?;
        let target = EmbeddedResolver {
            resolver: std::sync::Arc::clone(&server.app().resolver),
            caller: Caller {
                tenant: Tenant::live(account),
                key_id: None,
            },
        };
        embedded = Some(server);
        Box::new(target)
    };
    let enriched = tokio::select! {
        enriched = list_enrich::enrich_queries(target.as_ref(), &list, args.max_age_hours, &args.out, (format, csv_cells(&args)), |done, total| {
            eprintln!("{done}/{total} distinct queries resolved");
        }) => enriched,
        _ = tokio::signal::ctrl_c() => bail!("interrupted: the requests answered so far were charged; nothing was written"),
    };
    if let Some(server) = embedded {
        server.stop().await;
    }
    let summary = enriched.with_context(|| {
        format!(
            "the run stopped; {} holds the rows resolved (and paid for) before it, the others as not_looked_up",
            args.out.display()
        )
    })?;
    eprintln!("wrote {}: {summary}", args.out.display());
    Ok(())
}

/// `--include`'s parts, each a name of [`Include`].
fn included(names: &[String]) -> anyhow::Result<Includes> {
    let parts = names
        .iter()
        .map(|name| {
            Include::from_name(name.trim()).with_context(|| {
                let known: Vec<&str> = Include::ALL.iter().map(|part| part.as_str()).collect();
                format!(
                    "--include: no part `{name}`; the parts are {}",
                    known.join(", ")
                )
            })
        })
        .collect::<anyhow::Result<Vec<Include>>>()?;
    Ok(Includes::of(&parts))
}
