//! From the bytes that arrived to a record: the parser threads ([`Parsers`]), and a body decoded and parsed
//! ([`parse_body`]), keeping the page gzip-compressed for the snapshot store.

use std::sync::{Arc, Mutex};

use page_parser::{
    CompanyRecord, FetchFailure, JobCount, ScrapeError, parse_job_search, parse_page,
};
use page_url::{NetworkDomain, PageUrl};

/// A page body as it arrived, before decoding.
pub(super) struct Body {
    pub(super) bytes: Vec<u8>,
    /// `Content-Encoding: gzip`: `bytes` are compressed.
    pub(super) gzip: bool,
}

/// The parser threads: one per core, each parsing one page at a time. Pages that arrive together wait in the queue
/// as the bytes they came as (compressed, from the network) instead of all becoming DOMs at once, and only these
/// threads ever hold a DOM, so the allocator's per-thread arenas that keep a DOM's freed memory are one per core
/// rather than one per blocking-pool thread (the peak memory of a 200-page batch halves).
#[derive(Debug)]
pub(super) struct Parsers {
    jobs: std::sync::mpsc::Sender<ParseJob>,
}

type ParseJob = Box<dyn FnOnce() + Send>;

impl Parsers {
    pub(super) fn start(threads: usize) -> Self {
        let (jobs, queue) = std::sync::mpsc::channel::<ParseJob>();
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..threads.max(1) {
            let queue = Arc::clone(&queue);
            let spawned = std::thread::Builder::new()
                .name(format!("page-parser-{n}"))
                .spawn(move || {
                    loop {
                        // The lock is held only to take a job; the threads end with the fetcher.
                        let job = queue
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .recv();
                        let Ok(job) = job else { return };
                        // A page that makes the parser panic fails alone; its caller sees the result dropped.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                });
            if let Err(error) = spawned {
                tracing::error!(%error, "could not start a page parser thread");
            }
        }
        Self { jobs }
    }

    /// Runs `work` on a parser thread when one is free. A job whose caller has gone by then is skipped.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ScrapeError> {
        let (done, result) = tokio::sync::oneshot::channel();
        metrics::gauge!("company_data_parser_queue").increment(1.0);
        let job: ParseJob = Box::new(move || {
            metrics::gauge!("company_data_parser_queue").decrement(1.0);
            if !done.is_closed() {
                let _ = done.send(work());
            }
        });
        self.jobs.send(job).map_err(|_| {
            ScrapeError::Fetch(FetchFailure::Internal(
                "the page parsers are not running".into(),
            ))
        })?;
        result.await.map_err(|_| {
            ScrapeError::Fetch(FetchFailure::Internal(
                "the parser stopped on this page".into(),
            ))
        })
    }
}

/// A body's HTML (at most `max_bytes` once decompressed, invalid UTF-8 replaced by U+FFFD) and, when it came
/// gzip-compressed, the compressed bytes.
fn decode_body(body: Body, max_bytes: usize) -> Result<(String, Option<Vec<u8>>), ScrapeError> {
    use std::io::Read;
    let (html, compressed) = if body.gzip {
        let mut html = Vec::with_capacity(body.bytes.len().saturating_mul(8).min(max_bytes));
        // One byte over the limit is enough to know; a gzip bomb never expands further than that.
        flate2::read::MultiGzDecoder::new(body.bytes.as_slice())
            .take(
                u64::try_from(max_bytes)
                    .unwrap_or(u64::MAX)
                    .saturating_add(1),
            )
            .read_to_end(&mut html)
            .map_err(|e| {
                ScrapeError::Fetch(FetchFailure::Body(format!(
                    "the compressed page could not be read: {e}"
                )))
            })?;
        (html, Some(body.bytes))
    } else {
        (body.bytes, None)
    };
    if html.len() > max_bytes {
        return Err(ScrapeError::Fetch(FetchFailure::Body(format!(
            "the page is larger than {max_bytes} bytes"
        ))));
    }
    let html = String::from_utf8(html)
        .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned());
    Ok((html, compressed))
}

/// Decodes and parses a body; returns the record and the page gzip-compressed (the body itself when it came
/// compressed, so the common case costs no compression).
pub(super) fn parse_body(
    body: Body,
    url: &PageUrl,
    domain: &NetworkDomain,
    max_bytes: usize,
) -> Result<(CompanyRecord, Arc<[u8]>), ScrapeError> {
    use std::io::Write;
    let (html, compressed) = decode_body(body, max_bytes)?;
    let record = parse_page(&html, url, domain)?;
    let page_gzip = if let Some(bytes) = compressed {
        bytes
    } else {
        let mut encoder = flate2::write::GzEncoder::new(
            Vec::with_capacity(html.len() / 6),
            flate2::Compression::fast(),
        );
        encoder
            .write_all(html.as_bytes())
            .and_then(|()| encoder.finish())
            .map_err(|e| {
                ScrapeError::Fetch(FetchFailure::Internal(format!(
                    "compressing the page failed: {e}"
                )))
            })?
    };
    Ok((record, page_gzip.into()))
}

/// Decodes a guest job search's body and reads its open-jobs count.
pub(super) fn read_job_search(body: Body, max_bytes: usize) -> Result<JobCount, ScrapeError> {
    let (html, _) = decode_body(body, max_bytes)?;
    parse_job_search(&html)
}
