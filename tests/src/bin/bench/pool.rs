//! Section 12, live fetching against a hostile origin: a job through real forward proxies (`tinyproxy`) to an
//! origin that judges each proxy's address as the network does ([`e2e_harness::hostile`]), run by the fetcher before the
//! route pool (the release binary of the commit `tests/ci bench` builds, `$PREVIOUS_COMPANY_DATA`) and by today's,
//! one after the other in one run. Then today's again with one proxy banned mid-run and the origin's budget halved
//! later in the same run, timed until the pool holds the new pace. Then both fetchers again against an origin that
//! bans without warning (a budget per sliding window per address, 999 or the home page the moment an address goes
//! over, never a 429), as the network mostly does.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e_harness::Service;
use e2e_harness::hostile::{
    Answered, ForwardProxies, HostileOrigin, HostileSettings, SlidingBudget,
};
use serde_json::{Value, json};

use crate::jobs::{status, submit};
use crate::{Error, Plan};

/// One run's size and timing; the full run is the (2,000 pages, 8 proxies, 60 pages a minute each), the
/// quick one only proves the harness in CI.
#[derive(Clone, Copy)]
struct Scenario {
    proxies: u8,
    /// The origin's budget per address.
    per_minute: f64,
    /// Pages of the clean run.
    pages: usize,
    /// Pages of the run with a ban and a halved budget.
    disturbed_pages: usize,
    /// When proxy 0's address is banned (for the rest of the run), from submission.
    ban_at: Duration,
    /// When the budget is halved, from submission.
    halve_at: Duration,
    /// The window the settling time is judged over: delivery ≥ 85% of the origin's new most, ≤ 3% refused.
    window: Duration,
    /// The ban-only origin's budget per address.
    ban_only: SlidingBudget,
    /// Its first ban (doubled at each later one).
    ban_only_first_ban: Duration,
    /// Pages of each fetcher's job against it.
    ban_only_pages: usize,
    /// The warning origin's first ban, and today's server's `--route-cool-down` (seconds; `None`: its default).
    /// Shortened in the quick run, where a 30-s quarantine was most of its time.
    first_ban: Duration,
    route_cool_down: Option<&'static str>,
}

impl Scenario {
    fn for_plan(plan: Plan) -> Self {
        if plan.quick {
            Self {
                proxies: 4,
                per_minute: 600.0,
                pages: 60,
                disturbed_pages: 80,
                ban_at: Duration::from_secs(1),
                halve_at: Duration::from_secs(2),
                window: Duration::from_secs(3),
                ban_only: SlidingBudget {
                    pages: 5,
                    window: Duration::from_secs(1),
                },
                ban_only_first_ban: Duration::from_secs(1),
                ban_only_pages: 60,
                first_ban: Duration::from_secs(1),
                route_cool_down: Some("1"),
            }
        } else {
            Self {
                proxies: 8,
                per_minute: 60.0,
                pages: 2_000,
                disturbed_pages: 1_500,
                ban_at: Duration::from_mins(1),
                halve_at: Duration::from_mins(2),
                window: Duration::from_secs(20),
                ban_only: SlidingBudget {
                    pages: 6,
                    window: Duration::from_secs(5),
                },
                ban_only_first_ban: Duration::from_secs(10),
                ban_only_pages: 2_000,
                first_ban: HostileSettings::default().first_ban,
                route_cool_down: None,
            }
        }
    }

    /// The most pages a second the origin serves through `proxies` addresses at `per_minute` each.
    fn most(proxies: usize, per_minute: f64) -> f64 {
        proxies as f64 * per_minute / 60.0
    }
}

/// The fetcher before the route pool, when `tests/ci bench` built it.
fn previous_fetcher() -> Option<PathBuf> {
    std::env::var_os("PREVIOUS_COMPANY_DATA")
        .map(PathBuf::from)
        .filter(|path| path.exists())
}

/// What the origin had answered, `at` seconds after submission.
type Samples = Arc<Mutex<Vec<(f64, Answered)>>>;

/// Records the origin's answers every 250 ms until dropped.
struct Sampler {
    samples: Samples,
    task: tokio::task::JoinHandle<()>,
}

