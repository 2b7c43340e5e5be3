//! Section 13, from a domain to the page: a labelled set of generated company websites in fourteen shapes, served
//! through the site proxy with a 100 ms delay, their pages (derived from the captured Audiense page) from an
//! origin that answers in 300 ms; every domain resolved live on a new server, its answer compared with the label.
//! Precision at the default threshold (a wrong page is worse than none), recall by shape, and domains per second.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use e2e_harness::Service;
use e2e_harness::websites::{NetworkOrigin, PageSpec, Site, Websites, home_page};
use serde_json::{Value, json};

use crate::{Error, Plan};

/// The most domains the bench sends in one request (the requests go at once).
const REQUEST_SIZE: usize = 50;

/// How a generated company's website and pages look.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Shape {
    /// The footer links the company page (named otherwise than the domain).
    FooterLink,
    /// Only JSON-LD `sameAs` names the page.
    SameAs,
    /// Only `<link rel="me">` names the page.
    RelMe,
    /// The site links a partner's page; the company's own page is named after the domain.
    PartnerAndOwnPage,
    /// The site links a partner's page; the company has no page. Expected: nothing.
    PartnerOnly,
    /// The footer links the company page and two showcase pages of the group.
    Group,
    /// The domain redirects to the company's new domain, whose site links the page.
    Redirect,
    /// Only `www.` answers, and links the page.
    WwwOnly,
    /// The site answers 503; the page is named after the domain.
    ServerError,
    /// The site links nothing; the page is named after the domain.
    NoLinkOwnPage,
    /// The site links nothing; a page named after the domain belongs to another company. Expected: nothing.
    NameClash,
    /// The site links nothing and the company's page is named otherwise than the domain: the page exists, but
    /// no step can find it (what recall costs for precision).
    NoLinkOtherName,
    /// The domain is parked: it redirects to a for-sale page naming it, whose site links the parking company's
    /// page. Expected: nothing.
    Parked,
    /// The domain redirects straight to its page on the network.
    RedirectToPage,
}

const SHAPES: [Shape; 14] = [
    Shape::FooterLink,
    Shape::SameAs,
    Shape::RelMe,
    Shape::PartnerAndOwnPage,
    Shape::PartnerOnly,
    Shape::Group,
    Shape::Redirect,
    Shape::WwwOnly,
    Shape::ServerError,
    Shape::NoLinkOwnPage,
    Shape::NameClash,
    Shape::NoLinkOtherName,
    Shape::Parked,
    Shape::RedirectToPage,
];

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::FooterLink => "footer icon link",
            Shape::SameAs => "JSON-LD sameAs only",
            Shape::RelMe => "rel=\"me\" only",
            Shape::PartnerAndOwnPage => "a partner's link, own page by name",
            Shape::PartnerOnly => "a partner's link, no own page",
            Shape::Group => "a group: company and showcase pages",
            Shape::Redirect => "redirects to a new domain",
            Shape::WwwOnly => "www only",
            Shape::ServerError => "site answers 503, page by name",
            Shape::NoLinkOwnPage => "no link, own page by name",
            Shape::NameClash => "no link, another company's page by the name",
            Shape::NoLinkOtherName => "no link, own page named otherwise",
            Shape::Parked => "parked at a for-sale page",
            Shape::RedirectToPage => "redirects to its page on the network",
        }
    }
}

/// One generated company: its domain and the page it should resolve to (`None`: no page should be returned).
struct Labelled {
    shape: Shape,
    domain: String,
    expected: Option<String>,
}

/// The generated world: the labels, the websites, the pages.
struct World {
    labelled: Vec<Labelled>,
    sites: HashMap<String, Site>,
    pages: Vec<PageSpec>,
}

fn page(kind: &str, slug: &str, name: &str, website: &str) -> PageSpec {
    PageSpec {
        kind: kind.to_owned(),
        slug: slug.to_owned(),
        name: name.to_owned(),
        website: website.to_owned(),
    }
}

fn li(kind: &str, slug: &str) -> String {
    format!("https://www.linkedin.com/{kind}/{slug}")
}

