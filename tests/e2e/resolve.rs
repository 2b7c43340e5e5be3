//! `POST /v1/network/company-data/resolve` end to end: websites in many shapes served on loopback through
//! `--site-proxy` (the guard stays on), the network's pages derived from the captured Audiense page, and the
//! billing of what resolved.

use std::collections::HashMap;

use e2e_harness::websites::{Company, NetworkPages, Site, Websites, home_page};
use e2e_harness::{Reply, Service, ServiceOptions, client, credits_millis};
use serde_json::{Value, json};

const RESOLVE: &str = "/v1/network/company-data/resolve";

fn company<'a>(slug: &'a str, name: &'a str, website: &'a str) -> Company<'a> {
    Company {
        kind: "company",
        slug,
        name,
        website,
    }
}

fn showcase<'a>(slug: &'a str, name: &'a str, website: &'a str) -> Company<'a> {
    Company {
        kind: "showcase",
        slug,
        name,
        website,
    }
}

/// A footer of icon links, as sites put them.
fn footer(links: &[&str]) -> String {
    let anchors = links
        .iter()
        .map(|l| format!(r#"<a href="{l}" aria-label="LinkedIn"><svg></svg></a>"#))
        .collect::<Vec<_>>()
        .concat();
    format!(r#"<footer class="site-footer"><div class="social">{anchors}</div></footer>"#)
}

/// The pages and websites of these tests.
async fn world() -> (NetworkPages, Websites) {
    let pages = NetworkPages::new(&[
        company("acme", "Acme", "www.acme.test"),
        company("jsonco", "JsonCo Ltd", "jsonco.test"),
        company("bigpartner", "Big Partner", "www.bigpartner.test"),
        company("partnered", "Partnered", "www.partnered.test"),
        company("groupco", "GroupCo", "www.group.test"),
        showcase("groupco-labs", "GroupCo Labs", "www.group.test"),
        showcase("groupco-cloud", "GroupCo Cloud", "www.group.test"),
        company("newname", "NewName", "www.newname.test"),
        company("wwwonly", "WwwOnly", "www.wwwonly.test"),
        company("broken", "Broken", "broken.test"),
        company("sedo", "Sedo Parking", "sedo.test"),
        company("goesto", "GoesTo", "www.goesto.test"),
        company("twinwidgets", "Twin Widgets", "www.twin-one.test"),
        company("twin-widgets", "Twin Widgets Inc.", "www.twin-two.test"),
    ]);
    let li = |path: &str| format!("https://www.linkedin.com{path}");
    let sites = HashMap::from([
        (
            "acme.test".to_owned(),
            Site::Page(home_page(
                "Acme",
                "",
                &footer(&[&li("/company/acme/"), "https://twitter.com/acme"]),
            )),
        ),
        (
            "jsonco.test".to_owned(),
            Site::Page(home_page(
                "JsonCo",
                &format!(
                    r#"<script type="application/ld+json">{{"@context":"https://schema.org","@type":"Organization",
                    "name":"JsonCo","sameAs":["https://github.com/jsonco","{}"]}}</script>"#,
                    li("/company/jsonco")
                ),
                "",
            )),
        ),
        (
            "partnered.test".to_owned(),
            Site::Page(home_page(
                "Partnered",
                "",
                &format!(
                    r#"<section>Proud partner of <a href="{}">Big Partner</a></section>"#,
                    li("/company/bigpartner")
                ),
            )),
        ),
        (
            "group.test".to_owned(),
            Site::Page(home_page(
                "GroupCo",
                "",
                &footer(&[
                    &li("/showcase/groupco-labs"),
                    &li("/company/groupco"),
                    &li("/showcase/groupco-cloud"),
                ]),
            )),
        ),
        (
            "oldname.test".to_owned(),
            Site::Redirect("http://www.newname.test/".to_owned()),
        ),
        (
            "www.newname.test".to_owned(),
            Site::Page(home_page(
                "NewName",
                "",
                &footer(&[&li("/company/newname")]),
            )),
        ),
        (
            "www.wwwonly.test".to_owned(),
            Site::Page(home_page(
                "WwwOnly",
                r#"<link rel="me" href="https://www.linkedin.com/company/wwwonly">"#,
                "",
            )),
        ),
        ("hang.test".to_owned(), Site::Hang),
        (
            "parked.test".to_owned(),
            Site::Redirect("http://sedo.test/search?domain=parked.test".to_owned()),
        ),
        (
            "sedo.test".to_owned(),
            Site::Page(home_page("Sedo", "", &footer(&[&li("/company/sedo")]))),
        ),
        (
            "goesto.test".to_owned(),
            Site::Redirect("https://www.linkedin.com/company/goesto/".to_owned()),
        ),
        ("broken.test".to_owned(), Site::Status(503)),
        (
            "nolink.test".to_owned(),
            Site::Page(home_page("No link", "", "<footer>© No link</footer>")),
        ),
    ]);
    (pages, Websites::start(sites).await)
}

fn start(pages: &NetworkPages, sites: &Websites) -> Service {
    Service::start(ServiceOptions {
        origin: pages.origin(),
        args: vec!["--site-proxy", &sites.proxy, "--site-timeout", "1"],
        ..ServiceOptions::default()
    })
}

async fn resolve(service: &Service, key: &str, body: &Value) -> Reply {
    let request = client()
        .post(format!("{}{RESOLVE}", service.base))
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json")
        .body(body.to_string());
    Reply::from(request.send().await.expect("request sent")).await
}

fn charged(reply: &Reply) -> i64 {
    credits_millis(reply.header("x-credits-charged").expect("charged header"))
}

/// The result or unresolved entry of the query at `index` in the request, by its echoed query.
fn entry<'a>(reply: &'a Reply, query: &Value) -> &'a Value {
    reply.json["results"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(reply.json["unresolved"].as_array().into_iter().flatten())
        .find(|e| &e["query"] == query)
        .unwrap_or_else(|| panic!("no entry for {query} in {}", reply.json))
}

