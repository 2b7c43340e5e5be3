//! The pages noted lately as answered to each tenant ([`NotedPages`]), so that `note_answered` writes a page
//! once however often it is asked for.

use std::collections::HashSet;
use std::sync::Mutex;

use page_url::PageUrl;

/// The (tenant, page) pairs this process noted lately, so a page asked for again and again is written once:
/// forgotten whole when it reaches [`NotedPages::MOST`] (the store ignores a pair noted twice).
#[derive(Debug, Default)]
pub(crate) struct NotedPages(Mutex<HashSet<(i64, PageUrl)>>);

impl NotedPages {
    /// Pairs kept at most (some 10 MB).
    const MOST: usize = 100_000;

    /// Of `urls`, those not noted for `tenant` lately; they count as noted from now on.
    pub(crate) fn new_of(&self, tenant: i64, urls: impl Iterator<Item = PageUrl>) -> Vec<PageUrl> {
        let mut noted = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if noted.len() >= Self::MOST {
            noted.clear();
        }
        urls.filter(|url| noted.insert((tenant, url.clone())))
            .collect()
    }

    /// Forgets that `urls` were noted for `tenant` (their write failed: the next answer tries again).
    pub(crate) fn forget(&self, tenant: i64, urls: &[PageUrl]) {
        let mut noted = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for url in urls {
            noted.remove(&(tenant, url.clone()));
        }
    }
}
