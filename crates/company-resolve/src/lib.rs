//! From a website domain or a company name to its company page, verified by the page itself, with the
//! evidence: the core of `POST /v1/network/company-data/resolve` and of `enrich --domain-column`.
//!
//! A **domain** (`stripe.com`, or a URL on it: its registrable domain is taken) is resolved cheapest first,
//! stopping at the first step whose pages pass:
//! 1. the stored pages whose record's `domain` is the queried one (no fetch at all);
//! 2. the company's own home page (`https`, then `http`, then both on `www.`; redirects followed, each hop
//!    through the public-address guard), and the network pages it links to: `<a href>`, `rel="me"`, JSON-LD
//!    `sameAs`;
//! 3. the pages named after the domain's label (`stripe.com` → `/company/stripe`).
//!
//! Every page found is **verified by the page itself**: the registrable domain of its website (where a
//! shortened link lands, as the lookup records it in `domain`) must be the queried domain, or one the queried
//! site redirected to. A page that fails is never returned, however it was found (a site's link to a partner's
//! page, a page of the same name). A **name** is resolved from the stored pages of that name and the pages
//! named after it, verified by the page's name ([`company_model::name_key`]: case, accents, punctuation and
//! legal-form suffixes folded) and by the `domain` and `location` hints when given.
//!
//! Pages are read through [`LookupService::pages`] (stored inside the request's window, else live, stored as any
//! live fetch), unbilled; the resolver bills what it returns: each resolved query at
//! [`credit_ledger::price_per_resolution`], nothing for a query left unresolved. Answers are remembered per
//! domain and per name in the snapshot store (found for [`ResolverSettings::remember_found`], not found for
//! [`ResolverSettings::remember_not_found`]), so every server on one database shares them.
//!
//! Not here: HTTP, request validation ([`api_contract::ResolveRequest`]), fetching network pages (the lookup's).
#![deny(missing_docs)]

mod domain;
mod links;
mod resolve;
mod site;
mod verify;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use api_contract::{
    CompanyResult, Includes, RecordFields, ResolveQuery, ResolveRequest, ResolveResponse,
};
use company_lookup::{Caller, LookupError, LookupService};
use company_model::AccountId;
use credit_ledger::{Charge, Credits, price_per_company, price_per_resolution};
use futures::StreamExt;
use page_url::NetworkDomain;
use snapshot_cache::SnapshotStore;

pub use domain::{domain_slugs, query_domain};
pub use site::{SITE_USER_AGENT, SiteError, SiteSettings};

use resolve::QueryAnswer;

/// The least confidence a page needs to be returned as a query's page: below it the query is unresolved (a
/// wrong page is worse than none).
pub const MIN_CONFIDENCE: f64 = 0.8;

/// What each way of finding and verifying a page is worth (docs/api.md, "Resolving domains and names").
pub mod confidence {
    use api_contract::ResolveMethod;

    /// The site links to the page (`<a href>`, `rel="me"`, `sameAs`) and the page's website is the domain: both
    /// sides name each other.
    pub const SITE_AND_PAGE: f64 = 0.99;
    /// A stored page whose website is the domain (the page names the site).
    pub const STORED_PAGE: f64 = 0.95;
    /// A page named after the domain whose website is the domain (the page names the site).
    pub const GUESSED_PAGE: f64 = 0.92;
    /// Taken off when the page's website is a domain the queried one redirects to, not the domain itself.
    pub const BY_REDIRECT: f64 = 0.03;
    /// A page whose folded name is the queried one.
    pub const NAME: f64 = 0.85;
    /// A page whose folded name is the queried one and whose website is on the query's `domain` hint.
    pub const NAME_AND_DOMAIN: f64 = 0.97;
    /// Added when one of the page's addresses is in the query's `location`.
    pub const LOCATION_BONUS: f64 = 0.05;
    /// The most a name match is worth when none of the page's addresses is in the query's `location`.
    pub const LOCATION_MISMATCH: f64 = 0.75;
    /// A page ruled out by a check (listed among an unresolved query's candidates).
    pub const UNVERIFIED: f64 = 0.1;
    /// The most any resolution is worth.
    pub const MOST: f64 = 0.99;

    /// What a page found by `method` is worth once its website matched: `exact` when it is the queried domain
    /// itself, not one it redirects to.
    pub fn of_domain_match(method: ResolveMethod, exact: bool) -> f64 {
        let base = match method {
            ResolveMethod::SiteLink | ResolveMethod::SiteSameAs | ResolveMethod::SiteRelMe => {
                SITE_AND_PAGE
            }
            ResolveMethod::StoredDomain => STORED_PAGE,
            ResolveMethod::DomainSlug | ResolveMethod::StoredName | ResolveMethod::NameSlug => {
                GUESSED_PAGE
            }
        };
        if exact { base } else { base - BY_REDIRECT }
    }
}

