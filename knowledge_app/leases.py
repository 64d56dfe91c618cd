"""Claiming a row a worker runs (a document to index, an import): ``running`` under this worker's lease.

Another delivery of the same task finds the row claimed and leaves it; a worker
killed mid-run leaves a lease that runs out, after which the row may be claimed
again (the consolidation jobs' pattern). Documents and imports share the rule, so
it lives here once.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone

Row = TypeVar("Row", bound=models.Model)


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
