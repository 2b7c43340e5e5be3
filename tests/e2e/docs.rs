//! The documentation's links resolve in a fresh clone: every relative link of the README and of `docs/` names a
//! file of the repository (the README once linked the contract outside it, dead in a clone).

use std::path::Path;

/// The relative targets of Markdown links `[text](target)` in `text`, without `#fragment`s.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("](") {
        rest = &rest[start + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or_default().trim();
        let external = target.contains("://") || target.starts_with("mailto:");
        if !target.is_empty() && !external {
            links.push(target.to_owned());
        }
        rest = &rest[end..];
    }
    links
}

#[test]
fn every_relative_link_of_the_readme_and_the_docs_names_a_file_of_the_repository() {
    let root = e2e_harness::workspace();
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let root = root.canonicalize().expect("the workspace");
    let mut dead = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("readable");
        let folder = page.parent().unwrap_or(Path::new("."));
        for link in relative_links(&text) {
            let inside = folder
                .join(&link)
                .canonicalize()
                .is_ok_and(|target| target.starts_with(&root));
            if !inside {
                dead.push(format!("{}: {link}", page.display()));
            }
        }
    }
    assert!(pages.len() > 5, "{pages:?}");
    assert!(
        dead.is_empty(),
        "links that do not resolve inside the repository:\n{}",
        dead.join("\n")
    );
}

#[test]
fn links_are_read_as_markdown_writes_them() {
    let links = relative_links("see [a](docs/a.md#x), [b](https://x.y/z) and ![c](img/c.png).");
    assert_eq!(links, ["docs/a.md", "img/c.png"]);
}

/// docs/operations.md states the route pool's numbers and the routes' arrival as `page-scraper` has them (a number written twice
/// drifts: this fails when the code changes and the page does not).
#[test]
fn the_operations_page_states_the_route_pools_numbers_as_the_fetcher_has_them() {
    use page_scraper::{
        Arrival, BAN_MARGIN, CALM, PROXY_FILE_POLL, RESTART_PER_SECOND, RouteSettings,
    };
    let defaults = RouteSettings::default();
    let arrival = Arrival::default();
    assert!(
        (RESTART_PER_SECOND - 1.0).abs() < f64::EPSILON,
        "the page says \"one page a second\""
    );
    let stated = [
        "restarts at one page a second".to_owned(),
        format!("after every {CALM} pages without push-back"),
        format!("({CALM}, {}, {}, up to {})", CALM * 2, CALM * 4, CALM * 8),
        format!(
            "`--route-cool-down` ({} s), doubled at each block in a row up to {} minutes",
            defaults.cool_down.as_secs(),
            defaults.cool_down_max.as_secs() / 60
        ),
        format!(
            "then to {:.0}% of the ceiling and no further",
            BAN_MARGIN * 100.0
        ),
        format!(
            "marked `down` ({} s, doubling)",
            defaults.unreachable_retry.as_secs()
        ),
        format!("the file is read every {} s", PROXY_FILE_POLL.as_secs()),
        format!(
            "| `--route-cool-down SECONDS` | `COMPANY_DATA_ROUTE_COOL_DOWN` | `{}` |",
            defaults.cool_down.as_secs()
        ),
        format!(
            "| `--referer URL` | `COMPANY_DATA_REFERER` | `{}` |",
            arrival.referer.as_deref().unwrap_or_default()
        ),
        format!(
            "| `--accept-language LANGS` | `COMPANY_DATA_ACCEPT_LANGUAGE` | `{}` |",
            arrival.accept_language
        ),
    ];
    assert_says("docs/operations.md", &stated);
}

/// docs/dashboard.md states how long a download waits its turn at the account's cap as `company-lookup` has it,
/// and its page of rows as the contract bounds a search's.
#[test]
fn the_dashboard_page_states_a_download_s_waits_as_the_lookup_has_them() {
    assert_says(
        "docs/dashboard.md",
        &[
            format!(
                "up to {} waits of {} s",
                company_lookup::SEARCH_TURNS,
                company_lookup::SEARCH_RETRY_AFTER.as_secs_f64()
            ),
            format!("streamed {} rows at a time", api_contract::MAX_SEARCH_ROWS),
        ],
    );
}

