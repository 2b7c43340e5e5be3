//! The list sections of a logged-out company page: Locations, Products, Updates, Similar pages, Affiliated
//! pages, Employees at and Funding. Each reads the section by its `data-test-id` (the network's own
//! label for it) and returns nothing when the page does not show it.

use company_model::{Employee, FundingInfo, FundingRound, PageCard, PostAuthor, Product, Update};
use page_url::{NetworkDomain, PageUrl};
use scraper::{ElementRef, Selector};
use serde_json::Value;

use crate::numbers::parse_count;
use crate::text::clean_line;

selectors! {
    ASIDE_CARDS = "li a.base-card";
    ASIDE_TITLE = ".base-aside-card__title";
    ASIDE_SUBTITLE = ".base-aside-card__subtitle";
    ASIDE_SECOND_SUBTITLE = ".base-aside-card__second-subtitle";
    IMAGE = "img";
    EMPLOYEE_CARDS = "li a.base-card";
    MAIN_TITLE = ".base-main-card__title";
    MAIN_SUBTITLE = ".base-main-card__subtitle";
    MAIN_DESCRIPTION = ".base-main-card__description";
    PRODUCT_CARDS = ".base-card";
    PRODUCT_LINK = "a.base-card__full-link";
    FUNDING_ALL = r#"a[data-tracking-control-name="funding_all-rounds"]"#;
    FUNDING_LAST = r#"a[data-tracking-control-name="funding_last-round"]"#;
    FUNDING_AMOUNT = "p.text-display-lg";
    FUNDING_INVESTORS = r#"a[data-tracking-control-name="funding_investors"]"#;
    TIME = "time";
    UPDATE_CARDS = r#"ul.updates__list > li article[data-id="main-feed-card"]"#;
    UPDATE_HEADER = "article > p";
    // Each by its data-test-id or its component class, so that losing either keeps the member.
    UPDATE_LOCKUP = r#"[data-test-id="main-feed-activity-card__entity-lockup"], .base-main-feed-card__entity-lockup"#;
    ANCHOR = "a";
    UPDATE_ACTOR_NAME = r#"a[data-tracking-control-name$="feed-actor-name"]"#;
    UPDATE_TEXT = r#"[data-test-id="main-feed-activity-card__commentary"], .attributed-text-segment-list__content"#;
    UPDATE_IMAGES = r#"[data-test-id="feed-images-content"] img, ul.feed-images-content img"#;
    // The counts are attributes of their own: whichever element carries them.
    UPDATE_REACTIONS = "[data-num-reactions]";
    UPDATE_COMMENTS = "[data-num-comments]";
    PARAGRAPH = "p";
}

/// The first match's text on one line.
fn text_in(element: ElementRef<'_>, selector: &Selector) -> Option<String> {
    element
        .select(selector)
        .find_map(|e| clean_line(&e.text().collect::<String>()))
}

/// An image URL: `src`, or `data-delayed-url` where the lazy loader has not run.
pub(crate) fn image_url(element: ElementRef<'_>) -> Option<String> {
    ["src", "data-delayed-url"]
        .into_iter()
        .filter_map(|name| element.value().attr(name))
        .find(|url| url.starts_with("http"))
        .map(str::to_owned)
}

fn image_in(element: ElementRef<'_>, selector: &Selector) -> Option<String> {
    element.select(selector).find_map(image_url)
}

/// A link as records carry it: pages of the network in canonical `https://www.<domain>/...` form (company,
/// school and showcase pages fully normalized), the network's `trk` tracking parameter dropped everywhere.
pub(crate) fn canonical_link(href: &str, domain: &NetworkDomain) -> Option<String> {
    if let Ok(page) = PageUrl::normalize(href, domain) {
        return Some(page.as_str().to_owned());
    }
    let mut url = url::Url::parse(href).ok()?;
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let on_network = host == domain.as_str() || host.ends_with(&format!(".{}", domain.as_str()));
    if on_network {
        url.set_host(Some(&domain.canonical_host())).ok()?;
        let _ = url.set_scheme("https");
    }
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| k != "trk" && k != "trackingId")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if kept.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
    Some(url.to_string())
}

/// The cards of "Similar pages" or "Affiliated pages": `title`, `link`, `industry`, `location`, `logo`.
pub(crate) fn cards(section: ElementRef<'_>, domain: &NetworkDomain) -> Vec<PageCard> {
    section
        .select(&ASIDE_CARDS)
        .map(|card| PageCard {
            title: text_in(card, &ASIDE_TITLE),
            link: card
                .value()
                .attr("href")
                .and_then(|h| canonical_link(h, domain)),
            industry: text_in(card, &ASIDE_SUBTITLE),
            location: text_in(card, &ASIDE_SECOND_SUBTITLE),
            logo: image_in(card, &IMAGE),
            ..PageCard::default()
        })
        .filter(|card| card.title.is_some() || card.link.is_some())
        .collect()
}

