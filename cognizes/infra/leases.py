"""Keeping a claim alive while its work runs: the one lease renewal of every leased row a worker runs.

Background work is a row first, claimed under a lease (consolidation jobs, documents to index,
imports): a worker killed mid-run leaves a lease that runs out, and another may run the row again.
A live worker must therefore keep extending its lease however long the work takes, or a slow run is
taken over while it still works (a 117-page PDF was claimed three times that way: issue 41 J1). The
thread is here once; ``cognizes.infra.jobs`` says which rows a claim is (its attempt number) and how long
its lease, for every leased row of every app.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.db import DatabaseError, connection, models
from django.utils import timezone

logger = logging.getLogger(__name__)


@contextmanager
def renewing(claimed: Callable[[], models.QuerySet], *, lease: Callable[[], timedelta], name: str) -> Iterator[None]:
    """Extend the ``lease_until`` of the rows ``claimed()`` gives every third of ``lease()`` while the block runs.

    From a thread with its own connection, so a block busy in one long statement or a model call still renews.
    The renewals stop with the block, or once ``claimed()`` matches nothing (taken over after an outage, or
    finished by the run itself: the run's own end decides then, not this thread). A database error is logged and
    renewal carries on: during an outage the lease may run out and the row be run again, which its claim check
    (the attempt number) makes safe.
    """
    stop = threading.Event()

    def renew() -> None:
        try:
            while not stop.wait(lease().total_seconds() / 3):
                try:
                    if not claimed().update(lease_until=timezone.now() + lease()):
                        return
                except DatabaseError as error:
                    logger.warning("%s: lease not renewed (%s)", name, error)
        finally:
            connection.close()

    thread = threading.Thread(target=renew, name=f"lease {name}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
