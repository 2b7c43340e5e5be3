//! The resolution of one query: candidates found cheapest first, each verified by the page itself, the best
//! chosen or the query left unresolved with why; every step kept as evidence.

mod decide;
mod memory;

use std::collections::HashSet;
use std::time::Duration;

use api_contract::{
    Candidate, Evidence, FreshnessWindow, Resolution, ResolveMethod, ResolveQuery, UnresolvedQuery,
    UnresolvedReason,
};
use company_model::{AccountId, name_key, name_slugs};
use page_url::PageUrl;
use snapshot_cache::Snapshot;

use crate::Resolver;
use crate::domain::{domain_slugs, query_domain};
use crate::links::{SiteLink, site_links};
use crate::verify::{Expect, fold};

/// One query's answer, with the snapshot that verified it (for `enrich` and the price).
#[derive(Clone)]
pub(crate) enum QueryAnswer {
    Resolved(Box<Resolution>, Box<Snapshot>),
    Unresolved(UnresolvedQuery),
}

/// A page found by one step, before it is verified.
struct Found {
    page: PageUrl,
    method: ResolveMethod,
}

/// Pages that could not be checked, worst first: push-back, then time-outs and failed fetches.
#[derive(Default)]
struct Failures {
    /// Some page met push-back (a block, the sign-in wall, the account's live cap): when to ask again (at
    /// least a second).
    blocked: Option<Duration>,
    /// Some page timed out or could not be fetched.
    timed_out: bool,
}

impl Failures {
    /// Push-back, with when to ask again when it said.
    fn pushed_back(&mut self, retry_after: Option<Duration>) {
        let retry = retry_after.unwrap_or_default().max(Duration::from_secs(1));
        self.blocked = Some(self.blocked.map_or(retry, |known| known.max(retry)));
    }
}

impl Resolver {
    /// Resolves one query on `account`'s behalf, on its live data: resolving is never test mode's
    /// ([`crate::CompanyResolver::resolve`] refuses a test tenant).
    pub(crate) async fn resolve_query(
        &self,
        account: AccountId,
        query: &ResolveQuery,
        window: FreshnessWindow,
    ) -> QueryAnswer {
        let mut run = Run {
            resolver: self,
            account,
            window,
            query,
            evidence: Vec::new(),
            failures: Failures::default(),
            tried: HashSet::new(),
            rejected: Vec::new(),
        };
        match &query.name {
            Some(name) => run.name(name).await,
            None => {
                run.domain(query.domain.as_deref().unwrap_or_default())
                    .await
            }
        }
    }
}

/// One query being resolved.
struct Run<'a> {
    resolver: &'a Resolver,
    account: AccountId,
    window: FreshnessWindow,
    query: &'a ResolveQuery,
    evidence: Vec<Evidence>,
    failures: Failures,
    /// Pages verified or asked for already.
    tried: HashSet<PageUrl>,
    /// Pages checked and found below the threshold, for the candidates of an unresolved answer.
    rejected: Vec<Candidate>,
}

