//! The command line: first start, keys, scrape.

use e2e_harness::{Service, cli, cli_fails, fixtures};

use crate::{GOOGLE, urls};

#[tokio::test]
async fn the_first_start_prints_a_working_key_once() {
    let real = || e2e_harness::ServiceOptions {
        real_process: true,
        ..Default::default()
    };
    let mut service = Service::start(real());
    let key = service.first_key().expect("the first start prints a key");
    assert!(key.starts_with("cdk_"));
    let reply = service.post(&key, &urls(&[GOOGLE])).await;
    assert_eq!(
        (reply.status, reply.header("x-credits-remaining")),
        (200, Some("99"))
    );
    let listed = service.cli(&["keys", "list"]);
    assert!(
        listed.contains(&key[..12]) && !listed.contains(&key[12..]),
        "{listed}"
    );
    assert!(listed.contains("default"), "{listed}");

    // A restart on the same database does not make another key.
    service.kill();
    let restarted = Service::start(e2e_harness::ServiceOptions {
        dir: Some(service.dir()),
        ..real()
    });
    assert_eq!(restarted.first_key(), None);
    assert_eq!(restarted.post(&key, &urls(&[GOOGLE])).await.status, 200);
}

#[test]
fn scrape_prints_the_record_of_a_saved_page() {
    let page = fixtures().join("origin/company/audiense.html");
    let out = cli(&[
        "scrape",
        &page.display().to_string(),
        "--url",
        "https://uk.linkedin.com/company/audiense",
    ]);
    let record: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(record["company_name"], "Audiense");
    assert_eq!(record["domain"], "audiense.com");
    let error = cli_fails(&[
        "scrape",
        &page.display().to_string(),
        "--url",
        "https://www.linkedin.com/in/x",
    ]);
    assert!(error.contains("company, school or showcase"), "{error}");
}

#[test]
fn scrape_explains_where_each_field_came_from() {
    let page = fixtures().join("origin/company/google.html");
    let out = cli(&[
        "scrape",
        "--explain",
        &page.display().to_string(),
        "--url",
        "https://www.linkedin.com/company/google",
    ]);
    let line = |field: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(field))
            .unwrap_or_else(|| panic!("no line for {field}:\n{out}"))
            .to_owned()
    };
    assert!(
        line("company_name").ends_with("  JSON-LD Organization.name"),
        "{out}"
    );
    assert!(
        line("industries").ends_with("  About row \"Industry\""),
        "{out}"
    );
    assert!(
        line("slogan").contains("absent: not in JSON-LD Organization.slogan; nor in"),
        "{out}"
    );
    assert!(line("job_count").contains("absent"), "{out}");
    assert!(
        out.ends_with("Sections a company page carries that this one lacks: none\n"),
        "{out}"
    );
}

/// `company-data` run with `RUST_BACKTRACE=1`: its exit code and standard error.
fn fails_with_backtraces_on(args: &[&str]) -> (Option<i32>, String) {
    let output = std::process::Command::new(e2e_harness::binary())
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("company-data runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A saved page that is not a guest company page is named for what it is, with what to do instead, in one line
/// and exit code 1 — with `RUST_BACKTRACE` set too (a backtrace is for bugs, not for a page the user handed over).
#[test]
fn scrape_says_what_a_page_is_when_it_is_not_a_company_page() {
    let url = "https://www.linkedin.com/company/audiense";
    for (page, says) in [
        (
            "pages/loggedin-company-audiense-2017.html",
            "saved while signed in",
        ),
        (
            "pages/loggedin-company-facebook-fragment-2018.html",
            "saved while signed in",
        ),
        ("pages/authwall-profile-2026.html", "sign-in wall"),
        ("pages/blocked-999-2021.html", "HTTP 999 challenge page"),
        ("pages/blocked-guest-homepage-2024.html", "guest home page"),
    ] {
        let file = fixtures().join(page).display().to_string();
        for explain in [false, true] {
            let mut args = vec!["scrape", &file, "--url", url];
            if explain {
                args.push("--explain");
            }
            let (code, stderr) = fails_with_backtraces_on(&args);
            assert_eq!(code, Some(1), "{page}: {stderr}");
            assert_eq!(
                stderr.lines().count(),
                1,
                "{page}: one line, no backtrace: {stderr}"
            );
            assert!(
                stderr.starts_with("error: ") && stderr.contains(says),
                "{page}: {stderr}"
            );
            assert!(
                stderr.contains("POST /v1/network/company-data"),
                "what to do instead: {stderr}"
            );
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let profile = dir.path().join("profile.html");
    std::fs::write(
        &profile,
        r#"<html><head><link rel="canonical" href="https://www.linkedin.com/in/someone"></head></html>"#,
    )
    .expect("written");
    let (code, stderr) =
        fails_with_backtraces_on(&["scrape", &profile.display().to_string(), "--url", url]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("a person's profile (/in/someone)"),
        "{stderr}"
    );
    // Every command's expected errors are one line too.
    let db = dir.path().join("c.db").display().to_string();
    let (code, stderr) =
        fails_with_backtraces_on(&["credits", "grant", "--db", &db, "--account", "nobody", "1"]);
    assert_eq!((code, stderr.lines().count()), (Some(1), 1), "{stderr}");
}

#[test]
fn fractional_credits_and_unknown_accounts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("c.db").display().to_string();
    let out = cli(&[
        "keys",
        "create",
        "--db",
        &db,
        "--account",
        "half",
        "--credits",
        "0.5",
    ]);
    assert!(out.contains("balance 0.5 credits"), "{out}");
    let error = cli_fails(&["credits", "grant", "--db", &db, "--account", "nobody", "1"]);
    assert!(error.contains("keys create --account nobody"), "{error}");
    let error = cli_fails(&["credits", "grant", "--db", &db, "--account", "half", "-1"]);
    assert!(!error.is_empty());
}
