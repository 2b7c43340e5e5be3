//! The dashboard end to end in a real browser (issue 6): Debian's Chromium, headless, driven by playwright-core
//! from npm (`tests/browser/dashboard.mjs`) against the real server on loopback with a real SQLite file.
//!
//! Set-up on first use: Chromium from Debian's packages when `/usr/bin/chromium` is missing (needs root, as in
//! CI; `$CHROMIUM` points elsewhere), and `npm ci` in `tests/browser/` (the version pinned by its lock file).
//! Screenshots of every page go to `target/screenshots/dashboard/`; the main ones are copied into `docs/`.

use std::path::PathBuf;
use std::process::Command;

use tests::{Service, run_setup, target_dir, workspace};

const PASSWORD: &str = "a long test password";

/// The Chromium executable, installed from Debian's packages when missing.
fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(path);
    }
    let path = PathBuf::from("/usr/bin/chromium");
    if !path.exists() {
        let install = || {
            Command::new("apt-get")
                .args(["install", "-y", "--no-install-recommends", "chromium"])
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .is_ok_and(|s| s.success())
        };
        // Package lists may be stale on a fresh machine: refresh them once if the first try fails.
        if !install() {
            run_setup(
                Command::new("apt-get").arg("update"),
                "apt-get update failed",
            );
            run_setup(
                Command::new("apt-get")
                    .args(["install", "-y", "--no-install-recommends", "chromium"])
                    .env("DEBIAN_FRONTEND", "noninteractive"),
                "installing Debian's chromium failed (run `apt-get install chromium` as root, or set $CHROMIUM)",
            );
        }
    }
    path
}

/// `tests/browser/`, with playwright-core installed from its lock file.
fn browser_tests() -> PathBuf {
    let dir = workspace().join("tests/browser");
    if !dir
        .join("node_modules/playwright-core/package.json")
        .exists()
    {
        run_setup(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&dir),
            "installing playwright-core failed (it needs node and npm, and the npm registry)",
        );
    }
    dir
}

#[test]
fn the_dashboard_works_in_a_real_browser() {
    let chromium = chromium();
    let scripts = browser_tests();
    let service = Service::with_captured_pages();
    // The first start made the account `default`; its admin signs in to it. The other account is a customer.
    service.create_sign_in(
        "admin@example.com",
        PASSWORD,
        &["--admin", "--account", "default"],
    );
    service.create_sign_in("buyer@example.com", PASSWORD, &["--account", "buyer"]);
    let screenshots = target_dir().join("screenshots/dashboard");
    let output = Command::new("node")
        .arg(scripts.join("dashboard.mjs"))
        .env("BASE_URL", &service.base)
        .env("ADMIN_EMAIL", "admin@example.com")
        .env("ADMIN_ACCOUNT", "default")
        .env("OTHER_EMAIL", "buyer@example.com")
        .env("OTHER_ACCOUNT", "buyer")
        .env("PASSWORD", PASSWORD)
        .env("SCREENSHOTS", &screenshots)
        .env("CHROMIUM", &chromium)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the browser test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("all dashboard checks passed"), "{stdout}");
    for page in [
        "sign-in",
        "key-created",
        "usage",
        "credits",
        "try-it",
        "jobs",
        "admin",
        "revoke-confirm",
        "credits-phone",
    ] {
        assert!(
            screenshots.join(format!("{page}.png")).exists(),
            "no screenshot of {page}"
        );
    }
}
