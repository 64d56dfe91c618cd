"""Rows remembered by each process, forgotten the moment the database says they changed.

Some rows are read by every request and almost never change: API keys (cognizes.access.key_cache),
the app a Vertex engine id names (vertex_app.services). Reading them was a database
round trip per request. A ``NotifiedCache`` keeps what was found, by key.

Correctness rests on the database telling every process: a trigger on the table sends
``NOTIFY <channel>`` when a row is changed, deleted or the table truncated, by any writer
(the admin, a management command, another host, plain SQL), and each cache's listener
thread empties the cache when it hears it — PostgreSQL delivers it as the change
commits, so a change is obeyed within milliseconds everywhere. Remembered values are
trusted only while the listener is known to be connected: it checks its connection
every ``HEARTBEAT_SECONDS``, and trust lapses twice that long after the last proof of
life, so even a connection that died silently (a NAT or proxy dropping it) leaves
values stale for seconds, not forever. From a lost connection until LISTEN is back
(after which the cache is emptied again, as notifications in between were lost),
every lookup reads the database. A lookup that raced a change is not remembered (the
generation check). Only values found are remembered: a row created later is found then.

Inside a transaction the database is read as well: the transaction may have changed
the rows itself, and nobody is notified of that before it commits.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from django.db import connection

from cognizes.infra import direct_db

logger = logging.getLogger(__name__)
RECONNECT_DELAY_SECONDS = 1.0
HEARTBEAT_SECONDS = 5.0

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_caches: list[NotifiedCache] = []


class NotifiedCache(Generic[K, V]):
    """Values by key, trusted while this process listens on ``channel`` (its own connection, named
    ``application_name`` in ``pg_stat_activity``, opened on the first lookup)."""

    def __init__(self, channel: str, application_name: str) -> None:
        self.channel = channel
        self.application_name = application_name
        self._values: dict[K, V] = {}
        self._generation = 0  # bumped by every forget(): a lookup that spans one is not kept
        self._trusted_until = 0.0  # monotonic time: the listener's last proof of life + 2 heartbeats
        self._lock = threading.Lock()
        self._listener: threading.Thread | None = None
        self._closed = threading.Event()
        _caches.append(self)

    def lookup(self, key: K, load: Callable[[K], V | None]) -> V | None:
        """The value for ``key``: remembered, or ``load(key)`` from the database (and remembered if not None)."""
        if connection.in_atomic_block:
            return load(key)
        self._start_listener()
        with self._lock:
            trusted = time.monotonic() < self._trusted_until
            if trusted and key in self._values:
                return self._values[key]
            generation = self._generation
        value = load(key)
        if value is not None and trusted:
            with self._lock:
                if time.monotonic() < self._trusted_until and self._generation == generation:
                    self._values[key] = value
        return value

    def forget(self) -> None:
        with self._lock:
            self._values.clear()
            self._generation += 1

    def _trust(self) -> None:
        with self._lock:
            self._trusted_until = time.monotonic() + 2 * HEARTBEAT_SECONDS

    def close(self) -> None:
        """Stop listening once the connection ends (terminated before its database is dropped, say).

        Values are read from the database from then on.
        """
        self._closed.set()

    def _start_listener(self) -> None:
        if self._listener is None or not self._listener.is_alive():
            with self._lock:
                if not self._closed.is_set() and (self._listener is None or not self._listener.is_alive()):
                    self._listener = threading.Thread(target=self._listen, name=self.application_name, daemon=True)
                    self._listener.start()

    def _listen(self) -> None:
        while not self._closed.is_set():
            try:
                with direct_db.connect(self.application_name) as conn:
                    conn.execute(f"LISTEN {self.channel}")
                    self.forget()  # whatever changed before we listened
                    while True:
                        if self._closed.is_set():
                            return
                        self._trust()
                        for _ in conn.notifies(timeout=HEARTBEAT_SECONDS):
                            self.forget()
                        conn.execute("SELECT 1")  # proof of life: a quiet channel says nothing
            except Exception as error:
                logger.warning(
                    "%s: listening connection lost (%s); reading from the database", self.application_name, error
                )
            finally:
                with self._lock:
                    self._trusted_until = 0.0
                self.forget()
            self._closed.wait(RECONNECT_DELAY_SECONDS)


def close_all() -> None:
    """``close()`` every cache of this process (before its database is dropped)."""
    for cache in _caches:
        cache.close()
