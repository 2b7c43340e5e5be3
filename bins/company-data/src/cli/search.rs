//! `company-data search`: the stored companies searched by filters and words (`POST …/search`), on a server
//! (`--server`, `--key`, through the Rust client) or here on `--db` for an account; the rows as NDJSON or CSV.

use std::io::Write;

use anyhow::Context;
use api_contract::{
    CompanyRow, Range, SearchBody, SearchRequest, SearchResponse, SearchSort, SpecialtiesMatch,
};
use bulk_jobs::output::CsvCells;
use clap::{Args, ValueEnum};
use company_data::config::ServeArgs;
use company_lookup::Caller;
use credit_ledger::Tenant;
use serde_json::Value;
use server_assembly::Server;

/// The flags of `company-data search`.
#[derive(Args, Debug)]
pub(crate) struct SearchArgs {
    /// Words to find in the name, slogan, description or specialties.
    #[arg(long)]
    q: Option<String>,
    /// An industry as the network labels it (repeat for any of several).
    #[arg(long = "industry")]
    industries: Vec<String>,
    /// A size band as shown, e.g. `51-200 employees` (repeat for any of several).
    #[arg(long = "size")]
    company_sizes: Vec<String>,
    /// An organization type, e.g. `Privately Held` (repeat for any of several).
    #[arg(long = "type")]
    company_types: Vec<String>,
    /// A headquarters country, two-letter code (repeat for any of several).
    #[arg(long = "country")]
    countries: Vec<String>,
    /// A headquarters region (repeat for any of several).
    #[arg(long = "region")]
    regions: Vec<String>,
    /// A headquarters city (repeat for any of several).
    #[arg(long = "locality")]
    localities: Vec<String>,
    /// A specialty (repeat for any of several; with --all-specialties, every one).
    #[arg(long = "specialty")]
    specialties: Vec<String>,
    /// Every --specialty must be listed.
    #[arg(long)]
    all_specialties: bool,
    /// Employees on the network, at least.
    #[arg(long)]
    min_employees: Option<u64>,
    /// Employees on the network, at most.
    #[arg(long)]
    max_employees: Option<u64>,
    /// Employee growth over 90 days, in percent, at least (from the pages' history).
    #[arg(long, allow_negative_numbers = true)]
    min_employee_growth: Option<f64>,
    /// Employee growth over 90 days, in percent, at most.
    #[arg(long, allow_negative_numbers = true)]
    max_employee_growth: Option<f64>,
    /// Followers, at least.
    #[arg(long)]
    min_followers: Option<u64>,
    /// Followers, at most.
    #[arg(long)]
    max_followers: Option<u64>,
    /// Founded in this year or later.
    #[arg(long)]
    founded_from: Option<i32>,
    /// Founded in this year or earlier.
    #[arg(long)]
    founded_to: Option<i32>,
    /// Only companies that link a website (`true`) or that do not (`false`).
    #[arg(long)]
    has_website: Option<bool>,
    /// The order: relevance (the default with --q), followers (the default without), employees or freshness.
    #[arg(long)]
    sort: Option<String>,
    /// Keep only these row members, comma-separated (e.g. `company_name,follower_count`; `final_li_url` is
    /// always kept). CSV keeps every column, those left out empty.
    #[arg(long, value_delimiter = ',')]
    fields: Option<Vec<String>>,
    /// Rows per request (1 to 100).
    #[arg(long, default_value = "100")]
    limit: u32,
    /// At most this many rows in all, page after page.
    #[arg(long, default_value = "1000")]
    max_rows: usize,
    /// How rows are written on standard output.
    #[arg(long, value_enum, default_value = "ndjson")]
    format: Format,
    /// Write CSV cells exactly as the data has them (by default a cell that a spreadsheet would run as a
    /// formula gets a leading `'`).
    #[arg(long)]
    raw_csv: bool,
    /// Search on a server (its API) or here.
    #[command(flatten)]
    remote: super::ServerArg,
    /// The account whose companies are searched here (no `--server`).
    #[arg(long, default_value = "default")]
    account: String,
    /// Without `--server`: the database and the `serve` settings (`--search-scope` among them).
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Ndjson,
    Csv,
}

