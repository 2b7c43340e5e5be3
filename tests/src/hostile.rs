//! An origin that judges each source address the way the network does, and real forward proxies in front of it.
//!
//! [`HostileOrigin`] serves the captured Google page for every `/company/<slug>` (compressed when asked, as the
//! network sends pages) and judges each source address in one of two ways:
//! - **it warns** (the default): a budget of pages a minute (GCRA: `per_minute` on average, `burst` at once).
//!   Over the budget an address gets 429 with `Retry-After` (the seconds until its next page); an address told
//!   to wait more than [`HostileSettings::warnings`] times in a minute (one that ignores `Retry-After` soon is)
//!   is banned;
//! - **it bans without warning** ([`HostileSettings::bans_only`], as the network mostly does): a budget of pages
//!   per sliding window, and the first request over it is banned; never a 429.
//!
//! A ban is 999 or a redirect to the guest home page for [`HostileSettings::first_ban`], doubled at each ban.
//! Beside that, a share of pages is the sign-in wall, a share answers slowly and a share resets the connection,
//! whatever the address did.
//!
//! [`ForwardProxies`] starts Debian's `tinyproxy`, one process per proxy, each sending from its own loopback
//! address (`127.0.0.<10 + n>`), so the origin sees one address per proxy.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How hostile a [`HostileOrigin`] is.
#[derive(Clone, Copy, Debug)]
pub struct HostileSettings {
    /// Pages one address may have a minute, on average.
    pub per_minute: f64,
    /// Pages one address may have at once before the average applies.
    pub burst: u32,
    /// 429s an address may get in a minute before it is banned.
    pub warnings: u32,
    /// The first ban; doubled at each later one.
    pub first_ban: Duration,
    /// Share of pages answered with the sign-in wall.
    pub authwall_share: f64,
    /// Share of pages answered after [`HostileSettings::slow`].
    pub slow_share: f64,
    /// How slow a slow answer is.
    pub slow: Duration,
    /// Share of requests whose connection is reset.
    pub reset_share: f64,
    /// How long every page takes to answer.
    pub latency: Duration,
    /// `Some`: the origin never warns; this budget replaces `per_minute`, `burst` and `warnings`.
    pub bans_only: Option<SlidingBudget>,
}

/// A budget of pages per sliding window per address, the first request over it banned.
#[derive(Clone, Copy, Debug)]
pub struct SlidingBudget {
    /// Pages an address may have in any `window`.
    pub pages: u32,
    /// The window.
    pub window: Duration,
}

impl SlidingBudget {
    /// The most pages a second one address gets, paced evenly.
    pub fn per_second(&self) -> f64 {
        f64::from(self.pages) / self.window.as_secs_f64()
    }
}

impl Default for HostileSettings {
    /// An address gets one page a second (10 at once), five 429s a minute, a 30 s first ban; 1% of pages are
    /// the sign-in wall, 1% take 2 s, 0.5% of connections are reset; pages take 20 ms.
    fn default() -> Self {
        Self {
            per_minute: 60.0,
            burst: 10,
            warnings: 5,
            first_ban: Duration::from_secs(30),
            authwall_share: 0.01,
            slow_share: 0.01,
            slow: Duration::from_secs(2),
            reset_share: 0.005,
            latency: Duration::from_millis(20),
            bans_only: None,
        }
    }
}

/// What the origin answered, summed over addresses or for one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Answered {
    /// Pages served.
    pub pages: u64,
    /// 429 with `Retry-After`.
    pub rate_limited: u64,
    /// 999 or the guest home page (banned).
    pub banned: u64,
    /// The sign-in wall.
    pub authwall: u64,
    /// Connections reset.
    pub reset: u64,
}

impl Answered {
    /// Every request.
    pub fn requests(&self) -> u64 {
        self.pages + self.rate_limited + self.banned + self.authwall + self.reset
    }

    /// Requests refused for how they were sent (429, 999, the home page, the sign-in wall).
    pub fn refused(&self) -> u64 {
        self.rate_limited + self.banned + self.authwall
    }
}

#[derive(Debug)]
struct Address {
    /// GCRA's theoretical arrival time.
    tat: Instant,
    /// When it was told to wait lately (the last minute).
    warnings: Vec<Instant>,
    /// When it was served pages lately (the last sliding window, banning without warning).
    served: VecDeque<Instant>,
    bans: u32,
    banned_until: Option<Instant>,
    answered: Answered,
}

#[derive(Debug)]
struct Judge {
    settings: HostileSettings,
    addresses: HashMap<IpAddr, Address>,
    /// A counter that decides the random shares evenly (every `1 / share`-th page), so runs compare.
    served: u64,
}

