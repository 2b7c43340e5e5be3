"""The Python client of company-data: company, school and showcase page URLs in, normalized company records out.

    from company_data import Client

    with Client(base_url="http://localhost:8080", api_key="cdk_live_...") as client:
        answer = client.get_companies(["https://www.linkedin.com/company/google"])

`Client` blocks, `AsyncClient` awaits; both retry what a retry can mend (obeying `Retry-After`, with one
`Idempotency-Key` per POST across its tries) and raise the API's refusals as `errors.ApiError` subclasses.
`verify_signature` checks a webhook's signature; `company_data.pandas.enrich_dataframe` enriches a DataFrame
(the `pandas` extra). The API's types are in `company_data.models`.
"""

from ._calls import Retry
from .client import AsyncClient, Client
from .errors import (
    ApiError,
    CompanyDataError,
    Conflict,
    Forbidden,
    InsufficientCredits,
    InvalidRequest,
    NotFound,
    RateLimited,
    ServerError,
    TransportError,
    Unauthorized,
)
from .webhooks import SIGNATURE_HEADER, verify_signature

__version__ = "0.1.0"

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "CompanyDataError",
    "Conflict",
    "Forbidden",
    "InsufficientCredits",
    "InvalidRequest",
    "NotFound",
    "RateLimited",
    "Retry",
    "SIGNATURE_HEADER",
    "ServerError",
    "TransportError",
    "Unauthorized",
    "verify_signature",
]