/// docs/security.md and docs/dashboard.md state a CSV download's bound as the dashboard has it.
#[test]
fn the_csv_download_s_bound_is_stated_as_the_dashboard_has_it() {
    let (searches, rows) = (::dashboard::CSV_SEARCHES, api_contract::MAX_SEARCH_ROWS);
    assert_says(
        "docs/security.md",
        &[format!("runs up to {searches} searches of {rows} rows")],
    );
    assert_says(
        "docs/dashboard.md",
        &[format!(
            "(up to {} rows",
            thousands(u64::try_from(searches).expect("a count") * u64::from(rows))
        )],
    );
}

/// docs/operations.md states the search limits' defaults as `company-lookup` has them.
#[test]
fn the_operations_page_states_the_search_limits_as_the_lookup_has_them() {
    assert_says(
        "docs/operations.md",
        &[
            format!(
                "| `--search-time-limit SECONDS` | `COMPANY_DATA_SEARCH_TIME_LIMIT` | `{}` |",
                company_lookup::DEFAULT_SEARCH_TIME_LIMIT.as_secs_f64()
            ),
            format!(
                "| `--account-searches N` | `COMPANY_DATA_ACCOUNT_SEARCHES` | `{}` |",
                company_lookup::DEFAULT_SEARCHES_PER_ACCOUNT
            ),
        ],
    );
}

/// docs/api.md states the resolver's numbers as `company-resolve` and `api-contract` have them: the confidence
/// table, the threshold, what is remembered for how long, the website client's limits (a number written twice
/// drifts: this fails when the code changes and the page does not).
#[test]
fn the_api_page_states_the_resolvers_numbers_as_the_resolver_has_them() {
    use company_resolve::{MIN_CONFIDENCE, ResolverSettings, confidence};
    let settings = ResolverSettings::default();
    let site = &settings.site;
    let hours = |d: std::time::Duration| d.as_secs() / 3600;
    let stated = [
        format!("both name each other) | {} |", confidence::SITE_AND_PAGE),
        format!(
            "a stored page whose website is the domain | {} |",
            confidence::STORED_PAGE
        ),
        format!(
            "named after the domain whose website is the domain | {} |",
            confidence::GUESSED_PAGE
        ),
        format!("redirects to | {} less |", confidence::BY_REDIRECT),
        format!("is the queried name | {} |", confidence::NAME),
        format!("`domain` hint | {} |", confidence::NAME_AND_DOMAIN),
        format!("in the `location` hint | +{} |", confidence::LOCATION_BONUS),
        format!("at most {} (not returned)", confidence::LOCATION_MISMATCH),
        format!("nothing below **{MIN_CONFIDENCE}** is returned"),
        format!(
            "remembered {} days (found) or {} hours (not found)",
            hours(settings.remember_found) / 24,
            hours(settings.remember_not_found)
        ),
        format!(
            "`no_page_found` (remembered for {} hours)",
            hours(settings.remember_not_found)
        ),
        format!(
            "At most {} pages are checked per query",
            settings.candidates_per_query
        ),
        format!(
            "uses {} hours**",
            hours(api_contract::DEFAULT_RESOLVE_WINDOW.duration())
        ),
        format!("(at most {}, each hop", site.max_redirects),
        format!("{} sites at once per server", site.concurrency),
        format!(
            "{} MiB per page and {} s per attempt",
            site.max_bytes / (1024 * 1024),
            site.timeout.as_secs()
        ),
    ];
    assert_eq!(
        site.per_host_interval.as_secs(),
        1,
        "the page says \"one request per second per host\""
    );
    assert_says("docs/api.md", &stated);
}