/// What the judge decided for one request.
enum Verdict {
    Page { slow: bool },
    RateLimited(u64),
    Banned { home_page: bool },
    Authwall,
    Reset,
}

impl Judge {
    fn judge(&mut self, from: IpAddr, now: Instant) -> Verdict {
        let settings = self.settings;
        self.served += 1;
        let n = self.served;
        let every =
            |share: f64| share > 0.0 && n.is_multiple_of((1.0 / share).round().max(1.0) as u64);
        let address = self.addresses.entry(from).or_insert(Address {
            tat: now,
            warnings: Vec::new(),
            served: VecDeque::new(),
            bans: 0,
            banned_until: None,
            answered: Answered::default(),
        });
        if let Some(until) = address.banned_until
            && until > now
        {
            address.answered.banned += 1;
            return Verdict::Banned {
                home_page: n.is_multiple_of(2),
            };
        }
        // Whether the address may have a page now, and what serving it books against its budget.
        let interval = Duration::from_secs_f64(60.0 / settings.per_minute.max(1e-3));
        let tat = address.tat.max(now);
        let allowed_at = tat
            .checked_sub(interval * settings.burst.saturating_sub(1))
            .unwrap_or(now);
        let within = match settings.bans_only {
            Some(budget) => {
                while address
                    .served
                    .front()
                    .is_some_and(|at| now.duration_since(*at) >= budget.window)
                {
                    address.served.pop_front();
                }
                address.served.len() < budget.pages as usize
            }
            None => allowed_at <= now,
        };
        if within {
            if every(settings.reset_share) {
                address.answered.reset += 1;
                return Verdict::Reset;
            }
            if settings.bans_only.is_some() {
                address.served.push_back(now);
            } else {
                address.tat = tat + interval;
            }
            if every(settings.authwall_share) {
                address.answered.authwall += 1;
                return Verdict::Authwall;
            }
            address.answered.pages += 1;
            return Verdict::Page {
                slow: every(settings.slow_share),
            };
        }
        // Over the budget: banned at once without warnings, else after too many of them.
        address
            .warnings
            .retain(|at| now.duration_since(*at) < Duration::from_mins(1));
        if settings.bans_only.is_some() || address.warnings.len() >= settings.warnings as usize {
            address.bans += 1;
            let ban = settings
                .first_ban
                .saturating_mul(2u32.saturating_pow(address.bans - 1));
            address.banned_until = Some(now + ban);
            address.warnings.clear();
            address.answered.banned += 1;
            return Verdict::Banned {
                home_page: n.is_multiple_of(2),
            };
        }
        let wait = allowed_at.duration_since(now);
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        address.warnings.push(now);
        address.answered.rate_limited += 1;
        Verdict::RateLimited(seconds)
    }
}

/// A hostile origin on loopback. Dropped, it stops.
pub struct HostileOrigin {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    judge: Arc<Mutex<Judge>>,
    task: tokio::task::JoinHandle<()>,
}

