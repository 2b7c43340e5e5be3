//! The dashboard over plain HTTP (its flows in a browser are in `tools/browser.rs`): cookies, CSRF, the sign-in
//! throttle, invitations, and the command that creates a sign-in.

use std::collections::HashMap;

use e2e_harness::{Service, ServiceOptions, binary};
use reqwest::Method;

pub(crate) const PASSWORD: &str = "a long test password";

/// A browser without JavaScript: follows no redirects, keeps cookies by hand.
pub(crate) struct Browser {
    client: reqwest::Client,
    base: String,
    cookies: HashMap<String, String>,
    secure_proxy: bool,
}

pub(crate) struct Page {
    pub(crate) status: u16,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) body: String,
}

impl Page {
    /// Asserts that the page's body says each of `told` (a refusal's reason and its advice).
    pub(crate) fn says(&self, told: &[&str]) {
        for told in told {
            assert!(self.body.contains(told), "{told} not in {}", self.body);
        }
    }

    /// The value of the first hidden `csrf` field.
    pub(crate) fn csrf(&self) -> String {
        let start = self
            .body
            .find(r#"name="csrf" value=""#)
            .expect("a csrf field")
            + 19;
        self.body[start..]
            .split('"')
            .next()
            .expect("value")
            .to_owned()
    }

    /// The `value` of the first `<option>` whose text (or the markup just before it) holds `label`, e.g.
    /// `">ops</option>"` or `"(cdk_test_"`.
    pub(crate) fn option_value(&self, label: &str) -> String {
        let at = self
            .body
            .find(label)
            .unwrap_or_else(|| panic!("no option {label} in {}", self.body));
        let value = self.body[..at].rfind(r#"value=""#).expect("its value") + 7;
        self.body[value..]
            .split('"')
            .next()
            .expect("a value")
            .to_owned()
    }

    fn set_cookies(&self) -> Vec<&str> {
        self.headers
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect()
    }
}

impl Browser {
    pub(crate) fn new(service: &Service) -> Self {
        Self {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            base: service.base.clone(),
            cookies: HashMap::new(),
            secure_proxy: false,
        }
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> Page {
        let cookie = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let mut request = request.header("cookie", cookie);
        if self.secure_proxy {
            request = request.header("x-forwarded-proto", "https");
        }
        let response = request.send().await.expect("request sent");
        let page = Page {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: String::new(),
        };
        for set in page.set_cookies() {
            let pair = set.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                if value.is_empty() || set.contains("Max-Age=0") {
                    self.cookies.remove(name);
                } else {
                    self.cookies.insert(name.to_owned(), value.to_owned());
                }
            }
        }
        Page {
            body: response.text().await.expect("body"),
            ..page
        }
    }

    pub(crate) async fn get(&mut self, path: &str) -> Page {
        let request = self.client.get(format!("{}{path}", self.base));
        self.send(request).await
    }

    pub(crate) async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let request = self.client.post(format!("{}{path}", self.base)).form(form);
        self.send(request).await
    }

    /// Sends Try it's form as the key whose label in the key picker holds `key`: each line of `lines` is a
    /// `kind` (`url`, `domain` or `name`), looked up with a window of `max_age_seconds` (`"0"`: live).
    pub(crate) async fn try_it(
        &mut self,
        key: &str,
        kind: &str,
        lines: &str,
        max_age_seconds: &str,
    ) -> Page {
        let form = self.get("/dashboard/try").await;
        let key_id = form.option_value(key);
        self.post(
            "/dashboard/try",
            &[
                ("csrf", &form.csrf()),
                ("kind", kind),
                ("urls", lines),
                ("max_age_seconds", max_age_seconds),
                ("key", &key_id),
            ],
        )
        .await
    }

    pub(crate) async fn sign_in(&mut self, email: &str, password: &str) -> Page {
        let csrf = self.get("/dashboard/sign-in").await.csrf();
        self.post(
            "/dashboard/sign-in",
            &[("csrf", &csrf), ("email", email), ("password", password)],
        )
        .await
    }
}

#[tokio::test]
async fn sessions_use_strict_cookies_and_every_form_needs_its_token() {
    let service = Service::with_captured_pages();
    service.create_sign_in("ada@example.com", PASSWORD, &["--credits", "10"]);
    let mut browser = Browser::new(&service);
    browser.secure_proxy = true;

    // The sign-in form itself refuses a post without its double-submit token (login CSRF).
    let forged = browser
        .post(
            "/dashboard/sign-in",
            &[("email", "ada@example.com"), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(forged.status, 403);

    // Sign-in pages open in two tabs carry the same token, so either form works.
    let first_tab = browser.get("/dashboard/sign-in").await.csrf();
    assert_eq!(browser.get("/dashboard/sign-in").await.csrf(), first_tab);

    let signed_in = browser.sign_in("ada@example.com", PASSWORD).await;
    assert_eq!(signed_in.status, 303);
    let session = signed_in
        .set_cookies()
        .into_iter()
        .find(|c| c.starts_with("cd_session="))
        .expect("a session cookie")
        .to_owned();
    for attribute in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/dashboard"] {
        assert!(session.contains(attribute), "{session} lacks {attribute}");
    }

    let keys = browser.get("/dashboard/keys").await;
    assert_eq!(keys.status, 200);
    assert_eq!(
        keys.headers
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("no-store")
    );
    assert!(keys.headers.contains_key("content-security-policy"));
    let csrf = keys.csrf();
    // Without the token, and with a wrong one: refused, nothing created.
    for form in [
        vec![("name", "no token")],
        vec![("name", "wrong token"), ("csrf", "x")],
    ] {
        assert_eq!(browser.post("/dashboard/keys", &form).await.status, 403);
    }
    let created = browser
        .post("/dashboard/keys", &[("name", "ok"), ("csrf", &csrf)])
        .await;
    assert_eq!(created.status, 201);
    let listed = browser.get("/dashboard/keys").await.body;
    assert!(!listed.contains("no token") && !listed.contains("wrong token"));

    // Signing out ends the session on the server, not only in the browser.
    let cookie = browser.cookies.get("cd_session").cloned().expect("cookie");
    assert_eq!(
        browser
            .post("/dashboard/sign-out", &[("csrf", &csrf)])
            .await
            .status,
        303
    );
    browser.cookies.insert("cd_session".to_owned(), cookie);
    let after = browser.get("/dashboard/keys").await;
    assert_eq!(
        (
            after.status,
            after.headers.get("location").and_then(|v| v.to_str().ok())
        ),
        (303, Some("/dashboard/sign-in"))
    );
}

#[tokio::test]
async fn sign_in_attempts_are_limited_per_email() {
    let service = Service::with_captured_pages();
    service.create_sign_in("ada@example.com", PASSWORD, &[]);
    let mut browser = Browser::new(&service);
    for _ in 0..5 {
        assert_eq!(
            browser
                .sign_in("ada@example.com", "a wrong password!")
                .await
                .status,
            401
        );
    }
    let limited = browser.sign_in("ada@example.com", PASSWORD).await;
    assert_eq!(limited.status, 429);
    let wait = limited
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .expect("Retry-After");
    // The page tells the header's wait: both round up (`shared_limits::wait_seconds`).
    let told = format!("Too many sign-in attempts; try again in {wait} s.");
    assert!(
        limited.body.contains(&told),
        "{told} not in {}",
        limited.body
    );
}

#[tokio::test]
async fn an_admin_invites_someone_who_sets_a_password_once() {
    // A process of its own, to read its log.
    let service = Service::start(ServiceOptions {
        real_process: true,
        ..ServiceOptions::default()
    });
    service.create_sign_in("admin@example.com", PASSWORD, &["--admin"]);
    let mut admin = Browser::new(&service);
    admin.sign_in("admin@example.com", PASSWORD).await;
    let csrf = admin.get("/dashboard/admin").await.csrf();
    let invited = admin
        .post(
            "/dashboard/admin/invite",
            &[
                ("csrf", &csrf),
                ("email", "New@Example.com"),
                ("account", ""),
            ],
        )
        .await;
    assert_eq!(invited.status, 200);
    let start = invited
        .body
        .find("/dashboard/invitations/")
        .expect("a link");
    let link = invited.body[start..]
        .split('"')
        .next()
        .expect("link")
        .to_owned();

    let mut newcomer = Browser::new(&service);
    assert_eq!(newcomer.get(&link).await.status, 200);
    let differ = newcomer
        .post(
            &link,
            &[("password", PASSWORD), ("confirm", "something else")],
        )
        .await;
    assert_eq!(differ.status, 400);
    let accepted = newcomer
        .post(&link, &[("password", PASSWORD), ("confirm", PASSWORD)])
        .await;
    assert_eq!(accepted.status, 303, "{}", accepted.body);
    let keys = newcomer.get("/dashboard/keys").await;
    assert!(
        keys.body.contains("Keys of new@example.com"),
        "{}",
        keys.body
    );
    // Only an admin may use the admin page; the link works once.
    assert_eq!(newcomer.get("/dashboard/admin").await.status, 403);
    assert_eq!(Browser::new(&service).get(&link).await.status, 404);
    // The link's token is a secret: the request log shows its path without it (issue 40).
    let token = link.trim_start_matches("/dashboard/invitations/");
    let log = service
        .log_until_line("/dashboard/invitations/<redacted>")
        .await;
    assert!(token.len() >= 40, "{link}");
    assert!(
        !log.iter().any(|line| line.contains(token)),
        "a log line holds the invitation's token"
    );
    // Inviting someone who has a sign-in already is refused, with the reason.
    let again = admin
        .post(
            "/dashboard/admin/invite",
            &[
                ("csrf", &csrf),
                ("email", "new@example.com"),
                ("account", ""),
            ],
        )
        .await;
    assert_eq!(again.status, 400);
    assert!(again.body.contains("exists already"), "{}", again.body);
}

#[test]
fn the_password_is_never_taken_from_the_command_line() {
    let output = std::process::Command::new(binary())
        .args([
            "accounts",
            "create",
            "--email",
            "a@example.com",
            "--password",
            PASSWORD,
        ])
        .output()
        .expect("runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--password"));
}

#[tokio::test]
async fn the_jobs_page_starts_follows_cancels_and_downloads_jobs() {
    let service = Service::with_captured_pages();
    service.create_sign_in("ada@example.com", PASSWORD, &["--credits", "10"]);
    let mut browser = Browser::new(&service);
    browser.sign_in("ada@example.com", PASSWORD).await;
    let page = browser.get("/dashboard/jobs").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("No jobs yet."), "{}", page.body);
    let csrf = page.csrf();

