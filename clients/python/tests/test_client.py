"""The package against the real server binary on loopback (conftest.py): lookups, typed errors, retries, jobs
with a signed callback, the event feed, the async client, the pandas helper, and the models' source."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pandas as pd
import pytest

import company_data
from company_data import (
    AsyncClient,
    Client,
    InsufficientCredits,
    InvalidRequest,
    RateLimited,
    Retry,
    Unauthorized,
    verify_signature,
)
from company_data.pandas import enrich_dataframe

from .conftest import AUDIENSE, GOOGLE, NOBODY, Server

FAST = Retry(attempts=5, first_wait=0.05)


def balance(server: Server, key: str) -> float:
    with Client(server.base_url, key) as client:
        return client.account()["balance"]


def test_get_companies_answers_records_and_why_the_rest_were_not(server: Server) -> None:
    key = server.key("lookups", "10")
    with Client(server.base_url, key) as client:
        answer = client.get_companies([GOOGLE, AUDIENSE, NOBODY], fields=["company_name", "website"])
    assert [r["company_name"] for r in answer["results"]] == ["Google", "Audiense"]
    assert answer["results"][1]["original_li_url"] == AUDIENSE
    assert set(answer["results"][0]) >= {"company_name", "website", "final_li_url"}
    assert "description" not in answer["results"][0]
    assert [(u["original_li_url"], u["error"]) for u in answer["unresolved"]] == [(NOBODY, "not_found")]
    assert balance(server, key) == 8


def test_search_finds_what_the_account_looked_up_page_by_page_and_free(server: Server) -> None:
    key = server.key("searcher", "10")
    with Client(server.base_url, key) as client:
        assert client.search()["results"] == []
        client.get_companies([GOOGLE, AUDIENSE])
        spent = client.account()["balance"]
        first = client.search(limit=1)
        assert [r["company_name"] for r in first["results"]] == ["Google"]
        assert first["scope"] == "account"
        assert [r["company_name"] for r in client.iter_search(limit=1)] == ["Google", "Audiense"]
        found = client.search("audiense", countries=["gb"], employee_count={"min": 10}, sort="followers")
        assert [r["final_li_url"] for r in found["results"]] == ["https://www.linkedin.com/company/audiense"]
        with pytest.raises(InvalidRequest) as invalid:
            client.search(limit=0)
        assert "/limit" in str(invalid.value)
        assert client.account()["balance"] == spent


def test_refusals_are_typed_exceptions_with_the_apis_code_message_and_fix(server: Server) -> None:
    broke = server.key("broke", "0")
    with Client(server.base_url, broke) as client:
        with pytest.raises(InsufficientCredits) as paid:
            client.get_companies([GOOGLE])
        with pytest.raises(InvalidRequest) as invalid:
            client.get_companies(["https://example.com/not-a-page"], max_age_hours=30)
    assert paid.value.status_code == 402
    assert paid.value.error == "insufficient_credits"
    assert "Add credits" in paid.value.message
    assert paid.value.request_id
    assert isinstance(paid.value, company_data.ApiError)
    assert invalid.value.error == "invalid_request"
    assert {d["pointer"] for d in invalid.value.details} == {"/liUrls/0", "/maxAgeHours"}
    assert invalid.value.fix and len(invalid.value.fixes) == 2
    with Client(server.base_url, "cdk_live_not-a-key") as client:
        with pytest.raises(Unauthorized) as unknown:
            client.account()
    assert unknown.value.error == "invalid_api_key"
    with pytest.raises(ValueError):
        Client(server.base_url, "")


def test_a_429_is_retried_after_its_retry_after(slow_server: Server) -> None:
    key = slow_server.key("hurried", "10")
    with Client(slow_server.base_url, key) as client:
        client.account()
        started = time.monotonic()
        # Refused (the burst is spent), retried after the server's Retry-After, then answered.
        assert client.account()["name"] == "hurried"
        assert time.monotonic() - started >= 0.9
    with Client(slow_server.base_url, key, retry=Retry(attempts=1)) as client:
        with pytest.raises(RateLimited) as limited:
            client.account()
    assert limited.value.status_code == 429
    assert limited.value.retry_after and limited.value.retry_after >= 1


class LosesFirstAnswer(httpx.HTTPTransport):
    """Delivers the first request, then drops its answer as a broken connection would: the client must retry
    with the same `Idempotency-Key`, and the server must charge once."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[str | None] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.keys.append(request.headers.get("idempotency-key"))
        response = super().handle_request(request)
        if len(self.keys) == 1:
            response.read()
            raise httpx.ReadError("the connection broke before the answer arrived", request=request)
        return response


def test_a_retried_post_carries_one_idempotency_key_and_is_charged_once(server: Server) -> None:
    key = server.key("flaky-network", "10")
    transport = LosesFirstAnswer()
    with Client(server.base_url, key, retry=FAST, transport=transport) as client:
        answer = client.get_companies([GOOGLE])
    assert answer["results"][0]["company_name"] == "Google"
    assert len(transport.keys) == 2 and transport.keys[0] and transport.keys[0] == transport.keys[1]
    assert balance(server, key) == 9