impl SearchArgs {
    /// The request body these flags ask for (`cursor` set per page).
    fn body(&self) -> anyhow::Result<SearchBody> {
        let sort = self
            .sort
            .as_deref()
            .map(|sort| serde_json::from_value::<SearchSort>(Value::String(sort.to_owned())))
            .transpose()
            .context("--sort")?;
        Ok(SearchBody {
            q: self.q.clone(),
            industries: self.industries.clone(),
            company_sizes: self.company_sizes.clone(),
            company_types: self.company_types.clone(),
            countries: self.countries.clone(),
            regions: self.regions.clone(),
            localities: self.localities.clone(),
            specialties: self.specialties.clone(),
            specialties_match: self.all_specialties.then_some(SpecialtiesMatch::All),
            employee_count: range_of(self.min_employees, self.max_employees),
            employee_growth: range_of(self.min_employee_growth, self.max_employee_growth),
            follower_count: range_of(self.min_followers, self.max_followers),
            founded: range_of(self.founded_from, self.founded_to),
            has_website: self.has_website,
            sort,
            limit: Some(self.limit),
            fields: self.fields.clone(),
            ..SearchBody::default()
        })
    }
}

/// The range of two optional flags; `None` when neither was given, so the body is what a person would write.
fn range_of<T>(min: Option<T>, max: Option<T>) -> Option<Range<T>> {
    (min.is_some() || max.is_some()).then_some(Range { min, max })
}

pub(crate) async fn run(args: SearchArgs) -> anyhow::Result<()> {
    let mut body = args.body()?;
    // The server's own check, before anything runs: a bad flag is named with its fix.
    let checked = |body: &SearchBody| {
        SearchRequest::from_json(&serde_json::to_vec(body)?).context("the search")
    };
    checked(&body)?;
    let mut embedded = None;
    let client = args.remote.client()?;
    let caller = if client.is_none() {
        let settings = args.serve.settings()?;
        let server = Server::start(&settings).await?;
        let account = server
            .app()
            .accounts
            .ledger()
            .account_by_name(&args.account)
            .await?
            .with_context(|| format!("no account `{}` in {}", args.account, settings.db))?;
        embedded = Some(server);
        Some(Caller {
            tenant: Tenant::live(account.id),
            key_id: None,
        })
    } else {
        None
    };
    let cells = if args.raw_csv {
        CsvCells::Raw
    } else {
        CsvCells::SpreadsheetSafe
    };
    let mut out = std::io::stdout();
    let mut csv =
        matches!(args.format, Format::Csv).then(|| csv::Writer::from_writer(std::io::stdout()));
    if let Some(writer) = &mut csv {
        writer.write_record(CompanyRow::CSV_COLUMNS)?;
    }
    let mut written = 0;
    loop {
        let page: SearchResponse = match (&client, &embedded, caller) {
            (Some(client), _, _) => client.search(&body).await?,
            (None, Some(server), Some(caller)) => {
                server
                    .app()
                    .lookup
                    .search_in_turn(caller, &checked(&body)?)
                    .await?
            }
            _ => anyhow::bail!("nothing to search"),
        };
        for row in page.results.iter().take(args.max_rows - written) {
            match &mut csv {
                Some(writer) => {
                    let mut row_cells = row.csv_cells();
                    cells.apply(&mut row_cells);
                    writer.write_record(&row_cells)?;
                }
                None => writeln!(out, "{}", serde_json::to_string(row)?)?,
            }
            written += 1;
        }
        match page.next_cursor {
            Some(cursor) if written < args.max_rows => body.cursor = Some(cursor),
            _ => break,
        }
    }
    if let Some(writer) = &mut csv {
        writer.flush()?;
    }
    out.flush()?;
    if let Some(server) = embedded {
        server.stop().await;
    }
    eprintln!("{written} companies");
    Ok(())
}
