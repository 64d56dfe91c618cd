"""API keys remembered by each process, forgotten the moment any key changes.

Every API request authenticates, and looking its key up was a database round trip
(and an ORM object) per request. Here a key found once is kept, by prefix; the hash
of the presented key is still compared on every request (access.services.get_key).

Correctness rests on the database telling every process: a trigger on ``api_keys``
(migration 0002) sends ``NOTIFY cognizes_api_keys`` when a key is revoked, edited,
deleted or the table truncated, by any writer (the admin, ``revoke_api_key``, another
host, plain SQL), and each process's listener thread empties its cache when it hears
it — PostgreSQL delivers it as the change commits, so a revoked key is refused
within milliseconds everywhere. Remembered keys are trusted only while the listener
is known to be connected: it checks its connection every ``HEARTBEAT_SECONDS``, and
trust lapses twice that long after the last proof of life, so even a connection
that died silently (a NAT or proxy dropping it) leaves keys stale for seconds, not
forever. From a lost connection until LISTEN is back (after which the cache is
emptied again, as notifications in between were lost), every request reads the
database. A lookup that raced a change is not remembered (the generation check).

Inside a transaction the database is read as well: the transaction may have changed
keys itself, and nobody is notified of that before it commits.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import psycopg
from django.db import connection

from access.models import ApiKey
from infra import direct_db

logger = logging.getLogger(__name__)
CHANNEL = "cognizes_api_keys"
RECONNECT_DELAY_SECONDS = 1.0
HEARTBEAT_SECONDS = 5.0


class KeyCache:
    """Usable keys by prefix, trusted while this process listens for changes."""

    def __init__(self) -> None:
        self._keys: dict[str, ApiKey] = {}
        self._generation = 0  # bumped by every forget(): a lookup that spans one is not kept
        self._trusted_until = 0.0  # monotonic time: the listener's last proof of life + 2 heartbeats
        self._lock = threading.Lock()
        self._listener: threading.Thread | None = None
        self._closed = threading.Event()

    def lookup(self, prefix: str, load: Callable[[str], ApiKey | None]) -> ApiKey | None:
        """The usable key with this prefix: remembered, or ``load(prefix)`` from the database (and remembered)."""
        if connection.in_atomic_block:
            return load(prefix)
        self._start_listener()
        with self._lock:
            trusted = time.monotonic() < self._trusted_until
            if trusted and prefix in self._keys:
                return self._keys[prefix]
            generation = self._generation
        api_key = load(prefix)
        if api_key is not None and trusted:
            with self._lock:
                if time.monotonic() < self._trusted_until and self._generation == generation:
                    self._keys[prefix] = api_key
        return api_key

    def forget(self) -> None:
        with self._lock:
            self._keys.clear()
            self._generation += 1

    def _trust(self) -> None:
        with self._lock:
            self._trusted_until = time.monotonic() + 2 * HEARTBEAT_SECONDS

    def close(self) -> None:
        """Stop listening once the connection ends (terminated before its database is dropped, say).

        Keys are read from the database from then on.
        """
        self._closed.set()

    def _start_listener(self) -> None:
        if self._listener is None or not self._listener.is_alive():
            with self._lock:
                if not self._closed.is_set() and (self._listener is None or not self._listener.is_alive()):
                    self._listener = threading.Thread(target=self._listen, name="cognizes-key-cache", daemon=True)
                    self._listener.start()

    def _listen(self) -> None:
        while not self._closed.is_set():
            try:
                with psycopg.connect(direct_db.conninfo("cognizes key cache"), autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.forget()  # whatever changed before we listened
                    while True:
                        if self._closed.is_set():
                            return
                        self._trust()
                        for _ in conn.notifies(timeout=HEARTBEAT_SECONDS):
                            self.forget()
                        conn.execute("SELECT 1")  # proof of life: a quiet channel says nothing
            except Exception as error:
                logger.warning("API key cache: listening connection lost (%s); reading keys from the database", error)
            finally:
                with self._lock:
                    self._trusted_until = 0.0
                self.forget()
            self._closed.wait(RECONNECT_DELAY_SECONDS)


keys = KeyCache()