/// docs/api.md states the MCP endpoint's bound as `http-api` has it, and the tools' prices as `credit-ledger`
/// has them.
#[test]
fn the_api_page_states_the_mcp_endpoint_s_bound_and_prices_as_the_crates_have_them() {
    use credit_ledger::{HISTORY_PRICE, LIVE_PRICE, STORED_PRICE};
    let bytes = http_api::MAX_MCP_BODY_BYTES.to_string();
    let grouped = bytes
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|group| std::str::from_utf8(group).unwrap_or_default())
        .collect::<Vec<_>>()
        .join(",");
    assert_says(
        "docs/api.md",
        &[
            format!("takes messages up to {grouped} bytes"),
            format!(
                "as that route: {LIVE_PRICE} credit per live record, {STORED_PRICE} with a freshness window"
            ),
            format!("per resolved query, {LIVE_PRICE} live or {STORED_PRICE} with a window"),
            format!("as that route: {HISTORY_PRICE} when the range holds a point or a change"),
            format!("free; each refresh {LIVE_PRICE} credit when the page resolves"),
        ],
    );
}

/// Fails naming each of `stated` that the page at `path` (from the workspace) no longer says; lines are wrapped,
/// so both are compared with single spaces.
fn assert_says(path: &str, stated: &[String]) {
    let text =
        std::fs::read_to_string(e2e_harness::workspace().join(path)).expect("a page of the docs");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let missing: Vec<&String> = stated
        .iter()
        .filter(|s| !text.contains(s.as_str()))
        .collect();
    assert!(missing.is_empty(), "{path} no longer says: {missing:#?}");
}

/// docs/api.md states the webhook endpoints' bound and first retry, and the event feed's page and retention, as
/// `api-contract` and `account-webhooks` have them.
#[test]
fn the_api_page_states_the_webhook_endpoints_numbers_as_the_crates_have_them() {
    let settings = account_webhooks::WebhookSettings::default();
    let first_retry = settings.first_retry.as_secs();
    let kept_days = settings.retention_days();
    assert_says(
        "docs/api.md",
        &[
            format!("At most {} per account", api_contract::MAX_ENDPOINTS),
            format!(
                "the account has {} webhook endpoints already",
                api_contract::MAX_ENDPOINTS
            ),
            format!("sets the first retry's wait (default {first_retry} s)"),
            format!(
                "same `limit` (1 to {}, default {})",
                api_contract::paging::MOST_EVENTS_PER_PAGE,
                api_contract::paging::DEFAULT_EVENTS_PER_PAGE
            ),
            format!("**Kept {kept_days} days**, as done deliveries are"),
        ],
    );
}

/// docs/api.md states the bounds of a 400's problem list and of a field selection as `api-contract` has them.
#[test]
fn the_api_page_states_the_validation_bounds_as_the_contract_has_them() {
    assert_says(
        "docs/api.md",
        &[
            format!(
                "(at most {}, then one that says there are more)",
                thousands(api_contract::MAX_PROBLEMS as u64)
            ),
            format!(
                "a list holds at most {} names (`MAX_FIELD_NAMES`",
                api_contract::MAX_FIELD_NAMES
            ),
        ],
    );
}

/// `n` with thousands separated by commas, as the pages write numbers.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The API page states a job callback's bounds as api-contract has them.
#[test]
fn the_api_page_states_the_callback_bounds_as_the_contract_has_them() {
    assert_says(
        "docs/api.md",
        &[
            format!(
                "object of up to {} headers sent with each callback",
                api_contract::MAX_CALLBACK_HEADERS
            ),
            format!(
                "ASCII up to {} characters",
                thousands(api_contract::MAX_CALLBACK_HEADER_VALUE_LEN as u64)
            ),
        ],
    );
}

