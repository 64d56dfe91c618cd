"""Google's API-key header, ``x-goog-api-key``, carrying a Cognizes API key.

Vertex AI's express mode sends the key this way; project mode sends
``Authorization: Bearer`` (access's own authentication). Either way it is an
ordinary Cognizes key with its app, user and read-only scope.
"""

from __future__ import annotations

from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from cognizes.access.authentication import ApiClient, BearerKeyAuthentication
from cognizes.access.models import ApiKey


class GoogleApiKeyAuthentication(BaseAuthentication):
    """``x-goog-api-key: <key>`` (or Google's ``?key=``); a wrong or revoked key is refused, not ignored."""

    header = "x-goog-api-key"
    query = "key"

    def authenticate(self, request: Request) -> tuple[ApiClient, ApiKey] | None:
        raw = request.headers.get(self.header) or request.query_params.get(self.query)
        if not raw:
            return None
        return BearerKeyAuthentication().authenticate_key(raw)

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="cognizes"'
