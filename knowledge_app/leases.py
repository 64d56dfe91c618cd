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

from contextlib import AbstractContextManager
from datetime import timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone

from cognizes.infra.leases import renewing

# A leased model (Document, ImportJob): its objects, id, status, lease_until and attempts, which a bound of
# Model cannot say (django-stubs declares no ``objects`` on Model).
Row = TypeVar("Row", bound=models.Model)


def lease() -> timedelta:
    """How long a claim holds: a running row not done by then is presumed lost."""
    return timedelta(seconds=settings.COGNIZES_KNOWLEDGE_LEASE_SECONDS)


def claim(
    model: type[Row], row_id: int, *, pending: str, running: str, related: tuple[str, ...] = (), **reset: Any
) -> Row | None:
    """The row, now ``running`` under a new lease with one more attempt and ``reset`` set; None if it is not to be
    run (done, or held under a live lease)."""
    now = timezone.now()
    with transaction.atomic():
        row = (
            # Only the row itself: with ``related`` Django would lock those rows too (the corpus), which every
            # upload and chunk insert into the corpus holds FOR KEY SHARE, and skip_locked would then skip a
            # row nobody is running, its message consumed: left pending until recovery.
            model.objects.select_for_update(skip_locked=True, of=("self",))  # type: ignore[attr-defined]  # see Row
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
    return type(row).objects.filter(id=row.id, status=running, attempts=row.attempts)  # type: ignore[attr-defined]  # see Row


def renewed(row: Row, *, running: str) -> AbstractContextManager[None]:
    """Keep this claim's lease alive while the block runs (``cognizes.infra.leases.renewing``)."""
    return renewing(lambda: held(row, running=running), lease=lease, name=f"{type(row).__name__} {row.pk}")
