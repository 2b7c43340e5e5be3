//! The embedding examples of the README run and do what they say (issue 13): each is built and run with cargo
//! exactly as the README shows, against the captured pages, and its output checked.

use tests::{cargo, fixtures, workspace};

/// `cargo run --quiet <args>`; returns stdout, panics with stderr on failure.
fn run(args: &[&str]) -> String {
    let output = cargo()
        .args(["run", "--quiet"])
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "cargo run {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn origin() -> String {
    fixtures().join("origin").display().to_string()
}

#[test]
fn the_parser_alone_reads_a_saved_page_without_tokio_or_reqwest() {
    let page = fixtures().join("origin/company/audiense.html");
    let out = run(&[
        "-p",
        "page-scraper",
        "--no-default-features",
        "--example",
        "parse_saved_page",
        "--",
        &page.display().to_string(),
        "https://uk.linkedin.com/company/audiense/",
    ]);
    assert!(out.contains(r#""company_name": "Audiense""#), "{out}");
    // Built without the fetcher: cargo would have refused the example if it needed reqwest or tokio.
    let tree = cargo()
        .args([
            "tree",
            "-p",
            "page-scraper",
            "--no-default-features",
            "-e",
            "normal",
        ])
        .current_dir(workspace())
        .output()
        .expect("cargo tree runs");
    let tree = String::from_utf8_lossy(&tree.stdout);
    assert!(
        !tree.contains("reqwest") && !tree.contains("tokio"),
        "{tree}"
    );
}

#[test]
fn lookups_run_embedded_on_the_sqlite_stores() {
    let out = run(&[
        "-p",
        "company-lookup",
        "--example",
        "embedded_lookup",
        "--",
        &origin(),
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("-> Google (Live"), "{out}");
    assert_eq!(lines[1], "charged 1 credits, 9 left", "{out}");
    assert!(lines[2].contains("-> Google (Stored"), "{out}");
    assert_eq!(lines[3], "charged 0.5 credits, 8.5 left", "{out}");
}

#[test]
fn the_api_mounts_under_a_prefix_beside_the_hosts_routes() {
    let out = run(&[
        "-p",
        "http-api",
        "--example",
        "mount_in_hyper",
        "--",
        &origin(),
    ]);
    assert!(out.contains("GET /: the host's own page"), "{out}");
    assert!(out.contains("GET /company-data/healthz: 200 OK"), "{out}");
    assert!(
        out.contains(
            "POST /company-data/v1/network/company-data: 200 OK, 1 record(s), 1 credit(s) charged, company_name \"Google\""
        ),
        "{out}"
    );
    assert!(
        out.contains("GET /v1/network/company-data (outside the prefix): 404 Not Found"),
        "{out}"
    );
}
