"""Background work as a row first: claimed under a lease, renewed while it runs, run again once its worker is lost.

Every unit of background work (a consolidation job, a document to index, an import) is a row before it is a Celery
message, so the database, not the broker, says whether it is done: a message lost with a Redis restart, or never
sent while Redis was down, and a worker SIGKILLed mid-run, leave a row whose lease runs out, and recovery sends it
again (DESIGN.md, "background work is a row first"). The rule was written twice, for memory's jobs and then copied
for knowledge's documents and imports (issue 42, item 8); it is here once, over any model with the three columns
it needs, and each app says only what its rows' states are called and how long its lease is.

A claim is the attempt number it was taken with (and, for rows whose attempts go back to 0, when), not the lease's
end, which renewals move: ``held`` is the row
while this claim holds it, and a run writes its results only through it, so a worker that was presumed dead and
wakes up late writes nothing twice. ``renewed`` keeps a live worker's claim however long its work takes
(``cognizes.infra.leases.renewing``, issue 41 J1). The row is locked with ``SKIP LOCKED``, so two workers claiming
at once never wait on each other, and one of them gets it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, Protocol, TypeVar, cast

from celery import current_app
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone

from cognizes.infra.leases import renewing

Row = TypeVar("Row", bound=models.Model)


class _Claimed(Protocol):
    """What a claim reads of a leased row besides its key (the model's own field, which Django's types cannot name)."""

    attempts: int


@dataclass(frozen=True)
class LeasedJobs(Generic[Row]):
    """The leased rows of one model: which of its ``status`` values wait, run and fail, and how long a lease is.

    The model has ``status`` (text), ``attempts`` (an integer: one more on each claim) and ``lease_until`` (a
    nullable timestamp); its ``auto_now`` fields (an ``updated_at``) move with every change made here.
    """

    model: type[Row]
    waiting: tuple[str, ...]
    """The states a row may be claimed from at any time (queued, pending; a failed job that is retried)."""
    running: str
    failed: str
    lease: Callable[[], timedelta]
    """How long a claim holds without renewal: a running row not renewed by then is presumed lost."""
    max_attempts: int | None = None
    """Claims after which a row whose worker was lost each time fails (``give_up_on_lost``); None: never."""
    claimed_at: str | None = None
    """A timestamp field set at each claim and part of what a claim is: for a model whose ``attempts`` go back to 0
    (a document paused for another's turn, or replaced, has used no attempt), so a claim is never mistaken for an
    earlier one of the same attempt number."""

    def free(self, now: datetime) -> Q:
        """The rows a worker may claim now: waiting, or running under a lease that ran out (its worker is gone)."""
        return Q(status__in=self.waiting) | (
            Q(status=self.running) & (Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        )

    def lost(self, now: datetime) -> Q:
        """The rows running under a lease that ran out: a live worker renews its lease, so their worker is gone."""
        return Q(status=self.running, lease_until__lt=now)

    def claim(self, row_id: int, *, related: tuple[str, ...] = (), **reset: Any) -> Row | None:
        """The row, now ``running`` under a new lease with one more attempt and ``reset`` set; None if it is not
        free (done, failed for good, held under a live lease, or being claimed by another worker this instant)."""
        now = timezone.now()
        with transaction.atomic():
            row = (
                # Only the row itself: with ``related`` Django would lock those rows too (a document's corpus, which
                # every upload and chunk insert into it holds FOR KEY SHARE), and SKIP LOCKED would then skip a row
                # nobody is running, its message consumed: left waiting until recovery.
                self.model._default_manager.select_for_update(skip_locked=True, of=("self",))
                .filter(pk=row_id)
                .filter(self.free(now))
                .select_related(*related)
                .first()
            )
            if row is None:
                return None
            attempts = _attempts(row) + 1
            fields = {"status": self.running, "lease_until": now + self.lease(), "attempts": attempts, **reset}
            if self.claimed_at:
                fields[self.claimed_at] = now
            for name, value in fields.items():
                setattr(row, name, value)
            row.save(update_fields=[*fields, *self._touched(now)])
        return row

    def held(self, row: Row) -> models.QuerySet[Row]:
        """The row while the claim ``row`` was taken with still holds it (running, and no later attempt begun)."""
        held = self.model._default_manager.filter(pk=row.pk, status=self.running, attempts=_attempts(row))
        return held.filter(**{self.claimed_at: getattr(row, self.claimed_at)}) if self.claimed_at else held

    def renewed(self, row: Row) -> AbstractContextManager[None]:
        """Keep this claim's lease alive while the block runs, from a thread of its own."""
        return renewing(lambda: self.held(row), lease=self.lease, name=f"{self.model._meta.verbose_name} {row.pk}")

    def renew(self, row: Row) -> bool:
        """Extend this claim's lease now (a run that renews between steps of its own); False if it is no longer held.

        Inside a transaction the row stays locked until it commits, so a step and its renewal commit together.
        """
        return bool(self.held(row).update(lease_until=timezone.now() + self.lease()))

    def let_go(self, row: Row) -> None:
        """End this claim's lease now, the row still running: a retry (or recovery) takes it at once, not later."""
        self.held(row).update(lease_until=timezone.now())

    def finish(self, row: Row, **fields: Any) -> bool:
        """End this claim with ``fields`` written (its new status, results); False if it was no longer held (nothing
        written: the run that took it over decides)."""
        now = timezone.now()
        return bool(self.held(row).update(lease_until=None, **self._touched(now), **fields))

    def give_up_on_lost(self, now: datetime, **fields: Any) -> int:
        """Fail, with ``fields`` (why), the lost rows claimed ``max_attempts`` times: a row whose worker is killed on
        every attempt (out of memory on it) would otherwise be run again for ever. How many."""
        if self.max_attempts is None:
            return 0
        return self.model._default_manager.filter(self.lost(now), attempts__gte=self.max_attempts).update(
            status=self.failed, lease_until=None, **self._touched(now), **fields
        )

    def _touched(self, now: datetime) -> dict[str, datetime]:
        """The model's ``auto_now`` fields, set to ``now``: ``update()`` skips them, and a claim is a change."""
        return {
            field.name: now
            for field in self.model._meta.concrete_fields
            if isinstance(field, models.DateTimeField) and field.auto_now
        }


def _attempts(row: models.Model) -> int:
    return cast(_Claimed, row).attempts


def send(task: str, row_id: int, *, countdown: float = 0) -> None:
    """Send the Celery task named ``task`` for the row, by name: the module that makes or recovers rows need not
    import the tasks that run them (the tasks import it; the other way is an import circle)."""
    current_app.send_task(task, (row_id,), countdown=countdown)
