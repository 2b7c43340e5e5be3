"""What each API call sends, written once for both clients: the method, path, query and JSON body of a call, the
retry policy, and how an answer becomes a value or an exception. `Client` and `AsyncClient` only move bytes.
"""

from __future__ import annotations

import email.utils
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import httpx

from .errors import ApiError, error_for

# The bounds are the server's OpenAPI document's (`models` is generated from it): `get_companies` splits longer
# lists into requests of `MAX_URLS`; a job's results are read `MAX_RESULT_ROWS` at a time.
from .models import MAX_RESULT_ROWS, MAX_URLS

COMPANY_DATA = "/v1/network/company-data"
RESOLVE = f"{COMPANY_DATA}/resolve"
SEARCH = f"{COMPANY_DATA}/search"
JOBS = f"{COMPANY_DATA}/jobs"
EVENTS = "/v1/events"
ACCOUNT = "/v1/account"

#: A job's statuses after which nothing more happens.
FINAL_STATUSES = ("done", "cancelled")


@dataclass(frozen=True)
class Retry:
    """When a request is sent again: on a connection failure, 429, 502, 503, 504, or 409
    `idempotency_key_in_use` (the same key's first request still runs), after the server's `Retry-After` or an
    exponential backoff, up to `attempts` tries in all. Every POST carries one `Idempotency-Key` across its
    retries, so a retried POST is never charged twice.
    """

    attempts: int = 5
    first_wait: float = 0.5
    longest_wait: float = 30.0

    def wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before try `attempt + 1` (the first retry after attempt 1)."""
        backoff = self.first_wait * (2 ** (attempt - 1))
        return min(retry_after if retry_after is not None else backoff, self.longest_wait)


RETRIED_STATUSES = (429, 502, 503, 504)


@dataclass
class Call:
    """One API call: what to send, and whether its answer is JSON (else text, e.g. CSV or NDJSON)."""

    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    accept: str = "application/json"
    idempotency_key: str | None = None

    def __post_init__(self) -> None:
        if self.method == "POST" and self.idempotency_key is None:
            self.idempotency_key = uuid.uuid4().hex

    def request(self, client: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        headers = {"Accept": self.accept}
        if self.idempotency_key:
            headers["Idempotency-Key"] = self.idempotency_key
        params = {k: v for k, v in self.params.items() if v is not None}
        return client.build_request(
            self.method,
            self.path,
            params=params,
            json=self.body if self.body is not None else None,
            headers=headers,
        )


def retry_after(response: httpx.Response) -> float | None:
    """`Retry-After` in seconds (a number, or an HTTP date), when sent."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        when = email.utils.parsedate_to_datetime(value)
        return max(when.timestamp() - time.time(), 0.0) if when else None


def should_retry(response: httpx.Response) -> bool:
    if response.status_code in RETRIED_STATUSES:
        return True
    if response.status_code == 409:
        return _json(response).get("error") == "idempotency_key_in_use"
    return False


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return body if isinstance(body, dict) else {}


def refusal(response: httpx.Response) -> ApiError:
    """The exception for a non-2xx answer."""
    return error_for(
        response.status_code,
        _json(response),
        response.headers.get("x-request-id"),
        retry_after(response),
    )


def shaped(
    body: dict[str, Any],
    max_age_hours: float | None,
    max_age_seconds: float | None,
    fields: Sequence[str] | None,
    include: Sequence[str] | None,
) -> dict[str, Any]:
    """`body` with the members every lookup body shares, those given: the freshness window, `fields`, `include`."""
    for member, value in (
        ("maxAgeHours", max_age_hours),
        ("maxAgeSeconds", max_age_seconds),
        ("fields", fields),
        ("include", include),
    ):
        if value is not None:
            body[member] = value if isinstance(value, (int, float)) else list(value)
    return body


