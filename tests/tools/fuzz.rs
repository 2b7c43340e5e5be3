//! The fuzz targets of `tests/fuzz` (URL normalization, request-body validation, page parsing), each run briefly
//! under libFuzzer with AddressSanitizer: no panic, no allocation over 512 MB, no RSS over 2 GB. Seed corpora:
//! the captured pages (`../shared/fixtures/pages`, `tests/fixtures`) for parsing, and the conformance cases in
//! `tests/fuzz/seeds/` for the other two.
//!
//! cargo-fuzz comes from crates.io: `$CARGO_FUZZ` if set, else installed into `target/tools/` on first use. It
//! needs nightly-only compiler flags; `RUSTC_BOOTSTRAP=1` lets the stable toolchain take them. Seconds per target:
//! `$FUZZ_SECONDS` (default 20). A crash leaves its input in `tests/fuzz/artifacts/<target>/`; replay it with
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir tests/fuzz <target> <file>`.

use std::path::{Path, PathBuf};
use std::process::Command;

use tests::{cargo, fixtures, run_setup, target_dir, without_package_env, workspace};

const CARGO_FUZZ_VERSION: &str = "0.13.2";

fn cargo_fuzz() -> PathBuf {
    if let Some(path) = std::env::var_os("CARGO_FUZZ") {
        return PathBuf::from(path);
    }
    let root = target_dir().join(format!("tools/cargo-fuzz-{CARGO_FUZZ_VERSION}"));
    let executable = root.join("bin/cargo-fuzz");
    if !executable.exists() {
        run_setup(
            cargo()
                .args(["install", "--quiet", "--locked", "cargo-fuzz", "--version"])
                .arg(CARGO_FUZZ_VERSION)
                .arg("--root")
                .arg(&root),
            "installing cargo-fuzz from crates.io failed",
        );
    }
    executable
}

/// Copies every `.html` file under `from` (recursively) into `to`.
fn copy_pages(from: &Path, to: &Path) -> usize {
    let mut copied = 0;
    let Ok(entries) = std::fs::read_dir(from) else {
        return 0;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            copied += copy_pages(&path, to);
        } else if path.extension().is_some_and(|e| e == "html") {
            let name = format!("{copied}-{}", entry.file_name().to_string_lossy());
            std::fs::copy(&path, to.join(name)).expect("copy a page");
            copied += 1;
        }
    }
    copied
}

#[test]
#[allow(clippy::print_stderr)] // the run counts, for the reader of `--nocapture`
fn fuzz_targets_survive_their_seed_corpora_and_mutations() {
    let seconds: u32 = std::env::var_os("FUZZ_SECONDS")
        .and_then(|s| s.to_str()?.parse().ok())
        .unwrap_or(20);
    let fuzz_dir = workspace().join("tests/fuzz");
    let corpora = tempfile::tempdir().expect("a corpus folder");
    let cargo_fuzz = cargo_fuzz();
    let mut report = Vec::new();
    for (target, max_len) in [
        ("page_url", 4096),
        ("request_body", 102_400),
        ("page_parse", 128 * 1024),
    ] {
        let corpus = corpora.path().join(target);
        std::fs::create_dir_all(&corpus).expect("corpus folder");
        let seeds = if target == "page_parse" {
            let pages = corpora.path().join("pages");
            std::fs::create_dir_all(&pages).expect("pages folder");
            let copied = copy_pages(&workspace().join("../shared/fixtures/pages"), &pages)
                + copy_pages(&fixtures(), &pages);
            assert!(copied >= 5, "only {copied} captured pages found as seeds");
            pages
        } else {
            fuzz_dir.join("seeds").join(target)
        };
        let output = without_package_env(Command::new(&cargo_fuzz))
            .env("RUSTC_BOOTSTRAP", "1")
            .current_dir(workspace())
            .args(["run", "--fuzz-dir"])
            .arg(&fuzz_dir)
            .arg("--target-dir")
            .arg(target_dir().join("fuzz"))
            .arg(target)
            .arg(&corpus)
            .arg(&seeds)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-max_len={max_len}"))
            .args(["-rss_limit_mb=2048", "-malloc_limit_mb=512", "-timeout=10"])
            .output()
            .expect("cargo fuzz runs");
        let log = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "fuzz target {target} failed (the input is in tests/fuzz/artifacts/{target}/):\n{}",
            log.lines()
                .rev()
                .take(60)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n")
        );
        let runs = log
            .lines()
            .find_map(|line| {
                line.strip_prefix("Done ")?
                    .split_once(" runs")
                    .map(|(n, _)| n.to_owned())
            })
            .unwrap_or_else(|| panic!("no run count from {target}:\n{log}"));
        report.push(format!("{target}: {runs} runs in {seconds} s"));
    }
    // Shown with `--nocapture`; docs/reliability.md quotes a run.
    eprintln!("{}", report.join("\n"));
}
