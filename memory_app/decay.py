"""Forgetting: strength decays with time, weak and expired memories are forgotten, then purged.

Strength is a function of timestamps, not of its previous value, so a run
computes the same numbers however often it happens (a retried or doubled beat
run changes nothing)::

    strength = 2 ** (-age_days / (half_life_days[kind] * (0.5 + importance)))
               * (1 + ACCESS_BOOST * ln(1 + access_count))

``age`` counts from the latest of ``created_at``, ``updated_at`` and
``last_accessed_at``. ``updated_at`` is in because the services renew a memory
by saving it: a repeated memory merges (strength back to 1), a person edits or
restores one; counting from ``created_at`` alone would undo each renewal at the
next run, and a restored memory would be forgotten again within the hour.
Neither the decay nor search's access counting touches ``updated_at``.

Each step is one SQL statement over all scopes: the beat task runs it hourly
(``memory_app.beat``), with settings ``COGNIZES_MEMORY_HALF_LIFE_DAYS``,
``COGNIZES_MEMORY_FORGET_BELOW`` and ``COGNIZES_MEMORY_PURGE_AFTER_DAYS``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.utils import timezone

from memory_app.models import Kind, Memory, MemoryRevision, RevisionAction, Status

# An access multiplies strength by 1 + ACCESS_BOOST * ln(1 + accesses): ×1.35 after one, ×2.2 after ten.
ACCESS_BOOST = 0.5

_STRENGTH = """
    exp(-ln(2::float8)
        * greatest(extract(epoch FROM %(now)s - greatest(created_at, updated_at, last_accessed_at))::float8, 0)
        / 86400
        / ((%(half_lives)s::jsonb ->> kind)::float8 * (0.5 + least(greatest(importance, 0), 1))))
    * (1 + %(boost)s * ln(1 + access_count))
"""
# Computed from the row being updated, not from a subquery: a memory renewed by a
# consolidation that commits while this runs is re-read (PostgreSQL re-evaluates
# SET and WHERE on the newest row version it waited for), so its new strength stands.
_DECAY = f"""
UPDATE memories
SET strength = {_STRENGTH}
WHERE status = %(active)s AND strength IS DISTINCT FROM {_STRENGTH}
"""

# Forget and write each memory's revision in one statement; rowcount is the number forgotten.
_FORGET = """
WITH forgotten AS (
    UPDATE memories
    SET status = %(forgotten)s, forgotten_at = %(now)s, updated_at = %(now)s
    WHERE status = %(active)s AND {condition}
    RETURNING id, text, metadata
)
INSERT INTO memory_revisions
    (memory_id, action, text_before, text_after, status_before, status_after, metadata_after, cause, created_at,
     labels)
SELECT id, %(action)s, text, text, %(active)s, %(forgotten)s, metadata, %(cause)s, %(now)s, '{{}}'::jsonb
FROM forgotten
"""


@dataclass(frozen=True)
class DecayReport:
    decayed: int = 0
    """Active memories whose strength changed."""
    forgotten_weak: int = 0
    forgotten_expired: int = 0
    purged: int = 0
    revisions_expired: int = 0


def do_decay(*, now: datetime | None = None) -> DecayReport:
    """Recompute every active memory's strength, then forget the expired and the weak."""
    now = now or timezone.now()
    params: dict[str, Any] = {
        "now": now,
        "half_lives": json.dumps(half_life_days()),
        "boost": ACCESS_BOOST,
        "active": Status.ACTIVE,
        "forgotten": Status.FORGOTTEN,
        "action": RevisionAction.FORGET,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_DECAY, params)
        decayed = cursor.rowcount
        # Expired first: a memory both expired and weak is forgotten for having expired.
        cursor.execute(_FORGET.format(condition="expires_at <= %(now)s"), {**params, "cause": "expired"})
        expired = cursor.rowcount
        cursor.execute(  # a profile field does not fade: it holds until a new value replaces it
            _FORGET.format(condition="strength < %(threshold)s AND memory_type = 'natural_language'"),
            {**params, "cause": "decay", "threshold": settings.COGNIZES_MEMORY_FORGET_BELOW},
        )
        weak = cursor.rowcount
    return DecayReport(decayed=decayed, forgotten_weak=weak, forgotten_expired=expired)


def do_purge_forgotten(*, now: datetime | None = None) -> int:
    """Erase memories forgotten longer ago than the retention period, with their revisions."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.COGNIZES_MEMORY_PURGE_AFTER_DAYS)
    with transaction.atomic():
        # The ORM delete also clears superseded_by on memories that point at a purged one.
        _, deleted = Memory.objects.filter(status=Status.FORGOTTEN, forgotten_at__lt=cutoff).only("id").delete()
    return deleted.get(Memory._meta.label, 0)


def do_purge_expired_revisions(*, now: datetime | None = None) -> int:
    """Delete revisions past their TTL (the memory stays; only its history shortens)."""
    deleted, _ = MemoryRevision.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted


def half_life_days() -> dict[str, float]:
    """The configured half-life of each kind, checked: every kind has one, and it is positive."""
    configured = settings.COGNIZES_MEMORY_HALF_LIFE_DAYS
    missing = set(Kind.values) - set(configured)
    unknown = set(configured) - set(Kind.values)
    if missing or unknown:
        raise ImproperlyConfigured(
            f"COGNIZES_MEMORY_HALF_LIFE_DAYS needs exactly the kinds {sorted(Kind.values)}; "
            f"missing {sorted(missing)}, unknown {sorted(unknown)}."
        )
    half_lives = {kind: float(days) for kind, days in configured.items()}
    if any(days <= 0 for days in half_lives.values()):
        raise ImproperlyConfigured("COGNIZES_MEMORY_HALF_LIFE_DAYS: every half-life is a positive number of days.")
    return half_lives
