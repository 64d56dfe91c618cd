"""Outages of PostgreSQL, Redis or a served embedding model answer 503 with ``Retry-After``, never a 500.

Every API surface's error handler (``cognizes.access.api.error_handler``,
``vertex_app.errors.error_handler``) passes what a view raised through
``as_unavailable`` first, so the rule "a backing service down is a retryable
503" lives here once. The request changed nothing it could not roll back: its
transaction, if any, is rolled back with it.
"""

from __future__ import annotations

import logging

import kombu.exceptions
import redis
from django.db import InterfaceError, OperationalError
from rest_framework import exceptions, status

from cognizes.infra.served_embedder import EmbeddingUnavailable

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
"""What ``Retry-After`` asks a client to wait: about the time a restarted PostgreSQL or Redis needs."""

DATABASE_DOWN = (OperationalError, InterfaceError)
"""Django's wrappers of psycopg's connection failures (and of ``psycopg_pool.PoolTimeout``)."""
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError, kombu.exceptions.OperationalError)
"""redis-py's own errors, and Celery's (kombu's) when a task cannot be sent to the broker after its retries."""


class Unavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "unavailable"

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is unavailable; retry in {RETRY_AFTER_SECONDS} s.")
        self.wait = RETRY_AFTER_SECONDS  # DRF's handler turns it into Retry-After


def as_unavailable(exc: Exception) -> Exception:
    """The 503 that ``exc`` means when it says PostgreSQL, Redis or the served embedding model is down (or refuses:
    a setting of this server's to fix, not the caller's request); else ``exc`` itself. The provider's own words stay
    in the log: they name this server's model and may quote its key."""
    if isinstance(exc, EmbeddingUnavailable):
        logger.warning("Embedding model unavailable: %s", exc)
        return Unavailable("The embedding model")
    if isinstance(exc, DATABASE_DOWN):
        what = "The database"
    elif isinstance(exc, REDIS_DOWN):
        what = "Redis"
    else:
        return exc
    logger.warning("%s unavailable: %s: %s", what, type(exc).__name__, exc)
    return Unavailable(what)
