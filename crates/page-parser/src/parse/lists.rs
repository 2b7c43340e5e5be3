//! The page's list sections (funding, products, updates, similar and affiliated pages, employees), each found by
//! its `data-test-id` or its heading and read by `crate::sections`, and the parent a showcase page names.

use company_model::{Employee, FundingInfo, PageCard, Product, Update};
use page_url::{PageKind, PageUrl};
use scraper::ElementRef;
use serde_json::Value;

use super::page::{
    AFFILIATED, ALSO_VIEWED, EMPLOYEES, FUNDING, PRODUCTS, Page, SIMILAR, Section, Trail, UPDATES,
};
use crate::sections;
use crate::text::clean_line;

impl Page<'_> {
    pub(super) fn funding_info(&self, trail: &mut Trail) -> Option<FundingInfo> {
        self.list_section(trail, "funding_info", &[FUNDING], sections::funding)
    }

    pub(super) fn products(&self, trail: &mut Trail) -> Vec<Product> {
        self.list_section(trail, "products", &[PRODUCTS], |s| {
            Some(sections::products(s, self.domain))
        })
        .unwrap_or_default()
    }

    pub(super) fn updates(&self, trail: &mut Trail) -> Vec<Update> {
        self.list_section(trail, "updates", &[UPDATES], |s| {
            Some(sections::updates(s, self.domain))
        })
        .unwrap_or_default()
    }

    pub(super) fn similar_pages(&self, trail: &mut Trail) -> Vec<PageCard> {
        self.list_section(trail, "similar_pages", &[SIMILAR, ALSO_VIEWED], |s| {
            Some(sections::cards(s, self.domain))
        })
        .unwrap_or_default()
    }

    pub(super) fn affiliated_pages(&self, trail: &mut Trail) -> Vec<PageCard> {
        self.list_section(trail, "affiliated_pages", &[AFFILIATED], |s| {
            Some(sections::cards(s, self.domain))
        })
        .unwrap_or_default()
    }

    pub(super) fn employees_on_li(&self, trail: &mut Trail) -> Vec<Employee> {
        self.list_section(trail, "employees_on_li", &[EMPLOYEES], |s| {
            Some(sections::employees(s, self.domain))
        })
        .unwrap_or_default()
    }

    /// A showcase page's parent: JSON-LD's, else the one company page among its `affiliated` pages. Other pages
    /// have none.
    pub(super) fn parent_company(
        &self,
        trail: &mut Trail,
        showcase: bool,
        affiliated: &[PageCard],
    ) -> Option<PageCard> {
        trail.pick(
            "parent_company",
            &[
                ("JSON-LD Organization.parentOrganization", &|| {
                    showcase.then(|| self.parent_organization()).flatten()
                }),
                // A showcase page's affiliated pages are its parent and its sibling showcases: the one company
                // page among them is the parent; with several (a subsidiary listed too), none is taken.
                ("the one company page among \"Affiliated pages\"", &|| {
                    if !showcase {
                        return None;
                    }
                    let mut companies = affiliated
                        .iter()
                        .filter(|card| card.link.as_deref().is_some_and(is_company_page));
                    match (companies.next(), companies.next()) {
                        (Some(parent), None) => Some(parent.clone()),
                        _ => None,
                    }
                }),
            ],
        )
    }

    /// A list section read by `read`, found by its `data-test-id` or its heading (the first of `sections`
    /// the page has, for a section whose heading changed); the field's source says which. A section that is
    /// there but gives nothing counts as absent.
    fn list_section<'s, T: HasItems>(
        &'s self,
        trail: &mut Trail,
        field: &'static str,
        sections: &[Section],
        read: impl Fn(ElementRef<'s>) -> Option<T>,
    ) -> Option<T> {
        let found = sections.iter().find_map(|section| {
            self.section_by_id(section.test_id)
                .map(|s| (s, section.by_id))
                .or_else(|| {
                    self.section_by_heading(section.heading)
                        .map(|s| (s, section.by_heading))
                })
        });
        let value = found
            .and_then(|(element, _)| read(element))
            .filter(HasItems::has_items);
        let mut tried = Vec::new();
        for section in sections {
            for how in [section.by_id, section.by_heading] {
                if !tried.contains(&how) {
                    tried.push(how);
                }
            }
        }
        trail.note(field, value.as_ref().and(found.map(|(_, how)| how)), &tried);
        value
    }

    /// JSON-LD `Organization.parentOrganization` (an object or the first of a list) as a card: its `name` as
    /// `title`, its `url` as `link` (canonical when a page of the network).
    fn parent_organization(&self) -> Option<PageCard> {
        let parent = self.organization.as_ref()?.get("parentOrganization")?;
        let parent = match parent {
            Value::Array(items) => items.first()?,
            other => other,
        };
        let text = |key: &str| parent.get(key).and_then(Value::as_str).and_then(clean_line);
        let card = PageCard {
            title: text("name"),
            link: text("url").map(|url| {
                PageUrl::normalize(&url, self.domain).map_or(url, |page| page.as_str().to_owned())
            }),
            ..PageCard::default()
        };
        (card.title.is_some() || card.link.is_some()).then_some(card)
    }
}

/// Whether a canonical link is a company page (`https://www.<domain>/company/<slug>`).
fn is_company_page(link: &str) -> bool {
    PageUrl::from_canonical(link).is_ok_and(|page| page.kind() == PageKind::Company)
}

/// What a list section gave: nothing counts as absent.
trait HasItems {
    fn has_items(&self) -> bool;
}

impl<T> HasItems for Vec<T> {
    fn has_items(&self) -> bool {
        !self.is_empty()
    }
}

impl HasItems for FundingInfo {
    fn has_items(&self) -> bool {
        *self != FundingInfo::default()
    }
}