impl Run<'_> {
    async fn domain(&mut self, sent: &str) -> QueryAnswer {
        let queried = match query_domain(sent, &self.resolver.network) {
            Ok(domain) => domain,
            Err(fix) => return self.unresolved(UnresolvedReason::InvalidDomain, fix),
        };
        let mut accepted = HashSet::from([queried.clone()]);
        let key = format!("resolve:domain:{queried}");
        let expect = Expect::Domain {
            queried: &queried,
            accepted: &accepted,
        };
        // A stored page's claim alone (1'. below) is remembered for this account only: no other tenant is
        // answered from what a page says of itself.
        let own_key = format!("{key}:account:{}", self.account.0);
        if let Some(answer) = self.remembered(&key, &expect).await {
            return answer;
        }
        if let Some(answer) = self.remembered(&own_key, &expect).await {
            return answer;
        }

        // 1. Stored pages whose record's domain is this one (no fetch), kept for after the site: a page's claim
        // on a website must not outrank the site's own link (an impostor page can claim any website).
        let looked_up = self
            .resolver
            .snapshots
            .pages_with_domain(&queried, 10)
            .await;
        let stored = self.stored(
            looked_up,
            ResolveMethod::StoredDomain,
            &queried,
            &format!("show a website on {queried}"),
        );

        // 2. The company's own site: its home page and what it links to.
        let mut site_failed = None;
        let mut found = Vec::new();
        match self.resolver.site.home_page(self.account, &queried).await {
            Ok(home) => {
                let path: Vec<String> = home.hops.iter().map(ToString::to_string).collect();
                for hop in &home.hops {
                    match redirect_domain(hop, &queried, &self.resolver.network) {
                        Ok(Some(domain)) => {
                            accepted.insert(domain);
                        }
                        Ok(None) => {}
                        Err(parked) => self.evidence.push(Evidence {
                            step: "site".to_owned(),
                            url: Some(hop.to_string()),
                            value: Some(parked.clone()),
                            note: format!(
                                "{queried} redirects to {parked} with its own name in the address (a parking or \
                                 for-sale page): pages on {parked} are not taken for it"
                            ),
                        }),
                    }
                }
                let mut links = site_links(&home.html, &self.resolver.network);
                // A site that redirects to its page on the network names it as surely as a link does.
                if let Some(page) = home
                    .hops
                    .last()
                    .and_then(|hop| PageUrl::normalize(hop.as_str(), &self.resolver.network).ok())
                {
                    links.insert(
                        0,
                        SiteLink {
                            page,
                            method: ResolveMethod::SiteLink,
                            href: home
                                .hops
                                .last()
                                .map(ToString::to_string)
                                .unwrap_or_default(),
                            place: "redirect",
                        },
                    );
                }
                self.evidence.push(Evidence {
                    step: "site".to_owned(),
                    url: home.hops.last().map(ToString::to_string),
                    value: None,
                    note: format!(
                        "home page read (HTTP {}{}): {} link(s) to the network's company, school or showcase pages",
                        home.status,
                        if path.len() > 1 {
                            format!(", redirected {}", path.join(" → "))
                        } else {
                            String::new()
                        },
                        links.len()
                    ),
                });
                for link in links {
                    self.evidence.push(Evidence {
                        step: "link".to_owned(),
                        url: Some(link.page.as_str().to_owned()),
                        value: Some(link.href.clone()),
                        note: format!("{} in the site's {}", link.method.as_str(), link.place),
                    });
                    found.push(Found {
                        page: link.page,
                        method: link.method,
                    });
                }
            }
            Err(failures) => {
                let reasons: Vec<String> = failures.iter().map(ToString::to_string).collect();
                self.evidence.push(Evidence {
                    step: "site".to_owned(),
                    url: Some(format!("https://{queried}/")),
                    value: None,
                    note: format!("the home page could not be read: {}", reasons.join("; ")),
                });
                site_failed = Some(reasons.join("; "));
            }
        }
        let expect = Expect::Domain {
            queried: &queried,
            accepted: &accepted,
        };
        if let Some(answer) = self.verify_and_decide(found, &expect, &key).await {
            return answer;
        }

        // 1'. The stored pages, now that the site named none of them: remembered for this account only.
        if let Some(answer) = self.verify_and_decide(stored, &expect, &own_key).await {
            return answer;
        }

        // 3. Pages named after the domain's label.
        let guessed: Vec<Found> = domain_slugs(&queried)
            .into_iter()
            .filter_map(|(kind, slug)| {
                PageUrl::from_path(
                    &format!("/{}/{slug}", kind.as_str()),
                    &self.resolver.network,
                )
                .ok()
            })
            .map(|page| Found {
                page,
                method: ResolveMethod::DomainSlug,
            })
            .collect();
        self.guessed(&guessed, "named after the domain's label");
        // A page's own claim again (no site vouched for it): remembered for this account only.
        if let Some(answer) = self.verify_and_decide(guessed, &expect, &own_key).await {
            return answer;
        }
        match site_failed {
            Some(reason) if !self.any_failure() => self.unresolved(
                UnresolvedReason::SiteUnreachable,
                format!(
                    "The site of {queried} could not be read ({reason}), and no page named after the domain shows \
                     it as its website. Check that the site is up and retry, or send the page URL to POST \
                     /v1/network/company-data if you know it."
                ),
            ),
            _ => {
                self.nothing_found(
                    &key,
                    format!(
                        "No company page shows a website on {queried}: the stored pages, the links on its site and \
                         the pages named after the domain were checked (see `evidence`). Check the domain, or send \
                         the page URL to POST /v1/network/company-data if you know it."
                    ),
                )
                .await
            }
        }
    }

    async fn name(&mut self, name: &str) -> QueryAnswer {
        let key = name_key(name);
        if key.is_empty() {
            return self.unresolved(
                UnresolvedReason::NoPageFound,
                format!("`{name}` has no letters or digits to compare with a page's name; send the company's name"),
            );
        }
        let hint = match self
            .query
            .domain
            .as_deref()
            .map(|d| query_domain(d, &self.resolver.network))
        {
            Some(Err(fix)) => return self.unresolved(UnresolvedReason::InvalidDomain, fix),
            Some(Ok(domain)) => Some(domain),
            None => None,
        };
        let location = self.query.location.as_deref();
        let memo_key = format!(
            "resolve:name:{key}|{}|{}",
            location.map(fold).unwrap_or_default(),
            hint.as_deref().unwrap_or_default()
        );
        let expect = Expect::Name {
            key: &key,
            location,
            domain: hint.as_deref(),
        };
        if let Some(answer) = self.remembered(&memo_key, &expect).await {
            return answer;
        }
        let looked_up = self.resolver.snapshots.pages_named(&key, 10).await;
        let found = self.stored(
            looked_up,
            ResolveMethod::StoredName,
            &key,
            &format!("are named `{key}` once folded"),
        );
        if let Some(answer) = self.verify_and_decide(found, &expect, &memo_key).await {
            return answer;
        }
        let mut slugs = name_slugs(name);
        if let Some(hint) = &hint {
            slugs.extend(domain_slugs(hint).into_iter().map(|(_, slug)| slug));
        }
        let guessed: Vec<Found> = slugs
            .into_iter()
            .filter_map(|slug| {
                PageUrl::from_path(&format!("/company/{slug}"), &self.resolver.network).ok()
            })
            .map(|page| Found {
                page,
                method: ResolveMethod::NameSlug,
            })
            .collect();
        self.guessed(&guessed, "named after the queried name");
        if let Some(answer) = self.verify_and_decide(guessed, &expect, &memo_key).await {
            return answer;
        }
        self.nothing_found(
            &memo_key,
            format!(
                "No company page named `{name}`{} was found: the stored pages and the pages named after it were \
                 checked (see `evidence`). Send its website domain instead, or the page URL to POST \
                 /v1/network/company-data if you know it.",
                hint.as_deref().map(|h| format!(" with a website on {h}")).unwrap_or_default()
            ),
        )
        .await
    }

    /// The pages a stored-page lookup found, as candidates of `method`, with one `stored` evidence entry saying
    /// how many (`value` the key looked up; `shared` what they share). None when the store fails: the next
    /// steps still run.
    fn stored(
        &mut self,
        looked_up: Result<Vec<PageUrl>, snapshot_cache::CacheError>,
        method: ResolveMethod,
        value: &str,
        shared: &str,
    ) -> Vec<Found> {
        let pages = looked_up.unwrap_or_else(|error| {
            tracing::warn!(%error, "stored pages could not be read; going on with the other steps");
            Vec::new()
        });
        self.evidence.push(Evidence {
            step: "stored".to_owned(),
            url: None,
            value: Some(value.to_owned()),
            note: format!("{} stored page(s) {shared}", pages.len()),
        });
        pages
            .into_iter()
            .map(|page| Found { page, method })
            .collect()
    }

    /// One `link` evidence entry per page guessed (not yet checked), saying where its name came from.
    fn guessed(&mut self, pages: &[Found], from: &str) {
        for found in pages.iter().filter(|f| !self.tried.contains(&f.page)) {
            self.evidence.push(Evidence {
                step: "link".to_owned(),
                url: Some(found.page.as_str().to_owned()),
                value: None,
                note: format!("{}: a page {from}", found.method.as_str()),
            });
        }
    }

    fn unresolved(&mut self, error: UnresolvedReason, message: String) -> QueryAnswer {
        QueryAnswer::Unresolved(UnresolvedQuery {
            query: self.query.clone(),
            error,
            message,
            candidates: std::mem::take(&mut self.rejected),
            evidence: std::mem::take(&mut self.evidence),
            retry_after_seconds: None,
        })
    }
}

/// The registrable domain a redirect `hop` of the site of `queried` is on, to accept pages whose website is on
/// it: `None` for the queried domain itself and for the network's; `Err` with the domain when the hop names the
/// queried domain in its path or query (`sedo.com/search?domain=acme.com`): a parking or for-sale page, whose
/// owner's page is not the company's.
fn redirect_domain(
    hop: &url::Url,
    queried: &str,
    network: &page_url::NetworkDomain,
) -> Result<Option<String>, String> {
    let Some(domain) = hop
        .host_str()
        .and_then(psl::domain_str)
        .map(str::to_ascii_lowercase)
    else {
        return Ok(None);
    };
    if domain == queried || domain == network.as_str() {
        return Ok(None);
    }
    let rest = format!("{}?{}", hop.path(), hop.query().unwrap_or_default()).to_ascii_lowercase();
    if rest.contains(queried) {
        return Err(domain);
    }
    Ok(Some(domain))
}
