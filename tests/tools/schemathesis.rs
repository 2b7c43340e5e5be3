//! Contract conformance from outside (issue 4): Schemathesis generates requests from the server's own
//! `GET /openapi.json` and checks every answer against it (documented status codes, response schemas, content
//! types and headers, no 5xx, schema-violating bodies rejected, valid ones accepted). Requests go only to the
//! loopback server, whose origin is the folder of captured pages.
//!
//! Schemathesis comes from PyPI: `$SCHEMATHESIS` if set, else a venv under `target/tools/` made on first use.
//! Its own test binary, so that it does not share the CPU with the timing-sensitive end-to-end tests.

use std::path::PathBuf;
use std::process::Command;

use tests::{Service, ServiceOptions, run_setup, target_dir, workspace};

/// The Schemathesis release the run is pinned to.
const VERSION: &str = "4.32.5";
/// The run must generate at least this many test cases in all (per-phase counts are in tests/schemathesis.toml).
const AT_LEAST: u64 = 1000;

/// The `schemathesis` executable, installed into `target/tools/schemathesis-<version>` when missing.
fn schemathesis() -> PathBuf {
    if let Some(path) = std::env::var_os("SCHEMATHESIS") {
        return PathBuf::from(path);
    }
    let venv = target_dir().join(format!("tools/schemathesis-{VERSION}"));
    let executable = venv.join("bin/schemathesis");
    if executable.exists() {
        return executable;
    }
    let what = "installing Schemathesis failed (it needs python3 with venv, and PyPI)";
    run_setup(
        Command::new("python3").arg("-m").arg("venv").arg(&venv),
        what,
    );
    run_setup(
        Command::new(venv.join("bin/pip")).args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            &format!("schemathesis=={VERSION}"),
        ]),
        what,
    );
    executable
}

#[tokio::test]
async fn schemathesis_finds_nothing_in_a_thousand_generated_requests() {
    let service = Service::start(ServiceOptions {
        // Generated requests come fast and many; the per-key limit is tested on its own.
        // No key rate, and a failed-authentication limit no run reaches: the checks that send no key or a
        // wrong one must see 401, not the 429 that guards against floods.
        args: vec!["--key-rate", "0", "--failed-auth-limit", "1000000"],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "1000000");
    let reports = tempfile::tempdir().expect("a report folder");
    let output = Command::new(schemathesis())
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
