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
``infra.db_threads`` calls after each call and Django after each request, so every
append through ``PostgresSessionService`` made two round trips.
"""

from __future__ import annotations

import select
from typing import Any

import psycopg
from django.db.backends.postgresql import base
from psycopg_pool import ConnectionPool


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> psycopg.Connection:
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

    def close_if_health_check_failed(self) -> None:
        """Django's check of a persistent connection before its first use, by ``_alive``: a round trip only
        if the server has said something (its goodbye) since."""
        if self.connection is None or not self.health_check_enabled or self.health_check_done:
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
