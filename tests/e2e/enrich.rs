//! `company-data enrich`: a 1,000-row CSV against a server and embedded on a database, and `--resume` after an
//! interrupted run.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use e2e_harness::{Service, ServiceOptions, TestOrigin, binary, cli};

/// A CRM export: 1,000 rows over 100 distinct pages `/company/p<N>`, each row with its own columns; rows 7 and
/// 500 have no usable URL.
fn write_export(path: &Path) {
    let mut writer = csv::Writer::from_path(path).expect("csv file");
    writer
        .write_record(["account_id", "name", "linkedin"])
        .expect("header");
    for n in 0..1000 {
        let url = match n {
            7 => "not a url".to_owned(),
            500 => String::new(),
            _ => format!("https://www.linkedin.com/company/p{}", n % 100),
        };
        writer
            .write_record([format!("A-{n}"), format!("Company {n}"), url])
            .expect("row");
    }
    writer.flush().expect("written");
}

/// Runs the command off the test's runtime (the origin answers on it) and returns stdout.
async fn run(args: Vec<String>) -> String {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cli(&args)
    })
    .await
    .expect("the command ran")
}

/// Runs the command off the test's runtime, expecting it to fail, and returns its stderr.
async fn run_refused(args: Vec<String>) -> String {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        e2e_harness::cli_fails(&args)
    })
    .await
    .expect("the command ran")
}

fn read_rows(path: &Path) -> (csv::StringRecord, Vec<csv::StringRecord>) {
    let mut reader = csv::Reader::from_path(path).expect("output");
    let header = reader.headers().expect("header").clone();
    let rows = reader.records().map(|r| r.expect("row")).collect();
    (header, rows)
}

/// Every input row once, in order, its own columns kept beside the record's.
fn check_output(path: &Path) {
    let (header, rows) = read_rows(path);
    assert_eq!(rows.len(), 1000);
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    for (n, row) in rows.iter().enumerate() {
        assert_eq!(&row[column("account_id")], format!("A-{n}"));
        match n {
            7 | 500 => {
                assert_eq!(&row[column("status")], "unresolved");
                assert_eq!(&row[column("error")], "invalid_url");
            }
            _ => {
                assert_eq!(&row[column("status")], "resolved", "row {n}");
                assert_eq!(&row[column("company_name")], "Google");
            }
        }
    }
}

#[tokio::test]
async fn a_csv_enriched_against_a_server_and_embedded() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--origin-concurrency", "64"],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "1000");
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("export.csv");
    write_export(&input);
    let out = dir.path().join("enriched.csv");
    let args = |out: &Path| {
        vec![
            "enrich".to_owned(),
            input.display().to_string(),
            "--out".to_owned(),
            out.display().to_string(),
        ]
    };
    let mut against_server = args(&out);
    against_server.extend(["--server".into(), service.base.clone(), "--key".into(), key]);
    run(against_server).await;
    check_output(&out);
    // 100 distinct pages, each paid once, live; the two rows without a URL were never sent.
    let shown = service.cli(&["credits", "show", "--account", "acme"]);
    assert!(shown.starts_with("acme: 900 credits"), "{shown}");
    assert!(
        !Path::new(&format!("{}.job", out.display())).exists(),
        "the job file is removed once the output is written"
    );

    // Embedded on a database of its own, no server: the same rows, billed to the named account, and stored
    // snapshots count (the server's pages are not in this database, so these are fetched too).
    let db = dir.path().join("embedded.db").display().to_string();
    cli(&["keys", "create", "--account", "crm", "--db", &db]);
    cli(&["credits", "grant", "--account", "crm", "60", "--db", &db]);
    let out = dir.path().join("embedded.ndjson");
    let mut embedded = args(&out);
    embedded.extend(
        [
            "--db",
            &db,
            "--origin",
            &origin.base,
            "--account",
            "crm",
            "--max-age-hours",
            "1",
            "--fields",
            "company_name,website",
        ]
        .map(str::to_owned),
    );
    run(embedded).await;
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .expect("output")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 1000);
    assert_eq!(lines[3]["input"]["name"], "Company 3");
    assert_eq!(lines[3]["company_name"], "Google");
    assert_eq!(lines[7]["error"], "invalid_url");
    // `--fields` keeps the named members (and the page's identity) and bills the same.
    let members: Vec<&str> = lines[3]
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        members,
        [
            "company_name",
            "fetched_at",
            "final_li_url",
            "input",
            "original_li_url",
            "position",
            "source",
            "website"
        ]
    );
    let shown = cli(&["credits", "show", "--account", "crm", "--db", &db]);
    assert!(
        shown.starts_with("crm: 10 credits"),
        "100 pages at 0.5, with or without fields: {shown}"
    );
}

