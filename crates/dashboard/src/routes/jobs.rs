//! Jobs (`/dashboard/jobs`): start a bulk job from pasted URLs or a CSV, follow it, cancel it, download its
//! results as CSV or NDJSON.
//!
//! Validation, prices, windows and output formats are the API's own: the body goes through
//! [`CompanyRequest::from_job_json`], the windows offered are [`FreshnessWindow::CHOICES`], the downloads are
//! written by [`bulk_jobs::output`].

use std::sync::Arc;

use api_contract::{CompanyRequest, FreshnessWindow, Includes, MAX_JOB_BODY_BYTES, MAX_JOB_URLS};
use bulk_jobs::{JobId, JobView, output};
use company_lookup::Caller;
use credit_ledger::price_per_company;
use http::{HeaderValue, Request, StatusCode, header};
use maud::{Markup, html};

use crate::Parts;
use crate::error::{Page, PageError};
use crate::forms::read_session_form_up_to;
use crate::layout::{chosen_includes, csrf, include_choices, layout, time};
use crate::respond::{html, redirect};
use crate::routes::try_it::window_label;
use crate::visitor::Visitor;

/// Jobs listed on the page.
const LISTED: u32 = 50;

fn jobs(parts: &Parts) -> Result<&std::sync::Arc<bulk_jobs::BulkJobs>, PageError> {
    parts.jobs.as_ref().ok_or(PageError::NotFound)
}

/// `GET /dashboard/jobs`.
pub(crate) async fn page(parts: &Parts, visitor: &Visitor) -> Page {
    let jobs = jobs(parts)?;
    let listed = jobs.jobs(visitor.live(), None, LISTED).await?;
    Ok(html(
        StatusCode::OK,
        jobs_markup(visitor, jobs, &listed, None),
    ))
}

/// The page URLs in pasted text: every token (split at white space, commas, semicolons and quotes) that names a
/// company, school or showcase page, so a pasted CSV row gives its URL and not its other columns.
fn urls_in(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '"' | '\''))
        .filter(|token| {
            ["/company/", "/school/", "/showcase/"]
                .iter()
                .any(|kind| token.contains(kind))
        })
        .map(str::to_owned)
        .collect()
}

/// `POST /dashboard/jobs`: starts a job with the URLs found in the form's text.
pub(crate) async fn start<B>(parts: &Parts, visitor: &Visitor, request: Request<B>) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let jobs = jobs(parts)?;
    let form = read_session_form_up_to(parts, visitor, request, MAX_JOB_BODY_BYTES).await?;
    let urls = urls_in(form.get("urls").map_or("", String::as_str));
    let window_seconds = form
        .get("max_age_seconds")
        .and_then(|w| w.trim().parse::<f64>().ok())
        .unwrap_or(f64::NAN);
    let refused_with = |status: StatusCode, message: String| async move {
        let listed = jobs.jobs(visitor.live(), None, LISTED).await?;
        Ok(html(
            status,
            jobs_markup(visitor, jobs, &listed, Some(&message)),
        ))
    };
    let refused = |message: String| refused_with(StatusCode::BAD_REQUEST, message);
    if urls.is_empty() {
        return refused(
            "No company, school or showcase page URLs were found in the text. Paste URLs, or a CSV with a \
             column of them."
                .to_owned(),
        )
        .await;
    }
    // The same validation, and so the same messages, as a job sent to the API.
    let mut body = serde_json::json!({ "liUrls": urls, "maxAgeSeconds": window_seconds });
    let include = chosen_includes(&form);
    if !include.is_empty() {
        body["include"] = serde_json::json!(include.parts());
    }
    let parsed =
        match CompanyRequest::from_job_json(body.to_string().as_bytes(), &parts.domain, false) {
            Ok(parsed) => parsed,
            Err(invalid) => return refused(invalid.to_string()).await,
        };
    let caller = Caller {
        tenant: visitor.live(),
        key_id: None,
    };
    match jobs.submit(caller, &parsed).await {
        Ok(_) => Ok(redirect(&visitor.link("/dashboard/jobs"))),
        // The account's quotas: 409, as the API answers; nothing was stored.
        Err(
            at_quota @ (bulk_jobs::BulkError::TooManyOpenJobs { .. }
            | bulk_jobs::BulkError::TooManyQueuedUrls { .. }),
        ) => {
            let message = crate::error::sentence(&at_quota);
            refused_with(StatusCode::CONFLICT, message).await
        }
        Err(other) => Err(other.into()),
    }
}

/// `POST /dashboard/jobs/{id}/cancel`.
pub(crate) async fn cancel<B>(
    parts: &Parts,
    visitor: &Visitor,
    request: Request<B>,
    id: &str,
) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let jobs = jobs(parts)?;
    read_session_form_up_to(parts, visitor, request, 4096).await?;
    jobs.cancel(visitor.live(), job_id(id)?)
        .await?
        .ok_or(PageError::NotFound)?;
    Ok(redirect(&visitor.link("/dashboard/jobs")))
}

