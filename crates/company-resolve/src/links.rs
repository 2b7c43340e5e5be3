//! The network pages a company's own home page links to: `<a href>` anywhere in its markup (noting a footer or
//! header, where sites put their social icons), `rel="me"` on `<a>` and `<link>`, and JSON-LD `sameAs`
//! (schema.org `Organization.sameAs`, at any depth, `@graph` included).

use api_contract::ResolveMethod;
use page_url::{NetworkDomain, PageUrl};
use scraper::{ElementRef, Html, Selector};

/// One link to a page of the network on the site.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SiteLink {
    /// The page, normalized.
    pub page: PageUrl,
    /// How the site names it: an `<a href>`, `rel="me"` or JSON-LD `sameAs`.
    pub method: ResolveMethod,
    /// The link as written.
    pub href: String,
    /// Where: `footer`, `header`, `body`, `JSON-LD sameAs`, `<link rel="me">`.
    pub place: &'static str,
}

/// The network pages `html` links to, each once (its first and strongest mention: `rel="me"` and `sameAs` are
/// the site's own claim, a plain link may be a partner's), in document order.
pub(crate) fn site_links(html: &str, network: &NetworkDomain) -> Vec<SiteLink> {
    let document = Html::parse_document(html);
    let mut found: Vec<SiteLink> = Vec::new();
    let mut add = |link: SiteLink| match found.iter_mut().find(|f| f.page == link.page) {
        Some(existing) if existing.method == ResolveMethod::SiteLink => *existing = link,
        Some(_) => {}
        None => found.push(link),
    };
    if let Ok(anchors) = Selector::parse("a[href]") {
        for anchor in document.select(&anchors) {
            let Some(href) = anchor.value().attr("href") else {
                continue;
            };
            let Ok(page) = PageUrl::normalize(href, network) else {
                continue;
            };
            let rel_me = anchor.value().attr("rel").is_some_and(|rel| {
                rel.split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("me"))
            });
            add(SiteLink {
                page,
                method: if rel_me {
                    ResolveMethod::SiteRelMe
                } else {
                    ResolveMethod::SiteLink
                },
                href: href.to_owned(),
                place: place_of(anchor),
            });
        }
    }
    if let Ok(links) = Selector::parse("link[href]") {
        for link in document.select(&links) {
            let rel_me = link.value().attr("rel").is_some_and(|rel| {
                rel.split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("me"))
            });
            let href = link.value().attr("href").unwrap_or_default();
            if let (true, Ok(page)) = (rel_me, PageUrl::normalize(href, network)) {
                add(SiteLink {
                    page,
                    method: ResolveMethod::SiteRelMe,
                    href: href.to_owned(),
                    place: "<link rel=\"me\">",
                });
            }
        }
    }
    if let Ok(scripts) = Selector::parse(r#"script[type="application/ld+json"]"#) {
        for script in document.select(&scripts) {
            let text: String = script.text().collect();
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            let mut same_as = Vec::new();
            collect_same_as(&value, &mut same_as);
            for href in same_as {
                if let Ok(page) = PageUrl::normalize(&href, network) {
                    add(SiteLink {
                        page,
                        method: ResolveMethod::SiteSameAs,
                        href,
                        place: "JSON-LD sameAs",
                    });
                }
            }
        }
    }
    found
}

/// Every string under a `sameAs` member anywhere in `value`.
fn collect_same_as(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(members) => {
            for (name, member) in members {
                if name == "sameAs" {
                    match member {
                        serde_json::Value::String(s) => out.push(s.clone()),
                        serde_json::Value::Array(items) => {
                            out.extend(items.iter().filter_map(|i| i.as_str().map(str::to_owned)));
                        }
                        _ => {}
                    }
                } else {
                    collect_same_as(member, out);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| collect_same_as(i, out)),
        _ => {}
    }
}

/// `footer` or `header` when the element is inside one (the element, or a `class`/`id` naming it), else `body`.
fn place_of(element: ElementRef<'_>) -> &'static str {
    for ancestor in element.ancestors().filter_map(ElementRef::wrap) {
        let value = ancestor.value();
        let named = |word: &str| {
            value.name() == word
                || value
                    .attr("class")
                    .is_some_and(|c| c.to_ascii_lowercase().contains(word))
                || value
                    .attr("id")
                    .is_some_and(|i| i.to_ascii_lowercase().contains(word))
        };
        if named("footer") {
            return "footer";
        }
        if named("header") || value.name() == "nav" {
            return "header";
        }
    }
    "body"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_rel_me_and_same_as_are_found_once_each() {
        let html = r#"<html><head>
            <link rel="me" href="https://www.linkedin.com/company/acme-labs/">
            <script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"Organization",
              "sameAs":["https://twitter.com/acme","https://uk.linkedin.com/company/acme-uk"]}]}</script>
            </head><body>
            <p><a href="https://www.linkedin.com/company/partner-co">our partner</a></p>
            <a href="https://www.linkedin.com/in/someone">a person</a>
            <footer><div><a href="https://linkedin.com/company/Acme?trk=footer">in</a></div></footer>
            <a rel="nofollow me" href="https://www.linkedin.com/company/acme">again</a>
            </body></html>"#;
        let found = site_links(html, &NetworkDomain::default());
        let summary: Vec<(&str, ResolveMethod, &str)> = found
            .iter()
            .map(|l| (l.page.slug(), l.method, l.place))
            .collect();
        assert_eq!(
            summary,
            [
                ("partner-co", ResolveMethod::SiteLink, "body"),
                ("acme", ResolveMethod::SiteRelMe, "body"),
                ("acme-labs", ResolveMethod::SiteRelMe, "<link rel=\"me\">"),
                ("acme-uk", ResolveMethod::SiteSameAs, "JSON-LD sameAs"),
            ]
        );
    }
}
