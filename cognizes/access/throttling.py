"""Rate limiting per API key: a sliding window counted atomically in Redis.

DRF's ``SimpleRateThrottle`` reads a key's history from the cache and writes it
back: two round trips, and concurrent requests each read the same count and all
pass (20 requests at once against a 5/min rate: 20 passed). Here one Lua script
drops the entries older than the window, counts, and records the request only if
it fits, in one round trip that no other request can interleave with. The window
is timed by the Redis server's clock, so web processes on several hosts agree.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import os
import secrets
from typing import Any

from django.core.cache import cache
from redis.commands.core import Script
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from cognizes.access.models import ApiKey
from cognizes.access.outages import REDIS_DOWN
from cognizes.infra import cache as shared_cache

logger = logging.getLogger(__name__)

_TAKE = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local window_ms = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms - window_ms)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now_ms, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window_ms)
  return -1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return tonumber(oldest[2]) + window_ms - now_ms
"""
"""-1 if the request fits (and is counted); else the milliseconds until the oldest counted one leaves the window."""


_process = secrets.token_hex(8)
_requests = itertools.count()


def _member() -> str:
    """A name for one counted request, unique across processes and hosts: a random prefix drawn once per
    process and a counter (``uuid4`` per request read the OS's random source each time)."""
    return f"{_process}-{next(_requests)}"


def _new_process() -> None:
    global _process
    _process = secrets.token_hex(8)  # a forked child must not count under its parent's names


os.register_at_fork(after_in_child=_new_process)


@functools.cache
def _take_script() -> Script:
    """The script on the process's Redis client (sent by its hash; loaded again should Redis restart)."""
    return shared_cache.client().register_script(_TAKE)


class KeyRateThrottle(SimpleRateThrottle):
    """Requests per API key (or per staff user) in a sliding window.

    While Redis is down the throttle lets requests through (and logs it): the
    limit protects the service, and refusing every request would be the outage
    it protects against.
    """

    scope = "api_key"
    _wait: float | None = None
    # Set by SimpleRateThrottle.__init__ from the rate (parse_rate); DRF's stubs do not declare them.
    num_requests: int
    duration: int

    def allow_request(self, request: Request, view: Any) -> bool:
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        try:
            wait_ms = _take_script()(
                keys=[cache.make_key(key)],
                args=[self.duration * 1000, self.num_requests, _member()],
            )
        except REDIS_DOWN as error:
            logger.warning("rate limit not counted, Redis is unavailable: %s", error)
            return True
        if wait_ms < 0:
            return True
        self._wait = math.ceil(wait_ms / 1000)
        return False

    def wait(self) -> float | None:
        return self._wait

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if isinstance(request.auth, ApiKey):
            return self.cache_format % {"scope": self.scope, "ident": request.auth.prefix}
        if request.user and request.user.is_authenticated:
            return self.cache_format % {"scope": self.scope, "ident": f"user-{request.user.pk}"}
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
