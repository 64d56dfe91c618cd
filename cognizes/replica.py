"""Where reads that may be slightly stale go: the streaming replica of ``DATABASE_REPLICA_URL``, else the primary.

Memory search, the admin's lists and trace views read from it. Session reads never
do: a session is read in order to be written (ADK appends to the copy it loaded), so
a stale copy would only earn the writer a StaleSessionError; and nothing that
decides a write (deduplication, the memory lock, API keys) reads it either.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin
from django.db import DEFAULT_DB_ALIAS
from django.db.models import QuerySet
from django.http import HttpRequest

REPLICA = "replica"


def stale_ok() -> str:
    """The database alias for a read that may lag the primary by a little."""
    return REPLICA if REPLICA in settings.DATABASES else DEFAULT_DB_ALIAS


class ListsFromReplica(admin.ModelAdmin):
    """An admin whose list pages (GET of the changelist) read the replica; its actions and forms read the primary."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        match = request.resolver_match
        if request.method == "GET" and match is not None and (match.url_name or "").endswith("_changelist"):
            return queryset.using(stale_ok())
        return queryset