/// docs/api.md states the search's bounds, cursor keys and plans as the contract and the store have them.
#[test]
fn the_api_page_states_the_search_numbers_as_the_crates_have_them() {
    assert_says(
        "docs/api.md",
        &[
            format!(
                "**Words** (`q`, up to {} characters)",
                api_contract::MAX_SEARCH_TEXT_LEN
            ),
            format!(
                "A word of more than {} bytes (`company_model::MAX_WORD_BYTES`)",
                thousands(company_model::MAX_WORD_BYTES as u64)
            ),
            format!(
                "the group (3, 2 or 1) times 2^{} plus the follower count plus one",
                snapshot_cache::TIER_SPAN.trailing_zeros()
            ),
            format!(
                "over an account with {} pages or more",
                thousands(u64::from(snapshot_cache::LARGE_TENANT))
            ),
            format!(
                "matches in the whole store, up to {}:",
                thousands(u64::from(snapshot_cache::COMMON_MATCHES))
            ),
            format!(
                "walks the order's first {} index entries after the cursor",
                snapshot_cache::SEARCH_BATCH
            ),
            format!(
                "read {} rows at first and twice as many each time after",
                snapshot_cache::SEARCH_BATCH
            ),
            format!(
                "`limit` 1 to {} rows (default {})",
                api_contract::MAX_SEARCH_ROWS,
                api_contract::DEFAULT_SEARCH_ROWS
            ),
            format!(
                "a search runs at most {} s (`company_lookup::DEFAULT_SEARCH_TIME_LIMIT`",
                company_lookup::DEFAULT_SEARCH_TIME_LIMIT.as_secs_f64()
            ),
            format!(
                "ran past the search time limit ({} s;",
                company_lookup::DEFAULT_SEARCH_TIME_LIMIT.as_secs_f64()
            ),
            format!(
                "an account may have {} searches in flight (`company_lookup::DEFAULT_SEARCHES_PER_ACCOUNT`",
                company_lookup::DEFAULT_SEARCHES_PER_ACCOUNT
            ),
            format!("until FTS5 takes {} at once", snapshot_cache::PENDING_WORDS),
            format!(
                "the refusal's wait, up to {} times",
                company_lookup::SEARCH_TURNS
            ),
            format!(
                "the account has {} searches in flight (`serve --account-searches`)",
                company_lookup::DEFAULT_SEARCHES_PER_ACCOUNT
            ),
        ],
    );
}