/// "Employees at <company>": `name`, `title` (headline), `link` (profile), plus `image`.
pub(crate) fn employees(section: ElementRef<'_>, domain: &NetworkDomain) -> Vec<Employee> {
    section
        .select(&EMPLOYEE_CARDS)
        .map(|card| {
            let mut employee = Employee {
                name: text_in(card, &MAIN_TITLE),
                title: text_in(card, &MAIN_SUBTITLE),
                link: card
                    .value()
                    .attr("href")
                    .and_then(|h| canonical_link(h, domain)),
                ..Employee::default()
            };
            if let Some(image) = image_in(card, &IMAGE) {
                employee.other.insert("image".into(), Value::String(image));
            }
            employee
        })
        .filter(|e| e.name.is_some())
        .collect()
}

/// "Products": `name`, `description` (the card's text), plus `category` and `link`.
pub(crate) fn products(section: ElementRef<'_>, domain: &NetworkDomain) -> Vec<Product> {
    section
        .select(&PRODUCT_CARDS)
        .map(|card| {
            let mut product = Product {
                name: text_in(card, &MAIN_TITLE),
                description: text_in(card, &MAIN_DESCRIPTION),
                ..Product::default()
            };
            if let Some(category) = text_in(card, &MAIN_SUBTITLE) {
                product
                    .other
                    .insert("category".into(), Value::String(category));
            }
            if let Some(link) = card
                .select(&PRODUCT_LINK)
                .find_map(|a| a.value().attr("href"))
                .and_then(|h| canonical_link(h, domain))
            {
                product.other.insert("link".into(), Value::String(link));
            }
            product
        })
        .filter(|p| p.name.is_some())
        .collect()
}

/// "Funding" (data from Crunchbase): `number_of_funding_rounds`, `last_round` {`type`, `date`, `money_raised`,
/// `money_raised_usd` when the amount is in US dollars}, plus `investors` (names).
pub(crate) fn funding(section: ElementRef<'_>) -> Option<FundingInfo> {
    let rounds = section
        .select(&FUNDING_ALL)
        .find_map(|a| {
            let text: String = a.text().collect();
            text.contains("round").then(|| parse_count(&text)).flatten()
        })
        .and_then(|n| u32::try_from(n).ok());
    let last_round = section.select(&FUNDING_LAST).next().map(|link| {
        // The link's text is the round type followed by the date in a <time>.
        let round_type: String = link
            .children()
            .filter_map(|child| child.value().as_text().map(|t| t.to_string()))
            .collect();
        // The amount: its display class, else the paragraph that reads as an amount of money.
        let money_raised = text_in(section, &FUNDING_AMOUNT).or_else(|| {
            section
                .select(&PARAGRAPH)
                .filter_map(|p| clean_line(&p.text().collect::<String>()))
                .find(|text| looks_like_money(text))
        });
        FundingRound {
            round_type: clean_line(&round_type),
            date: link
                .select(&TIME)
                .find_map(|t| t.value().attr("datetime"))
                .map(str::to_owned),
            money_raised_usd: money_raised.as_deref().and_then(usd_amount),
            money_raised,
            ..FundingRound::default()
        }
    });
    let investors: Vec<Value> = section
        .select(&FUNDING_INVESTORS)
        .filter_map(|a| clean_line(&a.text().collect::<String>()))
        .map(Value::String)
        .collect();
    let mut info = FundingInfo {
        number_of_funding_rounds: rounds,
        last_round,
        ..FundingInfo::default()
    };
    if !investors.is_empty() {
        info.other
            .insert("investors".into(), Value::Array(investors));
    }
    (info != FundingInfo::default()).then_some(info)
}

/// `US$ 25.0M`, `€ 3.0M`, `£1.2B`: a currency sign (after at most three letters) and then a number.
fn looks_like_money(text: &str) -> bool {
    let after_letters = text.trim_start_matches(|c: char| c.is_ascii_uppercase());
    text.len() - after_letters.len() <= 3
        && after_letters.starts_with(['$', '€', '£', '¥', '₹', '₩'])
        && after_letters.chars().any(|c| c.is_ascii_digit())
}

/// `US$ 25.0M` → 25000000. Only US dollar amounts; other currencies give `None`.
fn usd_amount(text: &str) -> Option<u64> {
    let amount = text.trim().strip_prefix("US$")?.trim();
    parse_count(amount)
}

/// "Updates": the recent posts, with the members clients read.
pub(crate) fn updates(section: ElementRef<'_>, domain: &NetworkDomain) -> Vec<Update> {
    section
        .select(&UPDATE_CARDS)
        .map(|card| update(card, domain))
        .collect()
}

