"""`Client` (blocking) and `AsyncClient` (asyncio): the same methods, on httpx.

    from company_data import Client

    with Client(base_url="http://localhost:8080", api_key="cdk_live_...") as client:
        answer = client.get_companies(["https://www.linkedin.com/company/google"], max_age_hours=24)
        for record in answer["results"]:
            print(record["company_name"], record["website"])

Every method returns the API's JSON as Python values (typed in `company_data.models`) or raises an
`company_data.errors.ApiError` subclass. What each call sends lives in `_calls`; these classes only send it,
retrying what a retry can mend (`Retry`).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import IO, Any, AsyncIterator, Callable, Iterator, Mapping, Sequence, Union

import httpx

from . import _calls
from ._calls import FINAL_STATUSES, MAX_RESULT_ROWS, Call, Retry
from .errors import TransportError
from .models import (
    Account,
    AccountEvent,
    AccountEventList,
    CompanyResponse,
    Job,
    CompanyRow,
    JobList,
    ResolveResponse,
    SearchResponse,
)

__all__ = ["Client", "AsyncClient", "Retry"]

DEFAULT_TIMEOUT = 120.0
USER_AGENT = "company-data-python/0.1"

#: A job: its id, or the job as a method returned it.
JobRef = Union[str, int, Mapping[str, Any]]


def _headers(api_key: str) -> dict[str, str]:
    if not api_key:
        raise ValueError("api_key is empty: pass the key `company-data keys create` printed (cdk_live_... or cdk_test_...)")
    return {"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT}


def _waited_enough(started: float, timeout: float | None) -> bool:
    return timeout is not None and time.monotonic() - started >= timeout


class Client:
    """A blocking client of one server. Use it as a context manager, or call `close()`.

    Args:
        base_url: the server, e.g. `http://localhost:8080`.
        api_key: the account's API key (`Authorization: Bearer`).
        timeout: seconds for each HTTP attempt (a live lookup of 200 pages may take a while).
        retry: when to send a request again (`Retry()`: 5 tries, `Retry-After` obeyed).
        transport: an httpx transport, for tests or proxies.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retry: Retry | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._http = httpx.Client(
            base_url=base_url, headers=_headers(api_key), timeout=timeout, transport=transport
        )
        self.retry = retry or Retry()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _send(self, call: Call) -> httpx.Response:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._http.send(call.request(self._http))
            except httpx.TransportError as error:
                if attempt >= self.retry.attempts:
                    raise TransportError(f"{call.method} {call.path}: {error}") from error
                time.sleep(self.retry.wait(attempt, None))
                continue
            if response.is_success:
                return response
            if attempt < self.retry.attempts and _calls.should_retry(response):
                time.sleep(self.retry.wait(attempt, _calls.retry_after(response)))
                continue
            raise _calls.refusal(response)

    def _json(self, call: Call) -> Any:
        response = self._send(call)
        return response.json() if response.content else None

    # -- lookups

    def get_companies(
        self,
        urls: Sequence[str],
        *,
        max_age_hours: float | None = None,
        max_age_seconds: float | None = None,
        fields: Sequence[str] | None = None,
        include: Sequence[str] | None = None,
        stale_if_error: bool | None = None,
    ) -> CompanyResponse:
        """Records for company, school or showcase page URLs (`POST /v1/network/company-data`): `results` (one
        record per resolved URL, in order) and `unresolved` (why each other one was not). A list over 200 URLs is
        sent as several requests and answered as one. `max_age_hours` (0 to 24) lets a stored snapshot answer at
        the stored price; `fields` keeps only those record members; `include=["job_count"]` adds the open jobs.
        """
        answers = [
            self._json(call)
            for call in _calls.company_calls(
                urls,
                max_age_hours=max_age_hours,
                max_age_seconds=max_age_seconds,
                fields=fields,
                include=include,
                stale_if_error=stale_if_error,
            )
        ]
        return _calls.merge_company_answers(answers)  # type: ignore[return-value]

    def resolve(
        self,
        queries: Sequence[str | Mapping[str, str]],
        *,
        enrich: bool | None = None,
        max_age_hours: float | None = None,
        max_age_seconds: float | None = None,
        fields: Sequence[str] | None = None,
        include: Sequence[str] | None = None,
    ) -> ResolveResponse:
        """Company pages for website domains or names (`POST …/resolve`); each query a `{"domain": …}` or
        `{"name": …, "location": …}`, or a string (a domain if it has a dot and no space, else a name).
        `enrich=True` returns each resolved page's record too."""
        return self._json(
            _calls.resolve_call(
                queries,
                enrich=enrich,
                max_age_hours=max_age_hours,
                max_age_seconds=max_age_seconds,
                fields=fields,
                include=include,
            )
        )

    def search(
        self, q: str | None = None, *, cursor: str | None = None, limit: int | None = None, **filters: Any
    ) -> SearchResponse:
        """A page of the stored companies that match (`POST …/search`; by default those this account was
        answered), free: words `q` and filters given as the body's members in snake case, e.g.
        `search("robotics", countries=["DE"], employee_count={"min": 100}, sort="followers")`; `fields=[...]` keeps
        only those row members (and `final_li_url`). Pass the answer's
        `next_cursor` as `cursor` for the next page, or use `iter_search`."""
        return self._json(_calls.search_call(q, cursor, limit, filters))

    def iter_search(self, q: str | None = None, *, limit: int = 100, **filters: Any) -> Iterator[CompanyRow]:
        """Every row that matches, page after page (`limit` rows a request)."""
        cursor = None
        while True:
            page = self.search(q, cursor=cursor, limit=limit, **filters)
            yield from page["results"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def account(self) -> Account:
        """The account's balance, holds and this month's usage (`GET /v1/account`)."""
        return self._json(Call("GET", _calls.ACCOUNT))

    # -- bulk jobs

    def submit_job(
        self,
        urls: Sequence[str | Mapping[str, Any]],
        *,
        max_age_hours: float | None = None,
        max_age_seconds: float | None = None,
        fields: Sequence[str] | None = None,
        include: Sequence[str] | None = None,
        callback_url: str | None = None,
        callback_headers: Mapping[str, str] | None = None,
    ) -> Job:
        """Submits a bulk job of up to 100,000 inputs (`POST …/jobs`), each a page URL or
        `{"liUrl": url, "metadata": {...}}`; the job as created. `callback_url` is POSTed the job's end, signed,
        with `callback_headers` (e.g. `{"Authorization": "Bearer …"}`)."""
        return self._json(
            _calls.job_call(
                urls,
                max_age_hours=max_age_hours,
                max_age_seconds=max_age_seconds,
                fields=fields,
                include=include,
                callback_url=callback_url,
                callback_headers=callback_headers,
            )
        )

    def job(self, job: JobRef) -> Job:
        """The job as it is now."""
        return self._json(Call("GET", f"{_calls.JOBS}/{_calls.job_id_of(job)}"))

    def jobs(self, *, before: str | None = None, limit: int | None = None) -> JobList:
        """A page of the account's jobs, newest first."""
        return self._json(Call("GET", _calls.JOBS, params={"before": before, "limit": limit}))

    def cancel_job(self, job: JobRef) -> Job:
        """Cancels the job; its results so far stay readable."""
        return self._json(Call("POST", f"{_calls.JOBS}/{_calls.job_id_of(job)}/cancel"))

    def delete_job(self, job: JobRef) -> None:
        """Deletes the job and its results."""
        self._send(Call("DELETE", f"{_calls.JOBS}/{_calls.job_id_of(job)}"))

    def wait_for_job(
        self,
        job: JobRef,
        *,
        poll_interval: float = 2.0,
        timeout: float | None = None,
        on_progress: Callable[[Job], None] | None = None,
        until_paused: bool = True,
    ) -> Job:
        """Polls the job until it is `done` or `cancelled` (or `paused`, e.g. out of credits, unless
        `until_paused=False`), calling `on_progress(job)` after each poll; the job as it ended. Raises
        `TimeoutError` after `timeout` seconds."""
        started = time.monotonic()
        while True:
            current = self.job(job)
            if on_progress:
                on_progress(current)
            if current["status"] in FINAL_STATUSES or (until_paused and current["status"] == "paused"):
                return current
            if _waited_enough(started, timeout):
                raise TimeoutError(f"job {current['id']} is still {current['status']} after {timeout} s")
            time.sleep(poll_interval)

    def iter_results(self, job: JobRef, *, page_size: int = MAX_RESULT_ROWS) -> Iterator[dict[str, Any]]:
        """Every answered input of the job, in input order: the record (with `position`, `original_li_url`,
        `source`) or the unresolved entry (with `error`, `message`). Read a page at a time. While the job runs,
        only the inputs answered so far: wait for it first (`wait_for_job`) for all of them."""
        job_id, start = _calls.job_id_of(job), 0
        total = int(self.job(job_id)["total"])
        while start < total:
            rows = _calls.ndjson_rows(
                self._send(_calls.results_call(job_id, start, page_size, "application/x-ndjson")).text
            )
            yield from rows
            start += page_size

    def download_csv(self, job: JobRef, to: str | Path | IO[str], *, page_size: int = MAX_RESULT_ROWS) -> None:
        """Writes the job's results as one CSV (RFC 4180, one header) to a path or an open text file."""
        job_id = _calls.job_id_of(job)
        total = int(self.job(job_id)["total"])
        pages = (
            self._send(_calls.results_call(job_id, start, page_size, "text/csv")).text
            for start in range(0, max(total, 1), page_size)
        )
        _write_csv(pages, to)

    # -- events

    def events(
        self, *, after: str | None = None, limit: int | None = None, types: Sequence[str] | None = None
    ) -> AccountEventList:
        """A page of the account's events, oldest first (`GET /v1/events`): those after the event `after`, of
        `types` only when given. Pass the last `id` seen as `after` to read on."""
        return self._json(_calls.events_call(after, limit, types))

    def iter_events(
        self, *, after: str | None = None, types: Sequence[str] | None = None, limit: int = 100
    ) -> Iterator[AccountEvent]:
        """Every event after `after` until the feed has no more, page by page."""
        while True:
            page = self.events(after=after, limit=limit, types=types)
            yield from page["events"]
            if not page["events"] or not page.get("has_more"):
                return
            after = page["events"][-1]["id"]


class AsyncClient:
    """The asyncio twin of `Client`: the same arguments and methods, each a coroutine (the iterators async)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retry: Retry | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=_headers(api_key), timeout=timeout, transport=transport
        )
        self.retry = retry or Retry()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _send(self, call: Call) -> httpx.Response:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._http.send(call.request(self._http))
            except httpx.TransportError as error:
                if attempt >= self.retry.attempts:
                    raise TransportError(f"{call.method} {call.path}: {error}") from error
                await asyncio.sleep(self.retry.wait(attempt, None))
                continue
            if response.is_success:
                return response
            if attempt < self.retry.attempts and _calls.should_retry(response):
                await asyncio.sleep(self.retry.wait(attempt, _calls.retry_after(response)))
                continue
            raise _calls.refusal(response)

    async def _json(self, call: Call) -> Any:
        response = await self._send(call)
        return response.json() if response.content else None

    async def get_companies(
        self,
        urls: Sequence[str],
        *,
        max_age_hours: float | None = None,
        max_age_seconds: float | None = None,
        fields: Sequence[str] | None = None,
        include: Sequence[str] | None = None,
        stale_if_error: bool | None = None,
    ) -> CompanyResponse:
        """As `Client.get_companies`."""
        calls = _calls.company_calls(
            urls,
            max_age_hours=max_age_hours,
            max_age_seconds=max_age_seconds,
            fields=fields,
            include=include,
            stale_if_error=stale_if_error,
        )
        return _calls.merge_company_answers([await self._json(call) for call in calls])  # type: ignore[return-value]

    async def resolve(
        self,
        queries: Sequence[str | Mapping[str, str]],
        *,
        enrich: bool | None = None,
        max_age_hours: float | None = None,
        max_age_seconds: float | None = None,
        fields: Sequence[str] | None = None,
        include: Sequence[str] | None = None,
    ) -> ResolveResponse:
        """As `Client.resolve`."""
        return await self._json(
            _calls.resolve_call(
                queries,
                enrich=enrich,
                max_age_hours=max_age_hours,
                max_age_seconds=max_age_seconds,
                fields=fields,
                include=include,
            )
        )

    async def search(
        self, q: str | None = None, *, cursor: str | None = None, limit: int | None = None, **filters: Any
    ) -> SearchResponse:
        """As `Client.search`."""
        return await self._json(_calls.search_call(q, cursor, limit, filters))

    async def iter_search(
        self, q: str | None = None, *, limit: int = 100, **filters: Any
    ) -> AsyncIterator[CompanyRow]:
        """As `Client.iter_search`."""
        cursor = None
        while True:
            page = await self.search(q, cursor=cursor, limit=limit, **filters)
            for row in page["results"]:
                yield row
            cursor = page.get("next_cursor")
            if not cursor:
                return

    async def account(self) -> Account:
        """As `Client.account`."""
        return await self._json(Call("GET", _calls.ACCOUNT))

    async def submit_job(
        self,
        urls: Sequence[str | Mapping[str, Any]],
        *,
        max_age_hours: float | None = None,
        max_age_seconds: float | None = None,
        fields: Sequence[str] | None = None,
        include: Sequence[str] | None = None,
        callback_url: str | None = None,
        callback_headers: Mapping[str, str] | None = None,
    ) -> Job:
        """As `Client.submit_job`."""
        return await self._json(
            _calls.job_call(
                urls,
                max_age_hours=max_age_hours,
                max_age_seconds=max_age_seconds,
                fields=fields,
                include=include,
                callback_url=callback_url,
                callback_headers=callback_headers,
            )
        )

    async def job(self, job: JobRef) -> Job:
        """As `Client.job`."""
        return await self._json(Call("GET", f"{_calls.JOBS}/{_calls.job_id_of(job)}"))

    async def jobs(self, *, before: str | None = None, limit: int | None = None) -> JobList:
        """As `Client.jobs`."""
        return await self._json(Call("GET", _calls.JOBS, params={"before": before, "limit": limit}))

    async def cancel_job(self, job: JobRef) -> Job:
        """As `Client.cancel_job`."""
        return await self._json(Call("POST", f"{_calls.JOBS}/{_calls.job_id_of(job)}/cancel"))

    async def delete_job(self, job: JobRef) -> None:
        """As `Client.delete_job`."""
        await self._send(Call("DELETE", f"{_calls.JOBS}/{_calls.job_id_of(job)}"))

    async def wait_for_job(
        self,
        job: JobRef,
        *,
        poll_interval: float = 2.0,
        timeout: float | None = None,
        on_progress: Callable[[Job], None] | None = None,
        until_paused: bool = True,
    ) -> Job:
        """As `Client.wait_for_job`."""
        started = time.monotonic()
        while True:
            current = await self.job(job)
            if on_progress:
                on_progress(current)
            if current["status"] in FINAL_STATUSES or (until_paused and current["status"] == "paused"):
                return current
            if _waited_enough(started, timeout):
                raise TimeoutError(f"job {current['id']} is still {current['status']} after {timeout} s")
            await asyncio.sleep(poll_interval)

    async def iter_results(
        self, job: JobRef, *, page_size: int = MAX_RESULT_ROWS
    ) -> AsyncIterator[dict[str, Any]]:
        """As `Client.iter_results`."""
        job_id, start = _calls.job_id_of(job), 0
        total = int((await self.job(job_id))["total"])
        while start < total:
            response = await self._send(_calls.results_call(job_id, start, page_size, "application/x-ndjson"))
            for row in _calls.ndjson_rows(response.text):
                yield row
            start += page_size

    async def download_csv(
        self, job: JobRef, to: str | Path | IO[str], *, page_size: int = MAX_RESULT_ROWS
    ) -> None:
        """As `Client.download_csv`."""
        job_id = _calls.job_id_of(job)
        total = int((await self.job(job_id))["total"])
        pages = [
            (await self._send(_calls.results_call(job_id, start, page_size, "text/csv"))).text
            for start in range(0, max(total, 1), page_size)
        ]
        _write_csv(iter(pages), to)

    async def events(
        self, *, after: str | None = None, limit: int | None = None, types: Sequence[str] | None = None
    ) -> AccountEventList:
        """As `Client.events`."""
        return await self._json(_calls.events_call(after, limit, types))

    async def iter_events(
        self, *, after: str | None = None, types: Sequence[str] | None = None, limit: int = 100
    ) -> AsyncIterator[AccountEvent]:
        """As `Client.iter_events`."""
        while True:
            page = await self.events(after=after, limit=limit, types=types)
            for event in page["events"]:
                yield event
            if not page["events"] or not page.get("has_more"):
                return
            after = page["events"][-1]["id"]


def _write_csv(pages: Iterator[str], to: str | Path | IO[str]) -> None:
    """Writes CSV pages as one file: every page repeats the header, which is written once."""
    if isinstance(to, (str, Path)):
        with open(to, "w", encoding="utf-8", newline="") as file:
            _write_csv(pages, file)
        return
    for number, page in enumerate(pages):
        if number > 0:
            _, _, page = page.partition("\n")
        to.write(page)
