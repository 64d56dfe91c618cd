"""Django's Redis cache with one connection pool per process, shared by every thread.

Django keeps a cache object per thread, and its Redis client a pool per object.
Under ASGI each request's sync code runs on a thread of its own, so every
request opened a new Redis connection (the throttle's, the one-turn claim's)
and closed it when the thread went. redis-py's pools are thread-safe and reset
themselves in a forked child, so one per server URL serves the whole process.
"""

from __future__ import annotations

import threading
from typing import Any, cast

from django.core.cache import cache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis import Redis

_clients: dict[str, Redis] = {}
_lock = threading.Lock()


class SharedPoolClient(RedisCacheClient):
    """Also one redis-py client per server: Django builds a new one for every cache call (a fifth of a
    throttled request's CPU went to ``Redis.__init__``); redis-py clients are thread-safe."""

    def get_client(self, key: Any = None, *, write: bool = False) -> Redis:
        # RedisCacheClient's own attributes, which django-stubs leaves out.
        url = self._servers[self._get_connection_pool_index(write)]  # type: ignore[attr-defined]
        with _lock:
            if url not in _clients:
                pool = self._pool_class.from_url(url, **self._pool_options)  # type: ignore[attr-defined]  # as above
                _clients[url] = self._client(connection_pool=pool)  # type: ignore[attr-defined]  # as above
            return _clients[url]


class SharedPoolRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedPoolClient

    def redis(self) -> Redis:
        """The process's redis-py client, for what Django's cache API cannot say (``cognizes.access.throttling``'s
        script)."""
        return self._cache.get_client(write=True)


def client() -> Redis:
    """The process's redis-py client of the default cache (settings make it a ``SharedPoolRedisCache``)."""
    return cast(SharedPoolRedisCache, cache).redis()