def company_calls(
    urls: Sequence[str],
    *,
    max_age_hours: float | None,
    max_age_seconds: float | None,
    fields: Sequence[str] | None,
    include: Sequence[str] | None,
    stale_if_error: bool | None,
) -> list[Call]:
    """`POST /v1/network/company-data`, one call per `MAX_URLS` URLs."""
    if isinstance(urls, str):
        raise TypeError("urls must be a list of page URLs, not one string")
    urls = list(urls)
    if not urls:
        raise ValueError("urls is empty: send at least one page URL")
    calls = []
    for start in range(0, len(urls), MAX_URLS):
        body = shaped({"liUrls": urls[start : start + MAX_URLS]}, max_age_hours, max_age_seconds, fields, include)
        if stale_if_error is not None:
            body["staleIfError"] = stale_if_error
        calls.append(Call("POST", COMPANY_DATA, body=body))
    return calls


def merge_company_answers(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """The answers of a list split into several requests, as one: results and unresolved entries in order."""
    if len(answers) == 1:
        return answers[0]
    merged = dict(answers[0])
    merged["results"] = [r for a in answers for r in a.get("results", [])]
    merged["unresolved"] = [u for a in answers for u in a.get("unresolved", [])]
    return merged


def resolve_call(
    queries: Iterable[str | Mapping[str, str]],
    *,
    enrich: bool | None,
    max_age_hours: float | None,
    max_age_seconds: float | None,
    fields: Sequence[str] | None,
    include: Sequence[str] | None,
) -> Call:
    """`POST …/resolve`. A query is `{"domain": …}`, `{"name": …, "location": …}`, or a string: a domain when it
    has a dot and no space (`stripe.com`, `https://stripe.com/about`), else a name."""
    sent = []
    for query in queries:
        if isinstance(query, str):
            text = query.strip()
            looks_like_domain = "." in text and " " not in text
            sent.append({"domain": text} if looks_like_domain else {"name": text})
        else:
            sent.append(dict(query))
    body = shaped({"queries": sent}, max_age_hours, max_age_seconds, fields, include)
    if enrich is not None:
        body["enrich"] = enrich
    return Call("POST", RESOLVE, body=body)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def search_call(q: str | None, cursor: str | None, limit: int | None, filters: Mapping[str, Any]) -> Call:
    """`POST …/search`. Filters are the body's members in snake case (`countries=["DE"]`,
    `employee_count={"min": 1000}`, `specialties_match="all"`, `sort="followers"`); `None` leaves one out."""
    body: dict[str, Any] = {"q": q, "cursor": cursor, "limit": limit}
    body.update({_camel(name): value for name, value in filters.items()})
    return Call("POST", SEARCH, body={name: value for name, value in body.items() if value is not None})


def job_call(
    urls: Sequence[str | Mapping[str, Any]],
    *,
    max_age_hours: float | None,
    max_age_seconds: float | None,
    fields: Sequence[str] | None,
    include: Sequence[str] | None,
    callback_url: str | None,
    callback_headers: Mapping[str, str] | None,
) -> Call:
    """`POST …/jobs`. An input is a page URL, or `{"liUrl": url, "metadata": {...}}`. Callback header names are
    sent in lower case (the API's rule; HTTP names are case-insensitive)."""
    if isinstance(urls, str):
        raise TypeError("urls must be a list of page URLs, not one string")
    inputs = [u if isinstance(u, str) else dict(u) for u in urls]
    body = shaped({"liUrls": inputs}, max_age_hours, max_age_seconds, fields, include)
    if callback_url is not None:
        body["callbackUrl"] = callback_url
    if callback_headers:
        body["callbackHeaders"] = {name.lower(): value for name, value in callback_headers.items()}
    return Call("POST", JOBS, body=body)


def results_call(job_id: str, start: int, limit: int, accept: str) -> Call:
    return Call(
        "GET",
        f"{JOBS}/{job_id}/results",
        params={"from": start, "limit": limit},
        accept=accept,
    )


def ndjson_rows(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def events_call(after: str | None, limit: int | None, types: Sequence[str] | None) -> Call:
    params: dict[str, Any] = {"after": after, "limit": limit}
    if types:
        params["type"] = ",".join(types)
    return Call("GET", EVENTS, params=params)


def job_id_of(job: str | int | Mapping[str, Any]) -> str:
    """A job's id from the id itself or the job as returned."""
    if isinstance(job, Mapping):
        return str(job["id"])
    return str(job)
