//! The network's guest job search (`/jobs/search?f_C=<company id>`, page key `d_jobs_guest_search`): how many
//! open jobs it counts, the company page's `job_count` (docs/record.md). The company page itself shows none.

use scraper::Html;

use super::kind::{AUTHWALL_PATHS, KeyFamily, PAGE_KEY, path_of};
use super::page::CANONICAL;
use crate::numbers::read_count;
use crate::{Block, ScrapeError};

selectors! {
    // `<span class="results-context-header__job-count">2000+</span>` in the results header (`<h1>`).
    JOB_COUNT = "span.results-context-header__job-count";
    // `<meta name="linkedin:pageTag" content="urlType=jserp_custom;emptyResult=false">`.
    PAGE_TAG = r#"meta[name="linkedin:pageTag"]"#;
}

/// An open-jobs count as the guest job search prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobCount {
    /// The number of open jobs: `"1,213"` → 1213, `"2000+"` → 2000, `"5,025,000+"` → 5025000.
    pub count: u64,
    /// The search printed a floor, not the count: a `+` after the number (`"2000+"`) or words before it (a
    /// localized "over", e.g. `"Plus de 9 000"`). The network caps what it counts for broad searches.
    pub lower_bound: bool,
}

/// Reads the open-jobs count from a guest job search page: the text of `span.results-context-header__job-count`;
/// a search the page tags as empty (`<meta name="linkedin:pageTag" content="…emptyResult=true…">`) and that
/// prints no count is 0 jobs.
///
/// # Errors
/// [`ScrapeError::Authwall`] for the sign-in or sign-up wall (by page key or canonical link, at any size);
/// [`ScrapeError::Blocked`] for the guest home page; [`ScrapeError::WrongPageKind`] for a page with another
/// page key and no count (`found` is the key); [`ScrapeError::Unparseable`] for a job search without a count.
pub fn parse_job_search(html: &str) -> Result<JobCount, ScrapeError> {
    let document = Html::parse_document(html);
    let attr = |selector: &scraper::Selector, name: &str| {
        document
            .select(selector)
            .next()
            .and_then(|e| e.value().attr(name))
            .map(str::to_owned)
    };
    let page_key = attr(&PAGE_KEY, "content").unwrap_or_default();
    let canonical_path = attr(&CANONICAL, "href")
        .as_deref()
        .map(path_of)
        .unwrap_or_default();
    let family = KeyFamily::of(&page_key);
    if family == KeyFamily::Wall || AUTHWALL_PATHS.iter().any(|p| canonical_path.starts_with(p)) {
        return Err(ScrapeError::Authwall);
    }
    if family == KeyFamily::GuestHome || canonical_path == "/" {
        return Err(ScrapeError::Blocked {
            by: Block::GuestHomePage,
        });
    }
    if let Some(text) = document
        .select(&JOB_COUNT)
        .next()
        .map(|e| e.text().collect::<String>())
        && let Some(count) = read_count(&text)
    {
        let text = text.trim();
        let lower_bound = text.contains('+')
            || text
                .chars()
                .take_while(|c| !c.is_ascii_digit())
                .any(char::is_alphabetic);
        return Ok(JobCount {
            count: count.value,
            lower_bound,
        });
    }
    if family != KeyFamily::JobSearch {
        return Err(ScrapeError::WrongPageKind {
            found: if page_key.is_empty() {
                "a page that is not the job search".to_owned()
            } else {
                page_key
            },
        });
    }
    let empty = attr(&PAGE_TAG, "content")
        .is_some_and(|tag| tag.split(';').any(|part| part.trim() == "emptyResult=true"));
    if empty {
        return Ok(JobCount {
            count: 0,
            lower_bound: false,
        });
    }
    Err(ScrapeError::Unparseable)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(key: &str, body: &str) -> String {
        format!(
            r#"<html><head><meta name="pageKey" content="{key}"></head><body>{body}</body></html>"#
        )
    }

    fn count(text: &str) -> JobCount {
        parse_job_search(&page(
            "d_jobs_guest_search",
            &format!(r#"<span class="results-context-header__job-count">{text}</span>"#),
        ))
        .expect("a count")
    }

    #[test]
    fn counts_exact_capped_and_localized() {
        assert_eq!(
            count("1,213"),
            JobCount {
                count: 1213,
                lower_bound: false
            }
        );
        assert_eq!(
            count("5,025,000+"),
            JobCount {
                count: 5_025_000,
                lower_bound: true
            }
        );
        assert_eq!(
            count("Plus de 9 000"),
            JobCount {
                count: 9000,
                lower_bound: true
            }
        );
        assert_eq!(
            count(" 65 "),
            JobCount {
                count: 65,
                lower_bound: false
            }
        );
    }

    #[test]
    fn an_empty_search_is_zero_and_a_search_without_a_count_is_unparseable() {
        let empty =
            r#"<meta name="linkedin:pageTag" content="urlType=jserp_custom;emptyResult=true">"#;
        let html = page("d_jobs_guest_search", "").replace("</head>", &format!("{empty}</head>"));
        assert_eq!(
            parse_job_search(&html),
            Ok(JobCount {
                count: 0,
                lower_bound: false
            })
        );
        assert_eq!(
            parse_job_search(&page("d_jobs_guest_search", "")),
            Err(ScrapeError::Unparseable)
        );
    }

    #[test]
    fn walls_and_other_pages_are_named() {
        assert_eq!(
            parse_job_search(&page("d_registration-cold-join", "")),
            Err(ScrapeError::Authwall)
        );
        assert!(matches!(
            parse_job_search(&page("d_homepage-guest-home", "")),
            Err(ScrapeError::Blocked { .. })
        ));
        assert_eq!(
            parse_job_search(&page("d_org_guest_company_overview", "")),
            Err(ScrapeError::WrongPageKind {
                found: "d_org_guest_company_overview".to_owned()
            })
        );
    }
}
