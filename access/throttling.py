"""Rate limiting per API key, counted in Redis through Django's cache."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from access.models import ApiKey


class KeyRateThrottle(SimpleRateThrottle):
    """Requests per API key (or per staff user), counted in Redis through Django's cache."""

    scope = "api_key"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if isinstance(request.auth, ApiKey):
            return self.cache_format % {"scope": self.scope, "ident": request.auth.prefix}
        if request.user and request.user.is_authenticated:
            return self.cache_format % {"scope": self.scope, "ident": f"user-{request.user.pk}"}
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
