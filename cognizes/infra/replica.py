"""Where reads that may be slightly stale go: the streaming replica of ``DATABASE_REPLICA_URL``, else the primary.

Memory search, the admin's lists and trace views read from it. Session reads never
do: a session is read in order to be written (ADK appends to the copy it loaded), so
a stale copy would only earn the writer a StaleSessionError; and nothing that
decides a write (deduplication, the memory lock, API keys) reads it either.

A replica that cannot be reached is not an outage: those reads go to the primary
for ``REPLICA_RETRY_SECONDS``, then the replica is tried again.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.models import QuerySet
from django.http import HttpRequest

logger = logging.getLogger(__name__)

REPLICA = "replica"
REPLICA_RETRY_SECONDS = 5.0

_lock = threading.Lock()
_down_until = 0.0


def stale_ok() -> str:
    """The database alias for a read that may lag the primary by a little."""
    if REPLICA not in settings.DATABASES or time.monotonic() < _down_until:
        return DEFAULT_DB_ALIAS
    try:
        connections[REPLICA].ensure_connection()
    except DatabaseError as error:
        _mark_down(error)
        return DEFAULT_DB_ALIAS
    return REPLICA


def _mark_down(error: Exception) -> None:
    global _down_until
    with _lock:
        if time.monotonic() >= _down_until:
            logger.warning("replica unreachable, reading the primary for %.0f s: %s", REPLICA_RETRY_SECONDS, error)
        _down_until = time.monotonic() + REPLICA_RETRY_SECONDS


class ListsFromReplica(admin.ModelAdmin):
    """An admin whose list pages (GET of the changelist) read the replica; its actions and forms read the primary."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        match = request.resolver_match
        if request.method == "GET" and match is not None and (match.url_name or "").endswith("_changelist"):
            return queryset.using(stale_ok())
        return queryset
