//! Calling a company-data server from Rust: one lookup, the account, and a bulk job followed to its end and
//! read back.
//!
//! `cargo run -p company-data-client --example call_a_server -- BASE KEY`
//!
//! BASE is the server (e.g. `http://127.0.0.1:8080`), KEY an API key of an account with a few credits
//! (`company-data keys create --credits 10`). The example runs against a server whose origin is the folder
//! `tests/fixtures/origin` (Google and Audiense), prints what came back, and deletes the job it made.
#![allow(clippy::print_stdout)] // an example reports on stdout

use std::time::Duration;

use company_data_client::{Answer, Client, RequestBody};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(base), Some(key)) = (args.next(), args.next()) else {
        return Err("usage: call_a_server BASE KEY".into());
    };
    let client = Client::new(&base, &key)?;

    // One page, live: 1 credit.
    let answer = client
        .company_data(&RequestBody {
            li_urls: vec!["https://www.linkedin.com/company/google".into()],
            ..RequestBody::default()
        })
        .await?;
    for result in &answer.response.results {
        let record = result.record.to_record()?;
        println!(
            "lookup: {} -> {} ({:?}), {:?} credits charged",
            result.original_li_url,
            record.company_name.as_deref().unwrap_or("?"),
            result.source,
            answer.credits_charged
        );
    }

    // A list as one job: submitted, followed, read back page by page.
    let job = client
        .submit_job(&RequestBody {
            li_urls: vec![
                "https://www.linkedin.com/company/google".into(),
                "https://uk.linkedin.com/company/audiense/".into(),
                "https://www.linkedin.com/company/nobody-here".into(),
            ],
            max_age_hours: Some(24.0),
            ..RequestBody::default()
        })
        .await?;
    let ended = client
        .wait_for_job(&job.id, Duration::from_millis(200), |_| {})
        .await?;
    println!(
        "job {}: {}, {} resolved, {} unresolved, {} credits",
        ended.id,
        ended.status.as_str(),
        ended.resolved,
        ended.unresolved,
        ended.credits_charged
    );
    let mut pages = client.job_results(&job.id);
    while let Some(rows) = pages.next_page().await? {
        for row in rows {
            let what = match &row.answer {
                Some(Answer::Found { record, source, .. }) => format!(
                    "{} ({source:?})",
                    record.to_record()?.company_name.unwrap_or_default()
                ),
                Some(Answer::Unresolved { code, .. }) => format!("unresolved: {}", code.as_str()),
                None => "not answered".into(),
            };
            println!("row {}: {} -> {what}", row.position, row.original);
        }
    }
    client.delete_job(&job.id).await?;
    println!("deleted job {}", job.id);

    let account = client.account().await?;
    println!("account: {} credits available", account["available"]);
    Ok(())
}
