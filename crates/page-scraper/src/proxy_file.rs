//! The proxy file: more proxies than `--proxy` names, one URL per line, followed while serving so that a proxy
//! provider's list can change without a restart.

use std::path::Path;
use std::time::Duration;

/// How often [`crate::Fetcher::follow_proxy_file`] looks at the file.
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
pub(crate) fn union(named: &[String], text: &str) -> Vec<String> {
    let mut all = named.to_vec();
    for proxy in parse(text) {
        if !all.contains(&proxy) {
            all.push(proxy);
        }
    }
    all
}

/// `named` and the proxies the file at `path` lists; the reason, for [`crate::OriginError::ProxyFile`], when the
/// file cannot be read, or when neither lists a proxy (a file emptied by mistake must not send every page from
/// the server's own address).
pub(crate) fn read(named: &[String], path: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot be read ({e})"))?;
    let all = union(named, &text);
    if all.is_empty() {
        return Err(NO_PROXY.to_owned());
    }
    Ok(all)
}

/// Why a file that lists nothing is refused.
pub(crate) const NO_PROXY: &str = "lists no proxy";

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
        let reason = read(&[], &path).expect_err("missing");
        let error = crate::OriginError::ProxyFile {
            path: path.clone(),
            reason,
        }
        .to_string();
        assert!(
            error.contains("cannot be read") && error.contains("one proxy URL per line"),
            "{error}"
        );
        std::fs::write(&path, "# none yet\n").expect("write");
        assert_eq!(read(&[], &path).expect_err("empty"), NO_PROXY);
        assert_eq!(
            read(&["http://127.0.0.1:1".to_owned()], &path).expect("named ones"),
            ["http://127.0.0.1:1"]
        );
    }
}
