"""Heartbeats: each Celery worker and beat says every few seconds that it is alive, and the admin reads them.

A beat is one field of a Redis hash (``role host pid`` → the Unix time it was
written), so the admin's overview reads every process in one call. A process
that stops cleanly takes its field away; one that is killed leaves it to age,
which the overview shows as "last seen … ago" — exactly what a person looking
for a dead worker needs. Fields older than a day are dropped on read.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass

from cognizes.infra import cache as shared_cache

logger = logging.getLogger(__name__)

KEY = "cognizes:heartbeats"
INTERVAL_SECONDS = float(os.environ.get("COGNIZES_HEARTBEAT_SECONDS", "10"))
"""How often a process beats; one not heard from for three intervals is presumed dead."""
FORGET_AFTER_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Heartbeat:
    role: str
    """``worker`` or ``beat``."""
    host: str
    pid: int
    seen_at: float
    """Unix time of the last beat."""

    @property
    def alive(self) -> bool:
        return time.time() - self.seen_at < 3 * INTERVAL_SECONDS


def _field(role: str) -> str:
    return f"{role} {socket.gethostname()} {os.getpid()}"


def _redis():
    return shared_cache.client()


def start(role: str) -> None:
    """Beat for ``role`` from a daemon thread, for as long as this process lives (an outage only skips beats)."""

    def beat_forever() -> None:
        while True:
            try:
                _redis().hset(KEY, _field(role), repr(time.time()))
            except Exception as error:  # Redis down: the worker cannot work either; say so once per beat
                logger.warning("heartbeat of %s not written: %s", role, error)
            time.sleep(INTERVAL_SECONDS)

    threading.Thread(target=beat_forever, name=f"heartbeat-{role}", daemon=True).start()


def stop(role: str) -> None:
    """This process stops cleanly: it is no longer one that should be running."""
    try:
        _redis().hdel(KEY, _field(role))
    except Exception as error:
        logger.warning("heartbeat of %s not removed: %s", role, error)


def read() -> list[Heartbeat]:
    """Every process heard from within a day, newest beat first."""
    beats = []
    stale = []
    for field, value in _redis().hgetall(KEY).items():
        role, host, pid = field.decode().split(" ")
        beat = Heartbeat(role=role, host=host, pid=int(pid), seen_at=float(value))
        if time.time() - beat.seen_at > FORGET_AFTER_SECONDS:
            stale.append(field)
        else:
            beats.append(beat)
    if stale:
        _redis().hdel(KEY, *stale)
    return sorted(beats, key=lambda beat: (beat.role, -beat.seen_at))
