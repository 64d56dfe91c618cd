"""Editing memories one by one: text, metadata, status (forget, restore), rollback, deletion, re-embedding."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any
from uuid import UUID

import numpy as np
from django.db import transaction
from django.utils import timezone

from cognizes.infra.embedders import get_embedder
from memory_app.models import Kind, Memory, MemoryRevision, MemoryType, RevisionAction, Status
from memory_app.names import names
from memory_app.services.bank import check_topic
from memory_app.services.base import (
    _UNCHANGED,
    Candidate,
    Generation,
    MemoryNotFound,
    MemoryServiceError,
    RevisionMark,
    _get_for_update,
    _revise,
    _uuids,
    get_bank_config,
)
from memory_app.services.remember import Said, _indexed, _with_speaker, check_candidate, memory_vectors


def do_update_memory(*, memory_id: UUID | str, app_name: str, user_id: str, text: str, cause: str) -> Memory:
    """Change a memory's text (re-embedded) and record the revision."""
    return do_edit_memory(memory_id=memory_id, app_name=app_name, user_id=user_id, text=text, cause=cause)


def do_edit_memory(
    *,
    memory_id: UUID | str,
    app_name: str,
    user_id: str,
    cause: str,
    text: str | None = None,
    metadata: dict[str, Any] | None = None,
    kind: str | None = None,
    topic: str | None = None,
    expires_at: datetime | None = _UNCHANGED,
    generation: Generation | None = None,
) -> Memory:
    """Change what a memory says and carries (only what is given), with one revision (labelled by ``generation``)."""
    if text is not None:
        check_candidate(Candidate(text=text))
    if kind is not None and kind not in Kind.values:
        raise MemoryServiceError(f"Unknown kind {kind!r}; one of {', '.join(Kind.values)}.")
    if metadata is not None and not isinstance(metadata, dict):
        raise MemoryServiceError("metadata is a JSON object.")
    config = get_bank_config(app_name)
    if topic:
        check_topic(config, topic)
    if generation is not None:
        generation.check()
    embedder = get_embedder()
    vector = memory_vectors(embedder, [_said(text, memory_id, app_name, user_id)])[0] if text is not None else None
    with transaction.atomic():
        memory = _get_for_update(memory_id, app_name, user_id)
        if text is not None and memory.memory_type == MemoryType.STRUCTURED_PROFILE:
            raise MemoryServiceError("A profile field's text follows its value: set the value (the admin's profiles).")
        before = memory.text
        if text is not None and text.strip() != memory.text:
            assert vector is not None  # embedded above, as text is given
            _set_text(memory, text, vector, embedder.id)
        changes: dict[str, Any] = {"metadata": metadata, "kind": kind, "topic": topic}
        fields = [name for name, value in changes.items() if value is not None]
        if expires_at is not _UNCHANGED:
            changes["expires_at"] = expires_at
            fields.append("expires_at")
        for name in fields:
            setattr(memory, name, changes[name])
        if fields:
            memory.save(update_fields=[*fields, "updated_at"])
        _revise(
            memory,
            RevisionAction.UPDATE,
            cause,
            text_before=before,
            status_before=memory.status,
            mark=RevisionMark.of(config, generation),
        )
    return memory


def do_forget(*, memory_id: UUID | str, app_name: str, user_id: str, cause: str) -> Memory:
    """Soft-delete: the memory stops appearing in search, its revisions stay."""
    return _set_status(memory_id, app_name, user_id, Status.FORGOTTEN, RevisionAction.FORGET, cause)


def do_restore(*, memory_id: UUID | str, app_name: str, user_id: str, cause: str) -> Memory:
    """Bring a forgotten or superseded memory back into search."""
    return _set_status(memory_id, app_name, user_id, Status.ACTIVE, RevisionAction.RESTORE, cause)


