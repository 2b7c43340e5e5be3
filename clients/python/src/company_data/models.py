"""The API's types, from the server's OpenAPI document (`docs/openapi.json`, `components.schemas`).

Written by `clients/python/scripts/generate_models.py`; do not edit by hand. Objects are `TypedDict`s: the
client returns the JSON it is sent, and these name its members for type checkers and editors.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from typing_extensions import NotRequired, TypedDict

__all__ = ['Account', 'AccountEvent', 'AccountEventList', 'AccountEventType', 'AccountUpdate', 'Address', 'Candidate', 'CompanyHistory', 'CompanyRecord', 'CompanyRequest', 'CompanyResponse', 'CompanyResult', 'CompanyRow', 'CreatedWatches', 'DeliveryInfo', 'DeliveryState', 'Employee', 'EndpointStatus', 'Error', 'Evidence', 'FieldChange', 'FundingInfo', 'FundingRound', 'HistoryPoint', 'Include', 'Job', 'JobCallback', 'JobList', 'JobRequest', 'JobStatus', 'Location', 'MonthUsage', 'PageCard', 'PartProvenance', 'PostAuthor', 'Problem', 'Product', 'Provenance', 'Range_of_Timestamp', 'Range_of_double', 'Range_of_int32', 'Range_of_uint64', 'RecordSource', 'Resolution', 'ResolveMethod', 'ResolveQuery', 'ResolveRequest', 'ResolveResponse', 'RowPlace', 'SearchRequest', 'SearchResponse', 'SearchScopeName', 'SearchSort', 'SpecialtiesMatch', 'UnresolvedCode', 'UnresolvedQuery', 'UnresolvedReason', 'UnresolvedUrl', 'Update', 'Watch', 'WatchList', 'WatchRequest', 'WatchStatus', 'WebhookDelivery', 'WebhookDeliveryList', 'WebhookEndpoint', 'WebhookEndpointList', 'WebhookEndpointRequest', 'WebhookEvent', 'WebhookEventType', 'WebhookPing']

#: Most URLs one synchronous request carries (`CompanyRequest.liUrls.maxItems`).
MAX_URLS = 200
#: Most rows one read of a job's results returns (the results operation's `limit` maximum).
MAX_RESULT_ROWS = 10000


class Account(TypedDict):
    """An account as its owner sees it: the balance, the credits held for requests in flight, what is left to
    spend, and the usage of the current UTC calendar month.
    """
    account_id: int
    """The account's id.
    """
    available: float
    """What a new request may spend: balance minus held.
    """
    balance: float
    """Settled balance, in credits (holds not subtracted).
    """
    held: float
    """Credits held for requests in flight, charged or freed when they finish.
    """
    low_balance_threshold: float | None
    """Below this balance the account's endpoints that want `account.balance_low` are told, once per fall;
    `null` when no threshold is set. Set with `PATCH /v1/account`.
    """
    name: str
    """The account's name.
    """
    usage_this_month: MonthUsage
    """Charges since the start of the current month (UTC).
    """


class AccountEvent(TypedDict):
    """The body POSTed to an account's endpoints for each account event, signed as a watch's events are. The
    `id` is the same on every attempt and at every endpoint: drop duplicates by it.
    """
    created_at: str
    """When the event was made: when the service noticed what it reports (for a job's ending, within about a
    second while a server runs).
    """
    data: Any
    """What it is about; its members depend on the type (docs/api.md, "Webhooks").
    """
    id: str
    """The event's id, `evt_…`, made from what happened (the same job finishing is one event).
    """
    type: str
    """The event's type: one an endpoint subscribes to (`job.finished`, …), or `ping` for a test event.
    """


class AccountEventList(TypedDict):
    """A page of the account's events, oldest first (`GET /v1/events`): each exactly as its endpoints are sent it
    (the same id and body), so a client can switch between receiving webhooks and polling without joining the
    two.
    """
    events: list[AccountEvent]
    """Up to the request's `limit` events, oldest first.
    """
    has_more: bool
    """Whether more events follow this page now.
    """
    next: str
    """The path to ask next: `after` the last event of this page (or the request's own `after` when the page is
    empty), with the same `limit` and `type`. Poll it for the events recorded from now on.
    """


AccountEventType: TypeAlias = Literal["job.finished"] | Literal["job.paused"] | Literal["job.cancelled"] | Literal["account.balance_low"] | Literal["company.changed"]
"""The account events an endpoint can subscribe to, by their wire names (Stripe's `noun.verb` style).
"""


class AccountUpdate(TypedDict):
    """Settings of the account to change (a JSON Merge Patch, RFC 7396): a member sent replaces the setting, null
    removes it, a member left out is unchanged.
    """
    low_balance_threshold: NotRequired[float | None]
    """Below this balance (credits, rounded to a thousandth) the account's webhook endpoints that want
    `account.balance_low` are told, once each time the balance falls below it; null for never.
    """


class Address(TypedDict):
    """A postal address (spec 2.3 `headquarters`); all members are strings as the page shows them.
    """
    country: NotRequired[str | None]
    """Two-letter country code (JSON-LD `addressCountry`), e.g. `US`.
    """
    fullAddress: NotRequired[str | None]
    """The address on one line, its parts joined by `", "`, as the page shows it.
    """
    locality: NotRequired[str | None]
    """City (JSON-LD `addressLocality`).
    """
    postalCode: NotRequired[str | None]
    """Postal code (JSON-LD `postalCode`).
    """
    region: NotRequired[str | None]
    """State or region (JSON-LD `addressRegion`).
    """
    street: NotRequired[str | None]
    """Street line (JSON-LD `PostalAddress.streetAddress`).
    """


class Candidate(TypedDict):
    """Another page that fits a query.
    """
    confidence: float
    """How sure the resolver is that it is the query's page, 0 to 1.
    """
    li_url: str
    """The page.
    """
    method: ResolveMethod
    """How it was found.
    """


class CompanyHistory(TypedDict):
    """The 200 body of `GET /v1/network/company-data/history`: the company-data endpoint's `message` and
    `status_code`, then the history's members, in that order.
    """
    changes: list[FieldChange]
    """Every member that changed between consecutive snapshots (of those a watch follows by default,
    `CHANGE_FIELDS`), for the snapshots fetched inside the range (the earlier snapshot may be older).
    """
    final_li_url: str
    """The page the history belongs to (the URL it resolved to).
    """
    message: str
    """Always `Success`.
    """
    points: list[HistoryPoint]
    """One point per stored fetch inside the range asked for.
    """
    status_code: int
    """The HTTP status, 200.
    """


class CompanyRecord(TypedDict):
    """One company, school or showcase page as a record (spec 2.3, "Company result" minus the per-request members
    that the API contract's `CompanyResult` adds).
    """
    affiliated_pages: NotRequired[list[PageCard]]
    """The "Affiliated pages" section (subsidiaries, showcases, acquired companies).
    """
    alumni_count_on_li: NotRequired[int | None]
    """School pages: members on the network who list the school in their education (the page's "N alumni").
    Absent on company and showcase pages.
    """
    banner_img: NotRequired[str | None]
    """Cover (banner) image URL, from the top card's cover image.
    """
    company_id: NotRequired[int | None]
    """The network's organization id, from `urn:li:organization:<id>` on the page.
    """
    company_name: NotRequired[str | None]
    """Display name: JSON-LD `Organization.name`, else the top card's `h1`.
    """
    company_size: NotRequired[str | None]
    """The network's size bucket as shown, e.g. `51-200 employees`.
    """
    description: NotRequired[str | None]
    """The "About us" description (JSON-LD `Organization.description`, else the About section text).
    """
    domain: NotRequired[str | None]
    """Registrable domain of `website`, e.g. `audiense.com` (public-suffix aware).
    """
    employee_count_on_li: NotRequired[int | None]
    """Members on the network who list the company as employer.
    """
    employees_on_li: NotRequired[list[Employee]]
    """The "Employees at" sample of member profiles.
    """
    final_li_url: NotRequired[str | None]
    """Canonical URL of the page that was parsed (`https://www.<network>/company/<slug>`), after redirects.
    """
    follower_count: NotRequired[int | None]
    """Followers on the network.
    """
    founded: NotRequired[int | None]
    """Founding year, e.g. `2011`.
    """
    funding_info: NotRequired[FundingInfo | None]
    """The "Funding" section.
    """
    headquarters: NotRequired[Address | None]
    """Primary headquarters address.
    """
    industries: NotRequired[str | None]
    """Primary industry as the network labels it, e.g. `Software Development`.
    """
    job_count: NotRequired[int | None]
    """Open jobs: the count in the header of the network's guest job search filtered by the company's id
    (`/jobs/search?f_C=<company_id>`, `span.results-context-header__job-count`), fetched only when a request
    includes `job_count` (the company page itself shows no count), then kept with the snapshot, so a later
    stored answer has it whether that request includes it or not. See `provenance.job_count`.
    """
    job_count_is_lower_bound: NotRequired[bool | None]
    """Set with `job_count`: true when the search shows a floor rather than the count ("2,000+" is
    `job_count: 2000` and `true`), false when it is the count.
    """
    locations: NotRequired[list[Location]]
    """Office locations of the "Locations" section.
    """
    logo: NotRequired[str | None]
    """Logo image URL (JSON-LD `Organization.logo.contentUrl`, else the top card image).
    """
    parent_company: NotRequired[PageCard | None]
    """Showcase pages: the company page the showcase belongs to (`title`, `link`). Absent on company and school
    pages.
    """
    products: NotRequired[list[Product]]
    """The "Products" section.
    """
    provenance: NotRequired[Provenance | None]
    """Where the parts fetched apart from the page come from, when and how each fetch went; absent when the
    snapshot was fetched without any (by requests without `include`).
    """
    similar_pages: NotRequired[list[PageCard]]
    """The "Similar pages" section.
    """
    slogan: NotRequired[str | None]
    """Tagline (JSON-LD `Organization.slogan`, else the top card's second subline).
    """
    specialties: NotRequired[list[str]]
    """Specialties, split the way the page lists them.
    """
    student_count_on_li: NotRequired[int | None]
    """School pages: the students the page counts ("N students"), when it shows them.
    """
    type: NotRequired[str | None]
    """Organization type as shown, e.g. `Public Company`, `Privately Held`.
    """
    updates: NotRequired[list[Update]]
    """Recent posts of the "Updates" section.
    """
    website: NotRequired[str | None]
    """The company's website as the page links it, unwrapped from the network's redirect link.
    """


class CompanyRequest(TypedDict):
    """The body of `POST /v1/network/company-data` as a client writes it (spec 2.1; a bulk job's body is
    `JobRequest`). The server checks a body against this schema and names every problem.
    """
    fields: NotRequired[list[Literal["original_li_url", "company_name", "company_id", "final_li_url", "domain", "website", "logo", "banner_img", "description", "slogan", "industries", "type", "founded", "company_size", "employee_count_on_li", "follower_count", "alumni_count_on_li", "student_count_on_li", "parent_company", "job_count", "job_count_is_lower_bound", "specialties", "headquarters", "locations", "funding_info", "products", "updates", "similar_pages", "affiliated_pages", "employees_on_li", "provenance", "source", "fetched_at"]]]
    """Field selection (an extension of the seed's request, optional): the record members each answer keeps,
    named as the record names them (`RecordFields::valid_names`); `original_li_url` and
    `final_li_url` are always kept. Absent: whole records. Billing is the same either way.
    """
    include: NotRequired[list[Literal["job_count"]]]
    """Parts of the record fetched only when asked for (an extension, optional), each one more origin request per
    company fetched live and no extra credits: `job_count`, the company's open jobs as the network's guest job
    search counts them. A stored snapshot answers only when it carries every part asked for.
    """
    liUrls: list[str]
    """Company, school or showcase page URLs, as the caller has them.
    """
    maxAgeHours: NotRequired[float]
    """Freshness window in hours (0 to 24); absent or 0 fetches live.
    """
    maxAgeSeconds: NotRequired[float]
    """Freshness window in seconds; wins over `maxAgeHours`.
    """
    staleIfError: NotRequired[bool]
    """When a live fetch fails for a reason that may pass (the network refused it or showed its sign-in wall,
    it timed out, it could not be reached), answer with the newest stored snapshot of any age instead, as
    `source: "stale"` billed at the stored price (after `stale-if-error`, RFC 5861). Default false. The
    synchronous endpoint only: a bulk job waits for a route instead.
    """


class CompanyResponse(TypedDict):
    """The body of a 200 (spec 2.2) plus `unresolved`, the URLs that could not be turned into a record.
    """
    message: str
    """Always `Success` on a 200.
    """
    results: list[CompanyResult]
    """One record per resolved input position, in input order.
    """
    status_code: int
    """The HTTP status, 200.
    """
    unresolved: list[UnresolvedUrl]
    """One entry per input position that did not resolve, in input order; empty when all resolved. These are
    not billed.
    """


class CompanyResult(TypedDict):
    """A record as returned for one input position: the page's record members at the top level, between
    `original_li_url` and `source` (the JSON shape of `CompanyResult`, for its schema).
    """
    affiliated_pages: NotRequired[list[PageCard]]
    """The "Affiliated pages" section (subsidiaries, showcases, acquired companies).
    """
    alumni_count_on_li: NotRequired[int | None]
    """School pages: members on the network who list the school in their education (the page's "N alumni").
    Absent on company and showcase pages.
    """
    banner_img: NotRequired[str | None]
    """Cover (banner) image URL, from the top card's cover image.
    """
    company_id: NotRequired[int | None]
    """The network's organization id, from `urn:li:organization:<id>` on the page.
    """
    company_name: NotRequired[str | None]
    """Display name: JSON-LD `Organization.name`, else the top card's `h1`.
    """
    company_size: NotRequired[str | None]
    """The network's size bucket as shown, e.g. `51-200 employees`.
    """
    description: NotRequired[str | None]
    """The "About us" description (JSON-LD `Organization.description`, else the About section text).
    """
    domain: NotRequired[str | None]
    """Registrable domain of `website`, e.g. `audiense.com` (public-suffix aware).
    """
    employee_count_on_li: NotRequired[int | None]
    """Members on the network who list the company as employer.
    """
    employees_on_li: NotRequired[list[Employee]]
    """The "Employees at" sample of member profiles.
    """
    fetched_at: str
    """When the page was fetched from the network (RFC 3339, UTC).
    """
    final_li_url: NotRequired[str | None]
    """Canonical URL of the page that was parsed (`https://www.<network>/company/<slug>`), after redirects.
    """
    follower_count: NotRequired[int | None]
    """Followers on the network.
    """
    founded: NotRequired[int | None]
    """Founding year, e.g. `2011`.
    """
    funding_info: NotRequired[FundingInfo | None]
    """The "Funding" section.
    """
    headquarters: NotRequired[Address | None]
    """Primary headquarters address.
    """
    industries: NotRequired[str | None]
    """Primary industry as the network labels it, e.g. `Software Development`.
    """
    job_count: NotRequired[int | None]
    """Open jobs: the count in the header of the network's guest job search filtered by the company's id
    (`/jobs/search?f_C=<company_id>`, `span.results-context-header__job-count`), fetched only when a request
    includes `job_count` (the company page itself shows no count), then kept with the snapshot, so a later
    stored answer has it whether that request includes it or not. See `provenance.job_count`.
    """
    job_count_is_lower_bound: NotRequired[bool | None]
    """Set with `job_count`: true when the search shows a floor rather than the count ("2,000+" is
    `job_count: 2000` and `true`), false when it is the count.
    """
    locations: NotRequired[list[Location]]
    """Office locations of the "Locations" section.
    """
    logo: NotRequired[str | None]
    """Logo image URL (JSON-LD `Organization.logo.contentUrl`, else the top card image).
    """
    original_li_url: str
    """The URL exactly as the caller sent it.
    """
    parent_company: NotRequired[PageCard | None]
    """Showcase pages: the company page the showcase belongs to (`title`, `link`). Absent on company and school
    pages.
    """
    products: NotRequired[list[Product]]
    """The "Products" section.
    """
    provenance: NotRequired[Provenance | None]
    """Where the parts fetched apart from the page come from, when and how each fetch went; absent when the
    snapshot was fetched without any (by requests without `include`).
    """
    similar_pages: NotRequired[list[PageCard]]
    """The "Similar pages" section.
    """
    slogan: NotRequired[str | None]
    """Tagline (JSON-LD `Organization.slogan`, else the top card's second subline).
    """
    source: RecordSource
    """`live`: fetched for this request; `stored`: a snapshot fetched inside the request's freshness window.
    """
    specialties: NotRequired[list[str]]
    """Specialties, split the way the page lists them.
    """
    student_count_on_li: NotRequired[int | None]
    """School pages: the students the page counts ("N students"), when it shows them.
    """
    type: NotRequired[str | None]
    """Organization type as shown, e.g. `Public Company`, `Privately Held`.
    """
    updates: NotRequired[list[Update]]
    """Recent posts of the "Updates" section.
    """
    website: NotRequired[str | None]
    """The company's website as the page links it, unwrapped from the network's redirect link.
    """


class CompanyRow(TypedDict):
    """A company as a search lists it: who it is, what it does, how big, where, and when its page was fetched. Every
    member is the record's own, under the record's name, so a client that reads records reads rows; the whole
    record is one stored lookup of `final_li_url` away.
    """
    company_id: NotRequired[int | None]
    """The network's organization id.
    """
    company_name: NotRequired[str | None]
    """Display name (the record's `company_name`).
    """
    company_size: NotRequired[str | None]
    """The network's size band as shown, e.g. `51-200 employees`.
    """
    domain: NotRequired[str | None]
    """Registrable domain of the website, e.g. `audiense.com`.
    """
    employee_count_on_li: NotRequired[int | None]
    """Members on the network who list the company as employer.
    """
    fetched_at: NotRequired[str | None]
    """When the page was fetched from the network (RFC 3339).
    """
    final_li_url: str
    """The page's canonical URL: the snapshot's URL (the page the fetch resolved to).
    """
    follower_count: NotRequired[int | None]
    """Followers of the page.
    """
    founded: NotRequired[int | None]
    """Founding year.
    """
    headquarters: NotRequired[RowPlace | None]
    """Where the headquarters are: the record's `headquarters` with its `country`, `region` and `locality` only.
    """
    industries: NotRequired[str | None]
    """Primary industry as the network labels it, e.g. `Software Development`.
    """
    logo: NotRequired[str | None]
    """Logo image URL.
    """
    type: NotRequired[str | None]
    """Organization type as shown, e.g. `Privately Held`.
    """
    website: NotRequired[str | None]
    """The company's website as the page links it.
    """


class CreatedWatches(TypedDict):
    """The watches `POST /v1/network/company-data/watches` made: one per distinct page of the request, in its order.
    """
    watches: list[Watch]
    """One watch per distinct page.
    """


class DeliveryInfo(TypedDict):
    """One delivery attempt of a webhook event.
    """
    at: str
    """When.
    """
    error: str | None
    """Null when delivered (2xx).
    """
    status: int | None
    """The receiver's HTTP status, if it answered.
    """


DeliveryState: TypeAlias = Literal["delivered"] | Literal["pending"] | Literal["failed"]
"""Where one event's delivery to one endpoint is.
"""


class Employee(TypedDict):
    """One profile of the "Employees at" sample.
    """
    link: NotRequired[str | None]
    """Their profile URL.
    """
    name: NotRequired[str | None]
    """The person's name as shown.
    """
    title: NotRequired[str | None]
    """Their headline as shown.
    """


EndpointStatus: TypeAlias = Literal["enabled"] | Literal["disabled"]
"""Whether an endpoint is sent events.
"""


class Error(TypedDict):
    """Every error body (spec 2.4): `{error, message, status_code}`, plus `details` on a 400 that lists each
    offending part of the request.
    """
    details: NotRequired[list[Problem]]
    """One entry per problem found in the request (400 only).
    """
    error: str
    """Stable snake_case code, e.g. `invalid_request`, `insufficient_credits`.
    """
    message: str
    """What went wrong and the concrete fix, in English.
    """
    request_id: NotRequired[str | None]
    """The request's id, as in its `X-Request-Id` response header and the server's log: quote it when
    reporting a problem.
    """
    status_code: int
    """The HTTP status of the response.
    """


class Evidence(TypedDict):
    """One step of a resolution: what was looked at and what it showed.
    """
    note: str
    """What it showed, in English.
    """
    step: str
    """What kind of step: `stored` (the stored pages), `site` (the company's home page and its redirects),
    `link` (a page found on the site or guessed), `page` (a page that could not be checked: no such page, or
    its fetch failed), `website` (a page's website compared with the domain), `name` (a page's name, and its
    addresses with a `location` hint, compared with the query's), `remembered` (an earlier resolution).
    """
    url: NotRequired[str | None]
    """The URL the step looked at, when there is one.
    """
    value: NotRequired[str | None]
    """The value it found (a link's `href`, a page's website, a name), when there is one.
    """


class FieldChange(TypedDict):
    """One member that differs between two snapshots: its JSON value before and after (`null` when the page did
    not show it).
    """
    after: Any
    """Its value in the later one.
    """
    before: Any
    """Its value in the earlier snapshot.
    """
    fetched_at: str
    """When the snapshot that first showed `after` was fetched.
    """
    field: str
    """The record member, e.g. `website` (one a watch can follow: `WATCH_FIELDS`).
    """


class FundingInfo(TypedDict):
    """The "Funding" section.
    """
    last_round: NotRequired[FundingRound | None]
    """The most recent round.
    """
    number_of_funding_rounds: NotRequired[int | None]
    """Total rounds the page counts.
    """


class FundingRound(TypedDict):
    """One funding round.
    """
    date: NotRequired[str | None]
    """Date of the round, `YYYY-MM-DD`.
    """
    money_raised: NotRequired[str | None]
    """Amount as shown, e.g. `US$ 25.0M`.
    """
    money_raised_usd: NotRequired[int | None]
    """The amount in US dollars, when the page gives it in a form that can be read as a number.
    """
    money_raised_usd_qualifier: NotRequired[str | None]
    """How exact `money_raised_usd` is, e.g. `estimate`.
    """
    type: NotRequired[str | None]
    """Round type as shown, e.g. `Series A`.
    """


class HistoryPoint(TypedDict):
    """One snapshot's counts (history `points`): members absent when the page did not show them.
    """
    company_size: NotRequired[str | None]
    """The size band as shown (record `company_size`).
    """
    employee_count_on_li: NotRequired[int | None]
    """Members who list the company as employer (record `employee_count_on_li`).
    """
    fetched_at: str
    """When the page was fetched (RFC 3339).
    """
    follower_count: NotRequired[int | None]
    """Followers on the network (record `follower_count`).
    """
    job_count: NotRequired[int | None]
    """Open jobs (record `job_count`): only for fetches that included it.
    """
    job_count_is_lower_bound: NotRequired[bool | None]
    """With `job_count`: whether it is a floor the job search showed (record `job_count_is_lower_bound`).
    """


Include: TypeAlias = Literal["job_count"]
"""One part of a record fetched only when a request names it in `include` (company data, bulk jobs, resolve with
`enrich`). Each costs one more origin request per company fetched live, and no credits: the contract prices
per company.
"""


class Job(TypedDict):
    """A job as `GET /v1/network/company-data/jobs/{id}` answers it. Counts are of input positions.
    """
    callback: NotRequired[JobCallback | None]
    """Where its end is POSTed too (`callbackUrl` as submitted); absent when none was given.
    """
    created_at: str
    """When it was submitted (RFC 3339, UTC).
    """
    credits_charged: float
    """Credits charged so far.
    """
    done: int
    """Positions answered, resolved or not.
    """
    estimated_finish_at: str | None
    """While running: when it should end at its pace so far.
    """
    fields: NotRequired[list[str] | None]
    """The record members its answers keep (`fields` as submitted, with `final_li_url`); absent for whole
    records.
    """
    finished_at: str | None
    """When it became `done` or `cancelled`.
    """
    id: str
    """The job's id (a whole number above 0, written as a string).
    """
    include: NotRequired[list[Include]]
    """The parts of each record it fetches beyond the page (`include` as submitted); absent for none.
    """
    max_age_seconds: float
    """The job's freshness window in seconds (0: live).
    """
    paused_reason: str | None
    """Why a paused job waits, e.g. `insufficient_credits`; null otherwise.
    """
    resolved: int
    """Positions answered with a record.
    """
    started_at: str | None
    """When its first pages were leased.
    """
    status: JobStatus
    """Where it is.
    """
    total: int
    """Input positions.
    """
    unresolved: int
    """Positions answered without one.
    """


class JobCallback(TypedDict):
    """A job's callback as the API shows it: its URL and the names of the headers sent with it (their values, which
    may be the receiver's secrets, are never shown).
    """
    header_names: list[str]
    """The names of `callbackHeaders`, in lower case and sorted.
    """
    url: str
    """`callbackUrl` as submitted.
    """


class JobList(TypedDict):
    """A page of the account's jobs, as `GET /v1/network/company-data/jobs` answers it: newest first.
    """
    jobs: list[Job]
    """Up to the page's `limit` jobs, newest first.
    """
    next: str | None
    """The next page's path (with its `before` and `limit`), or null on the last page.
    """


class JobRequest(TypedDict):
    """The body of a bulk job: as `CompanyRequest`, with up to 100000 URLs and without `staleIfError`; `callbackHeaders` only with `callbackUrl`.
    """
    callbackHeaders: NotRequired[dict[str, str]]
    """Headers sent with each callback, e.g. a token the receiver checks: names in lower case (HTTP names are
    case-insensitive), ten at most; the job shows their names, never their values.
    """
    callbackUrl: NotRequired[str]
    """Where the job's end (`job.finished`, `job.paused`, `job.cancelled`) is POSTed too, signed like every event
    (`Company-Data-Signature`) and retried with backoff: an https URL on a public address, as a webhook
    endpoint's `url`. A one-off resume URL (n8n's "wait for webhook", a Zapier callback) works as it is.
    """
    fields: NotRequired[list[Literal["original_li_url", "company_name", "company_id", "final_li_url", "domain", "website", "logo", "banner_img", "description", "slogan", "industries", "type", "founded", "company_size", "employee_count_on_li", "follower_count", "alumni_count_on_li", "student_count_on_li", "parent_company", "job_count", "job_count_is_lower_bound", "specialties", "headquarters", "locations", "funding_info", "products", "updates", "similar_pages", "affiliated_pages", "employees_on_li", "provenance", "source", "fetched_at"]]]
    """Field selection: the record members each answer keeps, as on `POST /v1/network/company-data`.
    """
    include: NotRequired[list[Literal["job_count"]]]
    """Parts of the record fetched beyond the page, as on `POST /v1/network/company-data` (`job_count`).
    """
    liUrls: list[str | dict[str, Any]]
    """Company, school or showcase page URLs, as the caller has them, each alone or with the caller's metadata.
    """
    maxAgeHours: NotRequired[float]
    """Freshness window in hours (0 to 24); absent or 0 fetches live.
    """
    maxAgeSeconds: NotRequired[float]
    """Freshness window in seconds; wins over `maxAgeHours`.
    """


JobStatus: TypeAlias = Literal["queued"] | Literal["running"] | Literal["paused"] | Literal["done"] | Literal["cancelled"]
"""Where a job is in its life.
"""


class Location(TypedDict):
    """One office of the "Locations" section.
    """
    cityStatePostalCountry: NotRequired[str | None]
    """The last address line, e.g. `Mountain View, CA 94043, US`.
    """
    fullAddress: NotRequired[str | None]
    """All address lines joined by `", "`.
    """
    getDirectionsLink: NotRequired[str | None]
    """The "Get directions" map link.
    """
    street: NotRequired[str | None]
    """First address line.
    """


class MonthUsage(TypedDict):
    """An account's charges since the start of a UTC month, from its ledger rows.
    """
    credits: float
    """Credits charged.
    """
    records: int
    """Companies returned.
    """
    requests: int
    """Requests billed (each writes one charge row, even at zero).
    """
    since: str
    """The first instant counted: midnight UTC on the first of the month (RFC 3339).
    """
    unresolved: int
    """URLs requested that did not resolve (not billed).
    """


class PageCard(TypedDict):
    """A card that links another page (similar and affiliated pages).
    """
    industry: NotRequired[str | None]
    """Its industry as shown.
    """
    link: NotRequired[str | None]
    """The page's canonical URL.
    """
    location: NotRequired[str | None]
    """Its location as shown, e.g. `Uberlândia, MG`.
    """
    logo: NotRequired[str | None]
    """Its logo URL.
    """
    title: NotRequired[str | None]
    """The page's name.
    """


class PartProvenance(TypedDict):
    """How one part of the record was fetched: from where, when, and, when it could not be read, why. A part that
    could not be read is absent from the record (never `null`); its entry says why.
    """
    error: NotRequired[UnresolvedCode | None]
    """Why the part is absent, as an unresolved URL's `error` names it: `blocked`, `authwall`, `timed_out` or
    `fetch_failed` (asking again may read it), `unparseable` or `wrong_page_kind` (the search showed no count
    the parser reads), `not_found` (with `source_url`: the search is gone; without: the page shows no
    `company_id` to search by). Absent when it was read.
    """
    fetched_at: NotRequired[str | None]
    """When the part was fetched (RFC 3339, UTC): its own time, a little after the page's `fetched_at`.
    """
    message: NotRequired[str | None]
    """With `error`: what happened and what to do, in a sentence.
    """
    source_url: NotRequired[str | None]
    """The page the part was read from, e.g. `https://www.linkedin.com/jobs/search?f_C=1441`; absent when
    nothing was fetched (the record has no `company_id` to search by).
    """


class PostAuthor(TypedDict):
    """The author of a post.
    """
    link: NotRequired[str | None]
    """Author page URL.
    """
    text: NotRequired[str | None]
    """Author name.
    """


class Problem(TypedDict):
    """One problem with a request body.
    """
    fix: str
    """How to fix it.
    """
    index: NotRequired[int | None]
    """For `liUrls` items, the item's zero-based index.
    """
    pointer: str
    """Where, as a JSON Pointer (RFC 6901): `/liUrls/3`, `/maxAgeHours`, or `` for the whole body.
    """
    reason: str
    """What is wrong.
    """
    value: NotRequired[Any]
    """The offending value as sent (long strings are cut to 200 characters).
    """


class Product(TypedDict):
    """One card of the "Products" section.
    """
    description: NotRequired[str | None]
    """Product description or category as shown.
    """
    name: NotRequired[str | None]
    """Product name.
    """


class Provenance(TypedDict):
    """The record's `provenance`: one entry per part of the record fetched apart from the page.
    """
    job_count: NotRequired[PartProvenance | None]
    """`job_count` and `job_count_is_lower_bound`: the guest job search.
    """


class Range_of_Timestamp(TypedDict):
    """An inclusive range; an end left out is open. A row without the value matches only a range open at both
    ends.
    """
    max: NotRequired[str]
    """The greatest value matched (inclusive); absent for no upper bound.
    """
    min: NotRequired[str]
    """The least value matched (inclusive); absent for no lower bound.
    """


class Range_of_double(TypedDict):
    """An inclusive range; an end left out is open. A row without the value matches only a range open at both
    ends.
    """
    max: NotRequired[float]
    """The greatest value matched (inclusive); absent for no upper bound.
    """
    min: NotRequired[float]
    """The least value matched (inclusive); absent for no lower bound.
    """


class Range_of_int32(TypedDict):
    """An inclusive range; an end left out is open. A row without the value matches only a range open at both
    ends.
    """
    max: NotRequired[int]
    """The greatest value matched (inclusive); absent for no upper bound.
    """
    min: NotRequired[int]
    """The least value matched (inclusive); absent for no lower bound.
    """


class Range_of_uint64(TypedDict):
    """An inclusive range; an end left out is open. A row without the value matches only a range open at both
    ends.
    """
    max: NotRequired[int]
    """The greatest value matched (inclusive); absent for no upper bound.
    """
    min: NotRequired[int]
    """The least value matched (inclusive); absent for no lower bound.
    """


RecordSource: TypeAlias = Literal["live"] | Literal["stored"] | Literal["stale"]
"""Where a record came from.
"""


class Resolution(TypedDict):
    """A query resolved to a page.
    """
    candidates: list[Candidate]
    """Other pages that fit too (a company's showcase pages, say), best first.
    """
    confidence: float
    """How sure the resolver is, 0 to 1 (docs/api.md lists what each method and check is worth).
    """
    evidence: list[Evidence]
    """Each step that found, checked or rejected a page, in the order taken.
    """
    li_url: str
    """The page, normalized as every page URL the service returns (`https://www.linkedin.com/company/stripe`).
    """
    method: ResolveMethod
    """How the page was found.
    """
    query: ResolveQuery
    """The query as sent.
    """
    record: NotRequired[CompanyResult | None]
    """The page's record, with `"enrich": true`.
    """
    source: RecordSource
    """Whether the page was verified against a live fetch or a stored snapshot (what the resolution cost).
    """


ResolveMethod: TypeAlias = Literal["stored_domain"] | Literal["site_link"] | Literal["site_same_as"] | Literal["site_rel_me"] | Literal["domain_slug"] | Literal["stored_name"] | Literal["name_slug"]
"""How a page was found.
"""


class ResolveQuery(TypedDict):
    """One query: a website `domain`, or a company `name` with optional `location` and `domain` hints. Echoed back
    as sent in its result or unresolved entry.
    """
    domain: NotRequired[str]
    """A website domain (`stripe.com`) or URL (`https://www.stripe.com/about`): its registrable domain is
    resolved. With `name`, a hint: the page's website must be on it.
    """
    location: NotRequired[str]
    """With `name`: where the company is (a country such as `US` or `Germany`, a city, a region), compared
    with the page's headquarters and locations.
    """
    name: NotRequired[str]
    """A company name (`Stripe`, `Stripe, Inc.`): compared without case, accents, punctuation and legal-form
    suffixes.
    """


class ResolveRequest(TypedDict):
    """The body of a resolve request: domains and names to resolve to pages. The server checks a body against this
    schema (`ResolveRequest::from_json`) and names every problem.
    """
    enrich: NotRequired[bool]
    """Also return each resolved page's record, as `POST /v1/network/company-data` would with the same
    freshness window (no extra charge: the page that verified the resolution is the record).
    """
    fields: NotRequired[list[Literal["original_li_url", "company_name", "company_id", "final_li_url", "domain", "website", "logo", "banner_img", "description", "slogan", "industries", "type", "founded", "company_size", "employee_count_on_li", "follower_count", "alumni_count_on_li", "student_count_on_li", "parent_company", "job_count", "job_count_is_lower_bound", "specialties", "headquarters", "locations", "funding_info", "products", "updates", "similar_pages", "affiliated_pages", "employees_on_li", "provenance", "source", "fetched_at"]]]
    """With `enrich`: the record members each returned record keeps, as `fields` on
    `POST /v1/network/company-data` (same names, same rule; the price is the same).
    """
    include: NotRequired[list[Literal["job_count"]]]
    """With `enrich`: parts of the record fetched beyond the page, as on `POST /v1/network/company-data`
    (`job_count`; no extra charge).
    """
    maxAgeHours: NotRequired[float]
    """Accept stored pages fetched up to this many hours ago (0 to 24; default 24 for a resolve request).
    """
    maxAgeSeconds: NotRequired[float]
    """The same window in seconds (0 to 86400); wins over `maxAgeHours`.
    """
    queries: list[ResolveQuery]
    """1 to 200 queries, each a website `domain` or a company `name`.
    """


class ResolveResponse(TypedDict):
    """The answer to a resolve request: one result per resolved query and one entry per query that was not, both
    in query order.
    """
    results: list[Resolution]
    """The queries resolved to a page at or above the confidence threshold.
    """
    unresolved: list[UnresolvedQuery]
    """The queries that were not, each with why.
    """


class RowPlace(TypedDict):
    """Where a row's company has its headquarters (members of the record's `headquarters`).
    """
    country: NotRequired[str | None]
    """Two-letter country code, e.g. `US`.
    """
    locality: NotRequired[str | None]
    """City as shown.
    """
    region: NotRequired[str | None]
    """State or region as shown.
    """


class SearchRequest(TypedDict):
    """The body of a search: filters on the records' own members (every one given must match; a list matches any
    of its values, compared without case or accents), words to find, an order and a page. The server checks a body
    against this schema (`SearchRequest::from_json`) and names every problem.
    """
    companySizes: NotRequired[list[str]]
    """Size bands as shown (`company_size`), e.g. `51-200 employees`.
    """
    companyTypes: NotRequired[list[str]]
    """Organization types as shown (`type`), e.g. `Privately Held`.
    """
    countries: NotRequired[list[str]]
    """Headquarters countries, two-letter codes (`headquarters.country`), e.g. `DE`.
    """
    cursor: NotRequired[str]
    """The previous page's `next_cursor`, for the page after it (with the same filters and order).
    """
    employeeCount: NotRequired[Range_of_uint64]
    """Employees on the network (`employee_count_on_li`), inclusive.
    """
    employeeGrowth: NotRequired[Range_of_double]
    """Employee growth in percent (`{"min": 10}`: at least 10% more employees): the change of
    `employee_count_on_li` from the page's newest fetch at least 90 days before its last one to its last one,
    from the page's history; a company without a fetch that old does not match.
    """
    fetchedAt: NotRequired[Range_of_Timestamp]
    """When the page was last fetched (`fetched_at`, RFC 3339), inclusive.
    """
    fields: NotRequired[list[Literal["final_li_url", "company_name", "company_id", "domain", "website", "logo", "industries", "type", "founded", "company_size", "employee_count_on_li", "follower_count", "headquarters", "fetched_at"]]]
    """The row members each result keeps (`final_li_url` always), as `fields` selects a record's elsewhere;
    every member without it.
    """
    followerCount: NotRequired[Range_of_uint64]
    """Followers (`follower_count`), inclusive.
    """
    founded: NotRequired[Range_of_int32]
    """Founding year (`founded`), inclusive.
    """
    hasWebsite: NotRequired[bool]
    """Whether the company links a website (`website`).
    """
    industries: NotRequired[list[str]]
    """Industries as the network labels them (the record's `industries`), e.g. `Software Development`.
    """
    limit: NotRequired[int]
    """Rows per page (1 to 100; default 20).
    """
    localities: NotRequired[list[str]]
    """Headquarters cities as shown (`headquarters.locality`), e.g. `Berlin`.
    """
    q: NotRequired[str]
    """Words to find in the name, slogan, description or specialties (all of them, each as a whole word, or as
    the start of one when it has 3 characters or more; case and accents ignored).
    """
    regions: NotRequired[list[str]]
    """Headquarters states or regions as shown (`headquarters.region`).
    """
    sort: NotRequired[SearchSort]
    """The order: `relevance` (the default with `q`), `followers` (the default without), `employees` or
    `freshness`; ties by page URL.
    """
    specialties: NotRequired[list[str]]
    """Specialties as listed (`specialties`): a company listing any of them, or all with
    `"specialtiesMatch": "all"`.
    """
    specialtiesMatch: NotRequired[SpecialtiesMatch]
    """Whether a company must list `any` (the default) or `all` of `specialties`.
    """


class SearchResponse(TypedDict):
    """The answer to a search: a page of rows and where the next one starts.
    """
    next_cursor: NotRequired[str]
    """Send it as `cursor`, with the same filters and order, for the next page; absent on the last page.
    """
    results: list[CompanyRow]
    """The companies, in the search's order: each the compact row of its stored record (the whole record is a
    stored lookup of `final_li_url` away).
    """
    scope: SearchScopeName
    """Whose companies were searched: `account` (the companies this account was answered: looked up, resolved,
    enriched or watched) or `deployment` (every company stored on this server).
    """


SearchScopeName: TypeAlias = Literal["account"] | Literal["deployment"]
"""Whose companies a search looked through.
"""


SearchSort: TypeAlias = Literal["relevance"] | Literal["followers"] | Literal["employees"] | Literal["freshness"]
"""The order of a search's rows; ties are broken by URL, ascending. On the wire in lower case (`followers`).
"""


SpecialtiesMatch: TypeAlias = Literal["any"] | Literal["all"]
"""Whether a company must list any or all of a search's `specialties`.
"""


UnresolvedCode: TypeAlias = Literal["not_found"] | Literal["authwall"] | Literal["blocked"] | Literal["wrong_page_kind"] | Literal["timed_out"] | Literal["fetch_failed"] | Literal["unparseable"] | Literal["duplicate"]
"""Why a URL did not resolve. Serialized in snake_case (`not_found`, ...); the set is stable and documented in
the OpenAPI description.
"""


class UnresolvedQuery(TypedDict):
    """A query that was not resolved.
    """
    candidates: NotRequired[list[Candidate]]
    """The pages that fit but not well enough, or too many of them (`ambiguous`), best first.
    """
    error: UnresolvedReason
    """Why.
    """
    evidence: NotRequired[list[Evidence]]
    """Each step taken, as in a result.
    """
    message: str
    """What happened and what to do, in English.
    """
    query: ResolveQuery
    """The query as sent.
    """
    retry_after_seconds: NotRequired[int]
    """For `blocked`: seconds until the network may be asked again (also the answer's `Retry-After`).
    """


UnresolvedReason: TypeAlias = Literal["invalid_domain"] | Literal["no_page_found"] | Literal["ambiguous"] | Literal["site_unreachable"] | Literal["blocked"] | Literal["timed_out"]
"""Why a query was not resolved.
"""


class UnresolvedUrl(TypedDict):
    """An input position that did not resolve to a record.
    """
    error: UnresolvedCode
    """Why, as a stable code.
    """
    message: str
    """What happened and what the caller can do.
    """
    original_li_url: str
    """The URL exactly as the caller sent it.
    """
    retry_after_seconds: NotRequired[int]
    """For `blocked` and `authwall`: whole seconds until the service has a route to the network free again
    (the response's `Retry-After` header carries the largest of them). Absent for other codes.
    """


class Update(TypedDict):
    """One post of the "Updates" section.
    """
    comments: NotRequired[int | None]
    """Comment count.
    """
    date: NotRequired[str | None]
    """Relative age as shown: `1w`, `4mo`, `1y`.
    """
    media: NotRequired[list[str]]
    """Image URLs of the post.
    """
    postAuthor: NotRequired[PostAuthor | None]
    """Who posted it.
    """
    postText: NotRequired[str | None]
    """The post's text, line breaks kept.
    """
    reactions: NotRequired[int | None]
    """Reaction count.
    """


class Watch(TypedDict):
    """A watch as the API shows it (`GET /v1/network/company-data/watches/{id}`).
    """
    created_at: str
    """When it was created.
    """
    disabled_reason: str | None
    """Why it was disabled.
    """
    every_hours: int
    """Hours between refreshes.
    """
    fields: list[str]
    """The record members whose change is an event.
    """
    id: str
    """The watch's id (a whole number above 0, as a string).
    """
    include: NotRequired[list[Include]]
    """The parts of the record each refresh fetches beyond the page; absent for none.
    """
    last_change_at: str | None
    """When the page last changed.
    """
    last_check_error: str | None
    """Why the last refresh got no record, e.g. `insufficient_credits`, `not_found`, `blocked`.
    """
    last_checked_at: str | None
    """When its page was last refreshed.
    """
    last_delivery: DeliveryInfo | None
    """The last delivery attempt of an event.
    """
    li_url: str
    """The page, normalized.
    """
    next_check_at: str
    """When its page is refreshed next.
    """
    status: WatchStatus
    """Whether it still runs.
    """
    webhook_url: str
    """Where change events go.
    """


class WatchList(TypedDict):
    """A page of the account's watches, as `GET /v1/network/company-data/watches` answers it: oldest first.
    """
    next: str | None
    """The next page's path (with its `after` and `limit`), or null on the last page.
    """
    watches: list[Watch]
    """Up to the page's `limit` watches, oldest first.
    """


class WatchRequest(TypedDict):
    """The body of `POST /v1/network/company-data/watches` as a client writes it: the pages to watch, how often and
    where change events go. The server checks a body against this schema (`WatchRequest::from_json`) and names
    every problem.
    """
    everyHours: int
    """Hours between refreshes, a whole number (`WATCH_EVERY_HOURS`: 24 to 720).
    """
    fields: NotRequired[list[Literal["company_name", "company_id", "final_li_url", "domain", "website", "logo", "banner_img", "description", "slogan", "industries", "type", "founded", "company_size", "specialties", "headquarters", "locations", "funding_info", "products", "affiliated_pages", "follower_count", "employee_count_on_li", "job_count"]]]
    """The record members whose change is an event; default: all but the counts (`CHANGE_FIELDS`).
    """
    include: NotRequired[list[Literal["job_count"]]]
    """Parts of the record each refresh fetches beyond the page, as on `POST /v1/network/company-data`
    (`job_count`: its history as a time series; implied when `fields` names `job_count`).
    """
    liUrls: list[str]
    """The pages to watch: company, school or showcase page URLs.
    """
    webhookUrl: str
    """Where change events are POSTed: an https URL on a public address, without user name or password.
    """


WatchStatus: TypeAlias = Literal["active"] | Literal["disabled"]
"""Whether a watch still runs.
"""


class WebhookDelivery(TypedDict):
    """One event's delivery to one endpoint (`GET /v1/webhook-endpoints/{id}/deliveries`).
    """
    attempts: int
    """Attempts so far.
    """
    created_at: str
    """When the event was made.
    """
    delivered_at: str | None
    """When the endpoint answered 2xx.
    """
    event_id: str
    """The event's id, as sent in the body and the `Company-Data-Event-Id` header.
    """
    last_error: str | None
    """What went wrong on the last attempt.
    """
    last_status: int | None
    """The endpoint's HTTP status on the last attempt, if it answered.
    """
    next_attempt_at: str | None
    """When it is tried next (pending only).
    """
    status: DeliveryState
    """Where it is.
    """
    type: str
    """The event's type.
    """


class WebhookDeliveryList(TypedDict):
    """An endpoint's deliveries, newest first.
    """
    deliveries: list[WebhookDelivery]
    """Up to the request's `limit`.
    """


class WebhookEndpoint(TypedDict):
    """A webhook endpoint as the API shows it.
    """
    created_at: str
    """When it was registered.
    """
    disabled_reason: str | None
    """Why it was disabled.
    """
    events: list[AccountEventType]
    """The events it receives.
    """
    id: str
    """Its id (a whole number above 0, as a string).
    """
    last_delivery: DeliveryInfo | None
    """The last delivery attempt to it.
    """
    status: EndpointStatus
    """Whether it is sent events.
    """
    url: str
    """Where events are POSTed.
    """


class WebhookEndpointList(TypedDict):
    """The account's endpoints, by id (`GET /v1/webhook-endpoints`).
    """
    endpoints: list[WebhookEndpoint]
    """At most `MAX_ENDPOINTS` (10) unless the account's quota says otherwise.
    """


class WebhookEndpointRequest(TypedDict):
    """The body that registers a webhook endpoint: where the account's events are POSTed and which ones. The server
    checks a body against this schema (`EndpointRequest::from_json`) and names every problem.
    """
    events: list[AccountEventType]
    """The events it receives: at least one, each once.
    """
    url: str
    """Where events are POSTed: an https URL on a public address, without user name or password.
    """


class WebhookEvent(TypedDict):
    """The body POSTed to a watch's `webhookUrl` when its page changed. The `id` is the same on every delivery
    attempt: drop duplicates by it.
    """
    changes: list[FieldChange]
    """What changed, one entry per member.
    """
    created_at: str
    """When the change was seen.
    """
    final_li_url: str
    """The page the record belongs to (where the URL resolved).
    """
    id: str
    """The event's id, `evt_<watch>_<claim>`.
    """
    record: CompanyRecord
    """The record fetched, as in `CompanyResult` without its per-request members (`original_li_url`, `source`,
    `fetched_at`), copied as stored.
    """
    type: WebhookEventType
    """`company.changed`.
    """
    watch_id: str
    """The watch's id.
    """


WebhookEventType: TypeAlias = Literal["company.changed"]
"""The kind of a webhook event.
"""


class WebhookPing(TypedDict):
    """The answer to a test `ping`: the event queued for the endpoint.
    """
    event_id: str
    """The `ping` event's id: find it in the endpoint's deliveries.
    """
