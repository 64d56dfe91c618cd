"""Connections of our own to Django's default database, outside its pool.

For what needs a session of its own for as long as it lives — ``LISTEN`` (live
events, the API key cache) — and so must not borrow a pooled connection. They go to
``DATABASE_LISTEN_URL`` when it is set (the ``listen`` alias: the same database
reached directly), since behind a transaction pooler a LISTEN holds a server
connection that other clients' transactions then run on.
"""

from __future__ import annotations

from django.conf import settings
from psycopg.conninfo import make_conninfo

# OPTIONS Django's backend uses itself; everything else (sslmode, …) is a libpq parameter.
_DJANGO_OPTIONS = {"isolation_level", "server_side_binding", "pool", "assume_role", "cursor_factory", "context"}


def conninfo(application_name: str) -> str:
    """libpq parameters of the database reached directly, naming the connection in ``pg_stat_activity``."""
    database = settings.DATABASES.get("listen") or settings.DATABASES["default"]
    fields = {
        "dbname": database["NAME"],
        "user": database.get("USER"),
        "password": database.get("PASSWORD"),
        "host": database.get("HOST"),
        "port": database.get("PORT"),
        **{k: v for k, v in database.get("OPTIONS", {}).items() if k not in _DJANGO_OPTIONS},
        "application_name": application_name,
    }
    return make_conninfo(**{k: str(v) for k, v in fields.items() if v not in (None, "")})
