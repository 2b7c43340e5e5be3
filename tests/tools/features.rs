//! No build of the server answers without a key (issue 13): the server is built with every feature the
//! workspace has turned on (`cargo build --workspace --all-features`) and with default features off, and each
//! build refuses a request that carries no key.
//!
//! A feature that switched the key check off would turn up here; none exists, and the benchmark's "auth off"
//! figure comes from the API library with an authenticator it passes in, not from a build of the server.

use std::path::PathBuf;

use tests::{Service, ServiceOptions, cargo, run_setup, target_dir, workspace};

/// Builds the server with `flags` and copies it out of `target/debug`, where other builds overwrite it.
fn build_with(flags: &[&str], name: &str) -> PathBuf {
    run_setup(
        cargo()
            .args(["build", "--quiet", "--workspace", "--bin", "company-data"])
            .args(flags)
            .current_dir(workspace()),
        &format!("building company-data with {flags:?} failed"),
    );
    let folder = target_dir().join("feature-builds");
    std::fs::create_dir_all(&folder).expect("target/feature-builds");
    let copy = folder.join(name);
    std::fs::copy(target_dir().join("debug/company-data"), &copy).expect("copy the build");
    copy
}

#[tokio::test]
async fn every_feature_combination_refuses_a_request_without_a_key() {
    for (flags, name) in [
        (&["--all-features"][..], "all-features"),
        (&["--no-default-features"][..], "no-default-features"),
    ] {
        let binary = build_with(flags, name);
        let service = Service::start(ServiceOptions {
            binary: Some(binary),
            ..ServiceOptions::default()
        });
        let reply = tests::client()
            .post(format!("{}/v1/network/company-data", service.base))
            .header("content-type", "application/json")
            .body(r#"{"liUrls": ["https://www.linkedin.com/company/google"]}"#)
            .send()
            .await
            .expect("the server answers");
        assert_eq!(
            reply.status(),
            401,
            "the {name} build answered without a key"
        );
        let body: serde_json::Value =
            serde_json::from_slice(&reply.bytes().await.expect("a body")).expect("an error body");
        assert_eq!(body["error"], "missing_api_key", "{name}: {body}");
    }
}
