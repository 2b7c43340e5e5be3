# One-line wrappers around the exact commands CI and the README use.

# Run the service on the embedded default (SQLite file ./company-data.db). Extra flags pass through, e.g.
# `just run --origin tests/fixtures/origin`.
run *FLAGS:
    cargo run --release -p company-data -- serve {{FLAGS}}

# The whole suite with everything it needs installed and started (what .ci/run runs): see docs/development.md.
test:
    tests/ci

# The hermetic suite alone: installs nothing; tests whose tool or database is missing report themselves not run.
test-quick:
    cargo test --workspace

# Each crate on its own, as an embedder builds it.
test-each:
    for crate in page-url company-model api-contract store-base sqlite-pool pg-pool test-support shared-limits snapshot-cache credit-ledger api-keys dashboard-auth job-store watch-store idempotency page-scraper company-lookup bulk-jobs account-webhooks company-watch accounts http-serve http-api dashboard server-assembly company-data e2e-harness; do cargo test -p $crate || exit 1; done
    cargo test -p page-scraper --no-default-features

# The Python package's tests against this build's server (tests/ci's python phase; builds the binary first).
test-python:
    cargo build -p company-data
    tests/ci python

# Formatting, lints and docs, all warnings fatal (.ci/run runs these after the tests): tests/lint.
lint:
    tests/lint

# Benchmarks (docs/benchmarks.md, target/bench.json): the service beside this machine's limit and typical peers.
# `tests/ci` runs `bench --quick` from its test build to check the harness; this builds in release and measures.
bench *FLAGS:
    tests/ci bench {{FLAGS}}
