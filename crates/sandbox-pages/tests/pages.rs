//! Every sandbox page reads as the service reads pages: the parser makes a record of it, and a generated company's
//! record carries its generated name, page and domain, nothing of the page it was made from.

use page_url::{NetworkDomain, PageUrl};

#[test]
fn every_page_parses_and_generated_companies_are_themselves() {
    let domain = NetworkDomain::default();
    let pages = sandbox_pages::pages();
    assert_eq!(pages.len(), 2 + sandbox_pages::GENERATED.len());
    for page in &pages {
        let url = PageUrl::parse_submitted(
            &format!("https://www.linkedin.com/{}/{}", page.kind, page.slug),
            &domain,
        )
        .expect("a page URL");
        let record = page_parser::parse_page(&page.html, &url, &domain).expect("a record");
        assert_eq!(
            record.final_li_url.as_deref(),
            Some(format!("https://www.linkedin.com/company/{}", page.slug).as_str()),
            "{}",
            page.slug
        );
        if let Some((slug, name)) = sandbox_pages::GENERATED
            .iter()
            .find(|(slug, _)| *slug == page.slug)
        {
            assert_eq!(record.company_name.as_deref(), Some(*name));
            assert_eq!(record.domain, Some(format!("{slug}.example")));
            assert!(
                !page.html.to_lowercase().contains("audiense"),
                "{slug} still names its template"
            );
        }
    }
}

#[test]
fn the_origin_folder_holds_every_page_by_kind_and_slug() {
    let dir = tempfile::tempdir().expect("temp dir");
    sandbox_pages::write_origin(dir.path()).expect("written");
    for page in sandbox_pages::pages() {
        let written = std::fs::read_to_string(
            dir.path()
                .join(page.kind)
                .join(format!("{}.html", page.slug)),
        )
        .expect("written");
        assert_eq!(written, page.html);
    }
}