    // A pasted CSV: the page URLs are picked out of its rows, the other columns left.
    let pasted = "name,linkedin\nGoogle,https://www.linkedin.com/company/google\nAudiense,https://uk.linkedin.com/company/audiense/\nNobody,https://www.linkedin.com/company/nobody-here";
    let started = browser
        .post(
            "/dashboard/jobs",
            &[("csrf", &csrf), ("urls", pasted), ("max_age_seconds", "0")],
        )
        .await;
    assert_eq!(started.status, 303, "{}", started.body);
    let listed = {
        // The polls take turns with the browser (each GET needs it mutably).
        let shared = tokio::sync::Mutex::new(&mut browser);
        e2e_harness::eventually(
            std::time::Duration::from_secs(10),
            "the job is not done on the Jobs page",
            || async {
                let listed = shared.lock().await.get("/dashboard/jobs").await;
                listed.body.contains(">done<").then_some(listed)
            },
        )
        .await
    };
    assert!(listed.body.contains("3 / 3"), "{}", listed.body);
    let download = browser.get("/dashboard/jobs/1/results.csv").await;
    assert_eq!(download.status, 200);
    assert_eq!(
        download
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/csv; charset=utf-8")
    );
    let mut reader = csv::Reader::from_reader(download.body.as_bytes());
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    assert_eq!(rows.len(), 3);
    let ndjson = browser.get("/dashboard/jobs/1/results.ndjson").await;
    assert_eq!(ndjson.body.lines().count(), 3);
    assert!(ndjson.body.contains("\"company_name\":\"Audiense\""));

