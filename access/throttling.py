"""Rate limiting per API key, counted in Redis through Django's cache."""

from __future__ import annotations

import logging
from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from access.models import ApiKey
from access.outages import REDIS_DOWN

logger = logging.getLogger(__name__)


class KeyRateThrottle(SimpleRateThrottle):
    """Requests per API key (or per staff user), counted in Redis through Django's cache.

    While Redis is down the throttle lets requests through (and logs it): the
    limit protects the service, and refusing every request would be the outage
    it protects against.
    """

    scope = "api_key"

    def allow_request(self, request: Request, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except REDIS_DOWN as error:
            logger.warning("rate limit not counted, Redis is unavailable: %s", error)
            return True

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if isinstance(request.auth, ApiKey):
            return self.cache_format % {"scope": self.scope, "ident": request.auth.prefix}
        if request.user and request.user.is_authenticated:
            return self.cache_format % {"scope": self.scope, "ident": f"user-{request.user.pk}"}
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