def test_a_job_runs_its_results_read_and_its_callback_arrives_signed(server: Server, receiver) -> None:
    key = server.key("pipeline", "10")
    progress: list[str] = []
    with Client(server.base_url, key) as client:
        job = client.submit_job(
            [GOOGLE, {"liUrl": AUDIENSE, "metadata": {"crm_id": "0012"}}, NOBODY],
            callback_url=receiver.url,
            callback_headers={"Authorization": "Bearer n8n-s3cret"},
        )
        assert job["callback"] == {"url": receiver.url, "header_names": ["authorization"]}
        done = client.wait_for_job(job, poll_interval=0.2, timeout=60, on_progress=lambda j: progress.append(j["status"]))
        assert done["status"] == "done" and (done["resolved"], done["unresolved"]) == (2, 1)
        assert progress[-1] == "done"
        rows = list(client.iter_results(job, page_size=2))
        assert [row["position"] for row in rows] == [0, 1, 2]
        assert rows[1]["company_name"] == "Audiense" and rows[1]["metadata"] == {"crm_id": "0012"}
        assert rows[2]["error"] == "not_found"
        written = io.StringIO()
        client.download_csv(job, written, page_size=2)
        table = list(csv.reader(io.StringIO(written.getvalue())))
        assert table[0][:3] == ["position", "original_li_url", "metadata.crm_id"]
        assert [row[0] for row in table[1:]] == ["0", "1", "2"], "one header, every row once"

        # The callback: down once, retried, then delivered with the job's header and the account's signature.
        receiver.wait_for(1)
        headers, body, _ = next(g for g in receiver.got if g[2] == 200)
        assert len(receiver.got) == 2
        assert headers["authorization"] == "Bearer n8n-s3cret"
        secret = server.secret("pipeline")
        assert verify_signature(body, headers["company-data-signature"], secret)
        assert not verify_signature(body + b" ", headers["company-data-signature"], secret)
        assert not verify_signature(body, headers["company-data-signature"], secret, now=time.time() + 3600)
        assert not verify_signature(body, None, secret)
        event = json.loads(body)
        assert event["type"] == "job.finished" and event["data"]["job"]["id"] == job["id"]

        # The feed has the same event, id and body; a poller switches from push to poll without a re-join.
        feed = client.events(types=["job.finished"])
        assert feed["events"] == [event]
        assert list(client.iter_events(after=event["id"])) == []
        client.delete_job(job)


def test_the_feed_is_paged_without_gap_or_repeat(server: Server) -> None:
    key = server.key("poller", "10")
    with Client(server.base_url, key) as client:
        ids = []
        for _ in range(3):
            job = client.submit_job([GOOGLE], max_age_hours=24)
            client.wait_for_job(job, poll_interval=0.2, timeout=60)
            ids.append(f"evt_job_{job['id']}_1")
        deadline = time.monotonic() + 30
        while len(client.events()["events"]) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [e["id"] for e in client.iter_events(limit=1)] == ids
        assert [e["id"] for e in client.iter_events(after=ids[0], limit=1)] == ids[1:]


async def test_the_async_client_does_the_same(server: Server) -> None:
    key = server.key("async", "10")
    async with AsyncClient(server.base_url, key) as client:
        answer = await client.get_companies([GOOGLE])
        assert answer["results"][0]["company_name"] == "Google"
        job = await client.submit_job([AUDIENSE, NOBODY], max_age_hours=24)
        done = await client.wait_for_job(job["id"], poll_interval=0.2, timeout=60)
        assert done["status"] == "done"
        rows = [row async for row in client.iter_results(job)]
        assert [r.get("company_name", r.get("error")) for r in rows] == ["Audiense", "not_found"]
        with pytest.raises(InvalidRequest):
            await client.resolve([])
        resolved = await client.resolve(["https://www.audiense.com/about"])
        assert resolved["results"][0]["li_url"] == "https://www.linkedin.com/company/audiense"
        rows = [row async for row in client.iter_search("google")]
        assert [r["final_li_url"] for r in rows] == [GOOGLE]


def test_enrich_dataframe_adds_the_records_as_columns(server: Server) -> None:
    key = server.key("notebook", "10")
    df = pd.DataFrame(
        {"account": ["Alphabet", "Audiense", "blank", "Ghost"], "li": [GOOGLE, AUDIENSE, None, NOBODY]},
        index=[10, 11, 12, 13],
    )
    with Client(server.base_url, key) as client:
        out = enrich_dataframe(client, df, "li", fields=["company_name", "website"], poll_interval=0.2, timeout=60)
    assert list(out.index) == [10, 11, 12, 13]
    assert list(out["account"]) == list(df["account"])
    assert list(out["company_company_name"])[:2] == ["Google", "Audiense"]
    # An empty cell is missing (pandas' missing value, whatever the column's dtype).
    assert [None if pd.isna(v) else v for v in out["company_status"]] == ["resolved", "resolved", None, "unresolved"]
    assert out.loc[13, "company_error"] == "not_found"
    assert "company_website" in out.columns and "company_description" not in out.columns
    with pytest.raises(KeyError):
        enrich_dataframe(client, df, "missing")


def test_the_models_are_the_documents() -> None:
    script = Path(__file__).resolve().parents[1] / "scripts" / "generate_models.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    from company_data import _calls, models

    # The paths the client calls are the document's.
    document = json.loads((Path(__file__).resolve().parents[3] / "docs" / "openapi.json").read_text())
    for path in (_calls.COMPANY_DATA, _calls.RESOLVE, _calls.JOBS, _calls.EVENTS, _calls.ACCOUNT):
        assert path in document["paths"], path

    assert "callbackUrl" in models.JobRequest.__annotations__
    assert "header_names" in models.JobCallback.__annotations__
