"""Claiming a row a worker runs (a document to index, an import): ``running`` under this worker's lease.

Another delivery of the same task finds the row claimed and leaves it; a worker
killed mid-run leaves a lease that runs out, after which the row may be claimed
again (the consolidation jobs' pattern). Documents and imports share the rule, so
it lives here once.

A live worker keeps its claim however long the work takes: ``renewed`` extends the
lease from a thread every third of its length while the work runs (a 117-page PDF
embedded for longer than its lease was re-claimed by a second worker, three times,
then failed: issue 41 J1). The claim is the attempt number it was taken with, not
the lease's end, which renewals move: ``held`` is the row while this claim holds it,
and a run writes its results only through it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import DatabaseError, connection, models, transaction
from django.db.models import Q
from django.utils import timezone

Row = TypeVar("Row", bound=models.Model)
logger = logging.getLogger(__name__)


def lease() -> timedelta:
    """How long a claim holds: a running row not done by then is presumed lost."""
    return timedelta(seconds=settings.COGNIZES_KNOWLEDGE_LEASE_SECONDS)


def claim(model: type[Row], row_id: int, *, pending: str, running: str, related: tuple[str, ...] = (),
          **reset: Any) -> Row | None:
    """The row, now ``running`` under a new lease with one more attempt and ``reset`` set; None if it is not to be
    run (done, or held under a live lease)."""
    now = timezone.now()
    with transaction.atomic():
        row = (
            # Only the row itself: with ``related`` Django would lock those rows too (the corpus), which every
            # upload and chunk insert into the corpus holds FOR KEY SHARE, and skip_locked would then skip a
            # row nobody is running, its message consumed: left pending until recovery.
            model.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(id=row_id)
            .filter(Q(status=pending) | Q(status=running, lease_until__lt=now))
            .select_related(*related)
            .first()
        )
        if row is None:
            return None
        fields = {"status": running, "lease_until": now + lease(), "attempts": row.attempts + 1, **reset}
        for name, value in fields.items():
            setattr(row, name, value)
        row.save(update_fields=[*fields, "updated_at"])
    return row


def held(row: Row, *, running: str) -> models.QuerySet[Row]:
    """The row while the claim ``row`` was taken with still holds it (running, and no later attempt has begun)."""
    return type(row).objects.filter(id=row.id, status=running, attempts=row.attempts)


@contextmanager
def renewed(row: Row, *, running: str) -> Iterator[None]:
    """Extend the claim's lease every third of its length while the block runs, from a thread with its own
    connection; the renewals stop with the block (or once the claim is lost: nothing then to renew)."""
    stop = threading.Event()
    interval = lease().total_seconds() / 3

    def renew() -> None:
        try:
            while not stop.wait(interval):
                try:
                    if not held(row, running=running).update(lease_until=timezone.now() + lease()):
                        return  # taken over, or finished by the run itself: its end decides, not this thread
                except DatabaseError as error:  # an outage: the lease may run out, and the row be run again
                    logger.warning("%s %s: lease not renewed (%s)", type(row).__name__, row.pk, error)
        finally:
            connection.close()

    thread = threading.Thread(target=renew, name=f"lease-{type(row).__name__}-{row.pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