/// The resolver's knobs.
#[derive(Clone, Debug)]
pub struct ResolverSettings {
    /// How websites are fetched.
    pub site: SiteSettings,
    /// How long a found page is remembered for its query (then the query is resolved afresh). Default 30 days.
    pub remember_found: Duration,
    /// How long "no page found" is remembered for its query. Default 24 hours.
    pub remember_not_found: Duration,
    /// The most pages checked for one query (each may be a live fetch). Default 6.
    pub candidates_per_query: usize,
    /// Queries of one request resolved at once. Default 8.
    pub queries_at_once: usize,
}

impl Default for ResolverSettings {
    fn default() -> Self {
        Self {
            site: SiteSettings::default(),
            remember_found: Duration::from_hours(30 * 24),
            remember_not_found: Duration::from_hours(24),
            candidates_per_query: 6,
            queries_at_once: 8,
        }
    }
}

/// A resolve request served.
#[derive(Clone, Debug)]
pub struct ResolveOutcome {
    /// The answer.
    pub response: ResolveResponse,
    /// What was charged.
    pub charged: Credits,
    /// The account's balance after the charge.
    pub remaining: Credits,
}

/// Resolves domains and names to pages. Share it behind an `Arc`.
#[derive(Debug)]
pub struct Resolver {
    lookup: Arc<LookupService>,
    snapshots: Arc<dyn SnapshotStore>,
    site: site::SiteFetcher,
    network: NetworkDomain,
    settings: ResolverSettings,
}

impl Resolver {
    /// A resolver reading pages through `lookup`, finding stored ones and remembering answers in `snapshots`
    /// (the lookup's store), for pages on `network`.
    ///
    /// # Errors
    /// [`SiteError::Client`] when the website client cannot be built (a bad proxy URL, TLS set-up).
    pub fn new(
        lookup: Arc<LookupService>,
        snapshots: Arc<dyn SnapshotStore>,
        network: NetworkDomain,
        settings: ResolverSettings,
    ) -> Result<Self, SiteError> {
        Ok(Self {
            lookup,
            snapshots,
            site: site::SiteFetcher::new(settings.site.clone(), Some(network.clone()))?,
            network,
            settings,
        })
    }

    /// The longest a request of `queries` queries can run: its rounds of [`ResolverSettings::queries_at_once`],
    /// each query reading up to four home-page URLs ([`SiteSettings::timeout`] each) and checking pages in up to
    /// three steps (the lookup's live time-out each). Callers that claim work for its length (an
    /// `Idempotency-Key`) claim it for this.
    pub fn longest_request(&self, queries: usize) -> Duration {
        let rounds = queries
            .div_ceil(self.settings.queries_at_once.max(1))
            .max(1);
        let per_query = self.settings.site.timeout * 4 + self.lookup.settings().live_timeout * 3;
        per_query * u32::try_from(rounds).unwrap_or(u32::MAX)
    }

    /// Resolves every query of `request` (up to [`ResolverSettings::queries_at_once`] at a time), answers them
    /// in order, and charges `caller`'s account for the resolved ones.
    ///
    /// Before any work, the account must be able to pay for every query at [`price_per_company`] of the
    /// request's window, as a company-data request must; the charge is made once at the end, for what resolved.
    ///
    /// # Errors
    /// [`LookupError::Ledger`] with `InsufficientCredits` when the account cannot pay for every query (nothing
    /// done) or, at the end, for what resolved (nothing charged; the pages fetched are stored, so a retry is
    /// cheap); [`LookupError::Ledger`] when the ledger fails.
    pub async fn resolve(
        &self,
        caller: Caller,
        request: &ResolveRequest,
    ) -> Result<ResolveOutcome, LookupError> {
        // Resolving reads company websites and search answers, which test mode never reaches.
        if caller.tenant.is_test() {
            return Err(LookupError::NotInTestMode {
                what: "resolving domains and names",
            });
        }
        let queries = u32::try_from(request.queries.len()).unwrap_or(u32::MAX);
        let most = price_per_company(request.window).times(queries);
        // The most the request may cost is held for as long as it runs (renewed, since resolving many domains
        // may outlast the stale-hold sweep), so concurrent requests cannot together do more work than the
        // account can pay for; the charge at the end is what resolved.
        let ledger = self.lookup.ledger();
        let hold = ledger.reserve(caller.tenant, most).await?;
        let renew_every =
            (self.lookup.longest_request() / 3).max(std::time::Duration::from_secs(1));
        let (response, amount) = holding(
            ledger.as_ref(),
            &hold,
            renew_every,
            self.answer(caller.tenant.account, request),
        )
        .await;
        let charge = Charge {
            amount,
            key_id: caller.key_id,
            urls_requested: queries,
            urls_returned: u32::try_from(response.results.len()).unwrap_or(u32::MAX),
            live: request.window.is_live(),
            reference: None,
        };
        let remaining = ledger.settle(hold, charge).await?;
        let resolved: Vec<page_url::PageUrl> = response
            .results
            .iter()
            .filter_map(|resolution| page_url::PageUrl::from_canonical(&resolution.li_url).ok())
            .collect();
        self.lookup.note_answered(caller.tenant, &resolved).await;
        metrics::counter!("company_data_resolutions_total", "outcome" => "resolved")
            .increment(response.results.len() as u64);
        for unresolved in &response.unresolved {
            metrics::counter!("company_data_resolutions_total", "outcome" => unresolved.error.as_str())
                .increment(1);
        }
        Ok(ResolveOutcome {
            response,
            charged: amount,
            remaining,
        })
    }

