"""The exceptions the client raises: one per kind of refusal, each carrying the API's `error`, `message`, the fixes
it named and the request's id, so a pipeline can catch what it can handle (`InsufficientCredits`: top up;
`RateLimited`: slow down) and log the rest with what to quote when asking for help.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CompanyDataError",
    "ApiError",
    "InvalidRequest",
    "Unauthorized",
    "InsufficientCredits",
    "Forbidden",
    "NotFound",
    "Conflict",
    "RateLimited",
    "ServerError",
    "TransportError",
]


class CompanyDataError(Exception):
    """Any error of this package."""


class TransportError(CompanyDataError):
    """The server could not be reached or did not answer, after the retries."""


class ApiError(CompanyDataError):
    """The server refused the request (after the retries, where a retry could mend it).

    Attributes:
        status_code: the HTTP status.
        error: the API's stable code, e.g. `insufficient_credits`, `invalid_request`.
        message: what went wrong and the fix, in English.
        details: for a 400, one entry per problem (`pointer`, `reason`, `fix`, ...).
        request_id: the request's id, as the server logged it: quote it when reporting a problem.
        retry_after: seconds the server asked to wait (`Retry-After`), when it did.
    """

    def __init__(
        self,
        status_code: int,
        error: str,
        message: str,
        details: list[dict[str, Any]] | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status_code} {error}: {message}")
        self.status_code = status_code
        self.error = error
        self.message = message
        self.details = details or []
        self.request_id = request_id
        self.retry_after = retry_after

    @property
    def fixes(self) -> list[str]:
        """The fix of each problem the server named (400), else the message's own `Fix:` part, if any."""
        named = [d["fix"] for d in self.details if isinstance(d, dict) and d.get("fix")]
        if named:
            return named
        _, found, fix = self.message.partition("Fix: ")
        return [fix.strip()] if found else []

    @property
    def fix(self) -> str | None:
        """The first of `fixes`, or None."""
        return next(iter(self.fixes), None)


class InvalidRequest(ApiError):
    """400: the body or query breaks the contract; `details` names every problem."""


class Unauthorized(ApiError):
    """401: no API key, or one the server does not know."""


class InsufficientCredits(ApiError):
    """402: the account cannot pay for the request; nothing was charged."""


class Forbidden(ApiError):
    """403: the key may not do this (e.g. a test-mode key on a live-only route)."""


class NotFound(ApiError):
    """404: no such job, watch, endpoint or event for this account."""


class Conflict(ApiError):
    """409 or 422: the request conflicts with the account's state (a quota, an idempotency key reused)."""


class RateLimited(ApiError):
    """429: too many requests; `retry_after` says when to try again."""


class ServerError(ApiError):
    """5xx: the server (or the network's origin behind it) failed."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    402: InsufficientCredits,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: Conflict,
    429: RateLimited,
}


def error_for(
    status_code: int, body: Any, request_id: str | None, retry_after: float | None
) -> ApiError:
    """The exception for an answer of `status_code` whose JSON body is `body` (the API's `Error` object)."""
    body = body if isinstance(body, dict) else {}
    kind = _BY_STATUS.get(status_code, ServerError if status_code >= 500 else ApiError)
    return kind(
        status_code,
        str(body.get("error") or f"http_{status_code}"),
        str(body.get("message") or "the server gave no message"),
        body.get("details") if isinstance(body.get("details"), list) else None,
        body.get("request_id") or request_id,
        retry_after,
    )
