"""Whether a connection reaches PostgreSQL through a connection pooler (PgBouncer, pgcat, RDS Proxy, …).

Behind a transaction pooler nothing may outlive a transaction on its connection: a statement
prepared by one client is met by another's on the same server connection (``prepared
statement "_pg3_0" already exists``, ``bind message supplies 14 parameters``), a ``WITH HOLD``
cursor stays behind, a ``LISTEN`` hears other clients' notifications. ``DATABASE_TRANSACTION_POOLING``
says so; left unset, the first connection finds out (issue 43 item 10), so a forgotten setting
never surfaces as a driver error.

The sign: a pooler hands its clients a backend key of its own (``BackendKeyData``, which it
needs to route cancel requests), so the process id the connection was told differs from the
server process that answers ``pg_backend_pid()``. PostgreSQL itself reports its own; any pooler
that multiplexes cannot. One round trip, once per process and database. A pooler in session
mode is found too and treated as a transaction pooler (correct, only slower):
``DATABASE_TRANSACTION_POOLING=0`` says there is none to find.
"""

from __future__ import annotations

from typing import Any

import psycopg

PROBE = "SELECT pg_backend_pid()"
"""The process that answers; a connection's ``info.backend_pid`` is the one it was told."""


def through_a_pooler(connection: psycopg.Connection) -> bool:
    """True when the server process that answers is not the one ``connection`` was told it talks to."""
    answering = answering_pid(connection.execute(PROBE).fetchone())
    if not connection.autocommit:
        connection.rollback()  # end the probe's transaction: the server connection is free, Django starts clean
    return answering != connection.info.backend_pid


def answering_pid(row: tuple[Any, ...] | None) -> int | None:
    """``PROBE``'s answer (None: none came, which no PostgreSQL does)."""
    return None if row is None else int(row[0])
