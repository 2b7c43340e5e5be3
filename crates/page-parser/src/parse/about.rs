//! What the company says about itself: the About section's rows (website, industry, type, founded, size,
//! specialties) by their label or `data-test-id`, and its description, with JSON-LD before them where it carries
//! the same field (docs/record.md).

use scraper::ElementRef;
use serde_json::Value;

use super::page::{ABOUT, Page, Trail};
use super::top_card::TOP_HEADLINE;
use crate::text::{clean_block, clean_line};

selectors! {
    DD = "dd";
    LINK = "a";
    PARAGRAPH = "p";
}

impl Page<'_> {
    pub(super) fn website(&self, trail: &mut Trail) -> Option<String> {
        trail.pick(
            "website",
            &[
                ("About row \"Website\"", &|| {
                    website_in(self.labelled_row("website"))
                }),
                ("About row data-test-id about-us__website", &|| {
                    website_in(self.section_by_id("about-us__website"))
                }),
                ("JSON-LD Organization.sameAs", &|| {
                    self.ld_text("sameAs").filter(|s| s.starts_with("http"))
                }),
            ],
        )
    }

    pub(super) fn description(&self, trail: &mut Trail) -> Option<String> {
        trail.pick(
            "description",
            &[
                // JSON-LD text verbatim: it is the page's own plain text, line breaks and all.
                ("JSON-LD Organization.description", &|| {
                    self.ld("description")
                        .and_then(Value::as_str)
                        .filter(|d| !d.trim().is_empty())
                        .map(str::to_owned)
                }),
                (
                    "About description (data-test-id about-us__description)",
                    &|| {
                        self.section_by_id("about-us__description")
                            .and_then(|e| clean_block(&e.text().collect::<String>()))
                    },
                ),
                ("the paragraph of the section \"About us\"", &|| {
                    self.about_paragraph()
                }),
            ],
        )
    }

    pub(super) fn industries(&self, trail: &mut Trail) -> Option<String> {
        trail.pick(
            "industries",
            &[
                ("About row \"Industry\"", &|| {
                    row_value(self.labelled_row("industry"))
                }),
                ("About row data-test-id about-us__industry", &|| {
                    row_value(self.section_by_id("about-us__industry"))
                }),
                ("top card headline (h2.top-card-layout__headline)", &|| {
                    self.text(&TOP_HEADLINE)
                }),
            ],
        )
    }

    pub(super) fn company_type(&self, trail: &mut Trail) -> Option<String> {
        trail.pick(
            "type",
            &[
                ("About row \"Type\"", &|| {
                    row_value(self.labelled_row("type"))
                }),
                ("About row data-test-id about-us__organizationType", &|| {
                    row_value(self.section_by_id("about-us__organizationType"))
                }),
            ],
        )
    }

    pub(super) fn founded(&self, trail: &mut Trail) -> Option<i32> {
        trail.pick(
            "founded",
            &[
                ("About row \"Founded\"", &|| {
                    row_value(self.labelled_row("founded")).and_then(|t| t.parse().ok())
                }),
                ("About row data-test-id about-us__foundedOn", &|| {
                    row_value(self.section_by_id("about-us__foundedOn"))
                        .and_then(|t| t.parse().ok())
                }),
            ],
        )
    }

    pub(super) fn company_size(&self, trail: &mut Trail) -> Option<String> {
        trail.pick(
            "company_size",
            &[
                ("About row \"Company size\"", &|| {
                    row_value(self.labelled_row("company size"))
                }),
                ("About row data-test-id about-us__size", &|| {
                    row_value(self.section_by_id("about-us__size"))
                }),
            ],
        )
    }

    pub(super) fn specialties(&self, trail: &mut Trail) -> Vec<String> {
        trail
            .pick(
                "specialties",
                &[
                    ("About row \"Specialties\"", &|| {
                        row_value(self.labelled_row("specialties"))
                    }),
                    ("About row data-test-id about-us__specialties", &|| {
                        row_value(self.section_by_id("about-us__specialties"))
                    }),
                ],
            )
            .map(|t| split_specialties(&t))
            .unwrap_or_default()
    }

    /// The About section's headquarters row, as text (`addresses.rs` falls back to it).
    pub(super) fn about_headquarters(&self) -> Option<String> {
        row_value(self.labelled_row("headquarters"))
            .or_else(|| row_value(self.section_by_id("about-us__headquarters")))
    }

    /// The About section's own paragraph (its description), outside its rows.
    fn about_paragraph(&self) -> Option<String> {
        let section = self.section_by_heading(ABOUT.heading)?;
        section
            .select(&PARAGRAPH)
            .filter(|p| {
                !p.ancestors()
                    .any(|a| a.value().as_element().is_some_and(|e| e.name() == "dl"))
            })
            .find_map(|p| clean_block(&p.text().collect::<String>()))
    }
}

/// The website in an About row: its link, unwrapped from the network's `/redir/redirect?url=` link, else
/// its text when that is a bare domain.
fn website_in(row: Option<ElementRef<'_>>) -> Option<String> {
    let value = row_value_element(row?)?;
    let href = std::iter::once(value)
        .chain(value.select(&LINK))
        .find_map(|a| {
            (a.value().name() == "a")
                .then(|| a.value().attr("href"))
                .flatten()
        })
        .map(str::to_owned);
    let from_link = href.and_then(|href| {
        let url = url::Url::parse(&href).ok()?;
        if url.path().starts_with("/redir/redirect") {
            url.query_pairs()
                .find(|(k, _)| k == "url")
                .map(|(_, v)| v.into_owned())
        } else {
            Some(href)
        }
    });
    // A control character in the link (percent-decoded from the redirect's `%00`, or a reference such as `&#1;`
    // in the attribute) makes it no link to keep.
    let from_link = from_link.filter(|link| !link.contains(char::is_control));
    from_link.or_else(|| row_value(row).filter(|t| t.contains('.') && !t.contains(' ')))
}

/// The value of an About row: its `<dd>`, else (a `.basic-info-item`) the element after its label.
fn row_value_element(row: ElementRef<'_>) -> Option<ElementRef<'_>> {
    row.select(&DD)
        .next()
        .or_else(|| row.children().filter_map(ElementRef::wrap).nth(1))
}

/// The value of a row, on one line.
fn row_value(row: Option<ElementRef<'_>>) -> Option<String> {
    row_value_element(row?).and_then(|value| clean_line(&value.text().collect::<String>()))
}

/// `a, b, and c` → `[a, b, c]`, the way the About section lists specialties.
fn split_specialties(text: &str) -> Vec<String> {
    text.split(',')
        .map(|part| {
            let part = part.trim();
            part.strip_prefix("and ").unwrap_or(part).trim().to_owned()
        })
        .filter(|part| !part.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specialties_split_like_the_page_lists_them() {
        assert_eq!(
            split_specialties("search, ads, and software"),
            ["search", "ads", "software"]
        );
        assert_eq!(split_specialties("one"), ["one"]);
    }
}