    /// Every query of `request` resolved (each distinct one once, up to [`ResolverSettings::queries_at_once`] at
    /// a time) and answered at each of its positions, with what the resolved ones cost.
    async fn answer(
        &self,
        account: AccountId,
        request: &ResolveRequest,
    ) -> (ResolveResponse, Credits) {
        // A query sent twice is resolved and billed once, and answered at each of its positions.
        let mut distinct: Vec<ResolveQuery> = Vec::new();
        let mut position_of: HashMap<&ResolveQuery, usize> = HashMap::new();
        let positions: Vec<usize> = request
            .queries
            .iter()
            .map(|query| {
                *position_of.entry(query).or_insert_with(|| {
                    distinct.push(query.clone());
                    distinct.len() - 1
                })
            })
            .collect();
        // Owned queries: a stream of borrowed ones makes the future's lifetimes too general to be `Send`.
        let window = request.window;
        let mut answers: Vec<QueryAnswer> = futures::stream::iter(distinct)
            .map(|query| async move { self.resolve_query(account, &query, window).await })
            .buffered(self.settings.queries_at_once.max(1))
            .collect()
            .await;
        // Only an enriched answer shows the record, so only it fetches the parts the request includes.
        if request.enrich && !request.include.is_empty() {
            self.with_parts(account, window, request.include, &mut answers)
                .await;
        }
        let mut response = ResolveResponse::default();
        let mut amount = Credits::ZERO;
        let mut billed = vec![false; answers.len()];
        for (query, position) in request.queries.iter().zip(positions) {
            match answers[position].clone() {
                QueryAnswer::Resolved(mut resolution, snapshot) => {
                    resolution.query = query.clone();
                    if !std::mem::replace(&mut billed[position], true) {
                        amount = amount.saturating_add(price_per_resolution(
                            request.window,
                            resolution.source,
                        ));
                    }
                    if request.enrich {
                        resolution.record = Some(CompanyResult {
                            original_li_url: resolution.li_url.clone(),
                            record: RecordFields::apply(request.fields.as_ref(), &snapshot.record),
                            source: resolution.source,
                            fetched_at: snapshot.fetched_at,
                        });
                    }
                    response.results.push(*resolution);
                }
                QueryAnswer::Unresolved(mut unresolved) => {
                    unresolved.query = query.clone();
                    response.unresolved.push(unresolved);
                }
            }
        }
        (response, amount)
    }
}

impl Resolver {
    /// The resolved pages of `answers` with the parts of `include`: candidates are verified without them (a
    /// rejected candidate would cost a search for nothing), then each resolved page whose snapshot lacks a part is
    /// looked up again with it ([`LookupService::pages`]: when that fails, the snapshot answers as it was, and
    /// inside a freshness window its `provenance` says why). The resolution's price is unchanged; the lookup adds
    /// up to one live time-out to the request.
    async fn with_parts(
        &self,
        account: AccountId,
        window: api_contract::FreshnessWindow,
        include: Includes,
        answers: &mut [QueryAnswer],
    ) {
        let mut pages: Vec<page_url::PageUrl> = answers
            .iter()
            .filter_map(|answer| match answer {
                QueryAnswer::Resolved(_, snapshot) => Some(snapshot.url.clone()),
                QueryAnswer::Unresolved(_) => None,
            })
            .collect();
        pages.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
        pages.dedup();
        let found = match self
            .lookup
            .pages(
                company_model::Tenant::live(account),
                &pages,
                window,
                include,
            )
            .await
        {
            Ok(found) => found,
            Err(error) => {
                tracing::warn!(%error, "the resolved pages' parts were not fetched; answered without them");
                return;
            }
        };
        for answer in answers {
            if let QueryAnswer::Resolved(_, snapshot) = answer
                && let Some(company_lookup::PageOutcome::Found { snapshot: with, .. }) =
                    found.get(&snapshot.url)
            {
                snapshot.clone_from(with);
            }
        }
    }
}

/// Runs `work` while renewing `hold` every `every` (a failed renewal is logged: the sweep may then free the hold,
/// and the charge at the end is still made).
async fn holding<T>(
    ledger: &dyn credit_ledger::Ledger,
    hold: &credit_ledger::Reservation,
    every: std::time::Duration,
    work: impl std::future::Future<Output = T>,
) -> T {
    tokio::pin!(work);
    let mut renew = tokio::time::interval(every);
    renew.tick().await; // the first tick is now: the hold was just made
    loop {
        tokio::select! {
            done = &mut work => return done,
            _ = renew.tick() => {
                if let Err(error) = ledger.renew(hold).await {
                    tracing::warn!(%error, "could not renew a resolve request's credit hold");
                }
            }
        }
    }
}