impl Sampler {
    fn start(origin: &Arc<HostileOrigin>, since: Instant) -> Self {
        let samples: Samples = Arc::default();
        let (origin, recorded) = (Arc::clone(origin), Arc::clone(&samples));
        let task = tokio::spawn(async move {
            loop {
                let answered = origin.answered();
                recorded
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push((since.elapsed().as_secs_f64(), answered));
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
        Self { samples, task }
    }

    fn samples(&self) -> Vec<(f64, Answered)> {
        self.samples
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The origin's answers at `at` seconds (the last sample at or before it).
fn at(samples: &[(f64, Answered)], at: f64) -> Answered {
    samples
        .iter()
        .take_while(|(t, _)| *t <= at)
        .last()
        .map(|(_, a)| *a)
        .unwrap_or_default()
}

/// Seconds from `from` until the first `window` (sliding by a second, ending before `until`) in which the origin
/// delivered at least 85% of `most` pages a second and refused at most 3% of requests; `None` when none did.
fn settled_after(
    samples: &[(f64, Answered)],
    from: f64,
    until: f64,
    window: f64,
    most: f64,
) -> Option<f64> {
    let mut start = from;
    while start + window <= until {
        let (before, after) = (at(samples, start), at(samples, start + window));
        let pages = (after.pages - before.pages) as f64;
        let requests = (after.requests() - before.requests()) as f64;
        let refused = (after.refused() - before.refused()) as f64;
        if pages / window >= 0.85 * most && refused <= 0.03 * requests.max(1.0) {
            return Some(start - from);
        }
        start += 1.0;
    }
    None
}

/// The share of `most` delivered and the share of requests refused between `from` and `until` seconds.
fn between(samples: &[(f64, Answered)], from: f64, until: f64, most: f64) -> Value {
    let (before, after) = (at(samples, from), at(samples, until));
    let pages = (after.pages - before.pages) as f64;
    let requests = (after.requests() - before.requests()) as f64;
    json!({
        "share_of_most": pages / (until - from) / most,
        "refused_share": (after.refused() - before.refused()) as f64 / requests.max(1.0),
    })
}

/// Which server a job runs on: today's, with the scenario's route cool-down, or the fetcher before the pool
/// (which has no such flag).
enum Fetcher<'a> {
    Today(&'a Path, Scenario),
    Previous(&'a Path),
}

/// One job of `pages` new pages through `proxies` to `origin` on a new server (its own database); with
/// `disturb`, proxy 0's address is banned and the budget halved at the scenario's times. Returns the job's
/// figures and the origin's samples.
async fn run_job(
    fetcher: Fetcher<'_>,
    origin: &Arc<HostileOrigin>,
    proxies: &ForwardProxies,
    pages: usize,
    disturb: Option<Scenario>,
) -> Result<(Value, Vec<(f64, Answered)>), Error> {
    let proxy_list = proxies.urls.join(",");
    let mut args = vec!["--key-rate", "0", "--log", "warn", "--proxy", &proxy_list];
    let binary = match fetcher {
        Fetcher::Today(binary, scenario) => {
            if let Some(seconds) = scenario.route_cool_down {
                args.extend(["--route-cool-down", seconds]);
            }
            binary
        }
        Fetcher::Previous(binary) => binary,
    };
    let service = Service::start(e2e_harness::ServiceOptions {
        binary: Some(binary.to_path_buf()),
        origin: origin.base.clone(),
        args,
        ..e2e_harness::ServiceOptions::default()
    });
    let key = service.key("bench", "1000000");
    let urls: Vec<String> = (0..pages)
        .map(|n| format!("https://www.linkedin.com/company/h{n}"))
        .collect();
    let before = origin.answered();
    let started = Instant::now();
    let sampler = Sampler::start(origin, started);
    let id = submit(&service, &key, &urls).await?;
    let (mut banned, mut halved) = (false, false);
    let requests_from = |address| {
        origin
            .answered_by_address()
            .get(&address)
            .map_or(0, Answered::requests)
    };
    // Requests from the banned address by the time of the ban.
    let mut before_ban = 0;
    let job = loop {
        let job = status(&service, &key, &id).await?;
        if job["status"] == "done" {
            break job;
        }
        if let Some(scenario) = disturb {
            if !banned && started.elapsed() >= scenario.ban_at {
                before_ban = requests_from(proxies.addresses[0]);
                origin.ban(proxies.addresses[0], Duration::from_hours(1));
                banned = true;
            }
            if !halved && started.elapsed() >= scenario.halve_at {
                origin.set_per_minute(scenario.per_minute / 2.0);
                halved = true;
            }
        }
        if started.elapsed() > Duration::from_hours(1) {
            return Err(format!("the job did not end within an hour: {job}").into());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let seconds = started.elapsed().as_secs_f64();
    let samples = sampler.samples();
    drop(sampler);
    let answered = origin.answered();
    let requests = answered.requests() - before.requests();
    let refused = answered.refused() - before.refused();
    let resolved = job["resolved"].as_u64().unwrap_or(0);
    Ok((
        json!({
            "pages": pages,
            "seconds": seconds,
            "resolved": resolved,
            "unresolved": job["unresolved"].as_u64().unwrap_or(0),
            "credits_charged": job["credits_charged"],
            "origin_requests": requests,
            "refused": refused,
            "rate_limited": answered.rate_limited - before.rate_limited,
            "banned": answered.banned - before.banned,
            "authwall": answered.authwall - before.authwall,
            "pages_per_second": resolved as f64 / seconds,
            "refused_share": refused as f64 / (requests.max(1)) as f64,
            "requests_per_page": requests as f64 / (resolved.max(1)) as f64,
            "banned_address_requests_after_ban":
                banned.then(|| requests_from(proxies.addresses[0]) - before_ban),
        }),
        samples,
    ))
}

/// The origin the runs share the settings of (the network's shares of sign-in walls, slow answers and resets).
async fn origin(scenario: Scenario) -> Arc<HostileOrigin> {
    Arc::new(
        HostileOrigin::start(HostileSettings {
            per_minute: scenario.per_minute,
            first_ban: scenario.first_ban,
            ..HostileSettings::default()
        })
        .await,
    )
}

/// The share of `most` delivered from when half of the job's pages had been served to its end: the pace the
/// routes hold once they have learned it.
fn last_half(samples: &[(f64, Answered)], pages: usize, end: f64, most: f64) -> Value {
    let base = samples.first().map_or(0, |(_, a)| a.pages);
    let half = samples
        .iter()
        .find(|(_, a)| a.pages - base >= (pages / 2) as u64)
        .map(|(t, _)| *t);
    half.filter(|t| *t < end).map_or(Value::Null, |t| {
        between(samples, t, end, most)["share_of_most"].clone()
    })
}

/// Both fetchers against an origin that bans without warning: `per_window` pages per sliding window per address,
/// the first over it banned (999 or the home page) for `first_ban`, doubled at each ban; no 429 ever.
async fn ban_only(
    scenario: Scenario,
    release: &Path,
    proxies: &ForwardProxies,
) -> Result<Value, Error> {
    let most = proxies.urls.len() as f64 * scenario.ban_only.per_second();
    let mut report = json!({
        "pages_per_window": scenario.ban_only.pages,
        "window_seconds": scenario.ban_only.window.as_secs_f64(),
        "first_ban_seconds": scenario.ban_only_first_ban.as_secs_f64(),
        "most_pages_per_second": most,
    });
    let previous = previous_fetcher();
    let fetchers = [
        ("previous", previous.as_deref().map(Fetcher::Previous)),
        ("pool", Some(Fetcher::Today(release, scenario))),
    ];
    for (name, fetcher) in fetchers {
        let Some(fetcher) = fetcher else {
            report[name] = json!({ "skipped": "not built: `tests/ci bench` builds it ($PREVIOUS_COMPANY_DATA)" });
            continue;
        };
        eprintln!("12: {name}, an origin that bans without warning");
        let origin = Arc::new(
            HostileOrigin::start(HostileSettings {
                bans_only: Some(scenario.ban_only),
                first_ban: scenario.ban_only_first_ban,
                ..HostileSettings::default()
            })
            .await,
        );
        let (mut run, samples) =
            run_job(fetcher, &origin, proxies, scenario.ban_only_pages, None).await?;
        let end = run["seconds"].as_f64().unwrap_or(0.0);
        run["last_half_share_of_most"] = last_half(&samples, scenario.ban_only_pages, end, most);
        report[name] = run;
    }
    Ok(report)
}

/// Section 12's figures; `{"skipped": why}` without `tinyproxy`.
pub(crate) async fn pool(plan: Plan, release: &Path) -> Result<Value, Error> {
    eprintln!("12: live fetching against a hostile origin");
    let scenario = Scenario::for_plan(plan);
    let Some(proxies) = ForwardProxies::start(scenario.proxies).await else {
        return Ok(json!({ "skipped": "no tinyproxy ($TINYPROXY): `tests/ci bench` installs it" }));
    };
    let most = Scenario::most(proxies.urls.len(), scenario.per_minute);
    let mut report = json!({
        "proxies": scenario.proxies,
        "per_minute": scenario.per_minute,
        "most_pages_per_second": most,
    });
    // Each fetcher meets a fresh origin (no address carries a ban from the run before).
    report["previous"] = match previous_fetcher() {
        Some(binary) => {
            eprintln!("12: the fetcher before the route pool");
            let origin = origin(scenario).await;
            run_job(
                Fetcher::Previous(&binary),
                &origin,
                &proxies,
                scenario.pages,
                None,
            )
            .await?
            .0
        }
        None => {
            json!({ "skipped": "not built: `tests/ci bench` builds it ($PREVIOUS_COMPANY_DATA)" })
        }
    };
    eprintln!("12: the route pool");
    let origin_now = origin(scenario).await;
    let (mut clean, samples) = run_job(
        Fetcher::Today(release, scenario),
        &origin_now,
        &proxies,
        scenario.pages,
        None,
    )
    .await?;
    // How many of its refusals came while the routes first learned their pace.
    let start_up = scenario.window.as_secs_f64() * 1.5;
    clean["refused_in_start_up"] = json!(at(&samples, start_up).refused());
    clean["start_up_seconds"] = json!(start_up);
    report["pool"] = clean;

    eprintln!("12: the route pool, one proxy banned and then the budget halved");
    let origin_disturbed = origin(scenario).await;
    let (mut disturbed, samples) = run_job(
        Fetcher::Today(release, scenario),
        &origin_disturbed,
        &proxies,
        scenario.disturbed_pages,
        Some(scenario),
    )
    .await?;
    let (ban, halve) = (
        scenario.ban_at.as_secs_f64(),
        scenario.halve_at.as_secs_f64(),
    );
    let end = disturbed["seconds"].as_f64().unwrap_or(0.0);
    let window = scenario.window.as_secs_f64();
    let after_ban = Scenario::most(proxies.urls.len() - 1, scenario.per_minute);
    let after_halving = after_ban / 2.0;
    disturbed["ban"] = json!({
        "settled_after_seconds": settled_after(&samples, ban, halve, window, after_ban),
        "before_next_change": between(&samples, ban, halve, after_ban),
        "banned_address_requests": disturbed["banned_address_requests_after_ban"],
    });
    disturbed["halved"] = json!({
        "settled_after_seconds": settled_after(&samples, halve, end, window, after_halving),
        "to_the_end": between(&samples, halve, end, after_halving),
    });
    disturbed["window_seconds"] = json!(window);
    disturbed["ban_at"] = json!(ban);
    disturbed["halve_at"] = json!(halve);
    report["disturbed"] = disturbed;
    report["ban_only"] = ban_only(scenario, release, &proxies).await?;
    Ok(report)
}

fn figure(value: &Value, digits: usize) -> String {
    value
        .as_f64()
        .map_or_else(|| "—".to_owned(), |v| format!("{v:.digits$}"))
}

/// The report's section 12.
#[allow(clippy::format_push_string)] // a report, built once
pub(crate) fn markdown(pool: &Value) -> String {
    let mut out = "\n## 12. Live fetching against a hostile origin\n\n".to_owned();
    if let Some(why) = pool["skipped"].as_str() {
        out += &format!("Not run: {why}.\n");
        return out;
    }
    let most = pool["most_pages_per_second"].as_f64().unwrap_or(f64::NAN);
    out += &format!(
        "A job of {} new pages through {} forward proxies (`tinyproxy`, each sending from its own loopback \
         address) to the hostile origin of the tests (`e2e_harness::hostile`): {} pages a minute per address (10 at \
         once), 429 with `Retry-After` beyond, a ban (999 or the guest home page, 30 s, doubled each time) after \
         five 429s in a minute; 1% sign-in walls, 1% slow answers, 0.5% reset connections. The most the origin \
         serves is {most:.1} pages/s. Each fetcher meets a fresh origin; the server runs with its defaults and \
         `--proxy`. \"Before\" is the release binary of the commit before the route pool (`tests/ci bench` builds \
         it into `target/previous/`).\n\n\
         | figure | target | before the pool | route pool |\n|---|---|---|---|\n",
        pool["pool"]["pages"], pool["proxies"], pool["per_minute"],
    );
    let (before, now) = (&pool["previous"], &pool["pool"]);
    let rows = [
        ("pages delivered", "all", "resolved", 0, 1.0),
        (
            "pages ending unresolved (blocked)",
            "0",
            "unresolved",
            0,
            1.0,
        ),
        ("seconds to `done`", "", "seconds", 0, 1.0),
        (
            "pages/s ÷ the origin's most",
            "≥ 0.85",
            "pages_per_second",
            2,
            1.0 / most,
        ),
        (
            "requests refused, share of all sent",
            "≤ 3%",
            "refused_share",
            1,
            100.0,
        ),
        ("… of which 429", "", "rate_limited", 0, 1.0),
        ("… of which banned (999, home page)", "", "banned", 0, 1.0),
        (
            "… of which the sign-in wall (1% of pages, whoever asks)",
            "",
            "authwall",
            0,
            1.0,
        ),
        (
            "origin requests per page delivered",
            "≤ 1.1",
            "requests_per_page",
            2,
            1.0,
        ),
        ("credits charged", "= delivered", "credits_charged", 0, 1.0),
    ];
    out += &table_rows(&rows, before, now);
    out += &format!(
        "\nOf the route pool's refusals, {} came in the first {} s, while each route learned its pace from \
         unpaced (each address's ten pages at once spent, then push-back).\n",
        now["refused_in_start_up"],
        figure(&now["start_up_seconds"], 0),
    );
    if let Some(why) = before["skipped"].as_str() {
        out += &format!("\nBefore the pool: {why}.\n");
    } else if before["unresolved"].as_u64().is_some_and(|n| n > 0) {
        out += &format!(
            "\nBefore the pool the job ended after {} s with {} pages answered `blocked`: its pages per second \
             count only the {} it delivered in that time.\n",
            figure(&before["seconds"], 0),
            before["unresolved"],
            before["resolved"],
        );
    }
    let disturbed = &pool["disturbed"];
    let settled = |value: &Value| {
        value
            .as_f64()
            .map_or_else(|| "**never**".to_owned(), |s| format!("{s:.0} s"))
    };
    out += &format!(
        "\nThe route pool again, {} pages: at {} s one proxy's address is banned for the rest of the run, at {} s \
         the origin halves every address's budget. \"Settled\" is the time from the change to the first {:.0}-s \
         window with at least 85% of the origin's new most delivered and at most 3% of requests refused \
         (target: within a minute).\n\n\
         | figure | after the ban | after the halving |\n|---|---|---|\n\
         | settled after | {} | {} |\n\
         | pages/s ÷ the new most, change to next change or end | {} | {} |\n\
         | requests refused, same span | {}% | {}% |\n\n\
         Requests to the banned address after the ban: {} (the pool's lone probes, further apart each time). The whole \
         run: {} of {} pages delivered, {} unresolved, {:.1}% of {} requests refused, {} credits charged.\n",
        disturbed["pages"],
        disturbed["ban_at"],
        disturbed["halve_at"],
        disturbed["window_seconds"].as_f64().unwrap_or(f64::NAN),
        settled(&disturbed["ban"]["settled_after_seconds"]),
        settled(&disturbed["halved"]["settled_after_seconds"]),
        figure(&disturbed["ban"]["before_next_change"]["share_of_most"], 2),
        figure(&disturbed["halved"]["to_the_end"]["share_of_most"], 2),
        figure(
            &json!(
                disturbed["ban"]["before_next_change"]["refused_share"]
                    .as_f64()
                    .map(|v| v * 100.0)
            ),
            1
        ),
        figure(
            &json!(
                disturbed["halved"]["to_the_end"]["refused_share"]
                    .as_f64()
                    .map(|v| v * 100.0)
            ),
            1
        ),
        disturbed["ban"]["banned_address_requests"],
        disturbed["resolved"],
        disturbed["pages"],
        disturbed["unresolved"],
        disturbed["refused_share"].as_f64().unwrap_or(f64::NAN) * 100.0,
        disturbed["origin_requests"],
        disturbed["credits_charged"],
    );
    out += &ban_only_markdown(&pool["ban_only"]);
    out
}

/// The ban-only part of section 12.
#[allow(clippy::format_push_string)] // a report, built once
fn ban_only_markdown(ban_only: &Value) -> String {
    let most = ban_only["most_pages_per_second"]
        .as_f64()
        .unwrap_or(f64::NAN);
    let mut out = format!(
        "\n### An origin that bans without warning\n\n\
         The same proxies, a fresh origin for each fetcher that never answers 429: each address may have {} pages \
         in any {} s (sliding), and the first request over that is banned (999 or the guest home page) for {} s, \
         doubled at each ban. The most it serves is {most:.1} pages/s. The route pool learns the budget from bans \
         alone (docs/operations.md, \"Proxies\"): each route is banned by its first burst and its first climb \
         past the budget, then holds 95% of it. \"Last half\" is the rate from when half the pages were served \
         to the end, once the routes have learned.\n\n\
         | figure | target | before the pool | route pool |\n|---|---|---|---|\n",
        ban_only["pages_per_window"],
        figure(&ban_only["window_seconds"], 0),
        figure(&ban_only["first_ban_seconds"], 0),
    );
    let rows = [
        ("pages delivered", "all", "resolved", 0, 1.0),
        ("pages ending unresolved", "0", "unresolved", 0, 1.0),
        ("seconds to `done`", "", "seconds", 0, 1.0),
        (
            "pages/s ÷ the origin's most, whole job",
            "",
            "pages_per_second",
            2,
            1.0 / most,
        ),
        (
            "pages/s ÷ the origin's most, last half",
            "≥ 0.85",
            "last_half_share_of_most",
            2,
            1.0,
        ),
        (
            "requests refused, share of all sent",
            "≤ 3%",
            "refused_share",
            1,
            100.0,
        ),
        ("… of which banned (999, home page)", "", "banned", 0, 1.0),
        (
            "origin requests per page delivered",
            "≤ 1.1",
            "requests_per_page",
            2,
            1.0,
        ),
        ("credits charged", "= delivered", "credits_charged", 0, 1.0),
    ];
    out += &table_rows(&rows, &ban_only["previous"], &ban_only["pool"]);
    out
}

/// A row of the table: label, target, the run's member, digits, scale.
type Row = (&'static str, &'static str, &'static str, usize, f64);

/// The rows of a table comparing the fetcher before the pool with the pool.
fn table_rows(rows: &[Row], before: &Value, now: &Value) -> String {
    let cell = |run: &Value, key: &str, digits: usize, scale: f64| {
        if run.get("skipped").is_some() || run.is_null() {
            "not run".to_owned()
        } else {
            figure(&json!(run[key].as_f64().map(|v| v * scale)), digits)
        }
    };
    let mut out = String::new();
    for (label, target, key, digits, scale) in rows {
        let _ = writeln!(
            out,
            "| {label} | {target} | {} | {} |",
            cell(before, key, *digits, *scale),
            cell(now, key, *digits, *scale)
        );
    }
    out
}
