//! `company-data enrich`: a 1,000-row CSV against a server and embedded on a database, and `--resume` after an
//! interrupted run.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use tests::{Service, ServiceOptions, TestOrigin, binary, cli};

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
    let shown = cli(&["credits", "show", "--account", "crm", "--db", &db]);
    assert!(
        shown.starts_with("crm: 10 credits"),
        "100 pages at 0.5: {shown}"
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
    tests::eventually(
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
    let refused = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = again.iter().map(String::as_str).collect();
        tests::cli_fails(&args)
    })
    .await
    .expect("ran");
    assert!(refused.contains("--resume"), "{refused}");

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
