//! The proxy file: more proxies than `--proxy` names, one URL per line, followed while serving so that a proxy
//! provider's list can change without a restart.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::fetch::{Fetcher, OriginError, build_routes};

/// How often [`Fetcher::follow_proxy_file`] looks at the file.
pub const PROXY_FILE_POLL: Duration = Duration::from_secs(5);

/// What changed in the routes when the proxy file did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteChange {
    /// Routes that take pages from now on (new ones, or ones that came back with what they had learned).
    pub added: Vec<String>,
    /// Routes that take no more pages (requests already sent through them finish).
    pub removed: Vec<String>,
}

/// The proxies a file lists: each line trimmed, blank lines and `#` comments skipped.
fn parse(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            line.split_once('#')
                .map_or(line, |(before, _)| before)
                .trim()
        })
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `named` (from `--proxy`) and the proxies of the file `text`, each once, in that order.
fn union(named: &[String], text: &str) -> Vec<String> {
    let mut all = named.to_vec();
    for proxy in parse(text) {
        if !all.contains(&proxy) {
            all.push(proxy);
        }
    }
    all
}

fn refused(path: &Path, reason: impl Into<String>) -> OriginError {
    OriginError::ProxyFile {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// `named` and the proxies the file at `path` lists.
///
/// # Errors
/// [`OriginError::ProxyFile`] when the file cannot be read, or when neither lists a proxy (a file emptied by
/// mistake must not send every page from the server's own address).
pub(crate) fn proxies(named: &[String], path: &Path) -> Result<Vec<String>, OriginError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| refused(path, format!("cannot be read ({e})")))?;
    let all = union(named, &text);
    if all.is_empty() {
        return Err(refused(path, "lists no proxy"));
    }
    Ok(all)
}

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
            Err(refused(path, "lists no proxy"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_comments_and_duplicates() {
        let text = "# provider A\nhttp://10.0.0.1:3128\n\n  socks5://10.0.0.2:1080  # the fast one\nhttp://10.0.0.1:3128\n";
        assert_eq!(
            union(&["http://10.0.0.9:8080".to_owned()], text),
            [
                "http://10.0.0.9:8080",
                "http://10.0.0.1:3128",
                "socks5://10.0.0.2:1080"
            ]
        );
        assert!(parse("# nothing\n\n").is_empty());
    }

    #[test]
    fn a_missing_or_empty_file_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("proxies.txt");
        let error = proxies(&[], &path).expect_err("missing").to_string();
        assert!(
            error.contains("cannot be read") && error.contains("one proxy URL per line"),
            "{error}"
        );
        std::fs::write(&path, "# none yet\n").expect("write");
        let error = proxies(&[], &path).expect_err("empty").to_string();
        assert!(error.contains("lists no proxy"), "{error}");
        assert_eq!(
            proxies(&["http://127.0.0.1:1".to_owned()], &path).expect("named ones"),
            ["http://127.0.0.1:1"]
        );
    }
}
