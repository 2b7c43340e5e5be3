//! `just bench --quick` in CI (issue 5): proves the harness runs end to end and reports every figure. It never
//! passes or fails on a time: the figures of a quick run on a shared CI machine mean nothing.

use tests::{cargo, run_setup, workspace};

#[test]
fn the_quick_benchmark_reports_every_figure() {
    let out = tempfile::tempdir().expect("a report folder");
    let markdown = out.path().join("benchmarks.md");
    let json = out.path().join("bench.json");
    run_setup(
        cargo()
            .args([
                "run",
                "--release",
                "--quiet",
                "-p",
                "tests",
                "--bin",
                "bench",
                "--",
                "--quick",
            ])
            .arg("--out")
            .arg(&markdown)
            .arg("--json")
            .arg(&json)
            .current_dir(workspace()),
        "`just bench --quick` failed",
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("target/bench.json written"))
            .expect("JSON");
    let figures = [
        "/stored_path/service/requests_per_second/median",
        "/stored_path/service/p99_ms/median",
        "/stored_path/bare_hyper/requests_per_second/median",
        "/stored_path/service_at_half_load/figures/p99_ms/median",
        "/stored_path/api_with_auth/requests_per_second/median",
        "/stored_path/api_without_auth/requests_per_second/median",
        "/stored_path/peak_rss_mb",
        "/batches/stored_batch/p50_ms/median",
        "/batches/stored_batch/p99_ms/median",
        "/batches/live_batch/ratio_to_slowest_page/median",
        "/batches/live_batch/peak_rss_mb",
        "/batches/growth/1/stored_ms/median",
        "/batches/growth/200/live_ms/median",
        "/postgres/sqlite_one/full/requests_per_second/median",
        "/postgres/postgres_one/full/requests_per_second/median",
        "/postgres/postgres_one/half/figures/p99_ms/median",
        "/postgres/postgres_three/full/requests_per_second/median",
        "/postgres/postgres_stored_batch/p50_ms/median",
        "/postgres/round_trips/stored",
        "/postgres/round_trips/live",
        "/jobs/throughput/pages_per_second/median",
        "/jobs/throughput/ratio_to_origin_rate/median",
        "/jobs/stored_alone/p99_ms/median",
        "/jobs/stored_beside_job/p99_ms/median",
        "/flood/alone/p50_ms",
        "/flood/alone/p99_ms",
        "/flood/spread_flood/p99_ms",
        "/flood/spread_flood/flood_401_per_second",
        "/flood/one_address_flood/p99_ms",
        "/flood/one_address_flood/flood_429_per_second",
        "/parsing/parse_page/median",
        "/parsing/html5ever_tokenizer/median",
        "/parsing/beautifulsoup_lxml/median",
        "/parsing/selectolax_lexbor/median",
    ];
    for pointer in figures {
        let value = report.pointer(pointer).and_then(serde_json::Value::as_f64);
        assert!(
            value.is_some_and(|v| v.is_finite() && v > 0.0),
            "{pointer} is {value:?} in {report:#}"
        );
    }
    let text = std::fs::read_to_string(&markdown).expect("the report written");
    for section in [
        "## 1.", "## 2.", "## 3.", "## 4.", "## 5.", "## 6.", "## 7.", "## 8.", "## 9.", "## 10.",
    ] {
        assert!(text.contains(section), "{section} missing from the report");
    }
}