/// `GET /dashboard/jobs/{id}/results.csv` or `.ndjson`: every answered input, in order, streamed a chunk of
/// rows at a time (a 100,000-row job is never held whole).
pub(crate) async fn download(parts: &Parts, visitor: &Visitor, id: &str, csv: bool) -> Page {
    let jobs = Arc::clone(jobs(parts)?);
    let id = job_id(id)?;
    let format = if csv {
        output::ResultFormat::Csv(output::CsvCells::SpreadsheetSafe)
    } else {
        output::ResultFormat::Ndjson
    };
    let job = jobs
        .job(visitor.live(), id)
        .await?
        .ok_or(PageError::NotFound)?
        .job;
    let chunks = output::results(jobs, &job, (0, u64::MAX), format);
    let (content_type, extension) = if csv {
        ("text/csv; charset=utf-8", "csv")
    } else {
        ("application/x-ndjson", "ndjson")
    };
    let mut response = html(StatusCode::OK, html! {});
    *response.body_mut() = http_serve::streamed(futures::TryStreamExt::map_err(
        chunks,
        std::io::Error::other,
    ));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Ok(disposition) =
        HeaderValue::from_str(&format!("attachment; filename=\"job-{id}.{extension}\""))
    {
        headers.insert(header::CONTENT_DISPOSITION, disposition);
    }
    Ok(response)
}

fn job_id(text: &str) -> Result<JobId, PageError> {
    text.parse()
        .ok()
        .filter(|n: &i64| *n > 0)
        .map(JobId)
        .ok_or(PageError::NotFound)
}

fn jobs_markup(
    visitor: &Visitor,
    jobs: &bulk_jobs::BulkJobs,
    listed: &[JobView],
    refusal: Option<&str>,
) -> Markup {
    let running = listed.iter().any(|view| !view.job.status.is_final());
    let kept_days = jobs.retention().as_secs() / 86_400;
    let body = html! {
        h1 { "Jobs" }
        p { "Whole lists at once, up to " (MAX_JOB_URLS) " URLs: looked up in the background, billed to "
            (visitor.account.name) " like requests (each distinct page that resolves once, nothing for the rest), and kept " (kept_days) " days after they end." }
        form.card method="post" action=(visitor.link("/dashboard/jobs")) {
            (csrf(visitor))
            label for="job-urls" { "Page URLs, or a pasted CSV with a column of them" }
            textarea #job-urls name="urls" required placeholder="https://www.linkedin.com/company/google" {}
            label for="job-file" { "Or load a CSV or text file into the box" }
            input #job-file type="file" accept=".csv,.txt,text/csv,text/plain" data-fills="job-urls";
            (include_choices("job", Includes::NONE))
            div.row {
                div {
                    label for="job-window" { "Freshness" }
                    select #job-window name="max_age_seconds" {
                        @for window in FreshnessWindow::CHOICES {
                            option value=(window.seconds()) selected[window == FreshnessWindow::MAX] {
                                (window_label(window)) " — " (price_per_company(window)) " credit each"
                            }
                        }
                    }
                }
                button type="submit" { "Start job" }
            }
        }
        @if let Some(message) = refusal { p.notice.error role="alert" { (message) } }
        @if listed.is_empty() {
            p { "No jobs yet." }
        } @else {
            @if running { p.hint data-refresh="5" { "Progress updates every 5 seconds." } }
            table data-testid="jobs" {
                thead { tr { th { "Job" } th { "Started" } th { "Status" } th { "Done" } th { "Resolved" } th { "Unresolved" } th { "Credits" } th { "Ends" } th { "Results" } } }
                tbody {
                    @for view in listed {
                        @let job = &view.job;
                        tr {
                            td { (job.id) }
                            td { (time(job.created_at)) }
                            td { (job.status.as_str()) @if let Some(why) = &job.paused_reason { " (" (why.replace('_', " ")) ")" } }
                            td { (job.done) " / " (job.total) }
                            td { (job.resolved) }
                            td { (job.unresolved) }
                            td { (view.credits_charged) }
                            td { @if let Some(at) = view.estimated_finish_at { (time(at)) } }
                            td {
                                a href=(visitor.link(&format!("/dashboard/jobs/{}/results.csv", job.id))) { "CSV" } " · "
                                a href=(visitor.link(&format!("/dashboard/jobs/{}/results.ndjson", job.id))) { "NDJSON" }
                                @if !job.status.is_final() {
                                    form.inline method="post" action=(visitor.link(&format!("/dashboard/jobs/{}/cancel", job.id))) {
                                        (csrf(visitor))
                                        button.link type="submit" { "Cancel" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    layout("Jobs", Some(visitor), "/dashboard/jobs", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_picked_out_of_pasted_text_and_csv() {
        let pasted = "name,linkedin\nGoogle,https://www.linkedin.com/company/google\n\"Stanford\";linkedin.com/school/stanford/ x";
        assert_eq!(
            urls_in(pasted),
            vec![
                "https://www.linkedin.com/company/google".to_owned(),
                "linkedin.com/school/stanford/".to_owned()
            ]
        );
        assert!(urls_in("no urls here, none").is_empty());
    }
}
