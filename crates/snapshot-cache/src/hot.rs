//! Snapshots read or written in the last [`HOT_REUSE`], kept in memory so that a page asked for again and again
//! is answered without a database read (and without checking its stored text again).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use page_url::PageUrl;

use crate::Snapshot;

/// How long a snapshot read from (or written to) the database is reused before it is read again. Bounds how
/// long a change by another process (e.g. `reparse`) takes to be served.
pub const HOT_REUSE: Duration = Duration::from_secs(2);

/// The most record text kept; past it the set is emptied and fills again with what is asked for next.
const BUDGET_BYTES: usize = 16 * 1024 * 1024;

/// Requested or resolved URL → the snapshot it led to, and when that was read or written.
#[derive(Debug, Default)]
pub(crate) struct HotSnapshots {
    inner: Mutex<Hot>,
}

#[derive(Debug, Default)]
struct Hot {
    by_alias: HashMap<PageUrl, (Snapshot, Instant)>,
    bytes: usize,
}

impl HotSnapshots {
    fn lock(&self) -> std::sync::MutexGuard<'_, Hot> {
        // Every change is a single step, so a panic elsewhere cannot leave the map half-changed.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The kept snapshot for `alias`, if it was read recently and was fetched at or after `since`.
    /// The snapshots of `urls` kept here and fetched at or after `fetched_since`, and the URLs to read from the
    /// database.
    pub(crate) fn split<'u>(
        &self,
        urls: &'u [PageUrl],
        fetched_since: jiff::Timestamp,
    ) -> (
        std::collections::HashMap<PageUrl, Snapshot>,
        Vec<&'u PageUrl>,
    ) {
        let mut found = std::collections::HashMap::with_capacity(urls.len());
        let mut cold = Vec::new();
        for url in urls {
            match self.get(url, fetched_since) {
                Some(snapshot) => {
                    found.insert(url.clone(), snapshot);
                }
                None => cold.push(url),
            }
        }
        (found, cold)
    }

    pub(crate) fn get(&self, alias: &PageUrl, since: jiff::Timestamp) -> Option<Snapshot> {
        let hot = self.lock();
        let (snapshot, kept_at) = hot.by_alias.get(alias)?;
        (kept_at.elapsed() < HOT_REUSE && snapshot.fetched_at >= since).then(|| snapshot.clone())
    }

    /// Keeps `snapshot` for `alias`, unless a snapshot fetched later is kept already.
    pub(crate) fn keep(&self, alias: &PageUrl, snapshot: &Snapshot) {
        let mut hot = self.lock();
        if hot
            .by_alias
            .get(alias)
            .is_some_and(|(kept, _)| kept.fetched_at > snapshot.fetched_at)
        {
            return;
        }
        let size = snapshot.record.as_str().len();
        if hot.bytes + size > BUDGET_BYTES {
            hot.by_alias.clear();
            hot.bytes = 0;
        }
        hot.bytes += size;
        hot.by_alias
            .insert(alias.clone(), (snapshot.clone(), Instant::now()));
    }

    /// After `snapshot` was stored under its URL and `aliases`: keeps it for those, and for every other alias
    /// kept with an older snapshot of the same page (the database now leads those aliases to it too).
    pub(crate) fn stored(&self, aliases: &[PageUrl], snapshot: &Snapshot) {
        let older_aliases: Vec<PageUrl> = self
            .lock()
            .by_alias
            .iter()
            .filter(|(_, (kept, _))| {
                kept.url == snapshot.url && kept.fetched_at < snapshot.fetched_at
            })
            .map(|(alias, _)| alias.clone())
            .collect();
        for alias in aliases
            .iter()
            .chain(std::iter::once(&snapshot.url))
            .chain(&older_aliases)
        {
            self.keep(alias, snapshot);
        }
    }

    /// Forgets everything (after a record was replaced in place).
    pub(crate) fn clear(&self) {
        let mut hot = self.lock();
        hot.by_alias.clear();
        hot.bytes = 0;
    }
}
