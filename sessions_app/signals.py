"""What sessions_app tells the apps above it, without knowing them (memory_app listens)."""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.dispatch import Signal


@dataclass(frozen=True)
class DeletedSession:
    app_name: str
    user_id: str
    session_id: str
    event_ids: tuple[str, ...]


sessions_deleted = Signal()
"""Sent once a deletion has committed — through ADK, the API, the admin or expiry — with ``sessions``:
the ``DeletedSession`` of each session that went."""

user_erased = Signal()
"""Sent inside the transaction that erases a user (``sessions_app.services.do_erase_user``), with ``app_name``
and ``user_id``: each app deletes what it holds of the user and returns ``{table: rows deleted}``."""


def rows_by_table(deleted: tuple[int, dict[str, int]]) -> dict[str, int]:
    """What a ``user_erased`` receiver returns, from a ``QuerySet.delete()`` result (cascades included)."""
    return {apps.get_model(label)._meta.db_table: count for label, count in deleted[1].items() if count}
