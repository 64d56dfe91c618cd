"""What sessions_app tells the apps above it, without knowing them (memory_app listens)."""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.db.models import Model
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
and ``user_id``: each app deletes what it holds of the user and returns ``{kind: rows deleted}``."""

app_erased = Signal()
"""Sent inside the transaction that erases a whole app (``sessions_app.services.do_erase_app``, when a client deletes
an engine it created with ``force``), after each of its users was erased, with ``app_name``: each app deletes what it
still holds of the app as a whole (memories of any scope, its memory bank config…) and returns ``{kind: rows}``.
What comes later (sandboxes, feedback entries) connects here."""


def rows_by_kind(deleted: tuple[int, dict[str, int]]) -> dict[str, int]:
    """What a ``user_erased`` receiver returns, from a ``QuerySet.delete()`` result (cascades included).

    Keyed by what the rows are, the model's plural name in snake_case (``tool_executions``, ``memories``),
    as ``do_erase_user`` names sessions and events: not by table, whose names some apps leave to Django
    (``tools_app_toolexecution``).
    """
    return {_kind(apps.get_model(label)): count for label, count in deleted[1].items() if count}


def _kind(model: type[Model]) -> str:
    return "_".join(str(model._meta.verbose_name_plural).lower().split())