/// `per_shape` companies of each shape; each website answers after `site_delay`.
fn world(per_shape: usize, site_delay: Duration) -> World {
    let mut world = World {
        labelled: Vec::new(),
        sites: HashMap::new(),
        pages: Vec::new(),
    };
    let slow = |html: String| Site::Slow(site_delay, html);
    let footer = |links: &[String]| {
        let anchors: Vec<String> = links
            .iter()
            .map(|l| format!(r#"<a href="{l}" aria-label="LinkedIn"><svg></svg></a>"#))
            .collect();
        format!("<footer class=\"footer\">{}</footer>", anchors.concat())
    };
    for (s, shape) in SHAPES.into_iter().enumerate() {
        for k in 0..per_shape {
            let label = format!("firm{s}x{k}");
            let domain = format!("{label}.test");
            let www = format!("www.{domain}");
            let name = format!("Firm {s} {k} Holdings");
            let own = format!("{label}-hq");
            let expected = match shape {
                Shape::FooterLink => {
                    world.pages.push(page("company", &own, &name, &www));
                    world.sites.insert(
                        domain.clone(),
                        slow(home_page(&name, "", &footer(&[li("company", &own)]))),
                    );
                    Some(li("company", &own))
                }
                Shape::SameAs => {
                    world.pages.push(page("company", &own, &name, &www));
                    let script = format!(
                        r#"<script type="application/ld+json">{{"@type":"Organization","sameAs":["https://x.com/{label}","{}"]}}</script>"#,
                        li("company", &own)
                    );
                    world
                        .sites
                        .insert(domain.clone(), slow(home_page(&name, &script, "")));
                    Some(li("company", &own))
                }
                Shape::RelMe => {
                    world.pages.push(page("company", &own, &name, &www));
                    let link = format!(r#"<link rel="me" href="{}">"#, li("company", &own));
                    world
                        .sites
                        .insert(domain.clone(), slow(home_page(&name, &link, "")));
                    Some(li("company", &own))
                }
                Shape::PartnerAndOwnPage | Shape::PartnerOnly => {
                    let partner = format!("partner{s}x{k}");
                    world.pages.push(page(
                        "company",
                        &partner,
                        "Partner Corp",
                        &format!("www.{partner}.test"),
                    ));
                    let body = format!(
                        r#"<p>Partner of <a href="{}">Partner Corp</a></p>"#,
                        li("company", &partner)
                    );
                    world
                        .sites
                        .insert(domain.clone(), slow(home_page(&name, "", &body)));
                    (shape == Shape::PartnerAndOwnPage).then(|| {
                        world.pages.push(page("company", &label, &name, &www));
                        li("company", &label)
                    })
                }
                Shape::Group => {
                    let labs = format!("{label}-labs");
                    let cloud = format!("{label}-cloud");
                    world.pages.push(page("company", &own, &name, &www));
                    world
                        .pages
                        .push(page("showcase", &labs, &format!("{name} Labs"), &www));
                    world
                        .pages
                        .push(page("showcase", &cloud, &format!("{name} Cloud"), &www));
                    let links = [
                        li("showcase", &labs),
                        li("company", &own),
                        li("showcase", &cloud),
                    ];
                    world
                        .sites
                        .insert(domain.clone(), slow(home_page(&name, "", &footer(&links))));
                    Some(li("company", &own))
                }
                Shape::Redirect => {
                    let new = format!("new{s}x{k}");
                    world
                        .pages
                        .push(page("company", &new, &name, &format!("www.{new}.test")));
                    world.sites.insert(
                        domain.clone(),
                        Site::Redirect(format!("http://www.{new}.test/")),
                    );
                    world.sites.insert(
                        format!("www.{new}.test"),
                        slow(home_page(&name, "", &footer(&[li("company", &new)]))),
                    );
                    Some(li("company", &new))
                }
                Shape::WwwOnly => {
                    world.pages.push(page("company", &own, &name, &www));
                    world.sites.insert(
                        www.clone(),
                        slow(home_page(&name, "", &footer(&[li("company", &own)]))),
                    );
                    Some(li("company", &own))
                }
                Shape::ServerError => {
                    world.pages.push(page("company", &label, &name, &www));
                    world.sites.insert(domain.clone(), Site::Status(503));
                    Some(li("company", &label))
                }
                Shape::NoLinkOwnPage => {
                    world.pages.push(page("company", &label, &name, &www));
                    world.sites.insert(
                        domain.clone(),
                        slow(home_page(&name, "", "<footer>© 2026</footer>")),
                    );
                    Some(li("company", &label))
                }
                Shape::NoLinkOtherName => {
                    world.pages.push(page("company", &own, &name, &www));
                    world.sites.insert(
                        domain.clone(),
                        slow(home_page(&name, "", "<footer>© 2026</footer>")),
                    );
                    Some(li("company", &own))
                }
                Shape::Parked => {
                    let parking = format!("parking{s}x{k}");
                    world.pages.push(page(
                        "company",
                        &parking,
                        "Parking Ltd",
                        &format!("{parking}.test"),
                    ));
                    world.sites.insert(
                        domain.clone(),
                        Site::Redirect(format!("http://{parking}.test/for-sale?domain={domain}")),
                    );
                    world.sites.insert(
                        format!("{parking}.test"),
                        slow(home_page(
                            "Parking",
                            "",
                            &footer(&[li("company", &parking)]),
                        )),
                    );
                    None
                }
                Shape::RedirectToPage => {
                    world.pages.push(page("company", &own, &name, &www));
                    world.sites.insert(
                        domain.clone(),
                        Site::Redirect(format!("{}/", li("company", &own))),
                    );
                    Some(li("company", &own))
                }
                Shape::NameClash => {
                    world.pages.push(page(
                        "company",
                        &label,
                        "Someone Else",
                        &format!("www.else{s}x{k}.test"),
                    ));
                    world.sites.insert(
                        domain.clone(),
                        slow(home_page(&name, "", "<footer>© 2026</footer>")),
                    );
                    None
                }
            };
            world.labelled.push(Labelled {
                shape,
                domain,
                expected,
            });
        }
    }
    world
}

/// Runs the section on `binary`.
pub(crate) async fn resolve(plan: Plan, binary: &Path) -> Result<Value, Error> {
    let (per_shape, site_delay, origin_delay) = if plan.quick {
        (2, Duration::from_millis(10), Duration::from_millis(30))
    } else {
        (22, Duration::from_millis(100), Duration::from_millis(300))
    };
    eprintln!("13: resolving {} generated sites", per_shape * SHAPES.len());
    let world = world(per_shape, site_delay);
    let websites = Websites::start(world.sites).await;
    let origin = NetworkOrigin::start(world.pages, origin_delay).await;
    let service = Service::start(e2e_harness::ServiceOptions {
        binary: Some(binary.to_path_buf()),
        origin: origin.base.clone(),
        args: vec![
            "--key-rate",
            "0",
            "--log",
            "warn",
            "--origin-concurrency",
            "64",
            "--site-proxy",
            &websites.proxy,
        ],
        ..e2e_harness::ServiceOptions::default()
    });
    let key = service.key("bench", "100000");
    // Requests of up to REQUEST_SIZE domains, all at once: what a client with a list does.
    let started = Instant::now();
    let requests = world.labelled.chunks(REQUEST_SIZE).map(|chunk| {
        let queries: Vec<Value> = chunk.iter().map(|l| json!({"domain": l.domain})).collect();
        let (service, key) = (&service, &key);
        async move {
            let response = e2e_harness::client()
                .post(format!("{}/v1/network/company-data/resolve", service.base))
                .bearer_auth(key)
                .json(&json!({"queries": queries, "maxAgeHours": 0}))
                .send()
                .await?;
            let status = response.status();
            let body: Value = response.json().await?;
            if !status.is_success() {
                return Err(format!("resolve answered {status}: {body}").into());
            }
            Ok::<Value, Error>(body)
        }
    });
    let answers = futures::future::try_join_all(requests).await?;
    let seconds = started.elapsed().as_secs_f64();
    let mut found: HashMap<String, (String, f64)> = HashMap::new();
    for answer in &answers {
        for result in answer["results"].as_array().into_iter().flatten() {
            found.insert(
                result["query"]["domain"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                (
                    result["li_url"].as_str().unwrap_or_default().to_owned(),
                    result["confidence"].as_f64().unwrap_or_default(),
                ),
            );
        }
    }
    let (mut returned, mut correct, mut wrong) = (0_usize, 0_usize, 0_usize);
    let mut by_shape: BTreeMap<Shape, (usize, usize, usize)> = BTreeMap::new();
    for labelled in &world.labelled {
        let entry = by_shape.entry(labelled.shape).or_default();
        entry.0 += 1;
        let answer = found.get(&labelled.domain).map(|(url, _)| url);
        if answer.is_some() {
            returned += 1;
        }
        match (answer, &labelled.expected) {
            (Some(got), Some(expected)) if got == expected => {
                correct += 1;
                entry.1 += 1;
            }
            (Some(_), _) => {
                wrong += 1;
                entry.2 += 1;
            }
            (None, _) => {}
        }
    }
    let resolvable = world
        .labelled
        .iter()
        .filter(|l| l.expected.is_some())
        .count();
    let shapes: Vec<Value> = by_shape
        .iter()
        .map(|(shape, (sites, right, wrong))| {
            let expected = world
                .labelled
                .iter()
                .filter(|l| l.shape == *shape && l.expected.is_some())
                .count();
            json!({
                "shape": shape.name(),
                "sites": sites,
                "expects_a_page": expected > 0,
                "correct": right,
                "wrong": wrong,
                "recall": (expected > 0).then(|| *right as f64 / expected as f64),
            })
        })
        .collect();
    // `bench: 99758 credits` on the first line: what is left of the 100,000 granted.
    let shown = service.cli(&["credits", "show", "--account", "bench"]);
    let left = shown
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or(f64::NAN);
    Ok(json!({
        "sites": world.labelled.len(),
        "resolvable": resolvable,
        "returned": returned,
        "correct": correct,
        "wrong": wrong,
        "precision": if returned > 0 { correct as f64 / returned as f64 } else { 1.0 },
        "recall": correct as f64 / resolvable.max(1) as f64,
        "seconds": seconds,
        "domains_per_second": world.labelled.len() as f64 / seconds,
        "site_delay_ms": site_delay.as_secs_f64() * 1000.0,
        "origin_delay_ms": origin_delay.as_secs_f64() * 1000.0,
        "credits_charged": 100_000.0 - left,
        "shapes": shapes,
    }))
}

/// The section's Markdown.
pub(crate) fn markdown(figures: &Value) -> String {
    let number = |pointer: &str| {
        figures
            .pointer(pointer)
            .and_then(Value::as_f64)
            .unwrap_or(f64::NAN)
    };
    let mut text = format!(
        "\n## 13. From a domain to the page\n\n\
         {sites} generated company websites in {shapes} shapes ({per} each), served through `--site-proxy` after \
         {site:.0} ms, their pages (derived from the captured Audiense page) from an origin that answers in \
         {origin:.0} ms; every domain resolved live (`maxAgeHours: 0`) on a new server, in requests of {size} sent at \
         once, each answer compared with its label. Three shapes expect no page at all (a site that links only a \
         partner, a page named after the domain that belongs to another company, a domain parked at a for-sale \
         page whose site links the parking company), and one has a page no step can find (no link on the site, \
         the page named otherwise than the domain).\n\n\
         | | |\n|---|---|\n\
         | precision at the default threshold ({threshold}) | **{precision:.3}** ({correct} right of {returned} returned, {wrong} wrong) |\n\
         | recall over the {resolvable} sites that have a page | {recall:.3} |\n\
         | domains resolved per second | **{rate:.1}** ({seconds:.1} s in all) |\n\
         | credits charged | {credits} (one per domain resolved live; nothing for the others) |\n\n\
         | shape | sites | right | wrong | recall |\n|---|---|---|---|---|\n",
        sites = number("/sites"),
        size = REQUEST_SIZE,
        threshold = company_resolve::MIN_CONFIDENCE,
        shapes = SHAPES.len(),
        per = number("/sites") / SHAPES.len() as f64,
        site = number("/site_delay_ms"),
        origin = number("/origin_delay_ms"),
        precision = number("/precision"),
        correct = number("/correct"),
        returned = number("/returned"),
        wrong = number("/wrong"),
        resolvable = number("/resolvable"),
        recall = number("/recall"),
        rate = number("/domains_per_second"),
        seconds = number("/seconds"),
        credits = number("/credits_charged"),
    );
    for shape in figures["shapes"].as_array().into_iter().flatten() {
        let recall = if shape["expects_a_page"].as_bool().unwrap_or(false) {
            format!("{:.2}", shape["recall"].as_f64().unwrap_or(f64::NAN))
        } else {
            "— (no page expected)".to_owned()
        };
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} |",
            shape["shape"].as_str().unwrap_or_default(),
            shape["sites"],
            shape["correct"],
            shape["wrong"],
            recall
        );
    }
    text
}
