//! Contract conformance from outside (issue 4): Schemathesis generates requests from the server's own
//! `GET /openapi.json` and checks every answer against it (documented status codes, response schemas, content
//! types and headers, no 5xx, schema-violating bodies rejected, valid ones accepted). Requests go only to the
//! loopback server, whose origin is the folder of captured pages.
//!
//! Schemathesis comes from PyPI: `$SCHEMATHESIS` names its executable (`tests/ci` installs the pinned release into
//! a venv under `target/tools/` and sets it); without it the test reports itself as not run. Its own test binary,
//! so that it does not share the CPU with the timing-sensitive end-to-end tests.

use std::process::Command;

use e2e_harness::{Service, ServiceOptions, tool, workspace};

/// The run must generate at least this many test cases in all (per-phase counts are in tests/schemathesis.toml).
const AT_LEAST: u64 = 1000;

#[tokio::test]
async fn schemathesis_finds_nothing_in_a_thousand_generated_requests() {
    let Some(schemathesis) = tool("SCHEMATHESIS", "Schemathesis") else {
        return;
    };
    // The generated domains' websites: a loopback proxy that knows none of them (every site answers 502 at
    // once), so resolving them costs no DNS and no time-out.
    let websites = e2e_harness::websites::Websites::start(std::collections::HashMap::new()).await;
    let service = Service::start(ServiceOptions {
        // Generated requests come fast and many; the per-key limit is tested on its own.
        // No key rate, and a failed-authentication limit no run reaches: the checks that send no key or a
        // wrong one must see 401, not the 429 that guards against floods.
        args: vec![
            "--key-rate",
            "0",
            "--failed-auth-limit",
            "1000000",
            "--site-proxy",
            &websites.proxy,
        ],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "1000000");
    let reports = tempfile::tempdir().expect("a report folder");
    let output = Command::new(schemathesis)
        .arg("--config-file")
        .arg(workspace().join("tests/schemathesis.toml"))
        .arg("--no-color")
        .args(["run", &format!("{}/openapi.json", service.base)])
        .args(["--header", &format!("Authorization: Bearer {key}")])
        // Every check runs (Schemathesis' default); not named here, because a command-line choice of checks
        // overrides the per-operation exceptions of the config file.
        .args(["--seed", "1", "--output-truncate", "true"])
        .args(["--report", "junit", "--report-dir"])
        .arg(reports.path())
        // Its caches (`.schemathesis/`, `.hypothesis/`) go to the temporary folder, not into the repository.
        .current_dir(reports.path())
        .output()
        .expect("schemathesis runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "Schemathesis found problems:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The summary's "N generated, …" line (a warning may also say "generated").
    let generated: u64 = stdout
        .lines()
        .find_map(|line| line.trim().split_once(" generated")?.0.trim().parse().ok())
        .unwrap_or_else(|| panic!("no test-case count in:\n{stdout}"));
    assert!(
        generated >= AT_LEAST,
        "only {generated} requests generated:\n{stdout}"
    );
    assert!(
        !stdout.contains(&key),
        "Schemathesis printed the key; it must redact it"
    );
}
