"""Forgetting at scale: the memories that came only from a deleted session, or everything of a user."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

from django.db import transaction

from memory_app.models import Memory, RevisionAction, Status
from memory_app.services.base import _lock_scope, _revise
from memory_app.services.edit import _apply_status
from sessions_app.signals import rows_by_kind


@dataclass(frozen=True)
class SessionForgetting:
    forgotten: list[UUID]
    """Memories that came only from the session: forgotten (soft-deleted, revisions kept)."""
    detached: list[UUID]
    """Memories that came from other sessions too: they stay, without this session among their sources."""


def do_forget_session_memories(
    *, app_name: str, user_id: str, session_id: str, event_ids: Iterable[str] = (), cause: str
) -> SessionForgetting:
    """Take a session away as a source of the user's memories: those it alone gave are forgotten.

    ``event_ids``: the session's events, taken out of each memory's sources too
    (known while the session exists; afterwards only the session id is).
    Revisions say why, with ``cause``.
    """
    outcome = SessionForgetting(forgotten=[], detached=[])
    gone = set(event_ids)
    with transaction.atomic():
        _lock_scope(app_name, user_id)
        memories = (
            Memory.objects.for_scope(app_name, user_id)
            .exclude(status=Status.FORGOTTEN)
            .filter(source_session_ids__contains=[session_id])
            .select_for_update()
        )
        for memory in memories:
            others = [s for s in memory.source_session_ids if s != session_id]
            if not others:
                before = memory.status
                _apply_status(memory, Status.FORGOTTEN)
                _revise(memory, RevisionAction.FORGET, cause, text_before=memory.text, status_before=before)
                outcome.forgotten.append(memory.id)
                continue
            memory.source_session_ids = others
            memory.source_event_ids = [e for e in memory.source_event_ids if e not in gone]
            if memory.source_session_id == session_id:
                memory.source_session_id = others[0]
            memory.save(update_fields=["source_session_ids", "source_event_ids", "source_session_id", "updated_at"])
            _revise(
                memory,
                RevisionAction.UPDATE,
                f"{cause} (one of its sources)",
                text_before=memory.text,
                status_before=memory.status,
            )
            outcome.detached.append(memory.id)
    return outcome


def do_erase_user(*, app_name: str, user_id: str) -> dict[str, int]:
    """Erase everything remembered about a user: memories, revisions, embeddings, jobs; rows deleted per table."""
    from memory_app.models import ConsolidationJob

    with transaction.atomic():
        _lock_scope(app_name, user_id)
        jobs = rows_by_kind(ConsolidationJob.objects.filter(app_name=app_name, user_id=user_id).delete())
        Memory.objects.for_scope(app_name, user_id).update(superseded_by=None)
        return {**rows_by_kind(Memory.objects.for_scope(app_name, user_id).delete()), **jobs}


def do_erase_app(*, app_name: str) -> dict[str, int]:
    """Erase everything of an app's memory: every scope's memories, revisions, embeddings and jobs, and its memory
    bank config (the app itself is going: ``sessions_app.services.do_erase_app``); rows deleted per table."""
    from memory_app.models import ConsolidationJob, MemoryBankConfig

    with transaction.atomic():
        jobs = rows_by_kind(ConsolidationJob.objects.filter(app_name=app_name).delete())
        Memory.objects.filter(app_name=app_name).update(superseded_by=None)
        memories = rows_by_kind(Memory.objects.filter(app_name=app_name).delete())
        return {**memories, **jobs, **rows_by_kind(MemoryBankConfig.objects.filter(app_name=app_name).delete())}