    // Text without page URLs is refused with the reason; a job of another account is not found.
    let refused = browser
        .post(
            "/dashboard/jobs",
            &[
                ("csrf", &csrf),
                ("urls", "just words"),
                ("max_age_seconds", "0"),
            ],
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(
        refused
            .body
            .contains("No company, school or showcase page URLs")
    );
    let forged = browser
        .post("/dashboard/jobs/1/cancel", &[("csrf", "not the token")])
        .await;
    assert_eq!(forged.status, 403);
    assert_eq!(
        browser.get("/dashboard/jobs/99/results.csv").await.status,
        404
    );
    let ended = browser
        .post("/dashboard/jobs/1/cancel", &[("csrf", &csrf)])
        .await;
    assert_eq!(ended.status, 303, "cancelling an ended job changes nothing");
    assert!(browser.get("/dashboard/jobs").await.body.contains(">done<"));
}

#[tokio::test]
async fn the_watches_page_adds_removes_and_shows_the_secret_and_a_history_chart() {
    let service = Service::with_captured_pages();
    service.create_sign_in("ada@example.com", PASSWORD, &["--credits", "10"]);
    let mut browser = Browser::new(&service);
    browser.sign_in("ada@example.com", PASSWORD).await;
    let page = browser.get("/dashboard/watches").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("No watches yet."), "{}", page.body);
    let csrf = page.csrf();

