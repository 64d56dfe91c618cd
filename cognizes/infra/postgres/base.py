"""Django's PostgreSQL backend, whose pool checks a connection it hands out without a round trip.

With ``CONN_HEALTH_CHECKS`` Django has psycopg_pool send an empty query on every
checkout: a round trip per request, a third of those an event append makes. A
connection that died while it sat in the pool (a restart, ``pg_terminate_backend``,
an idle timeout) has had the server's goodbye or EOF arrive on its socket, and an
idle healthy one has nothing to read. So the socket is polled (no wait, no I/O), and
only a readable one gets the round trip; one that fails it is discarded and another
taken. ``cognizes.settings`` turns Django's check off where this one runs (the pool).

Persistent connections without the pool (``CONN_MAX_AGE``, and the ADK services' database
threads) get the same check instead of Django's ``SELECT 1``: Django health-checks a
connection before its first use after every ``close_if_unusable_or_obsolete()``, which
``cognizes.infra.db_threads`` calls after each call and Django after each request, so every
append through ``PostgresSessionService`` made two round trips.

``prepared_cursor()`` is for the hot statements (an event append, a session read): PostgreSQL
parses and plans each of them once per connection instead of on every call. The append's one
statement (a compare-and-swap, the event insert and the state merges), unprepared, spent most
of its server CPU being parsed and planned anew on every call (docs/measured.md). Only what
goes through it is prepared (Django's own cursors bind client-side and never are), and nothing
is behind a transaction pooler (``PREPARED_STATEMENTS`` False in the database's settings),
where the next transaction may run on a server connection that never saw the statement. With
``DATABASE_TRANSACTION_POOLING`` unset the first connection looks for a pooler (``pooler``).
"""

from __future__ import annotations

import logging
import select
from typing import Any, cast

import psycopg
from django.db.backends.postgresql import base, operations
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.db.backends.utils import CursorWrapper
from django.utils.asyncio import async_unsafe
from psycopg.pq import Format
from psycopg_pool import ConnectionPool

from cognizes.infra.postgres.pooler import through_a_pooler

logger = logging.getLogger(__name__)

ONLY_WHEN_ASKED = 2**62
"""psycopg's ``prepare_threshold`` for our connections: a statement is prepared when its
execute asks (``prepare=True``), never because it ran often (psycopg's default, 5, would
prepare whatever else runs on a server-binding cursor, e.g. artifacts_app's binary one)."""


class PreparingCursor(base.ServerBindingCursor):
    """Server-side binding, every statement prepared: what ``prepared_cursor()`` hands out."""

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = True, binary: bool | None = None):
        return super().execute(query, params, prepare=prepare, binary=binary)  # type: ignore[misc]  # psycopg's, unstubbed


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor: Any, sql: str, params: Any) -> str:
        """A prepared statement's text with its parameters, for Django's query log (``DEBUG``,
        ``CaptureQueriesContext``): psycopg composes no client-side query for one, where Django looks."""
        if isinstance(cursor, PreparingCursor):
            try:
                return self.compose_sql(sql, params)
            except psycopg.errors.DataError:
                return sql
        return super().last_executed_query(cursor, sql, params)


def prepared_cursor() -> CursorWrapper:
    """The default connection's ``DatabaseWrapper.prepared_cursor()`` (this backend is every alias's ENGINE)."""
    from django.db import connection

    return cast(DatabaseWrapper, connection).prepared_cursor()


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def get_new_connection(self, conn_params: dict[str, Any]) -> psycopg.Connection:
        connection = self._checked_connection(conn_params)
        if self.settings_dict.get("TRANSACTION_POOLING") is None:  # DATABASE_TRANSACTION_POOLING unset: find out
            self._found_pooling(through_a_pooler(connection))
        connection.prepare_threshold = ONLY_WHEN_ASKED if self.settings_dict.get("PREPARED_STATEMENTS", True) else None
        return connection

    def _found_pooling(self, pooled: bool) -> None:
        """Set what ``DATABASE_TRANSACTION_POOLING`` would have (``cognizes.settings``) in the database's settings,
        which every thread's wrapper shares, so the probe runs once per process (``pooler``)."""
        if pooled:
            logger.warning(
                "Database %r is reached through a connection pooler (PgBouncer or the like): prepared statements and "
                "server-side cursors are off. Set DATABASE_TRANSACTION_POOLING=1 (and DATABASE_LISTEN_URL) to say "
                "so, or DATABASE_TRANSACTION_POOLING=0 if the pooler keeps sessions.",
                self.alias,
            )
            self.settings_dict.update(PREPARED_STATEMENTS=False, DISABLE_SERVER_SIDE_CURSORS=True)
        self.settings_dict["TRANSACTION_POOLING"] = pooled

    def _checked_connection(self, conn_params: dict[str, Any]) -> psycopg.Connection:
        pool = self.pool
        if pool is None:
            return super().get_new_connection(conn_params)
        for _ in range(pool.max_size + 1):  # each dead one is discarded: at worst the pool renews them all
            connection = super().get_new_connection(conn_params)
            if _alive(connection):
                return connection
            connection.close()
            pool.putconn(connection)  # a closed connection is dropped, and replaced in the background
        return super().get_new_connection(conn_params)

    def prepared_cursor(self) -> CursorWrapper:
        """Django's cursor (same connection and transaction, errors as Django's, queries logged when
        DEBUG), whose statements PostgreSQL parses and plans once per connection (module docstring).

        Parameters are bound server-side, so each one must have a type PostgreSQL can tell from
        its use in the statement or a cast (``%s::jsonb``), and a statement is one SQL command.
        """
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            return self._prepare_cursor(self._create_preparing_cursor())  # type: ignore[attr-defined]  # Django's own

    @async_unsafe
    def _create_preparing_cursor(self) -> PreparingCursor:
        cursor = PreparingCursor(self.connection)  # type: ignore[call-arg]  # psycopg's Cursor(connection), unstubbed
        # As Django's create_cursor: its time zone, only if the connection's differs.
        if self.timezone != self.connection.adapters.get_loader(base.TIMESTAMPTZ_OID, Format.TEXT).timezone:
            register_tzloader(self.timezone, cursor)
        return cursor

    def close_if_health_check_failed(self) -> None:
        """Django's check of a persistent connection before its first use, by ``_alive``: a round trip only
        if the server has said something (its goodbye) since."""
        # Django's own attributes (BaseDatabaseWrapper.__init__), which its stubs leave out.
        if self.connection is None or not self.health_check_enabled or self.health_check_done:  # type: ignore[attr-defined,has-type]
            return
        if not _alive(self.connection):
            self.close()
        self.health_check_done = True


def _alive(connection: psycopg.Connection) -> bool:
    if connection.closed:
        return False
    readable, _, _ = select.select([connection.fileno()], [], [], 0)
    if not readable:
        return True
    try:
        ConnectionPool.check_connection(connection)
    except psycopg.Error:
        return False
    return True