#[tokio::test]
async fn an_interrupted_run_resumes_without_paying_again() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--origin-concurrency", "2", "--job-workers", "1"],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "1000");
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("export.csv");
    write_export(&input);
    let out = dir.path().join("enriched.csv");
    let base = [
        "enrich",
        &input.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--server",
        &service.base,
        "--key",
        &key,
    ]
    .map(str::to_owned)
    .to_vec();
    // The first run is killed while the job runs (100 pages at 300 ms, two at a time: about 15 s).
    let mut first = Command::new(binary())
        .args(&base)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("enrich starts");
    let job_file = std::path::PathBuf::from(format!("{}.job", out.display()));
    e2e_harness::eventually(
        Duration::from_secs(30),
        "the first run never started its job",
        || std::future::ready((job_file.exists() && origin.hits_total() >= 4).then_some(())),
    )
    .await;
    first.kill().expect("killed");
    let _ = first.wait();
    assert!(!out.exists(), "no output from the interrupted run");

    // Run again without --resume: refused, pointing at it.
    let again = base.clone();
    let refused = run_refused(again).await;
    assert!(refused.contains("--resume"), "{refused}");
    // Resuming with another --include: refused, since the job's answers are recorded without the count.
    let mut other = base.clone();
    other.extend(["--resume", "--include", "job_count"].map(str::to_owned));
    let refused = run_refused(other).await;
    assert!(
        refused.contains("started with no --fields, no --include")
            && refused.contains("with no --fields, --include job_count"),
        "{refused}"
    );

    let mut resumed = base;
    resumed.push("--resume".into());
    run(resumed).await;
    check_output(&out);
    let shown = service.cli(&["credits", "show", "--account", "acme"]);
    assert!(
        shown.starts_with("acme: 900 credits"),
        "paid once per page: {shown}"
    );
    for page in [0, 50, 99] {
        assert_eq!(
            origin.hits(&format!("/company/p{page}")),
            1,
            "p{page} fetched once"
        );
    }
}

