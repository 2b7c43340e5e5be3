//! No build of the server answers without a key (issue 13).
//!
//! The server has no features of its own, and it turns on every feature of the crates it uses, so every feature
//! combination Cargo can build it with is the same build: this test proves that from Cargo's own resolution
//! (`cargo tree`, which reads the lock file and builds nothing), then checks that the one build, the binary Cargo
//! built for these tests, refuses a request that carries no key. A feature that made the combinations differ
//! fails the first check, which then asks for each combination to be built and checked in `tests/ci`.
//!
//! The benchmark's "auth off" figure comes from the API library with an authenticator it passes in, not from a
//! build of the server.

use std::process::Command;

use e2e_harness::{Service, ServiceOptions, binary, workspace};

/// Every package of the server's dependency graph with the features Cargo resolves for it under `flags`, one
/// line each (`name vX.Y.Z [feature,…]`), sorted.
fn resolved_features(flags: &[&str]) -> String {
    let output = Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--locked", "-p", "company-data"])
        .args([
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p} [{f}]",
        ])
        .args(flags)
        .current_dir(workspace())
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree {flags:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut lines: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        // A package shown again is marked `(*)`: the same package, the same features.
        .map(|line| line.trim_end_matches(" (*)").to_owned())
        .collect();
    lines.sort();
    lines.dedup();
    lines.join("\n")
}

#[test]
fn every_feature_combination_is_the_one_build_tested() {
    let default = resolved_features(&[]);
    for flags in [&["--all-features"][..], &["--no-default-features"][..]] {
        assert_eq!(
            resolved_features(flags),
            default,
            "company-data built with {flags:?} differs from the default build: build and check that combination \
             in tests/ci"
        );
    }
}

#[tokio::test]
async fn the_server_refuses_a_request_without_a_key() {
    let service = Service::start(ServiceOptions {
        binary: Some(binary().to_path_buf()),
        ..ServiceOptions::default()
    });
    let reply = e2e_harness::client()
        .post(format!("{}/v1/network/company-data", service.base))
        .header("content-type", "application/json")
        .body(r#"{"liUrls": ["https://www.linkedin.com/company/google"]}"#)
        .send()
        .await
        .expect("the server answers");
    assert_eq!(reply.status(), 401, "the server answered without a key");
    let body: serde_json::Value =
        serde_json::from_slice(&reply.bytes().await.expect("a body")).expect("an error body");
    assert_eq!(body["error"], "missing_api_key", "{body}");
}
