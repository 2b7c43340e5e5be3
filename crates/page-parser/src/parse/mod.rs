//! The pure parser: HTML of one page → [`CompanyRecord`] or the reason it is not a company page. Split by what
//! it reads: `kind` (what the page is), `top_card` (identity and counts), `about` (the About section), `addresses`
//! (headquarters and locations) and `lists` (the list sections), over the indexed document of `page`.

mod about;
mod addresses;
mod job_search;
mod kind;
mod lists;
mod page;
mod top_card;

use company_model::CompanyRecord;
use page_url::{NetworkDomain, PageKind, PageUrl};
use scraper::Html;

pub use job_search::{JobCount, parse_job_search};
pub use kind::AUTHWALL_PATHS;
pub use page::FieldSource;
use page::{Page, SECTIONS, Trail};

use crate::ScrapeError;
use crate::labels::Counted;
use crate::links::registrable_domain;

/// Parses one page into a record.
///
/// `page_url` is the page that was fetched (after redirects); it gives `final_li_url` when the page has no
/// canonical link. Links are written on `domain` in their canonical `https://www.<domain>/...` form. Each field
/// is read from every place the page carries it, in a fixed order of trust (docs/record.md), so a layout change
/// that removes one of them loses nothing; [`parse_page_explained`] says which place each field came from.
///
/// # Errors
/// [`ScrapeError::Authwall`], [`ScrapeError::Blocked`], [`ScrapeError::NotFound`] or
/// [`ScrapeError::WrongPageKind`] when the page is one of those instead of a company page;
/// [`ScrapeError::Unparseable`] when it has no company name in any source.
pub fn parse_page(
    html: &str,
    page_url: &PageUrl,
    domain: &NetworkDomain,
) -> Result<CompanyRecord, ScrapeError> {
    parse_page_explained(html, page_url, domain).map(|parsed| parsed.record)
}

/// A company page parsed, with the account of where each field came from.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedPage {
    /// The record.
    pub record: CompanyRecord,
    /// Every field of the record, in the record's order, with its source.
    pub fields: Vec<FieldSource>,
    /// The sections a logged-out company page carries that this one lacks, by the network's own headings
    /// (`About us`, `Locations`, ...): a page that lacks several that pages usually have is a sign the layout
    /// changed.
    pub missing_sections: Vec<&'static str>,
}

/// [`parse_page`], with the source of every field and the sections the page lacks.
///
/// # Errors
/// As [`parse_page`].
pub fn parse_page_explained(
    html: &str,
    page_url: &PageUrl,
    domain: &NetworkDomain,
) -> Result<ParsedPage, ScrapeError> {
    let document = Html::parse_document(html);
    let page = Page::new(&document, domain);
    page.refuse_non_company_pages()?;
    let mut trail = Trail::default();
    let record = page.record(page_url, &mut trail);
    if record.company_name.is_none() {
        return Err(ScrapeError::Unparseable);
    }
    let missing_sections = SECTIONS
        .iter()
        .filter(|section| page.section(section).is_none())
        .map(|section| section.heading)
        .collect();
    Ok(ParsedPage {
        record,
        fields: trail.fields,
        missing_sections,
    })
}

impl Page<'_> {
    /// Every field, each from the first signal that has it, in the record's order (docs/record.md lists them
    /// with their signals in order of trust).
    fn record(&self, page_url: &PageUrl, trail: &mut Trail) -> CompanyRecord {
        let company_name = self.company_name(trail);
        let company_id = self.company_id(trail);
        let final_li_url = self.final_li_url(trail, page_url);
        let website = self.website(trail);
        let domain = website.as_deref().and_then(registrable_domain);
        trail.note(
            "domain",
            domain.as_ref().map(|_| "the website's registrable domain"),
            &["the website's registrable domain"],
        );
        let logo = self.logo(trail);
        let banner_img = self.banner_img(trail);
        let description = self.description(trail);
        let slogan = self.slogan(trail);
        let industries = self.industries(trail);
        let company_type = self.company_type(trail);
        let founded = self.founded(trail);
        let company_size = self.company_size(trail);
        let employee_count_on_li = self.employee_count(trail);
        let follower_count = self.follower_count(trail);
        let kind = final_li_url
            .as_deref()
            .and_then(|url| PageUrl::from_canonical(url).ok())
            .map(|page| page.kind());
        let school = kind == Some(PageKind::School);
        let alumni_count_on_li =
            self.school_count(trail, "alumni_count_on_li", Counted::Alumni, school);
        let student_count_on_li =
            self.school_count(trail, "student_count_on_li", Counted::Students, school);
        let specialties = self.specialties(trail);
        let (headquarters, locations) = self.places(trail);
        let funding_info = self.funding_info(trail);
        let products = self.products(trail);
        let updates = self.updates(trail);
        let similar_pages = self.similar_pages(trail);
        let affiliated_pages = self.affiliated_pages(trail);
        let employees_on_li = self.employees_on_li(trail);
        let showcase = kind == Some(PageKind::Showcase);
        let parent_company = self.parent_company(trail, showcase, &affiliated_pages);
        // Logged-out pages show no count of the company's own open jobs ("Browse jobs" lists keyword searches),
        // so it stays absent rather than guessed.
        trail.note("job_count", None, &[]);
        CompanyRecord {
            company_name,
            company_id,
            final_li_url,
            domain,
            website,
            logo,
            banner_img,
            description,
            slogan,
            industries,
            company_type,
            founded,
            company_size,
            employee_count_on_li,
            follower_count,
            alumni_count_on_li,
            student_count_on_li,
            parent_company,
            specialties,
            headquarters,
            locations,
            funding_info,
            products,
            updates,
            similar_pages,
            affiliated_pages,
            employees_on_li,
            // Fetched apart from the page (the guest job search), only when a request includes it.
            job_count: None,
            job_count_is_lower_bound: None,
            provenance: None,
        }
    }
}