/// docs/security.md states each limit as the crate that owns it has it (issue 40: the threat model names every
/// limit and its number; this fails when a number changes and the page does not).
#[test]
fn the_security_page_states_every_limit_as_its_crate_has_it() {
    let forms = dashboard_auth::PasswordLimits::default();
    let failures = api_keys::FailureLimit::default();
    let connections = http_serve::ConnectionLimits::default();
    let quotas = credit_ledger::Quotas::default();
    let watches = company_watch::WatchSettings::default();
    let webhooks = account_webhooks::WebhookSettings::default();
    let per_form = forms.per_address_window.as_secs() / u64::from(forms.per_address_burst);
    let per_failure = failures.window.as_secs() / u64::from(failures.max_failures);
    assert_says(
        "docs/security.md",
        &[
            format!(
                "{} failures at once, then one per {per_failure} s",
                failures.max_failures
            ),
            format!("answered after {} ms", failures.delay.as_millis()),
            format!(
                "{} forms at once, then one per {per_form} s",
                forms.per_address_burst
            ),
            format!(
                "and {} at once per network, an IPv4 /24 or IPv6 /48",
                forms.per_network_burst
            ),
            format!(
                "before anything else, answered after {} ms",
                forms.refusal_delay.as_millis()
            ),
            format!(
                "per email {} attempts at once, then one per {} s",
                forms.per_email_burst,
                forms.per_email_refill.as_secs()
            ),
            format!(
                "{} checks per thread may wait",
                forms.hashing_queue / forms.hashing_threads.max(1)
            ),
            format!(
                "{} at once (`--max-connections`); {} per client address",
                connections.max_connections, connections.max_connections_per_address
            ),
            format!("headers within {} s", connections.header_timeout.as_secs()),
            format!(
                "idle connection closed after {} s",
                connections.header_timeout.as_secs()
            ),
            format!("a body within {} s", connections.body_timeout.as_secs()),
            format!("no progress for {} s", connections.write_timeout.as_secs()),
            format!("{} jobs not yet ended", quotas.open_jobs),
            format!("{} URLs not yet answered", thousands(quotas.queued_urls)),
            format!(
                "{} watches, {} endpoints, {} keys",
                thousands(u64::from(quotas.watches)),
                quotas.endpoints,
                quotas.keys
            ),
            format!(
                "quota: {} MB of kept answers per account",
                thousands(u64::from(quotas.idempotency_mb))
            ),
            format!(
                "{} at once per server, at most {} of one account",
                webhooks.deliveries_at_once, webhooks.deliveries_per_account
            ),
            format!(
                "its {} s time-out; connecting gets {} s",
                webhooks.delivery_timeout.as_secs(),
                webhooks.connect_timeout.as_secs()
            ),
            format!(
                "{} per endpoint at once, then one per {} s",
                account_webhooks::PING_BURST,
                account_webhooks::PING_REFILL.as_secs()
            ),
            format!(
                "up to {} headers of lower-case names",
                api_contract::MAX_CALLBACK_HEADERS
            ),
            format!(
                "printable values up to {} characters",
                thousands(api_contract::MAX_CALLBACK_HEADER_VALUE_LEN as u64)
            ),
            format!(
                "at each delivery, up to {} bytes)",
                thousands(api_contract::MAX_WEBHOOK_URL_LEN as u64)
            ),
            format!("({} at once per server)", watches.refreshes_at_once),
            {
                let site = company_resolve::SiteSettings::default();
                format!(
                    "{} sites at once per server, at most {} for one account",
                    site.concurrency, site.per_account
                )
            },
            format!(
                "{} per account (`--account-live-lookups`)",
                company_lookup::DEFAULT_LIVE_LOOKUPS_PER_ACCOUNT
            ),
            format!(
                "read {} rows at first and twice as many each time after, up to {} a round trip",
                snapshot_cache::SEARCH_BATCH,
                thousands(
                    u64::from(snapshot_cache::SEARCH_BATCH)
                        * snapshot_cache::TALLY_CHUNKS_MOST as u64
                )
            ),
            format!(
                "each search stops at {} s from when it has its connection (`company_lookup::DEFAULT_SEARCH_TIME_LIMIT`",
                company_lookup::DEFAULT_SEARCH_TIME_LIMIT.as_secs_f64()
            ),
            format!(
                "an account has at most {} searches in flight over the deployment (`company_lookup::DEFAULT_SEARCHES_PER_ACCOUNT`",
                company_lookup::DEFAULT_SEARCHES_PER_ACCOUNT
            ),
            format!(
                "about {0} snapshots': a batch is taken in every {0} writes",
                snapshot_cache::PENDING_WORDS
            ),
        ],
    );
}

/// docs/development.md states the conformance run's cases as `tests/schemathesis.toml` sets them: the generated
/// cases per operation (its first `generation.max-examples`) and the stateful chains (the stateful phase's).
#[test]
fn the_development_page_states_the_conformance_cases_as_the_settings_have_them() {
    let settings =
        std::fs::read_to_string(e2e_harness::workspace().join("tests/schemathesis.toml"))
            .expect("Schemathesis' settings");
    let counts: Vec<&str> = settings
        .lines()
        .filter_map(|line| {
            let setting = line.split('#').next().unwrap_or_default();
            let (name, value) = setting.split_once('=')?;
            (name.trim() == "generation.max-examples").then(|| value.trim())
        })
        .collect();
    let [cases, chains] = counts[..] else {
        panic!("two counts of cases (every phase's, the stateful phase's): {settings}");
    };
    assert_says(
        "docs/development.md",
        &[
            format!("{cases} generated cases per operation"),
            format!("{chains} stateful chains"),
        ],
    );
}