    // The API's rules, with the API's messages: https only on this server.
    let refused = browser
        .post(
            "/dashboard/watches",
            &[
                ("csrf", &csrf),
                ("urls", "https://www.linkedin.com/company/google"),
                ("every_hours", "24"),
                ("webhook_url", "http://example.com/h"),
            ],
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(refused.body.contains("https only"), "{}", refused.body);
    let added = browser
        .post(
            "/dashboard/watches",
            &[("csrf", &csrf), ("urls", "https://www.linkedin.com/company/google\nhttps://www.linkedin.com/company/audiense"), ("every_hours", "168"), ("webhook_url", "https://hooks.example/company")],
        )
        .await;
    assert_eq!(added.status, 303, "{}", added.body);
    let listed = browser.get("/dashboard/watches").await;
    assert_eq!(
        listed.body.matches("/remove\"").count(),
        2,
        "{}",
        listed.body
    );
    assert!(listed.body.contains("hooks.example/company"));

    // The secret, shown on request; rotating gives another.
    let shown = browser
        .post("/dashboard/watches/secret", &[("csrf", &csrf)])
        .await;
    let secret = |body: &str| {
        body.split("data-testid=\"secret\">")
            .nth(1)
            .and_then(|r| r.split('<').next())
            .map(str::to_owned)
    };
    let first = secret(&shown.body).expect("a secret shown");
    assert!(first.starts_with("whsec_"));
    let rotated = browser
        .post("/dashboard/watches/secret/rotate", &[("csrf", &csrf)])
        .await;
    assert_ne!(secret(&rotated.body), Some(first));

    // Removing one leaves the other.
    let removed = browser
        .post("/dashboard/watches/1/remove", &[("csrf", &csrf)])
        .await;
    assert_eq!(removed.status, 303);
    assert_eq!(
        browser
            .get("/dashboard/watches")
            .await
            .body
            .matches("/remove\"")
            .count(),
        1
    );

    // History: none before a lookup; after two, a chart of both counts, at the stored price.
    let google = "https://www.linkedin.com/company/google";
    let none = browser
        .get(&format!("/dashboard/history?liUrl={google}"))
        .await;
    assert_eq!(none.status, 404);
    let key = service.key("default", "0");
    for _ in 0..2 {
        assert_eq!(
            service.post(&key, &crate::urls(&[google])).await.status,
            200
        );
    }
    let history = browser
        .get(&format!("/dashboard/history?liUrl={google}"))
        .await;
    assert_eq!(history.status, 200, "{}", history.body);
    assert_eq!(
        history.body.matches("<polyline").count(),
        2,
        "followers and employees"
    );
    assert!(history.body.contains("37,814,363"), "{}", history.body);
    assert!(history.body.contains("No changes seen."));
}

/// Copies of the captured Google page under `slugs`, in a folder origin of its own; with `without_funding`, the
/// Funding section is cut out, as a layout change that drops a section would.
fn write_copies(dir: &std::path::Path, slugs: std::ops::Range<usize>, without_funding: bool) {
    let mut page =
        std::fs::read_to_string(e2e_harness::fixtures().join("origin/company/google.html"))
            .expect("the captured page");
    if without_funding {
        let marker = page
            .find(r#"data-test-id="funding""#)
            .expect("a Funding section");
        let start = page[..marker].rfind("<section").expect("its start");
        let end = marker + page[marker..].find("</section>").expect("its end") + "</section>".len();
        page.replace_range(start..end, "");
    }
    let company = dir.join("company");
    std::fs::create_dir_all(&company).expect("folder");
    for i in slugs {
        std::fs::write(company.join(format!("copy-{i}.html")), &page).expect("written");
    }
}

async fn look_up_copies(service: &Service, key: &str, slugs: std::ops::Range<usize>) {
    let urls: Vec<String> = slugs
        .map(|i| format!("https://www.linkedin.com/company/copy-{i}"))
        .collect();
    let reply = service
        .post(key, &serde_json::json!({ "liUrls": urls }))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    assert_eq!(reply.json["unresolved"], serde_json::json!([]));
}

#[tokio::test]
async fn the_layout_change_alarm_fires_when_a_section_disappears_and_not_before() {
    let origin = tempfile::tempdir().expect("origin folder");
    write_copies(origin.path(), 0..120, false);
    let service = Service::start(e2e_harness::ServiceOptions {
        origin: origin.path().display().to_string(),
        real_process: true,
        ..e2e_harness::ServiceOptions::default()
    });
    service.create_sign_in(
        "admin@example.com",
        PASSWORD,
        &["--admin", "--credits", "500"],
    );
    let key = service.key("parsing", "500");
    let mut admin = Browser::new(&service);
    admin.sign_in("admin@example.com", PASSWORD).await;

    // 120 normal pages: a baseline and a full recent window, every field at its level, no alarm.
    look_up_copies(&service, &key, 0..120).await;
    let page = admin.get("/dashboard/admin").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<h2>Parsing</h2>"), "{}", page.body);
    // A folder origin has no route to show traffic on; the direct route is listed, unpaced.
    assert!(
        page.body.contains("<h2>Fetching</h2>") && page.body.contains("<code>direct</code>"),
        "{}",
        page.body
    );
    assert!(
        !page.body.contains("Layout change?"),
        "no alarm on normal pages"
    );
    assert!(!page.body.contains("<strong>alarm</strong>"));

    // The network drops the Funding section: the next 50 live parses find no funding_info.
    write_copies(origin.path(), 120..170, true);
    look_up_copies(&service, &key, 120..170).await;
    let page = admin.get("/dashboard/admin").await;
    assert!(page.body.contains("Layout change?"), "{}", page.body);
    assert!(
        page.body
            .contains("<code>funding_info</code> is filled on 0 %"),
        "{}",
        page.body
    );
    // The pages that lacked it are of the changed ones (the batch's pages finish in any order).
    assert!(
        (120..170).any(|i| page
            .body
            .contains(&format!("https://www.linkedin.com/company/copy-{i}\""))),
        "{}",
        page.body
    );
    assert_eq!(
        page.body.matches("<strong>alarm</strong>").count(),
        1,
        "only the field that went"
    );

    let log = service.log_until_line("layout change?").await.join("\n");
    let warning = log
        .lines()
        .find(|line| line.contains("layout change?"))
        .unwrap_or_else(|| panic!("no warning in the log:\n{log}"));
    assert!(
        warning.contains("funding_info") && warning.contains("copy-1"),
        "{warning}"
    );
}

#[tokio::test]
async fn the_webhooks_page_adds_pings_and_deletes_endpoints_and_sets_the_low_balance_alert() {
    let service = Service::with_captured_pages();
    service.create_sign_in(
        "ada@example.com",
        PASSWORD,
        &["--account", "acme", "--credits", "10"],
    );
    let key = service.key("acme", "0");
    let mut browser = Browser::new(&service);
    browser.sign_in("ada@example.com", PASSWORD).await;
    let page = browser.get("/dashboard/webhooks").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("No endpoints yet."), "{}", page.body);
    assert!(page.body.contains("No threshold is set"), "{}", page.body);
    let csrf = page.csrf();

    // The API's rules, with the API's messages: https only on this server, and at least one event.
    let refused = browser
        .post(
            "/dashboard/webhooks",
            &[("csrf", &csrf), ("url", "http://hooks.example/cd")],
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(refused.body.contains("https only"), "{}", refused.body);
    assert!(refused.body.contains("/events"), "{}", refused.body);
    let added = browser
        .post(
            "/dashboard/webhooks",
            &[
                ("csrf", &csrf),
                ("url", "https://hooks.example/cd"),
                ("job.finished", "on"),
                ("account.balance_low", "on"),
            ],
        )
        .await;
    assert_eq!(added.status, 303, "{}", added.body);
    // What the page lists is what the API lists.
    let (listed, _) = service
        .send(Method::GET, "/v1/webhook-endpoints", &key, None, None)
        .await;
    let endpoint = &listed.json["endpoints"][0];
    assert_eq!(
        endpoint["events"],
        serde_json::json!(["job.finished", "account.balance_low"])
    );
    let id = endpoint["id"].as_str().expect("id").to_owned();
    let shown = browser.get("/dashboard/webhooks").await;
    assert!(
        shown.body.contains("https://hooks.example/cd"),
        "{}",
        shown.body
    );

    // Ping: queued, and shown among the endpoint's deliveries.
    let pinged = browser
        .post(
            &format!("/dashboard/webhooks/{id}/ping"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(pinged.status, 303, "{}", pinged.body);
    let deliveries = browser.get(&format!("/dashboard/webhooks/{id}")).await;
    assert_eq!(deliveries.status, 200);
    assert!(deliveries.body.contains("evt_ping_"), "{}", deliveries.body);
    assert_eq!(browser.get("/dashboard/webhooks/99").await.status, 404);

    // The threshold: refused when not a number, set, shown by the API, removed when blank.
    let bad = browser
        .post(
            "/dashboard/webhooks/threshold",
            &[("csrf", &csrf), ("threshold", "ten")],
        )
        .await;
    assert_eq!(bad.status, 400);
    assert!(bad.body.contains("not a number"), "{}", bad.body);
    let set = browser
        .post(
            "/dashboard/webhooks/threshold",
            &[("csrf", &csrf), ("threshold", "2.5")],
        )
        .await;
    assert_eq!(set.status, 303, "{}", set.body);
    assert_eq!(
        account_json(&service, &key).await["low_balance_threshold"],
        2.5
    );
    assert!(
        browser
            .get("/dashboard/webhooks")
            .await
            .body
            .contains("data-testid=\"threshold\">2.5<"),
    );
    browser
        .post(
            "/dashboard/webhooks/threshold",
            &[("csrf", &csrf), ("threshold", "")],
        )
        .await;
    assert!(account_json(&service, &key).await["low_balance_threshold"].is_null());

    // Deleted: gone for the API too.
    let deleted = browser
        .post(
            &format!("/dashboard/webhooks/{id}/delete"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(deleted.status, 303);
    let (listed, _) = service
        .send(Method::GET, "/v1/webhook-endpoints", &key, None, None)
        .await;
    assert_eq!(listed.json["endpoints"], serde_json::json!([]));
}

/// `GET /v1/account` with `key`.
async fn account_json(service: &Service, key: &str) -> serde_json::Value {
    service
        .send(Method::GET, "/v1/account", key, None, None)
        .await
        .0
        .json
}

#[tokio::test]
async fn a_test_mode_key_is_made_on_the_keys_page_marked_and_explained() {
    let service = Service::with_captured_pages();
    service.create_sign_in(
        "ada@example.com",
        PASSWORD,
        &["--account", "acme", "--credits", "3"],
    );
    let mut browser = Browser::new(&service);
    browser.sign_in("ada@example.com", PASSWORD).await;
    let page = browser.get("/dashboard/keys").await;
    assert!(
        page.body.contains("data-testid=\"test-mode\"")
            && page.body.contains("company/acme-sandbox"),
        "test mode is explained where keys are made: {}",
        page.body
    );
    let made = browser
        .post(
            "/dashboard/keys",
            &[("csrf", &page.csrf()), ("name", "sandbox"), ("test", "on")],
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let key = made
        .body
        .split("data-testid=\"new-key\"")
        .next()
        .and_then(|before| before.rsplit("value=\"").next())
        .and_then(|rest| rest.split('"').next())
        .expect("the new key")
        .to_owned();
    assert!(key.starts_with("cdk_test_"), "{key}");
    assert!(
        made.body
            .contains("<strong class=\"test-mode\">test</strong>"),
        "{}",
        made.body
    );

    // It works over the API as a test key: the sandbox's page, the live balance untouched.
    let answer = service.post(&key, &crate::urls(&[crate::GOOGLE])).await;
    assert_eq!(answer.status, 200, "{}", answer.json);
    assert_eq!(answer.header("x-credits-remaining"), Some("1000000"));
    assert_eq!(
        account_json(&service, &service.key("acme", "0")).await["balance"],
        3
    );
}

#[tokio::test]
async fn an_admin_sets_an_accounts_quotas_and_the_keys_jobs_and_watches_pages_meet_them() {
    let service = Service::with_captured_pages();
    service.create_sign_in(
        "admin@example.com",
        PASSWORD,
        &["--admin", "--account", "ops"],
    );
    let mut admin = Browser::new(&service);
    admin.sign_in("admin@example.com", PASSWORD).await;
    let page = admin.get("/dashboard/admin").await;
    assert!(page.body.contains("id=\"quotas\""), "{}", page.body);
    let ops = page.option_value(">ops</option>");
    // A field that is not a number is refused with the fix; one set is the account's own from then on.
    let refused = admin
        .post(
            "/dashboard/admin/quotas",
            &[("csrf", &page.csrf()), ("account", &ops), ("keys", "many")],
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(
        refused.body.contains("Write a whole number for keys"),
        "{}",
        refused.body
    );
    let set = admin
        .post(
            "/dashboard/admin/quotas",
            &[("csrf", &page.csrf()), ("account", &ops), ("keys", "1")],
        )
        .await;
    assert_eq!(set.status, 200, "{}", set.body);
    assert!(set.body.contains("1 keys"), "{}", set.body);
    // The keys page of that account meets the quota at its edge.
    let csrf = admin.get("/dashboard/keys").await.csrf();
    let first = admin
        .post("/dashboard/keys", &[("csrf", &csrf), ("name", "one")])
        .await;
    assert_eq!(first.status, 201, "{}", first.body);
    let second = admin
        .post("/dashboard/keys", &[("csrf", &csrf), ("name", "two")])
        .await;
    assert_eq!(second.status, 409, "{}", second.body);
    assert!(
        second.body.contains("the most its quota allows"),
        "{}",
        second.body
    );

    // The Jobs and Watches pages meet theirs as the API does: 409 and the reason, nothing created.
    let set = admin
        .post(
            "/dashboard/admin/quotas",
            &[
                ("csrf", &csrf),
                ("account", &ops),
                ("queued_urls", "1"),
                ("watches", "1"),
            ],
        )
        .await;
    assert_eq!(set.status, 200, "{}", set.body);
    let two = "https://www.linkedin.com/company/google\nhttps://uk.linkedin.com/company/audiense";
    let job = admin
        .post(
            "/dashboard/jobs",
            &[("csrf", &csrf), ("urls", two), ("max_age_seconds", "0")],
        )
        .await;
    assert_eq!(job.status, 409, "{}", job.body);
    assert!(
        job.body.contains("more than its quota of 1;"),
        "{}",
        job.body
    );
    assert!(
        admin
            .get("/dashboard/jobs")
            .await
            .body
            .contains("No jobs yet.")
    );
    let watch = admin
        .post(
            "/dashboard/watches",
            &[
                ("csrf", &csrf),
                ("urls", two),
                ("every_hours", "168"),
                ("webhook_url", "https://hooks.example/company"),
            ],
        )
        .await;
    assert_eq!(watch.status, 409, "{}", watch.body);
    assert!(
        watch.body.contains("past its quota of 1 watches"),
        "{}",
        watch.body
    );
    assert!(
        admin
            .get("/dashboard/watches")
            .await
            .body
            .contains("No watches yet.")
    );
}

/// The `id` a form's action names for `email` on the Admin page (`/dashboard/admin/users/<id>/…`).
fn user_id_on(page: &Page, email: &str) -> String {
    let people = page.body.find("id=\"people\"").expect("the People section");
    let row = people
        + page.body[people..]
            .find(&format!("<tr><td>{email}</td>"))
            .expect("the person's row");
    let action = page.body[row..]
        .find("/dashboard/admin/users/")
        .expect("an offboarding form")
        + row
        + "/dashboard/admin/users/".len();
    page.body[action..]
        .split('/')
        .next()
        .expect("an id")
        .to_owned()
}

#[tokio::test]
async fn an_admin_offboards_people_and_their_sessions_end() {
    let service = Service::with_captured_pages();
    service.create_sign_in("admin@example.com", PASSWORD, &["--admin"]);
    service.create_sign_in("ada@example.com", PASSWORD, &[]);
    service.create_sign_in("bob@example.com", PASSWORD, &[]);
    let mut admin = Browser::new(&service);
    admin.sign_in("admin@example.com", PASSWORD).await;
    let (mut ada, mut bob) = (Browser::new(&service), Browser::new(&service));
    ada.sign_in("ada@example.com", PASSWORD).await;
    bob.sign_in("bob@example.com", PASSWORD).await;
    assert_eq!(ada.get("/dashboard/keys").await.status, 200);

    let page = admin.get("/dashboard/admin").await;
    let (ada_id, bob_id) = (
        user_id_on(&page, "ada@example.com"),
        user_id_on(&page, "bob@example.com"),
    );
    let csrf = page.csrf();
    // Every form needs the session's token; only an admin may use them.
    let forged = admin
        .post(
            &format!("/dashboard/admin/users/{bob_id}/remove"),
            &[("csrf", "forged")],
        )
        .await;
    assert_eq!(forged.status, 403);
    let ada_csrf = ada.get("/dashboard/keys").await.csrf();
    let not_admin = ada
        .post(
            &format!("/dashboard/admin/users/{bob_id}/remove"),
            &[("csrf", &ada_csrf)],
        )
        .await;
    assert_eq!(not_admin.status, 403);

    // Ending Ada's sessions sends her browser back to the sign-in page.
    let ended = admin
        .post(
            &format!("/dashboard/admin/users/{ada_id}/sign-out"),
            &[("csrf", &csrf)],
        )
        .await;
    assert!(
        ended.body.contains("Signed ada@example.com out everywhere"),
        "{}",
        ended.body
    );
    assert_eq!(ada.get("/dashboard/keys").await.status, 303);
    // A new password for Ada: the old one no longer signs in.
    let set = admin
        .post(
            &format!("/dashboard/admin/users/{ada_id}/password"),
            &[
                ("csrf", &csrf),
                ("password", "a fresh password here"),
                ("confirm", "a fresh password here"),
            ],
        )
        .await;
    assert!(
        set.body.contains("Set a new password for ada@example.com"),
        "{}",
        set.body
    );
    assert_eq!(
        Browser::new(&service)
            .sign_in("ada@example.com", PASSWORD)
            .await
            .status,
        401
    );
    assert_eq!(
        Browser::new(&service)
            .sign_in("ada@example.com", "a fresh password here")
            .await
            .status,
        303
    );
    // Removing Bob ends his session and his sign-in; an admin cannot remove itself.
    let removed = admin
        .post(
            &format!("/dashboard/admin/users/{bob_id}/remove"),
            &[("csrf", &csrf)],
        )
        .await;
    assert!(
        removed.body.contains("Removed bob@example.com"),
        "{}",
        removed.body
    );
    assert_eq!(bob.get("/dashboard/keys").await.status, 303);
    assert_eq!(
        Browser::new(&service)
            .sign_in("bob@example.com", PASSWORD)
            .await
            .status,
        401
    );
    let admin_id = user_id_on(&admin.get("/dashboard/admin").await, "admin@example.com");
    let itself = admin
        .post(
            &format!("/dashboard/admin/users/{admin_id}/remove"),
            &[("csrf", &csrf)],
        )
        .await;
    assert!(
        itself.body.contains("cannot remove your own sign-in"),
        "{}",
        itself.body
    );

    // A withdrawn invitation's link stops working.
    let invited = admin
        .post(
            "/dashboard/admin/invite",
            &[
                ("csrf", &csrf),
                ("email", "carol@example.com"),
                ("account", ""),
            ],
        )
        .await;
    let start = invited
        .body
        .find("/dashboard/invitations/")
        .expect("a link");
    let link = invited.body[start..]
        .split('"')
        .next()
        .expect("link")
        .to_owned();
    assert!(
        admin
            .get("/dashboard/admin")
            .await
            .body
            .contains("Invitations not yet used")
    );
    let withdrawn = admin
        .post(
            "/dashboard/admin/invitations/withdraw",
            &[("csrf", &csrf), ("email", "carol@example.com")],
        )
        .await;
    assert!(
        withdrawn.body.contains("Withdrew the invitation"),
        "{}",
        withdrawn.body
    );
    assert_eq!(Browser::new(&service).get(&link).await.status, 404);
}

#[tokio::test]
async fn the_search_page_finds_the_accounts_companies_and_downloads_them_as_csv() {
    let service = Service::with_captured_pages();
    service.create_sign_in(
        "ada@example.com",
        PASSWORD,
        &["--account", "ada", "--credits", "10"],
    );
    let mut browser = Browser::new(&service);
    browser.sign_in("ada@example.com", PASSWORD).await;
    let empty = browser.get("/dashboard/search").await;
    assert_eq!(empty.status, 200, "{}", empty.body);
    assert!(
        empty.body.contains(r#"data-testid="search-empty""#),
        "{}",
        empty.body
    );

    // The account's key looks two pages up; another account's lookups stay out of its search.
    let key = service.key("ada", "0");
    let other = service.key("other", "10");
    let (google, audiense) = (
        "https://www.linkedin.com/company/google",
        "https://www.linkedin.com/company/audiense",
    );
    assert_eq!(
        service
            .post(&key, &crate::urls(&[google, audiense]))
            .await
            .status,
        200
    );
    assert_eq!(
        service.post(&other, &crate::urls(&[google])).await.status,
        200
    );

    let all = browser.get("/dashboard/search").await;
    assert_eq!(all.status, 200, "{}", all.body);
    assert!(
        all.body.contains(r#"data-testid="search-results""#),
        "{}",
        all.body
    );
    assert!(
        all.body.find(google) < all.body.find(audiense),
        "most followers first"
    );
    let british = browser
        .get("/dashboard/search?country=gb&sort=employees")
        .await;
    assert!(
        british.body.contains(audiense) && !british.body.contains(google),
        "{}",
        british.body
    );

    // The API's rule, in the API's words.
    let refused = browser.get("/dashboard/search?min_employees=many").await;
    assert_eq!(refused.status, 400);
    assert!(
        refused.body.contains("/employeeCount/min"),
        "{}",
        refused.body
    );

    let csv = browser.get("/dashboard/search.csv?q=google").await;
    assert_eq!(csv.status, 200, "{}", csv.body);
    assert_eq!(
        csv.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/csv; charset=utf-8")
    );
    let mut reader = csv::Reader::from_reader(csv.body.as_bytes());
    assert_eq!(
        reader
            .headers()
            .expect("a header")
            .iter()
            .collect::<Vec<_>>(),
        company_model::CompanyRow::CSV_COLUMNS
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("a row")).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(&rows[0][0], google);
    assert_eq!(&rows[0][1], "Google");
}

/// The search CSV holds every page of a search longer than one, each company once, in the API's order: 250
/// companies generated from the captured pages are written to the server's own SQLite file, and a deployment-wide
/// scope searches them all (the download searches 100 at a time, streaming each page as it comes).
#[tokio::test]
async fn the_search_csv_holds_every_page_of_a_long_search() {
    let service = Service::start(ServiceOptions {
        args: vec!["--search-scope", "deployment"],
        ..ServiceOptions::default()
    });
    service.create_sign_in("ada@example.com", PASSWORD, &["--account", "ada"]);
    let domain = page_url::NetworkDomain::default();
    let pages = e2e_harness::workspace().join("../shared/fixtures/pages");
    let bases: Vec<_> = [
        ("company-google-2025.html", "google"),
        ("company-audiense-2024.html", "audiense"),
    ]
    .into_iter()
    .map(|(file, slug)| {
        let html = std::fs::read_to_string(pages.join(file)).expect("a captured page");
        let url = page_url::PageUrl::parse_submitted(
            &format!("https://www.linkedin.com/company/{slug}"),
            &domain,
        )
        .expect("a page URL");
        page_scraper::parse_page(&html, &url, &domain).expect("parses")
    })
    .collect();
    let store = snapshot_cache::SqliteSnapshotStore::open(std::path::Path::new(&service.db))
        .await
        .expect("the server's store opens");
    let companies = test_support::companies::generated(&bases, 250, jiff::Timestamp::now());
    let mut urls = std::collections::BTreeSet::new();
    for company in &companies {
        let url = page_url::PageUrl::parse_submitted(
            &format!("https://www.linkedin.com/company/{}", company.slug),
            &domain,
        )
        .expect("a page URL");
        urls.insert(url.as_str().to_owned());
        let snapshot = snapshot_cache::Snapshot {
            url,
            record: company_model::RecordJson::from_record(&company.record),
            fetched_at: company.fetched_at,
        };
        snapshot_cache::SnapshotStore::put(&store, &snapshot, &[], None)
            .await
            .expect("stored");
    }

    // The API's pages, for the order.
    let key = service.key("ada", "0");
    let (mut paged, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let mut body = serde_json::json!({"limit": 100});
        if let Some(cursor) = &cursor {
            body["cursor"] = serde_json::json!(cursor);
        }
        let reply = crate::search::search(&service, &key, &body).await;
        assert_eq!(reply.status, 200, "{}", reply.json);
        paged.extend(crate::search::found(&reply).into_iter().map(str::to_owned));
        match reply.json["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }

    let mut browser = Browser::new(&service);
    browser.sign_in("ada@example.com", PASSWORD).await;
    let csv = browser.get("/dashboard/search.csv").await;
    assert_eq!(csv.status, 200, "{}", csv.body);
    let mut reader = csv::Reader::from_reader(csv.body.as_bytes());
    let downloaded: Vec<String> = reader
        .records()
        .map(|row| row.expect("a whole row")[0].to_owned())
        .collect();
    assert_eq!(downloaded.len(), companies.len());
    assert_eq!(downloaded, paged);
    assert_eq!(
        downloaded
            .iter()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>(),
        urls
    );
    // The download has ended: the account may download again at once.
    let again = browser.get("/dashboard/search.csv?sort=employees").await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(
        csv::Reader::from_reader(again.body.as_bytes())
            .records()
            .count(),
        companies.len()
    );
}