def do_rollback(*, revision_id: int, app_name: str, user_id: str, cause: str) -> Memory:
    """Return a memory to its text and status right after the given revision."""
    revision = MemoryRevision.objects.filter(id=revision_id, memory__app_name=app_name, memory__user_id=user_id).first()
    if revision is None:
        raise MemoryNotFound(f"Revision {revision_id} not found.")
    embedder = get_embedder()
    said = revision.text_after or revision.text_before
    vector = memory_vectors(embedder, [_said(said, revision.memory_id, app_name, user_id)])[0]
    with transaction.atomic():
        memory = _get_for_update(revision.memory_id, app_name, user_id)
        text_before, status_before = memory.text, memory.status
        if revision.text_after and revision.text_after != memory.text:
            _set_text(memory, revision.text_after, vector, embedder.id)
        if revision.status_after and revision.status_after != memory.status:
            _apply_status(memory, revision.status_after)
        _revise(
            memory,
            RevisionAction.ROLLBACK,
            f"{cause} (to revision {revision_id})",
            text_before=text_before,
            status_before=status_before,
        )
    return memory


def do_delete_memory(*, memory_id: UUID | str, app_name: str, user_id: str) -> bool:
    """Erase one memory with its revisions and embedding; False if it is not this user's."""
    deleted, _ = Memory.objects.for_scope(app_name, user_id).filter(id__in=_uuids([str(memory_id)])).delete()
    return deleted > 0


def _set_status(memory_id: UUID | str, app_name: str, user_id: str, status: str, action: str, cause: str) -> Memory:
    with transaction.atomic():
        memory = _get_for_update(memory_id, app_name, user_id)
        before = memory.status
        if before != status:
            _apply_status(memory, status)
            _revise(memory, action, cause, text_before=memory.text, status_before=before)
    return memory


def _apply_status(memory: Memory, status: str) -> None:
    memory.status = status
    memory.forgotten_at = timezone.now() if status == Status.FORGOTTEN else None
    if status == Status.ACTIVE:
        memory.superseded_by = None
        memory.strength = max(memory.strength, 1.0)
        memory.valid_until = None
    elif status == Status.SUPERSEDED and memory.valid_until is None:
        memory.valid_until = timezone.now()
    memory.save(update_fields=["status", "forgotten_at", "superseded_by", "strength", "valid_until", "updated_at"])


def _said(text: str, memory_id: UUID | str, app_name: str, user_id: str) -> Said:
    """``text`` as the memory's vector will see it, with its author and context (read before it is embedded,
    outside the transaction; none if there is no such memory)."""
    found = Memory.objects.filter(id=memory_id, app_name=app_name, user_id=user_id).values_list("author", "context")
    author, context = next(iter(found), ("", ""))
    return Said(text, author, context)


def _set_text(memory: Memory, text: str, vector: np.ndarray, embedder_id: str) -> None:
    memory.text = text.strip()
    memory.search_text = _indexed(text, memory.context, memory.author)
    memory.names = names(_with_speaker(text, memory.author))
    memory.embedding = vector
    memory.embedder = embedder_id
    memory.save(update_fields=["text", "search_text", "names", "embedding", "embedder", "updated_at"])


def do_reembed(memories: Iterable[Memory], *, batch_size: int = 64) -> int:
    """Embed memories again with the current embedder (after a change of model); returns the count."""
    embedder = get_embedder()
    batch: list[Memory] = []
    count = 0

    def flush() -> None:
        nonlocal count
        vectors = memory_vectors(embedder, [Said(m.text, m.author, m.context) for m in batch])
        for memory, vector in zip(batch, vectors, strict=True):
            memory.embedding, memory.embedder = vector, embedder.id
        Memory.objects.bulk_update(batch, ["embedding", "embedder"])
        count += len(batch)
        batch.clear()

    for memory in memories:
        batch.append(memory)
        if len(batch) >= batch_size:
            flush()
    if batch:
        flush()
    return count