#[tokio::test]
async fn domains_resolve_by_their_sites_links_and_the_pages_websites() {
    let (pages, sites) = world().await;
    let service = start(&pages, &sites);
    let key = service.key("resolver", "100");
    let queries = [
        json!({"domain": "https://www.acme.test/about"}),
        json!({"domain": "jsonco.test"}),
        json!({"domain": "partnered.test"}),
        json!({"domain": "group.test"}),
        json!({"domain": "oldname.test"}),
        json!({"domain": "wwwonly.test"}),
        json!({"domain": "hang.test"}),
        json!({"domain": "broken.test"}),
        json!({"domain": "nolink.test"}),
        json!({"domain": "127.0.0.1"}),
        json!({"domain": "co.uk"}),
    ];
    let reply = resolve(
        &service,
        &key,
        &json!({"queries": queries, "maxAgeHours": 0}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.json);

    // Results and unresolved entries are each in query order.
    let order = |member: &str| -> Vec<Value> {
        reply.json[member]
            .as_array()
            .expect("array")
            .iter()
            .map(|e| e["query"].clone())
            .collect()
    };
    let mut expected_results = queries[..6].to_vec();
    expected_results.push(queries[7].clone());
    assert_eq!(order("results"), expected_results, "{}", reply.json);
    let mut expected_unresolved = vec![queries[6].clone(), queries[8].clone()];
    expected_unresolved.extend(queries[9..].iter().cloned());
    assert_eq!(order("unresolved"), expected_unresolved);

    let page = |query: &Value| -> (String, f64, String) {
        let e = entry(&reply, query);
        (
            e["li_url"].as_str().unwrap_or_default().to_owned(),
            e["confidence"].as_f64().unwrap_or_default(),
            e["method"].as_str().unwrap_or_default().to_owned(),
        )
    };
    let li = |path: &str| format!("https://www.linkedin.com{path}");
    // A footer icon link, checked against the page's website: both sides name each other.
    assert_eq!(
        page(&queries[0]),
        (li("/company/acme"), 0.99, "site_link".into())
    );
    assert_eq!(
        page(&queries[1]),
        (li("/company/jsonco"), 0.99, "site_same_as".into())
    );
    // The partner the site links to shows another website: not taken; the page named after the domain is.
    assert_eq!(
        page(&queries[2]),
        (li("/company/partnered"), 0.92, "domain_slug".into())
    );
    let partnered = entry(&reply, &queries[2]);
    let notes: Vec<&str> = partnered["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .filter_map(|e| e["note"].as_str())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("bigpartner.test, not partnered.test: not taken")),
        "{notes:?}"
    );
    // One group: the company page first, its showcase pages as candidates.
    assert_eq!(
        page(&queries[3]),
        (li("/company/groupco"), 0.99, "site_link".into())
    );
    let candidates: Vec<&str> = entry(&reply, &queries[3])["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .filter_map(|c| c["li_url"].as_str())
        .collect();
    assert_eq!(
        candidates,
        [li("/showcase/groupco-labs"), li("/showcase/groupco-cloud")]
    );
    // A domain that redirects to the company's current one: the page's website is where it lands.
    assert_eq!(
        page(&queries[4]),
        (li("/company/newname"), 0.96, "site_link".into())
    );
    // Only `www.` answers.
    assert_eq!(
        page(&queries[5]),
        (li("/company/wwwonly"), 0.99, "site_rel_me".into())
    );
    // A site that answers 503: its page is still found by its name, and the evidence says what the site did.
    assert_eq!(
        page(&queries[7]),
        (li("/company/broken"), 0.92, "domain_slug".into())
    );
    assert!(
        entry(&reply, &queries[7])["evidence"]
            .to_string()
            .contains("HTTP 503")
    );

    let error = |query: &Value| {
        entry(&reply, query)["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(error(&queries[6]), "site_unreachable");
    assert_eq!(error(&queries[8]), "no_page_found");
    assert_eq!(error(&queries[9]), "invalid_domain");
    assert!(
        entry(&reply, &queries[9])["message"]
            .as_str()
            .unwrap_or_default()
            .contains("IP address")
    );
    assert_eq!(error(&queries[10]), "invalid_domain");

    // Every message is one sentence as written: no run of spaces left by a broken line continuation.
    for unresolved in reply.json["unresolved"].as_array().expect("unresolved") {
        let message = unresolved["message"].as_str().unwrap_or_default();
        assert!(
            !message.is_empty() && !message.contains("  "),
            "{message:?}"
        );
    }
    // Live (maxAgeHours 0): 1 credit per resolved query, nothing for the others.
    assert_eq!(charged(&reply), 7 * 1000);
    assert_eq!(
        credits_millis(reply.header("x-credits-remaining").expect("remaining")),
        93_000
    );

    // Asked again with a window: remembered answers need no fetch, at the stored price; "no page found" is
    // remembered too. The partner's page was stored when it was checked above: its own domain resolves from
    // the store, once its site has had its say (here it cannot be read), since a page's claim on a website must
    // not outrank the site's own link (issue 40).
    let partner_site = || sites.hits("bigpartner.test") + sites.hits("www.bigpartner.test");
    let (before, partner_before) = (sites.hits_total(), partner_site());
    let partner = json!({"domain": "bigpartner.test"});
    let again = resolve(
        &service,
        &key,
        &json!({"queries": [queries[0], queries[8], partner], "enrich": true,
                 "fields": ["company_name", "website"]}),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.json);
    assert!(
        partner_site() > partner_before,
        "the stored page's site is asked first"
    );
    assert_eq!(
        sites.hits_total() - before,
        partner_site() - partner_before,
        "remembered answers fetched nothing"
    );
    let acme = entry(&again, &queries[0]);
    assert_eq!(
        (acme["method"].as_str(), acme["confidence"].as_f64()),
        (Some("site_link"), Some(0.99))
    );
    assert!(acme["evidence"][0]["step"] == "remembered", "{acme}");
    assert_eq!(acme["source"], "stored");
    let stored = entry(&again, &partner);
    assert_eq!(
        (
            stored["li_url"].as_str(),
            stored["method"].as_str(),
            stored["confidence"].as_f64()
        ),
        (
            Some(li("/company/bigpartner").as_str()),
            Some("stored_domain"),
            Some(0.95)
        )
    );
    assert_eq!(acme["record"]["company_name"], "Acme");
    assert_eq!(acme["record"]["original_li_url"], li("/company/acme"));
    // `fields` keeps the named members, the page's identity and where the record came from.
    let mut members: Vec<&str> = acme["record"]
        .as_object()
        .expect("record")
        .keys()
        .map(String::as_str)
        .collect();
    members.retain(|m| !["company_name", "website"].contains(m));
    assert_eq!(
        members,
        ["fetched_at", "final_li_url", "original_li_url", "source"]
    );
    assert_eq!(entry(&again, &queries[8])["error"], "no_page_found");
    assert!(
        entry(&again, &queries[8])["evidence"]
            .to_string()
            .contains("remembered")
    );
    assert_eq!(charged(&again), 2 * 500);
}

/// A domain parked at a for-sale page is not the parking company's; a domain that redirects to its page on the
/// network names that page.
/// `include` with `enrich`: the resolved page's record comes with its job count, at the resolution's price.
#[tokio::test]
async fn an_enriched_resolution_includes_the_job_count_at_its_own_price() {
    let (pages, sites) = world().await;
    // Every derived page keeps the captured Audiense page's company id: one search answers them all.
    let jobs = std::path::Path::new(&pages.origin()).join("jobs");
    std::fs::create_dir_all(&jobs).expect("jobs folder");
    std::fs::copy(
        e2e_harness::fixtures().join("pages/jobs-guest-search-2026.html"),
        jobs.join("10529043.html"),
    )
    .expect("search copied");
    let service = start(&pages, &sites);
    let key = service.key("counts", "10");
    let body = |include: bool| {
        let mut body =
            json!({"queries": [{"domain": "acme.test"}], "enrich": true, "maxAgeHours": 0});
        if include {
            body["include"] = json!(["job_count"]);
        }
        body
    };
    let plain = resolve(&service, &key, &body(false)).await;
    assert_eq!(plain.status, 200, "{}", plain.json);
    assert!(
        plain.json["results"][0]["record"]
            .get("job_count")
            .is_none()
    );
    let included = resolve(&service, &key, &body(true)).await;
    assert_eq!(included.status, 200, "{}", included.json);
    let record = &included.json["results"][0]["record"];
    assert_eq!(record["company_name"], "Acme", "{record}");
    assert_eq!(record["job_count"], 2000, "{record}");
    assert_eq!(charged(&included), charged(&plain), "the same price");
}

#[tokio::test]
async fn parked_domains_and_redirects_to_the_network() {
    let (pages, sites) = world().await;
    let service = start(&pages, &sites);
    let key = service.key("redirects", "10");
    let reply = resolve(
        &service,
        &key,
        &json!({"queries": [{"domain": "parked.test"}, {"domain": "goesto.test"}], "maxAgeHours": 0}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    let parked = entry(&reply, &json!({"domain": "parked.test"}));
    assert_eq!(parked["error"], "no_page_found", "{parked}");
    assert!(
        parked["evidence"]
            .to_string()
            .contains("parking or for-sale page"),
        "{parked}"
    );
    let goes = entry(&reply, &json!({"domain": "goesto.test"}));
    assert_eq!(
        (
            goes["li_url"].as_str(),
            goes["method"].as_str(),
            goes["confidence"].as_f64()
        ),
        (
            Some("https://www.linkedin.com/company/goesto"),
            Some("site_link"),
            Some(0.99)
        ),
        "{goes}"
    );
    assert!(
        goes["evidence"]
            .to_string()
            .contains("in the site's redirect"),
        "{goes}"
    );
    assert_eq!(charged(&reply), 1000);
}

#[tokio::test]
async fn names_resolve_by_the_pages_name_and_their_hints() {
    let (pages, sites) = world().await;
    let service = start(&pages, &sites);
    let key = service.key("names", "10");
    let queries = [
        json!({"name": "ACME, Inc."}),
        json!({"name": "Acme", "location": "United Kingdom"}),
        json!({"name": "Acme", "domain": "acme.test"}),
        json!({"name": "Acme", "domain": "other.test"}),
        json!({"name": "Twin Widgets"}),
        json!({"name": "Twin Widgets", "domain": "twin-two.test"}),
        json!({"name": "Nobody Here GmbH"}),
    ];
    let reply = resolve(&service, &key, &json!({"queries": queries})).await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    let got = |i: usize| {
        let e = entry(&reply, &queries[i]);
        (
            e["li_url"]
                .as_str()
                .or(e["error"].as_str())
                .unwrap_or_default()
                .to_owned(),
            e["confidence"].as_f64(),
        )
    };
    let acme = "https://www.linkedin.com/company/acme".to_owned();
    assert_eq!(got(0), (acme.clone(), Some(0.85)));
    // The derived page's headquarters is in London, GB.
    assert_eq!(got(1), (acme.clone(), Some(0.9)));
    assert_eq!(got(2), (acme, Some(0.97)));
    assert_eq!(got(3).0, "no_page_found");
    assert_eq!(got(4).0, "ambiguous");
    let message = entry(&reply, &queries[4])["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.starts_with("2 company pages fit equally well") && !message.contains("  "),
        "{message}"
    );
    let twins = entry(&reply, &queries[4])["candidates"]
        .as_array()
        .expect("candidates")
        .len();
    assert_eq!(twins, 2);
    assert_eq!(
        got(5),
        (
            "https://www.linkedin.com/company/twin-widgets".to_owned(),
            Some(0.97)
        )
    );
    assert_eq!(got(6).0, "no_page_found");
    // Four resolved at the default (stored) window's price; the ambiguous and unfound ones cost nothing.
    assert_eq!(charged(&reply), 4 * 500);
    // No name query fetches a website.
    assert_eq!(sites.hits_total(), 0);
}

#[tokio::test]
async fn a_domain_pinned_to_a_private_address_is_refused_by_the_guard() {
    let (pages, sites) = world().await;
    // No proxy: the site's name is resolved by the server, here pinned to loopback (where the websites are).
    let address = sites.proxy.trim_start_matches("http://").to_owned();
    let pin = format!("private.test={address}");
    let service = Service::start(ServiceOptions {
        origin: pages.origin(),
        args: vec!["--site-resolve", &pin, "--site-timeout", "2"],
        ..ServiceOptions::default()
    });
    let key = service.key("guard", "5");
    let reply = resolve(
        &service,
        &key,
        &json!({"queries": [{"domain": "private.test"}]}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    let unresolved = &reply.json["unresolved"][0];
    assert_eq!(unresolved["error"], "site_unreachable", "{unresolved}");
    assert!(
        unresolved["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not a public address"),
        "{unresolved}"
    );
    assert_eq!(sites.hits_total(), 0, "nothing reached the private address");
    assert_eq!(charged(&reply), 0);
}

#[tokio::test]
async fn bad_bodies_name_every_problem_and_cost_nothing() {
    let (pages, sites) = world().await;
    let service = start(&pages, &sites);
    let key = service.key("bad", "1");
    let reply = resolve(
        &service,
        &key,
        &json!({"queries": [{"domain": "a.test", "location": "US"}, {}], "enrich": 1}),
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.json);
    let pointers: Vec<&str> = reply.json["details"]
        .as_array()
        .expect("details")
        .iter()
        .filter_map(|d| d["pointer"].as_str())
        .collect();
    // In the order the body sent its members (`json!` sends them sorted by name).
    assert_eq!(pointers, ["/enrich", "/queries/0/location", "/queries/1"]);
    // Three queries on an account with one credit at the live price: refused before any work.
    let reply = resolve(
        &service,
        &key,
        &json!({"queries": [{"domain": "acme.test"}, {"domain": "jsonco.test"}], "maxAgeHours": 0}),
    )
    .await;
    assert_eq!(reply.status, 402, "{}", reply.json);
    assert_eq!(sites.hits_total(), 0);
}

#[tokio::test]
async fn a_retried_resolution_with_its_idempotency_key_is_charged_once() {
    let (pages, sites) = world().await;
    let service = start(&pages, &sites);
    let key = service.key("retry", "10");
    let body =
        json!({"queries": [{"domain": "acme.test"}, {"domain": "jsonco.test"}], "maxAgeHours": 0});
    let send = || {
        client()
            .post(format!("{}{RESOLVE}", service.base))
            .header("authorization", format!("Bearer {key}"))
            .header("content-type", "application/json")
            .header("idempotency-key", "resolve-once")
            .body(body.to_string())
            .send()
    };
    let first = Reply::from(send().await.expect("sent")).await;
    let again = Reply::from(send().await.expect("sent")).await;
    assert_eq!((first.status, again.status), (200, 200), "{}", again.json);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(first.json, again.json);
    assert_eq!(charged(&first), 2000);
    let shown = service.cli(&["credits", "show", "--account", "retry"]);
    assert!(shown.starts_with("retry: 8 credits"), "{shown}");
}

/// Two servers on one PostgreSQL database: what one resolved (its remembered answers, the pages it stored) the
/// other answers without fetching any site.
#[tokio::test]
async fn servers_on_one_postgres_database_share_what_they_resolved() {
    let Some(database) = test_support::TestDatabase::create().await else {
        return;
    };
    let (pages, sites) = world().await;
    let options = || ServiceOptions {
        origin: pages.origin(),
        database_url: Some(database.url.clone()),
        args: vec!["--site-proxy", &sites.proxy, "--site-timeout", "1"],
        ..ServiceOptions::default()
    };
    let (first, second) = (Service::start(options()), Service::start(options()));
    let key = first.key("shared", "10");
    let queries = json!({"queries": [{"domain": "acme.test"}, {"domain": "nolink.test"}]});
    let resolved = resolve(&first, &key, &queries).await;
    assert_eq!(resolved.status, 200, "{}", resolved.json);
    assert_eq!(resolved.json["results"][0]["method"], "site_link");
    let fetched = sites.hits_total();
    let again = resolve(&second, &key, &queries).await;
    assert_eq!(again.status, 200, "{}", again.json);
    assert_eq!(
        sites.hits_total(),
        fetched,
        "the second server fetched no site"
    );
    assert_eq!(
        again.json["results"][0]["li_url"],
        resolved.json["results"][0]["li_url"]
    );
    assert_eq!(again.json["results"][0]["source"], "stored");
    assert!(
        again.json["unresolved"][0]["evidence"]
            .to_string()
            .contains("remembered")
    );
    // The default window: each resolved query at the stored price, on one ledger.
    assert_eq!(charged(&resolved) + charged(&again), 1000);
}

/// A site's home page is read up to 2 MiB (a link past it is not seen), and one host is asked at most once a
/// second: two queries for one domain, sent at once, reach its site a second apart.
#[tokio::test]
async fn websites_are_read_within_their_size_and_pace() {
    let (pages, sites) = world().await;
    let link = footer(&["https://www.linkedin.com/company/acme"]);
    // 3 MiB of text before the footer: the link lies past what is read.
    let padding = format!("<p>{}</p>", "x".repeat(3 * 1024 * 1024));
    sites.set("huge.test", Site::Page(home_page("Huge", &padding, &link)));
    sites.set("small.test", Site::Status(503));
    let service = start(&pages, &sites);
    let key = service.key("limits", "10");
    let reply = resolve(
        &service,
        &key,
        &json!({"queries": [{"domain": "huge.test"}, {"domain": "small.test"},
                            {"domain": "https://small.test/contact"}], "maxAgeHours": 0}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    let huge = entry(&reply, &json!({"domain": "huge.test"}));
    assert_eq!(huge["error"], "no_page_found", "{huge}");
    assert!(huge["evidence"].to_string().contains("0 link(s)"), "{huge}");
    // The first query asks https (refused) then http at once; the second query's requests wait their turn, a
    // second after the first query's of the same scheme.
    let arrivals = sites.arrivals("small.test");
    assert!(arrivals.len() >= 3, "{arrivals:?}");
    let spread = arrivals[arrivals.len() - 1] - arrivals[0];
    assert!(
        spread >= std::time::Duration::from_millis(950),
        "{arrivals:?}"
    );
    assert_eq!(charged(&reply), 0);
}

/// A candidate page the network refuses leaves its query `blocked`, with when to ask again (the answer's
/// `Retry-After` too), not "no page found" — and nothing charged or remembered.
#[tokio::test]
async fn a_refused_candidate_page_makes_the_query_blocked_with_a_retry_time() {
    let origin = e2e_harness::TestOrigin::start().await;
    let sites = Websites::start(HashMap::new()).await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--site-proxy", &sites.proxy, "--site-timeout", "1"],
        ..ServiceOptions::default()
    });
    let key = service.key("refused", "5");
    let body = json!({"queries": [{"domain": "blocked.test"}], "maxAgeHours": 0});
    for _ in 0..2 {
        let reply = resolve(&service, &key, &body).await;
        assert_eq!(reply.status, 200, "{}", reply.json);
        let unresolved = &reply.json["unresolved"][0];
        assert_eq!(unresolved["error"], "blocked", "{unresolved}");
        let seconds = unresolved["retry_after_seconds"].as_u64().expect("seconds");
        assert!(seconds >= 1);
        assert_eq!(
            reply.header("retry-after"),
            Some(seconds.to_string().as_str())
        );
        assert_eq!(charged(&reply), 0);
    }
    // The second answer is `blocked` again, not a remembered "no page found": the route, cooling down after
    // the first refusal, refused it without asking the network again.
    assert_eq!(origin.hits("/company/blocked"), 1);
}

/// Issue 40: a resolve request holds what it may cost for as long as it runs, so requests sent together cannot do
/// more work than the account can pay for (the check used to free its hold at once, and a second request did its
/// work unpaid, to be refused only at the end).
#[tokio::test]
async fn a_resolve_in_flight_holds_what_it_may_cost() {
    let pages = NetworkPages::new(&[company("slowco", "SlowCo", "www.slowco.test")]);
    let link = "https://www.linkedin.com/company/slowco/";
    let slow = Site::Slow(
        std::time::Duration::from_millis(1500),
        home_page("SlowCo", "", &footer(&[link])),
    );
    let sites = Websites::start(HashMap::from([
        ("slowco.test".to_owned(), slow.clone()),
        ("www.slowco.test".to_owned(), slow),
    ]))
    .await;
    let service = Service::start(ServiceOptions {
        origin: pages.origin(),
        args: vec!["--site-proxy", &sites.proxy, "--site-timeout", "5"],
        ..ServiceOptions::default()
    });
    // Enough for one live resolution (1 credit), not two.
    let key = service.key("thrifty", "1.5");
    let body = json!({"queries": [{"domain": "slowco.test"}], "maxAgeHours": 0});
    let first = resolve(&service, &key, &body);
    let second = async {
        // Sent once the first is at the site, holding its credit.
        e2e_harness::eventually(
            std::time::Duration::from_secs(10),
            "the first request never reached the site",
            || async { (sites.hits_total() > 0).then_some(()) },
        )
        .await;
        let started = std::time::Instant::now();
        let reply = resolve(&service, &key, &body).await;
        (reply, started.elapsed())
    };
    let (first, (second, second_took)) = tokio::join!(first, second);
    assert_eq!(first.status, 200, "{}", first.json);
    assert_eq!(charged(&first), 1000);
    assert_eq!(second.status, 402, "{}", second.json);
    // Refused before any work: it did not wait for the site (1.5 s), as it did when it worked unpaid.
    assert!(
        second_took < std::time::Duration::from_secs(1),
        "the refused request took {second_took:?}"
    );
}

/// Issue 40: one tenant's websites that never answer hold its own share of the site fetches, never every place:
/// tenant A's 32 tarpit domains (four requests of eight at once) do not keep tenant B's domain waiting.
#[tokio::test]
async fn one_tenants_tarpit_sites_do_not_hold_every_site_fetch() {
    let pages = NetworkPages::new(&[company("acme", "Acme", "www.acme.test")]);
    let mut sites: HashMap<String, Site> = (0..32)
        .map(|n| (format!("tarpit-{n}.test"), Site::Hang))
        .collect();
    sites.insert(
        "acme.test".to_owned(),
        Site::Page(home_page(
            "Acme",
            "",
            &footer(&["https://www.linkedin.com/company/acme/"]),
        )),
    );
    let sites = Websites::start(sites).await;
    let service = Service::start(ServiceOptions {
        origin: pages.origin(),
        args: vec![
            "--site-proxy",
            &sites.proxy,
            "--site-timeout",
            "20",
            "--key-rate",
            "0",
        ],
        ..ServiceOptions::default()
    });
    let stuck = service.key("tarpits", "100");
    let a_requests: Vec<_> = (0..4)
        .map(|r| {
            let queries: Vec<Value> = (0..8)
                .map(|n| json!({"domain": format!("tarpit-{}.test", r * 8 + n)}))
                .collect();
            let (service, stuck) = (&service, &stuck);
            async move {
                resolve(
                    service,
                    stuck,
                    &json!({"queries": queries, "maxAgeHours": 0}),
                )
                .await
            }
        })
        .collect();
    let patient = service.key("patient", "10");
    let b = async {
        // Once tenant A's sites hold what they can.
        e2e_harness::eventually(
            std::time::Duration::from_secs(10),
            "tenant A's sites were never asked",
            || async {
                let asked = (0..32)
                    .filter(|n| sites.hits(&format!("tarpit-{n}.test")) > 0)
                    .count();
                (asked >= 8).then_some(())
            },
        )
        .await;
        let started = std::time::Instant::now();
        let reply = resolve(
            &service,
            &patient,
            &json!({"queries": [{"domain": "acme.test"}], "maxAgeHours": 0}),
        )
        .await;
        (reply, started.elapsed())
    };
    // Tenant A's requests run until their sites time out; tenant B's answer is what is measured.
    let (reply, took) = tokio::select! {
        answered = b => answered,
        _ = futures::future::join_all(a_requests) => panic!("tenant A's requests ended first"),
    };
    assert_eq!(reply.status, 200, "{}", reply.json);
    assert_eq!(
        reply.json["results"][0]["li_url"],
        "https://www.linkedin.com/company/acme"
    );
    assert!(
        took < std::time::Duration::from_secs(5),
        "tenant B waited {took:?} behind tenant A's sites"
    );
}

/// Issue 40: a stored page that merely claims a website (an impostor's page can claim any) does not outrank the
/// site's own link, for any tenant; when the site names no page, the stored claim answers, and that answer is
/// remembered for the asking account only.
#[tokio::test]
async fn a_stored_pages_claim_does_not_outrank_the_sites_own_link() {
    let pages = NetworkPages::new(&[
        company("victim", "Victim", "www.victim.test"),
        company("impostor", "Impostor Ltd", "www.victim.test"),
        company("lonely", "Lonely", "www.lonely.test"),
    ]);
    let sites = Websites::start(HashMap::from([
        (
            "victim.test".to_owned(),
            Site::Page(home_page(
                "Victim",
                "",
                &footer(&["https://www.linkedin.com/company/victim/"]),
            )),
        ),
        (
            "lonely.test".to_owned(),
            Site::Page(home_page("Lonely", "", "<footer>© Lonely</footer>")),
        ),
    ]))
    .await;
    let service = start(&pages, &sites);
    // Tenant A looks two pages up: they are stored, claiming www.victim.test and www.lonely.test.
    let a = service.key("a", "10");
    let looked_up = service
        .post(
            &a,
            &json!({"liUrls": ["https://www.linkedin.com/company/impostor", "https://www.linkedin.com/company/lonely"]}),
        )
        .await;
    assert_eq!(looked_up.status, 200, "{}", looked_up.json);
    // Tenant B's domain resolves by the site's own link, not by the stored claim.
    let b = service.key("b", "10");
    let reply = resolve(
        &service,
        &b,
        &json!({"queries": [{"domain": "victim.test"}]}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    let answer = &reply.json["results"][0];
    assert_eq!(
        (answer["li_url"].as_str(), answer["method"].as_str()),
        (
            Some("https://www.linkedin.com/company/victim"),
            Some("site_link")
        ),
        "{answer}"
    );
    // A site that names no page: the stored claim answers tenant A, remembered for A alone.
    let lonely = json!({"queries": [{"domain": "lonely.test"}]});
    let first = resolve(&service, &a, &lonely).await;
    assert_eq!(
        first.json["results"][0]["method"], "stored_domain",
        "{}",
        first.json
    );
    let evidence = |reply: &e2e_harness::Reply| reply.json["results"][0]["evidence"].to_string();
    assert!(evidence(&resolve(&service, &a, &lonely).await).contains("remembered"));
    let for_b = resolve(&service, &b, &lonely).await;
    assert_eq!(
        for_b.json["results"][0]["method"], "stored_domain",
        "{}",
        for_b.json
    );
    assert!(
        !evidence(&for_b).contains("remembered"),
        "tenant A's answer from a page's own claim is not tenant B's: {}",
        for_b.json
    );
}
