//! The pages test-mode keys (`cdk_test_…`) are answered from, so that they never reach the network: the company
//! pages this repository captured (`tests/fixtures/origin`, embedded in the binary) and a few companies
//! generated from one of them, laid out as a folder origin (`<dir>/company/<slug>.html`) for the fetcher, with
//! the guest job search of each company's id (`<dir>/jobs/<company_id>.html`: the captured search, which counts
//! "2000+"), so that a test key's `include: ["job_count"]` is answered as a live key's is.
//!
//! A generated company is the captured Audiense page with the company's name, page slug and website replaced, so
//! the parser reads it as it reads any real page of that layout: its record has the generated name, URL and
//! domain and the captured page's other fields. Any other URL is a page that does not exist (`not_found`), as on
//! the network.
//!
//! Not here: which keys are test keys (api-keys), how their requests are routed (company-lookup), the folder
//! origin itself (page-scraper).
//!
//! ```
//! let dir = tempfile::tempdir()?;
//! sandbox_pages::write_origin(dir.path())?;
//! assert!(dir.path().join("company/google.html").is_file());
//! assert!(dir.path().join("company/acme-sandbox").with_extension("html").is_file());
//! # Ok::<(), std::io::Error>(())
//! ```
#![deny(missing_docs)]

use std::borrow::Cow;
use std::path::Path;

/// The captured Google page (2025 layout).
const GOOGLE: &str = include_str!("../../../tests/fixtures/origin/company/google.html");
/// The captured Audiense page (2024 layout): also the template of the generated companies.
const AUDIENSE: &str = include_str!("../../../tests/fixtures/origin/company/audiense.html");
/// A captured guest job search (`d_jobs_guest_search`, "2000+" open jobs).
const JOB_SEARCH: &str = include_str!("../../../tests/fixtures/pages/jobs-guest-search-2026.html");
/// The company ids the sandbox's pages show (`urn:li:organization:<id>`): Google's, and Audiense's, which the
/// generated companies keep (they are copies of its page).
pub const COMPANY_IDS: [u64; 2] = [1441, 10_529_043];

/// The generated companies: (page slug, company name). Their websites are `https://<slug>.example` (RFC 2606:
/// a domain that never resolves to anyone's site).
pub const GENERATED: [(&str, &str); 3] = [
    ("acme-sandbox", "Acme Sandbox"),
    ("globex-sandbox", "Globex Sandbox"),
    ("initech-sandbox", "Initech Sandbox"),
];

/// One page of the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxPage {
    /// The page's kind, the first segment of its path: `company`.
    pub kind: &'static str,
    /// Its slug, as in its canonical URL (`https://www.linkedin.com/company/<slug>`).
    pub slug: &'static str,
    /// Its HTML.
    pub html: Cow<'static, str>,
}

/// Every page of the sandbox: the captured ones, then the generated ones.
pub fn pages() -> Vec<SandboxPage> {
    let captured = [("google", GOOGLE), ("audiense", AUDIENSE)]
        .into_iter()
        .map(|(slug, html)| SandboxPage {
            kind: "company",
            slug,
            html: Cow::Borrowed(html),
        });
    let generated = GENERATED.into_iter().map(|(slug, name)| SandboxPage {
        kind: "company",
        slug,
        html: Cow::Owned(generate(slug, name)),
    });
    captured.chain(generated).collect()
}

/// The path of every page, `<kind>/<slug>` (`company/google`, ...): the pages a test key can look up are
/// `https://www.linkedin.com/<path>`.
pub fn paths() -> Vec<String> {
    pages()
        .iter()
        .map(|page| format!("{}/{}", page.kind, page.slug))
        .collect()
}

/// The Audiense page as the company `name` at `slug`: its website first (so that its domain becomes
/// `<slug>.example`, not `<slug>.com`), then every spelling of the name and slug.
fn generate(slug: &str, name: &str) -> String {
    AUDIENSE
        .replace("www.audiense.com", &format!("{slug}.example"))
        .replace("audiense.com", &format!("{slug}.example"))
        // The same website inside the network's redirect link, percent-encoded.
        .replace("www%2Eaudiense%2Ecom", &format!("{slug}%2Eexample"))
        .replace("audiense%2Ecom", &format!("{slug}%2Eexample"))
        .replace("Audiense", name)
        .replace("AUDIENSE", &name.to_uppercase())
        .replace("audiense", slug)
}

/// Writes every page under `dir` as a folder origin: `<dir>/<kind>/<slug>.html`, and the job search of each of
/// [`COMPANY_IDS`] as `<dir>/jobs/<id>.html`.
///
/// # Errors
/// When a folder or file cannot be written.
pub fn write_origin(dir: &Path) -> std::io::Result<()> {
    for page in pages() {
        let folder = dir.join(page.kind);
        std::fs::create_dir_all(&folder)?;
        std::fs::write(
            folder.join(format!("{}.html", page.slug)),
            page.html.as_bytes(),
        )?;
    }
    let jobs = dir.join("jobs");
    std::fs::create_dir_all(&jobs)?;
    for id in COMPANY_IDS {
        std::fs::write(jobs.join(format!("{id}.html")), JOB_SEARCH)?;
    }
    Ok(())
}
