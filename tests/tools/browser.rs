//! The dashboard end to end in a real browser (issue 6): Debian's Chromium, headless, driven by playwright-core
//! from npm (`tests/browser/dashboard.mjs`) against the real server on loopback with a real SQLite file.
//!
//! Needs `$CHROMIUM` (Debian's `chromium`) and playwright-core in `tests/browser/node_modules` (`npm ci` there, the
//! version pinned by its lock file): `tests/ci` installs both and sets the variable; without them the test reports
//! itself as not run.
//! Screenshots of every page go to `target/screenshots/dashboard/`; the main ones are copied into `docs/`.

use std::process::Command;

use e2e_harness::websites::{Site, Websites, home_page};
use e2e_harness::{Service, ServiceOptions, target_dir, tool, workspace};

const PASSWORD: &str = "a long test password";

#[test]
fn the_dashboard_works_in_a_real_browser() {
    let Some(chromium) = tool("CHROMIUM", "Chromium") else {
        return;
    };
    let scripts = workspace().join("tests/browser");
    if !scripts
        .join("node_modules/playwright-core/package.json")
        .exists()
    {
        test_support::not_run(
            "playwright-core is not installed: run `npm ci` in tests/browser (`tests/ci` does)",
        );
        return;
    }
    // Audiense's website, for Try it's resolving step: served on loopback through the site proxy setting.
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let footer = r#"<footer><a href="https://www.linkedin.com/company/audiense/">in</a></footer>"#;
    let websites = runtime.block_on(Websites::start(std::collections::HashMap::from([(
        "audiense.com".to_owned(),
        Site::Page(home_page("Audiense", "", footer)),
    )])));
    let service = Service::start(ServiceOptions {
        args: vec!["--site-proxy", &websites.proxy],
        ..ServiceOptions::default()
    });
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
