//! Following the proxy file while serving: [`Fetcher::replace_proxies`] and [`Fetcher::follow_proxy_file`] (the
//! file's format is `proxy_file`'s).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::fetch::{Fetcher, OriginError, build_routes};
use crate::proxy_file::{NO_PROXY, PROXY_FILE_POLL, RouteChange, union};

impl Fetcher {
    /// Makes the routes one per proxy in `proxies` (one direct route when empty). A route whose proxy stays
    /// keeps its client, cookies and what it learned; see [`RouteChange`].
    ///
    /// # Errors
    /// [`OriginError::BadProxy`] or [`OriginError::Client`]; the routes are then unchanged.
    pub fn replace_proxies(&self, proxies: &[String]) -> Result<RouteChange, OriginError> {
        let routes = build_routes(self.settings(), proxies)?;
        let (added, removed) = self.route_pool().replace(routes);
        Ok(RouteChange { added, removed })
    }

    /// Makes the routes `named` and the proxies of the file `text` read from `path`, with one log line when they
    /// changed or the file is not usable.
    fn follow(&self, path: &Path, named: &[String], text: &str) {
        let proxies = union(named, text);
        let changed = if proxies.is_empty() {
            Err(OriginError::ProxyFile {
                path: path.to_path_buf(),
                reason: NO_PROXY.to_owned(),
            })
        } else {
            self.replace_proxies(&proxies)
        };
        match changed {
            Ok(change) if change.added.is_empty() && change.removed.is_empty() => {}
            Ok(change) => tracing::info!(
                path = %path.display(),
                routes = proxies.len(),
                added = ?change.added,
                removed = ?change.removed,
                "the proxy file changed; routes updated"
            ),
            Err(error) => tracing::warn!(
                %error,
                "the proxy file changed but is not usable; the routes stay as they are"
            ),
        }
    }

    /// Follows [`crate::FetcherSettings::proxy_file`]: every [`PROXY_FILE_POLL`] it reads the file, and when its
    /// text changed makes the routes `proxies` and the file's ([`Fetcher::replace_proxies`]), with one log line
    /// saying what changed. A file that cannot be read, lists no proxy or lists one that is not usable leaves the
    /// routes as they are, with a warning (write the file elsewhere and rename it over, so a half-written
    /// list is never read). Returns `None` without a proxy file; the task ends when the fetcher and its clones
    /// are dropped. Needs a Tokio runtime.
    pub fn follow_proxy_file(&self) -> Option<tokio::task::JoinHandle<()>> {
        let path: PathBuf = self.settings().proxy_file.clone()?;
        let named = self.settings().proxies.clone();
        let fetcher = Arc::downgrade(self.inner_arc());
        // The first read applies the file as it is then: the set `Fetcher::new` built, unless it changed since.
        let mut last: Option<String> = None;
        let mut unreadable = false;
        Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(PROXY_FILE_POLL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(inner) = fetcher.upgrade() else {
                    return;
                };
                let fetcher = Fetcher::from_inner(inner);
                match tokio::fs::read_to_string(&path).await {
                    Err(error) => {
                        if !unreadable {
                            tracing::warn!(
                                path = %path.display(),
                                %error,
                                "the proxy file cannot be read; the routes stay as they are"
                            );
                        }
                        unreadable = true;
                    }
                    Ok(text) => {
                        unreadable = false;
                        if last.as_ref() != Some(&text) {
                            fetcher.follow(&path, &named, &text);
                            last = Some(text);
                        }
                    }
                }
            }
        }))
    }
}
