//! The snapshot cache: the last record fetched for each page, with the time it was fetched, and each page's
//! history.
//!
//! A live fetch stores a [`Snapshot`]; a later request with a freshness window reads it back when it was
//! fetched inside the window (spec 1.3, 3). Snapshots are keyed by the normalized URL a caller asked for and by
//! the URL the page resolved to, so `/company/1441` and `/company/google` share one snapshot once seen.
//!
//! Every snapshot stored also adds to the page's history ([`SnapshotStore::history`]): a point (its counts)
//! per fetch, and its record (gzip-compressed) only when one of [`company_model::CHANGE_FIELDS`] differs from
//! the record stored before it, so a page fetched daily for a year without changes costs 365 small rows and one
//! record. The raw HTML is kept for the newest snapshot only.
//!
//! Every snapshot is also indexed for search ([`SnapshotStore::search`]): its compact row
//! ([`company_model::CompanyRow`]), the labels filters compare and its words (SQLite FTS5, PostgreSQL `tsvector`
//! with a GIN index), written in the transaction that stores it, so a search never sees a page the store does not
//! hold. Which pages each tenant was answered is kept too ([`SnapshotStore::note_seen`]): what its searches
//! look through ([`company_model::SearchScope`]).
//!
//! [`SnapshotStore`] is the backend-neutral interface; `SqliteSnapshotStore` the embedded backend (feature
//! `sqlite`, the default), `PgSnapshotStore` the backend for several servers on one PostgreSQL database
//! (feature `postgres`).
//! Not here: deciding whether to fetch, fetching, pricing.
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use snapshot_cache::{Snapshot, SnapshotStore, SqliteSnapshotStore};
//! use page_url::{NetworkDomain, PageUrl};
//! let dir = tempfile::tempdir()?;
//! let store = SqliteSnapshotStore::open(&dir.path().join("cache.db")).await?;
//! let domain = NetworkDomain::default();
//! let by_id = PageUrl::parse_submitted("https://www.linkedin.com/company/1441", &domain)?;
//! let google = PageUrl::parse_submitted("https://www.linkedin.com/company/google", &domain)?;
//! let now = jiff::Timestamp::now();
//! let record = company_model::RecordJson::from_record(&Default::default());
//! let snapshot = Snapshot { url: google.clone(), record, fetched_at: now };
//! store.put(&snapshot, &[by_id.clone()], None).await?;
//! let found = store.fresh_many(&[by_id.clone()], now - jiff::SignedDuration::from_hours(1)).await?;
//! assert_eq!(found[&by_id].url, google);
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```
#![deny(missing_docs)]

mod hot;
#[cfg(feature = "postgres")]
mod postgres;
mod search;
#[cfg(feature = "sqlite")]
mod sqlite;
mod stored;

use std::collections::HashMap;

use company_model::{CompanyRecord, HistoryPoint, RecordJson, SearchPage, SearchQuery};
use page_url::PageUrl;

pub use hot::HOT_REUSE;
#[cfg(feature = "postgres")]
pub use postgres::PgSnapshotStore;
pub use search::{COMMON_MATCHES, LARGE_TENANT, SEARCH_BATCH, TALLY_CHUNKS_MOST, TIER_SPAN};
#[cfg(feature = "sqlite")]
pub use sqlite::{PENDING_WORDS, SqliteSnapshotStore};

/// One page's record as fetched at one time.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// The URL the page resolved to (after redirects, from its canonical link).
    pub url: PageUrl,
    /// The record parsed from the page, without per-request members, as the JSON text it is stored and
    /// answered as.
    pub record: RecordJson,
    /// When the page was fetched from the network. Stores keep millisecond precision.
    pub fetched_at: jiff::Timestamp,
}

/// A page as it was fetched, kept beside its snapshot so the record can be parsed again
/// ([`SnapshotStore::stored_pages`], [`SnapshotStore::replace_record`]).
#[derive(Clone, Debug, PartialEq)]
pub struct StoredPage {
    /// The snapshot's URL (the page the fetch resolved to).
    pub url: PageUrl,
    /// The HTML as fetched (invalid UTF-8 replaced by U+FFFD, as the parser read it).
    pub html: String,
    /// When it was fetched.
    pub fetched_at: jiff::Timestamp,
}

/// What a store holds of one page's history ([`SnapshotStore::history`]); turned into the answer by
/// [`company_model::CompanyHistory::new`].
#[derive(Clone, Debug, PartialEq)]
pub struct StoredHistory {
    /// The page the history belongs to: the URL the asked-for URL resolved to.
    pub url: PageUrl,
    /// One point per stored fetch in the range asked for, oldest first.
    pub points: Vec<HistoryPoint>,
    /// The page's distinct records, each with when it was first fetched, oldest first: those first fetched in
    /// the range, and the one before them (what the first of them changed from).
    pub states: Vec<(jiff::Timestamp, RecordJson)>,
}

/// A failure of the store's backend. The backend's own error is kept as the source, never exposed in the type.
#[derive(Debug, thiserror::Error)]
#[error("the snapshot store failed: {0}")]
pub struct CacheError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

/// Why a search answered no page.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The search ran past the time limit it was given ([`SnapshotStore::search`]) and was stopped. Nothing it
    /// read is answered.
    #[error("the search ran longer than its limit of {} ms and was stopped", limit.as_millis())]
    TimedOut {
        /// The limit it ran past.
        limit: std::time::Duration,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] CacheError),
}

/// Where snapshots live. Implementations must be safe to share between tasks and servers.
#[async_trait::async_trait]
pub trait SnapshotStore: Send + Sync + std::fmt::Debug {
    /// For each of `urls` (requested or resolved URLs), the stored snapshot fetched at or after
    /// `fetched_since`, if any. URLs with no such snapshot are absent from the map, as are snapshots whose stored
    /// record is damaged (they are fetched again). Records kept in an older [`company_model::RECORD_FORMAT`]
    /// are converted through [`CompanyRecord`].
    async fn fresh_many(
        &self,
        urls: &[PageUrl],
        fetched_since: jiff::Timestamp,
    ) -> Result<HashMap<PageUrl, Snapshot>, CacheError>;

    /// Stores `snapshot` under its own URL and under each of `aliases` (the URLs that led to it), replacing
    /// what was stored there unless that is newer, with the page it was parsed from when given: its HTML
    /// gzip-compressed (RFC 1952, one or more members), kept as given and read back by
    /// [`SnapshotStore::stored_pages`]. The write is atomic: readers see the old snapshot or the new one, never
    /// half.
    async fn put(
        &self,
        snapshot: &Snapshot,
        aliases: &[PageUrl],
        page_gzip: Option<&[u8]>,
    ) -> Result<(), CacheError>;

    /// Up to `limit` kept pages whose URL sorts after `after` (all from the start when `None`), in URL order:
    /// page through them to parse every stored page again.
    async fn stored_pages(
        &self,
        after: Option<&PageUrl>,
        limit: u32,
    ) -> Result<Vec<StoredPage>, CacheError>;

    /// Replaces the record of the snapshot at `url` if it is still the one fetched at `fetched_at` (a newer
    /// fetch wins); returns whether it was replaced.
    async fn replace_record(
        &self,
        url: &PageUrl,
        fetched_at: jiff::Timestamp,
        record: &CompanyRecord,
    ) -> Result<bool, CacheError>;

    /// The history of the page `url` (a requested or resolved URL) between `from` and `to` (inclusive), or
    /// `None` when no snapshot of it was ever stored. Pages stored before history was kept start with their
    /// snapshot of that time.
    async fn history(
        &self,
        url: &PageUrl,
        from: jiff::Timestamp,
        to: jiff::Timestamp,
    ) -> Result<Option<StoredHistory>, CacheError>;

    /// Forgets the history fetched before `cutoff` (retention): every point, and every record except each
    /// page's newest one before `cutoff` (what its next change is measured against). The snapshots themselves
    /// stay. Returns how many rows were removed.
    async fn forget_history_before(&self, cutoff: jiff::Timestamp) -> Result<u64, CacheError>;

    /// The pages (snapshot URLs) whose stored record's `domain` is `domain` (compared in lower case), most
    /// recently fetched first, at most `limit`: the resolver's first step, which fetches nothing (it reads the
    /// snapshots themselves through [`SnapshotStore::fresh_many`], inside its window, as any lookup does).
    async fn pages_with_domain(&self, domain: &str, limit: u32)
    -> Result<Vec<PageUrl>, CacheError>;

    /// The pages whose stored record's `company_name` has the [`company_model::name_key`] `name_key`, most
    /// recently fetched first, at most `limit`.
    async fn pages_named(&self, name_key: &str, limit: u32) -> Result<Vec<PageUrl>, CacheError>;

    /// What [`SnapshotStore::remember`] kept under `key`, unless it expired before `now`. The text is the
    /// caller's own (the resolver keeps its answers per domain and name here, for every server on the database).
    async fn remembered(
        &self,
        key: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<String>, CacheError>;

    /// Keeps `text` under `key` until `expires_at`, replacing what was kept there; expired entries are removed
    /// as new ones are written.
    async fn remember(
        &self,
        key: &str,
        text: &str,
        expires_at: jiff::Timestamp,
    ) -> Result<(), CacheError>;

    /// One page of the stored companies that match `query`, in its order (see [`company_model::SearchQuery`]). Reads only the
    /// search index, never a record.
    ///
    /// The search is stopped once it has run for `time_limit`, counted from when it has its connection (a wait for
    /// one is the store's, not the search's): searches are free, so this bounds what one costs (a filter few
    /// companies match walks the whole of its order's index). SQLite interrupts the statement
    /// running then (its progress handler looks at the clock every thousand instructions); PostgreSQL cancels it
    /// (`statement_timeout`, set once per search, so a statement started just before the limit may run up to
    /// `time_limit` more) and starts no statement after it.
    ///
    /// # Errors
    /// [`SearchError::TimedOut`] past `time_limit`, [`SearchError::Store`] when the store fails.
    async fn search(
        &self,
        query: &SearchQuery,
        time_limit: std::time::Duration,
    ) -> Result<SearchPage, SearchError>;

    /// Remembers that `tenant` ([`company_model::Tenant::key`]) was answered the pages `urls` (snapshot URLs) at
    /// `at`, so that its searches ([`company_model::SearchScope::Tenant`]) find them; a page noted before keeps its first time.
    async fn note_seen(
        &self,
        tenant: i64,
        urls: &[PageUrl],
        at: jiff::Timestamp,
    ) -> Result<(), CacheError>;

    /// Claims the fetch of `url` until `until`, so that of several servers asked for the same page at once, one
    /// fetches it and the others wait for its snapshot: `true` when the caller should fetch (nobody holds an
    /// unexpired claim), `false` when another server is fetching it. A store that one process uses (SQLite)
    /// always answers `true`: the fetcher's own single-flight covers that process.
    async fn claim_fetch(&self, url: &PageUrl, until: jiff::Timestamp) -> Result<bool, CacheError> {
        let _ = (url, until);
        Ok(true)
    }

    /// Gives up a claim made by [`SnapshotStore::claim_fetch`] (the fetch ended, stored or failed).
    async fn release_fetch(&self, url: &PageUrl) -> Result<(), CacheError> {
        let _ = url;
        Ok(())
    }
}
