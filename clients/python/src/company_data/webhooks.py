"""Checking a webhook's signature, as a receiver does before trusting its body.

Every event (a job's callback, an account endpoint's event, a watch's change) carries
`Company-Data-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the account's
webhook secret (`whsec_...`, from `company-data webhooks secret` or the dashboard): the scheme Stripe uses.
"""

from __future__ import annotations

import hashlib
import hmac
import time

__all__ = ["SIGNATURE_HEADER", "verify_signature"]

SIGNATURE_HEADER = "Company-Data-Signature"


def verify_signature(
    body: bytes | str,
    header: str | None,
    secret: str,
    *,
    tolerance_seconds: int = 300,
    now: float | None = None,
) -> bool:
    """Whether `header` (the `Company-Data-Signature` value) signs `body` with `secret`.

    `body` must be the raw bytes received (not JSON parsed and dumped again). The signature must have been made
    within `tolerance_seconds` of `now` (default: the clock), which refuses a replayed old delivery. Any `v1` in
    the header may match. Compared in constant time. False for a missing or malformed header.
    """
    if not header:
        return False
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    t: int | None = None
    signatures: list[str] = []
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        if name == "t":
            try:
                t = int(value)
            except ValueError:
                return False
        elif name == "v1":
            signatures.append(value)
    if t is None or not signatures:
        return False
    if abs((time.time() if now is None else now) - t) > tolerance_seconds:
        return False
    expected = hmac.new(secret.encode("utf-8"), f"{t}.".encode() + raw, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, signature) for signature in signatures)
