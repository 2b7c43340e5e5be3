//! `company-data enrich INPUT --out OUTPUT`: a whole list as one bulk job, against a server (the jobs API) or
//! embedded on a database, with a progress bar, `--resume`, and the results beside each input row.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use bulk_jobs::InputRow;
use bulk_jobs::lists::{List, ListFormat, input_row_from_line};
use clap::{Args, ValueEnum};
use company_data::Server;
use company_data::config::ServeArgs;
use company_lookup::Caller;
use company_model::{AccountId, CompanyRequest};
use sha2::Digest;

/// The flags of `company-data enrich`.
#[derive(Args, Debug)]
pub(crate) struct EnrichArgs {
    /// The list: a CSV with a header row (`.csv`), NDJSON (`.ndjson`, `.jsonl`), or page URLs one per line.
    input: PathBuf,
    /// Where to write one result per input row, the row's own columns beside the record's.
    #[arg(long)]
    out: PathBuf,
    /// The column (CSV) or member (NDJSON) holding the URL. Default: the first whose first value is a page URL.
    #[arg(long)]
    column: Option<String>,
    /// The output's format. Default: CSV for a `.csv` OUTPUT, NDJSON otherwise.
    #[arg(long, value_enum)]
    format: Option<OutputFormat>,
    /// Freshness window in hours (0 to 24): above 0, snapshots stored within it answer at the stored price.
    #[arg(long, default_value = "0")]
    max_age_hours: f64,
    /// A company-data server to run the job on (its jobs API), e.g. `http://127.0.0.1:8080`. Without it the
    /// job runs here, on `--db`.
    #[arg(long, env = "COMPANY_DATA_SERVER", requires = "key")]
    server: Option<String>,
    /// The API key for `--server`.
    #[arg(long, env = "COMPANY_DATA_KEY")]
    key: Option<String>,
    /// The account billed when the job runs here (no `--server`).
    #[arg(long, default_value = "default")]
    account: String,
    /// Continue the job an interrupted run of the same command started (kept in `OUTPUT.job`): pages already
    /// looked up are not looked up or paid for again.
    #[arg(long)]
    resume: bool,
    /// Without `--server`: the database and every `serve` setting of the lookup (origin, rates, time-outs).
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum OutputFormat {
    Ndjson,
    Csv,
}

/// Where the job runs.
enum Target {
    Server {
        base: String,
        key: String,
        client: reqwest::Client,
    },
    Here {
        server: Box<Server>,
        account: AccountId,
        domain: page_url::NetworkDomain,
    },
}

/// What `OUTPUT.job` keeps between runs.
#[derive(serde::Serialize, serde::Deserialize)]
struct Saved {
    job: String,
    target: String,
    urls_sha256: String,
}

pub(crate) async fn run(args: EnrichArgs) -> anyhow::Result<()> {
    let settings = args.serve.settings()?;
    let list = List::read(
        &args.input,
        args.column.as_deref(),
        &settings.fetcher.domain,
    )
    .with_context(|| format!("reading {}", args.input.display()))?;
    let (urls, _) = list.to_send();
    let skipped = list.rows.len() - urls.len();
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
    let target = if let (Some(base), Some(key)) = (&args.server, &args.key) {
        Target::Server {
            base: base.trim_end_matches('/').to_owned(),
            key: key.clone(),
            client: reqwest::Client::new(),
        }
    } else {
        let server = Server::start(&settings).await?;
        let account = server
            .app()
            .accounts
            .ledger()
            .account_by_name(&args.account)
            .await?
            .with_context(|| {
                format!(
                    "no account `{}` in {}; create it with `company-data keys create --account {}` and grant it \
                     credits with `company-data credits grant --account {} <amount>`, or name another with \
                     --account",
                    args.account, settings.db, args.account, args.account
                )
            })?
            .id;
        Target::Here {
            server: Box::new(server),
            account,
            domain: settings.fetcher.domain.clone(),
        }
    };
    let answers = if urls.is_empty() {
        (BTreeMap::new(), 0.0)
    } else {
        let where_ = match &args.server {
            Some(base) => base.clone(),
            None => settings.db.to_string(),
        };
        run_job(&args, &target, &urls, &where_).await?
    };
    let format = match args.format {
        Some(OutputFormat::Csv) => ListFormat::Csv,
        None if ListFormat::of(&args.out) == ListFormat::Csv => ListFormat::Csv,
        Some(OutputFormat::Ndjson) | None => ListFormat::Ndjson,
    };
    write_output(&list, &answers.0, format, &args.out)?;
    summarize(&list, &answers.0, answers.1, &args.out);
    if let Target::Here { server, .. } = target {
        server.stop().await;
    }
    Ok(())
}

/// Submits (or with `--resume` finds again) the job, shows its progress until it ends, and reads its results:
/// the answers by job position and the credits charged.
async fn run_job(
    args: &EnrichArgs,
    target: &Target,
    urls: &[String],
    where_: &str,
) -> anyhow::Result<(BTreeMap<u64, InputRow>, f64)> {
    let saved_path = PathBuf::from(format!("{}.job", args.out.display()));
    let digest = hex::encode(sha2::Sha256::digest(urls.join("\n").as_bytes()));
    let saved: Option<Saved> = std::fs::read(&saved_path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let job = match saved {
        Some(saved) if args.resume => {
            if saved.urls_sha256 != digest || saved.target != where_ {
                bail!(
                    "{} belongs to another list or another server or database; delete it to start afresh",
                    saved_path.display()
                );
            }
            eprintln!("resuming job {}", saved.job);
            saved.job
        }
        Some(saved) => bail!(
            "job {} for {} was started before and did not finish; run again with --resume to continue it \
             without paying again, or delete {} to start afresh",
            saved.job,
            args.out.display(),
            saved_path.display()
        ),
        None => {
            let body = serde_json::json!({"liUrls": urls, "maxAgeHours": args.max_age_hours});
            let job = target.submit(&body).await?;
            let saved = Saved {
                job: job.clone(),
                target: where_.to_owned(),
                urls_sha256: digest,
            };
            std::fs::write(&saved_path, serde_json::to_vec(&saved)?)
                .with_context(|| format!("writing {}", saved_path.display()))?;
            job
        }
    };
    let status = tokio::select! {
        status = follow(target, &job, urls.len() as u64) => status?,
        _ = tokio::signal::ctrl_c() => {
            let what = match target {
                Target::Server { .. } => "the job goes on on the server",
                Target::Here { .. } => "the job is kept in the database",
            };
            bail!("interrupted: {what}; run the same command with --resume to continue it without paying again");
        }
    };
    let answers = target.results(&job).await?;
    let _ = std::fs::remove_file(&saved_path);
    Ok((answers, status["credits_charged"].as_f64().unwrap_or(0.0)))
}

/// Shows the job's progress until it is `done` or `cancelled`: a bar on a terminal, a line every 5 s otherwise.
async fn follow(target: &Target, job: &str, total: u64) -> anyhow::Result<serde_json::Value> {
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} rows  {per_sec}  ETA {eta}  {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut last_line = std::time::Instant::now();
    loop {
        let status = target.status(job).await?;
        let done = status["done"].as_u64().unwrap_or(0);
        let credits = status["credits_charged"].as_f64().unwrap_or(0.0);
        let state = status["status"].as_str().unwrap_or("unknown").to_owned();
        let paused = status["paused_reason"]
            .as_str()
            .map(|why| format!(" (paused: {why})"))
            .unwrap_or_default();
        bar.set_position(done);
        bar.set_message(format!("{credits} credits{paused}"));
        if bar.is_hidden() && (last_line.elapsed() >= Duration::from_secs(5) || state == "done") {
            eprintln!("job {job}: {done}/{total} rows, {state}{paused}, {credits} credits");
            last_line = std::time::Instant::now();
        }
        if state == "done" || state == "cancelled" {
            bar.finish_and_clear();
            return Ok(status);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

impl Target {
    async fn submit(&self, body: &serde_json::Value) -> anyhow::Result<String> {
        match self {
            Target::Server { base, key, client } => {
                let reply = client
                    .post(format!("{base}/v1/network/company-data/jobs"))
                    .bearer_auth(key)
                    .json(body)
                    .send()
                    .await
                    .with_context(|| format!("cannot reach {base}"))?;
                let status = reply.status();
                let json: serde_json::Value = reply.json().await.unwrap_or_default();
                if status != reqwest::StatusCode::ACCEPTED {
                    bail!("the server refused the job ({status}): {}", json["message"]);
                }
                json["id"]
                    .as_str()
                    .map(str::to_owned)
                    .context("the server's answer has no job id")
            }
            Target::Here {
                server,
                account,
                domain,
            } => {
                let app = server.app();
                let request = CompanyRequest::from_job_json(body.to_string().as_bytes(), domain)?;
                let caller = Caller {
                    account: *account,
                    key_id: None,
                };
                Ok(app.jobs.submit(caller, &request).await?.job.id.to_string())
            }
        }
    }

    async fn status(&self, job: &str) -> anyhow::Result<serde_json::Value> {
        match self {
            Target::Server { base, key, client } => {
                let reply = client
                    .get(format!("{base}/v1/network/company-data/jobs/{job}"))
                    .bearer_auth(key)
                    .send()
                    .await
                    .with_context(|| format!("cannot reach {base}"))?;
                let status = reply.status();
                let json: serde_json::Value = reply.json().await.unwrap_or_default();
                if !status.is_success() {
                    bail!(
                        "the server did not show job {job} ({status}): {}",
                        json["message"]
                    );
                }
                Ok(json)
            }
            Target::Here {
                server, account, ..
            } => Ok(server
                .app()
                .jobs
                .job(*account, job_id(job)?)
                .await?
                .with_context(|| format!("no job {job} of this account in the database"))?
                .to_json()),
        }
    }

    async fn results(&self, job: &str) -> anyhow::Result<BTreeMap<u64, InputRow>> {
        let mut answers = BTreeMap::new();
        let page = bulk_jobs::MOST_ROWS_PER_READ;
        let mut from = 0_u64;
        loop {
            let rows: Vec<InputRow> = match self {
                Target::Server { base, key, client } => {
                    let text = client
                        .get(format!(
                            "{base}/v1/network/company-data/jobs/{job}/results?from={from}&limit={page}"
                        ))
                        .bearer_auth(key)
                        .send()
                        .await
                        .with_context(|| format!("cannot reach {base}"))?
                        .error_for_status()?
                        .text()
                        .await?;
                    text.lines().filter_map(input_row_from_line).collect()
                }
                Target::Here {
                    server, account, ..
                } => server
                    .app()
                    .jobs
                    .inputs(*account, job_id(job)?, from, page)
                    .await?
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|row| row.answer.is_some())
                    .collect(),
            };
            let last = rows.last().map(|row| row.position);
            answers.extend(rows.into_iter().map(|row| (row.position, row)));
            match last {
                Some(last) if last + 1 >= from + u64::from(page) => from += u64::from(page),
                _ => return Ok(answers),
            }
        }
    }
}

fn job_id(text: &str) -> anyhow::Result<bulk_jobs::JobId> {
    Ok(bulk_jobs::JobId(
        text.parse()
            .with_context(|| format!("`{text}` is not a job id"))?,
    ))
}

/// Writes the results next to OUTPUT and renames them into place, so an interrupted write leaves no half file.
fn write_output(
    list: &List,
    answers: &BTreeMap<u64, InputRow>,
    format: ListFormat,
    out: &Path,
) -> anyhow::Result<()> {
    let partial = PathBuf::from(format!("{}.partial", out.display()));
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(&partial)
            .with_context(|| format!("cannot write {}", partial.display()))?,
    );
    list.write_results(answers, format, &mut file)?;
    std::io::Write::flush(&mut file)?;
    drop(file);
    std::fs::rename(&partial, out).with_context(|| format!("cannot write {}", out.display()))?;
    Ok(())
}

/// The summary on stderr: rows resolved, unresolved by reason, credits.
fn summarize(list: &List, answers: &BTreeMap<u64, InputRow>, credits: f64, out: &Path) {
    let mut resolved = 0;
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    let (_, rows_of) = list.to_send();
    for position in 0..rows_of.len() as u64 {
        match answers.get(&position).and_then(|row| row.answer.as_ref()) {
            Some(bulk_jobs::Answer::Found { .. }) => resolved += 1,
            Some(bulk_jobs::Answer::Unresolved { code, .. }) => {
                *reasons.entry(code.as_str()).or_default() += 1;
            }
            None => *reasons.entry("not_looked_up").or_default() += 1,
        }
    }
    let invalid = list.rows.len() - rows_of.len();
    if invalid > 0 {
        reasons.insert("invalid_url", invalid);
    }
    let unresolved: usize = reasons.values().sum();
    let by_reason = reasons
        .iter()
        .map(|(reason, count)| format!("{reason} {count}"))
        .collect::<Vec<_>>()
        .join(", ");
    eprintln!(
        "wrote {}: {resolved} resolved, {unresolved} unresolved{}, {credits} credits",
        out.display(),
        if by_reason.is_empty() {
            String::new()
        } else {
            format!(" ({by_reason})")
        }
    );
}
