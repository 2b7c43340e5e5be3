"""`enrich_dataframe`: a column of page URLs in, the company records' members out as new columns.

Needs the `pandas` extra: `pip install "company-data[pandas]"`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from .client import Client

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["enrich_dataframe"]

#: The members of a result row that describe the lookup rather than the company; kept apart from the record's.
LOOKUP_MEMBERS = ("position", "original_li_url", "source", "fetched_at", "error", "message")


def enrich_dataframe(
    client: Client,
    df: "pd.DataFrame",
    column: str,
    *,
    fields: Sequence[str] | None = None,
    max_age_hours: float | None = None,
    include: Sequence[str] | None = None,
    prefix: str = "company_",
    poll_interval: float = 2.0,
    timeout: float | None = None,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
) -> "pd.DataFrame":
    """A copy of `df` with the records of the page URLs in `df[column]` as new columns.

    The URLs go as one bulk job (durable, each page charged once however often it appears; up to 100,000 rows),
    which this waits for. Each record member becomes a column named `prefix + member` (`company_company_name`,
    `company_website`, ...; only `fields` when given); `prefix + "status"` is `resolved`, `unresolved` or, for an
    empty cell, missing; `prefix + "error"` says why a row was not resolved. Rows keep their index and order.

    Raises `company_data.errors.ApiError` as the client does (e.g. `InsufficientCredits` when the job cannot
    start), and `TimeoutError` after `timeout` seconds of waiting.
    """
    import pandas as pd

    if column not in df.columns:
        raise KeyError(f"{column!r} is not a column of the frame; its columns are {list(df.columns)}")
    out = df.copy()
    cells = [(row, value) for row, value in enumerate(df[column].tolist()) if isinstance(value, str) and value.strip()]
    status = [None] * len(df)
    errors: list[str | None] = [None] * len(df)
    records: list[dict[str, Any]] = [{} for _ in range(len(df))]
    if cells:
        job = client.submit_job(
            [value.strip() for _, value in cells], fields=fields, max_age_hours=max_age_hours, include=include
        )
        job = client.wait_for_job(job, poll_interval=poll_interval, timeout=timeout, on_progress=on_progress)
        for answer in client.iter_results(job):
            row = cells[int(answer["position"])][0]
            if "error" in answer:
                status[row], errors[row] = "unresolved", answer.get("error")
            else:
                status[row] = "resolved"
                records[row] = {k: v for k, v in answer.items() if k not in LOOKUP_MEMBERS}
    members: list[str] = []
    for record in records:
        members.extend(name for name in record if name not in members)
    new = pd.DataFrame(
        {f"{prefix}{name}": [record.get(name) for record in records] for name in members},
        index=df.index,
    )
    out[f"{prefix}status"] = status
    out[f"{prefix}error"] = errors
    return pd.concat([out, new], axis=1)