fn update(card: ElementRef<'_>, domain: &NetworkDomain) -> Update {
    // The author's line: by its data-test-id or class, else the nearest block around the author's name link
    // (named by its tracking attribute) that also holds the post's time.
    let lockup = card.select(&UPDATE_LOCKUP).next().or_else(|| {
        card.select(&UPDATE_ACTOR_NAME)
            .next()?
            .ancestors()
            .filter_map(ElementRef::wrap)
            .find(|block| block.select(&TIME).next().is_some())
    });
    let author = lockup.and_then(|lockup| {
        lockup.select(&ANCHOR).find_map(|a| {
            let text = clean_line(&a.text().collect::<String>())?;
            Some(PostAuthor {
                text: Some(text),
                link: a
                    .value()
                    .attr("href")
                    .and_then(|h| canonical_link(h, domain)),
            })
        })
    });
    let commentary = card.select(&UPDATE_TEXT).next();
    let mut update = Update {
        post_text: commentary.and_then(|p| {
            let text: String = p.text().collect();
            let trimmed = text.trim();
            (!trimmed.is_empty()).then(|| trimmed.to_owned())
        }),
        date: lockup.and_then(|l| text_in(l, &TIME)),
        reactions: card
            .select(&UPDATE_REACTIONS)
            .find_map(|a| a.value().attr("data-num-reactions"))
            .and_then(|n| n.parse().ok()),
        comments: card
            .select(&UPDATE_COMMENTS)
            .find_map(|a| a.value().attr("data-num-comments"))
            .and_then(|n| n.parse().ok()),
        media: card.select(&UPDATE_IMAGES).filter_map(image_url).collect(),
        post_author: author,
        ..Update::default()
    };
    if let Some(header) = card
        .select(&UPDATE_HEADER)
        .find_map(|p| clean_line(&p.text().collect::<String>()))
    {
        update.other.insert("header".into(), Value::String(header));
    }
    if let Some(commentary) = commentary {
        let links: Vec<String> = commentary
            .select(&ANCHOR)
            .filter_map(|a| a.value().attr("href"))
            .filter_map(|h| canonical_link(h, domain))
            .collect();
        let (hashtags, others): (Vec<String>, Vec<String>) = links
            .into_iter()
            .partition(|l| l.contains("/feed/hashtag/"));
        let mut lists = serde_json::Map::new();
        for (name, list) in [("hashtagLinks", hashtags), ("otherLinks", others)] {
            if !list.is_empty() {
                lists.insert(name.into(), Value::from(list));
            }
        }
        if !lists.is_empty() {
            update
                .other
                .insert("linksInPostText".into(), Value::Object(lists));
        }
    }
    if let Some(link) = card
        .value()
        .attr("data-activity-urn")
        .map(|urn| format!("https://www.{domain}/feed/update/{urn}"))
    {
        update.other.insert("link".into(), Value::String(link));
    }
    update
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_canonical_and_untracked() {
        let domain = NetworkDomain::default();
        for (href, expected) in [
            (
                "https://br.linkedin.com/company/martins?trk=similar-pages",
                "https://www.linkedin.com/company/martins",
            ),
            (
                "https://www.linkedin.com/showcase/google-cloud/?trk=affiliated-pages",
                "https://www.linkedin.com/showcase/google-cloud",
            ),
            (
                "https://uk.linkedin.com/in/someone?trk=org-employees",
                "https://www.linkedin.com/in/someone",
            ),
            (
                "https://lnkd.in/gNuhikrK?trk=organization_guest_main-feed-card-text",
                "https://lnkd.in/gNuhikrK",
            ),
            (
                "https://www.linkedin.com/feed/hashtag/ai?trk=x&a=1",
                "https://www.linkedin.com/feed/hashtag/ai?a=1",
            ),
        ] {
            assert_eq!(
                canonical_link(href, &domain).as_deref(),
                Some(expected),
                "{href}"
            );
        }
    }

    #[test]
    fn amounts_of_money_are_recognised() {
        for money in ["US$ 25.0M", "€ 3.0M", "£1.2B", "CA$ 700K"] {
            assert!(looks_like_money(money), "{money}");
        }
        for other in [
            "Last Round",
            "Investors",
            "3 total rounds",
            "$$$",
            "ABCD$ 1",
        ] {
            assert!(!looks_like_money(other), "{other}");
        }
    }

    #[test]
    fn usd_amounts() {
        assert_eq!(usd_amount("US$ 25.0M"), Some(25_000_000));
        assert_eq!(usd_amount("US$ 4.8M"), Some(4_800_000));
        assert_eq!(usd_amount("€ 3.0M"), None);
    }
}
