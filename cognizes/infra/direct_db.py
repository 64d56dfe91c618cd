"""Connections of our own to Django's default database, outside its pool.

For what needs a session of its own for as long as it lives — ``LISTEN`` (live
events, the API key cache) — and so must not borrow a pooled connection. They go to
``DATABASE_LISTEN_URL`` when it is set (the ``listen`` alias: the same database
reached directly), since behind a transaction pooler a LISTEN holds a server
connection that other clients' transactions then run on. Without that setting, a
connection that finds a pooler (``cognizes.infra.postgres.pooler``) is refused with the
settings that fix it, rather than listening where nothing it hears can be trusted.
"""

from __future__ import annotations

from typing import Any

import psycopg
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from psycopg.conninfo import make_conninfo

from cognizes.infra.postgres import pooler

# OPTIONS Django's backend uses itself; everything else (sslmode, …) is a libpq parameter.
_DJANGO_OPTIONS = {"isolation_level", "server_side_binding", "pool", "assume_role", "cursor_factory", "context"}


def connect(application_name: str, *, databases: dict[str, Any] | None = None) -> psycopg.Connection:
    """An autocommit connection to the database reached directly (``databases``: Django's ``DATABASES``, the
    default); ImproperlyConfigured, naming the settings, if it is a pooler's and no ``listen`` database is set."""
    databases = settings.DATABASES if databases is None else databases
    conn = psycopg.connect(conninfo(application_name, databases=databases), autocommit=True)
    try:
        if _may_be_pooled(databases):
            _refuse_a_pooler(pooler.through_a_pooler(conn))
    except BaseException:
        conn.close()
        raise
    return conn


async def connect_async(application_name: str) -> psycopg.AsyncConnection:
    """``connect`` for asyncio (live events)."""
    conn = await psycopg.AsyncConnection.connect(conninfo(application_name), autocommit=True)
    try:
        if _may_be_pooled(settings.DATABASES):
            answering = await (await conn.execute(pooler.PROBE)).fetchone()
            _refuse_a_pooler(pooler.answering_pid(answering) != conn.info.backend_pid)
    except BaseException:
        await conn.close()
        raise
    return conn


def _may_be_pooled(databases: dict[str, Any]) -> bool:
    """No ``listen`` database, and the default one not known to be reached directly: look (``pooler``)."""
    return "listen" not in databases and databases["default"].get("TRANSACTION_POOLING") is not False


def _refuse_a_pooler(pooled: bool) -> None:
    if pooled:
        raise ImproperlyConfigured(
            "DATABASE_URL reaches PostgreSQL through a connection pooler (PgBouncer or the like), where a LISTEN "
            "hears other clients' notifications or none: set DATABASE_LISTEN_URL to the database reached directly "
            "(and DATABASE_TRANSACTION_POOLING=1), or DATABASE_TRANSACTION_POOLING=0 if the pooler keeps sessions."
        )


def conninfo(application_name: str, *, databases: dict[str, Any] | None = None) -> str:
    """libpq parameters of the database reached directly, naming the connection in ``pg_stat_activity``."""
    databases = settings.DATABASES if databases is None else databases
    database = databases.get("listen") or databases["default"]
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
