"""API key authentication (``Authorization: Bearer <key>``).

Kept apart from the views: DRF imports authentication classes while it loads
its own views, so this module must not import them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from cognizes.access.models import ApiKey
from cognizes.access.services import get_key


@dataclass(frozen=True)
class ApiClient:
    """The principal of a request made with an API key."""

    key: ApiKey
    is_authenticated: bool = True
    is_staff: bool = False

    def __str__(self) -> str:
        return f"api-key:{self.key.prefix}"


class BearerKeyAuthentication(BaseAuthentication):
    """``Authorization: Bearer <key>``; a wrong or revoked key is refused, not ignored."""

    keyword = b"bearer"

    def authenticate(self, request: Request) -> tuple[ApiClient, ApiKey] | None:
        return self.authenticate_header_value(get_authorization_header(request))

    def authenticate_header_value(self, value: bytes) -> tuple[ApiClient, ApiKey] | None:
        """An ``Authorization`` header's value however the request came (A2A's are Starlette's); None if not Bearer."""
        header = value.split()
        if not header or header[0].lower() != self.keyword:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Send the key as 'Authorization: Bearer <key>'.")
        return self.authenticate_key(header[1].decode(errors="replace"))

    def authenticate_key(self, raw: str) -> tuple[ApiClient, ApiKey]:
        """The principal of a key however it was sent; a wrong or revoked key is refused."""
        api_key = get_key(raw)
        if api_key is None:
            raise exceptions.AuthenticationFailed("Unknown or revoked API key.")
        now = timezone.now()
        if api_key.last_used_at is None or (now - api_key.last_used_at).total_seconds() > 60:
            ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
            api_key.last_used_at = (
                now  # the remembered key too (cognizes.access.key_cache), or it would write every time
            )
        return ApiClient(api_key), api_key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="cognizes"'


class BearerKeyScheme(OpenApiAuthenticationExtension):
    target_class = "cognizes.access.authentication.BearerKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "An API key (cognizes create_api_key APP)."}