/// A CRM export of 1,000 website domains: 100 belong to companies whose sites link their pages; of the other
/// 900, a third have a site that links no page and the rest no site at all (and none has a page); three rows
/// have no domain.
#[tokio::test]
async fn a_domain_list_turns_into_records_with_evidence_and_unresolved_rows_are_free() {
    use e2e_harness::websites::{Company, NetworkPages, Site, Websites, home_page};
    let names: Vec<(String, String, String)> = (0..100)
        .map(|n| {
            (
                format!("co{n}"),
                format!("Company {n} Ltd"),
                format!("www.co{n}.test"),
            )
        })
        .collect();
    let companies: Vec<Company<'_>> = names
        .iter()
        .map(|(slug, name, website)| Company {
            kind: "company",
            slug,
            name,
            website,
        })
        .collect();
    let pages = NetworkPages::new(&companies);
    let sites = Websites::start(
        (0..1000)
            .filter(|n| *n < 100 || n % 3 == 0)
            .map(|n| {
                let link = if n < 100 {
                    format!(r#"<footer><a href="https://www.linkedin.com/company/co{n}/">in</a></footer>"#)
                } else {
                    "<footer>No social links</footer>".to_owned()
                };
                (format!("co{n}.test"), Site::Page(home_page("Co", "", &link)))
            })
            .collect(),
    )
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("accounts.csv");
    let mut writer = csv::Writer::from_path(&input).expect("csv file");
    writer
        .write_record(["account_id", "website"])
        .expect("header");
    for n in 0..1000 {
        let website = match n {
            5 | 50 | 950 => String::new(),
            n if n % 2 == 0 => format!("co{n}.test"),
            n => format!("https://www.co{n}.test/contact"),
        };
        writer
            .write_record([format!("A-{n}"), website])
            .expect("row");
    }
    writer.flush().expect("written");
    let db = dir.path().join("resolve.db").display().to_string();
    cli(&["keys", "create", "--account", "crm", "--db", &db]);
    cli(&["credits", "grant", "--account", "crm", "1000", "--db", &db]);
    // `enrich` of the list, embedded on `db`, billed to `account`, written to `out`.
    let enrich = |db: &str, out: &Path, account: &str| -> Vec<String> {
        [
            "enrich",
            &input.display().to_string(),
            "--out",
            &out.display().to_string(),
            "--domain-column",
            "website",
            "--db",
            db,
            "--origin",
            &pages.origin(),
            "--site-proxy",
            &sites.proxy,
            "--account",
            account,
        ]
        .map(str::to_owned)
        .into()
    };
    let out = dir.path().join("accounts.enriched.csv");
    run(enrich(&db, &out, "crm")).await;

    let (header, rows) = read_rows(&out);
    assert_eq!(rows.len(), 1000);
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    for (n, row) in rows.iter().enumerate() {
        assert_eq!(&row[column("account_id")], format!("A-{n}"));
        match n {
            5 | 50 | 950 => assert_eq!(&row[column("error")], "no_query"),
            n if n < 100 => {
                assert_eq!(
                    &row[column("resolved_li_url")],
                    format!("https://www.linkedin.com/company/co{n}"),
                    "row {n}"
                );
                assert_eq!(&row[column("method")], "site_link");
                assert_eq!(&row[column("confidence")], "0.99");
                assert!(row[column("evidence")].contains("site_link in the site's footer"));
                assert_eq!(&row[column("company_name")], format!("Company {n} Ltd"));
                assert_eq!(&row[column("status")], "resolved");
            }
            n => {
                assert_eq!(&row[column("status")], "unresolved", "row {n}");
                let error = if n % 3 == 0 {
                    "no_page_found"
                } else {
                    "site_unreachable"
                };
                assert_eq!(
                    &row[column("error")],
                    error,
                    "row {n}: {}",
                    &row[column("message")]
                );
                assert_eq!(&row[column("resolved_li_url")], "");
            }
        }
    }
    // 98 resolved rows (two of the first hundred have no domain), live: one credit each; the others nothing.
    let shown = cli(&["credits", "show", "--account", "crm", "--db", &db]);
    assert!(shown.starts_with("crm: 902 credits"), "{shown}");

    // An account that can pay for the first request of 200 queries and not the second: the run stops with an
    // error that says so, and the output still holds what was paid for, the other rows `not_looked_up`.
    let db = dir.path().join("short.db").display().to_string();
    cli(&["keys", "create", "--account", "short", "--db", &db]);
    cli(&["credits", "grant", "--account", "short", "210", "--db", &db]);
    let out = dir.path().join("short.csv");
    let args = enrich(&db, &out, "short");
    let stderr = run_refused(args).await;
    assert!(
        stderr.contains("holds the rows resolved (and paid for) before it"),
        "{stderr}"
    );
    let (header, rows) = read_rows(&out);
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    let resolved = rows
        .iter()
        .filter(|r| &r[column("status")] == "resolved")
        .count();
    let not_sent = rows
        .iter()
        .filter(|r| &r[column("error")] == "not_looked_up")
        .count();
    assert_eq!((rows.len(), resolved), (1000, 98));
    assert!(not_sent >= 700, "{not_sent} rows not looked up");
    let shown = cli(&["credits", "show", "--account", "short", "--db", &db]);
    assert!(shown.starts_with("short: 112 credits"), "{shown}");
}