impl HostileOrigin {
    /// Starts one on a free loopback port.
    pub async fn start(settings: HostileSettings) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address: SocketAddr = listener.local_addr().expect("address");
        let judge = Arc::new(Mutex::new(Judge {
            settings,
            addresses: HashMap::new(),
            served: 0,
        }));
        let judging = Arc::clone(&judge);
        let task = tokio::spawn(async move {
            while let Ok((stream, peer)) = listener.accept().await {
                let judge = Arc::clone(&judging);
                tokio::spawn(async move {
                    let _ = serve(stream, peer.ip(), &judge).await;
                });
            }
        });
        Self {
            base: format!("http://{address}"),
            judge,
            task,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Judge> {
        self.judge
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Changes the budget of every address from now on (e.g. halves it mid-run).
    pub fn set_per_minute(&self, per_minute: f64) {
        self.lock().settings.per_minute = per_minute;
    }

    /// Bans `address` for `lasting` from now, as the network bans an address it has judged.
    pub fn ban(&self, address: IpAddr, lasting: Duration) {
        let now = Instant::now();
        let mut judge = self.lock();
        let tat = now;
        let entry = judge.addresses.entry(address).or_insert(Address {
            tat,
            warnings: Vec::new(),
            served: VecDeque::new(),
            bans: 0,
            banned_until: None,
            answered: Answered::default(),
        });
        entry.bans += 1;
        entry.banned_until = Some(now + lasting);
    }

    /// What it answered, in all.
    pub fn answered(&self) -> Answered {
        self.lock()
            .addresses
            .values()
            .fold(Answered::default(), |mut sum, a| {
                sum.pages += a.answered.pages;
                sum.rate_limited += a.answered.rate_limited;
                sum.banned += a.answered.banned;
                sum.authwall += a.answered.authwall;
                sum.reset += a.answered.reset;
                sum
            })
    }

    /// What it answered each source address.
    pub fn answered_by_address(&self) -> HashMap<IpAddr, Answered> {
        self.lock()
            .addresses
            .iter()
            .map(|(ip, a)| (*ip, a.answered))
            .collect()
    }
}

impl Drop for HostileOrigin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut stream: tokio::net::TcpStream,
    from: IpAddr,
    judge: &Mutex<Judge>,
) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt;
    let Some(crate::RequestHead { path, accepts_gzip }) = crate::read_head(&mut stream).await?
    else {
        return Ok(());
    };
    let path = path.as_str();
    let respond = crate::response;
    let page = |file: &'static str| {
        if accepts_gzip {
            respond(200, "content-encoding: gzip\r\n", &crate::gzipped(file))
        } else {
            respond(
                200,
                "",
                &std::fs::read(crate::fixtures().join(file)).expect("fixture"),
            )
        }
    };
    let bytes = if path == "/" {
        page("pages/blocked-guest-homepage-2024.html")
    } else if path.starts_with("/authwall") {
        page("pages/authwall-profile-2026.html")
    } else if path.starts_with("/company/") {
        let (verdict, latency, slow) = {
            let mut judge = judge
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let settings = judge.settings;
            (
                judge.judge(from, Instant::now()),
                settings.latency,
                settings.slow,
            )
        };
        match verdict {
            Verdict::Reset => {
                stream.set_zero_linger()?;
                return Ok(());
            }
            Verdict::RateLimited(seconds) => {
                respond(429, &format!("retry-after: {seconds}\r\n"), b"")
            }
            Verdict::Banned { home_page: true } => respond(302, "location: /\r\n", b""),
            Verdict::Banned { home_page: false } => respond(999, "", b""),
            Verdict::Authwall => respond(302, "location: /authwall?trk=hostile\r\n", b""),
            Verdict::Page { slow: is_slow } => {
                tokio::time::sleep(if is_slow { slow } else { latency }).await;
                page("origin/company/google.html")
            }
        }
    } else {
        respond(
            404,
            "",
            b"<html><head><title>Page Not Found | LinkedIn</title></head></html>",
        )
    };
    stream.write_all(&bytes).await?;
    stream.shutdown().await
}

/// Forward proxies (Debian's `tinyproxy`), each sending from its own loopback address. Dropped, they stop.
pub struct ForwardProxies {
    /// `http://127.0.0.1:<port>`, one per proxy.
    pub urls: Vec<String>,
    /// The address each sends from, in the same order.
    pub addresses: Vec<IpAddr>,
    children: Vec<std::process::Child>,
    _dir: tempfile::TempDir,
}

impl ForwardProxies {
    /// Starts `count` proxies and waits until each accepts connections; `None` (the test reported as not run)
    /// when `$TINYPROXY` does not name the binary (`tests/ci` installs Debian's and sets it).
    ///
    /// # Panics
    /// When `tinyproxy` does not start.
    pub async fn start(count: u8) -> Option<Self> {
        let binary: PathBuf = crate::tool("TINYPROXY", "tinyproxy")?;
        let dir = tempfile::tempdir().expect("temp dir");
        let mut urls = Vec::new();
        let mut addresses = Vec::new();
        let mut children = Vec::new();
        for n in 0..count {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let address: IpAddr = format!("127.0.0.{}", 10 + u32::from(n))
                .parse()
                .expect("address");
            let config = dir.path().join(format!("proxy-{n}.conf"));
            std::fs::write(
                &config,
                format!(
                    "Port {port}\nListen 127.0.0.1\nBind {address}\nTimeout 30\nMaxClients 256\n\
                     Allow 127.0.0.1\nDisableViaHeader Yes\nLogLevel Critical\n"
                ),
            )
            .expect("config");
            let child = std::process::Command::new(&binary)
                .arg("-d")
                .arg("-c")
                .arg(&config)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("tinyproxy starts");
            children.push(child);
            urls.push(format!("http://127.0.0.1:{port}"));
            addresses.push(address);
        }
        for url in &urls {
            let at = url.trim_start_matches("http://").to_owned();
            crate::eventually(Duration::from_secs(10), "a proxy never listened", || {
                let at = at.clone();
                async move { tokio::net::TcpStream::connect(at).await.ok() }
            })
            .await;
        }
        Some(Self {
            urls,
            addresses,
            children,
            _dir: dir,
        })
    }

    /// Stops proxy `n` (its route's connections then fail), as a proxy provider's host that goes away.
    pub fn stop(&mut self, n: usize) {
        let _ = self.children[n].kill();
        let _ = self.children[n].wait();
    }
}

impl Drop for ForwardProxies {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
