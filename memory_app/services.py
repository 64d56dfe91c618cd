"""Memory rules: remembering (with deduplication), editing, forgetting, erasing.

Every change writes a ``MemoryRevision`` in the same transaction. Writes to one
scope (app, user) take a transaction-level advisory lock, so two consolidation
jobs for one user cannot both decide that a memory is new and create it twice.
Search lives in ``memory_app.search``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Iterable
from uuid import UUID, uuid4

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from memory_app.embedders import get_embedder
from memory_app.models import (
    MAX_TOPIC_LENGTH, Kind, Memory, MemoryBankConfig, MemoryRevision, MetadataMerge, RevisionAction, Status,
)
from memory_app.names import names
from memory_app.search import vector_literal
from memory_app.text import content_words, normalise, search_text
from sessions_app.signals import rows_by_table

# Cosine similarity above which a candidate with the same content words is the same memory said again.
NEAR_DUPLICATE_SIMILARITY = 0.95
MAX_MEMORY_LENGTH = 10_000


class MemoryServiceError(ValueError):
    pass


class MemoryNotFound(MemoryServiceError):
    pass


@dataclass(frozen=True)
class Candidate:
    """Something worth remembering, before it is compared with what is already known."""

    text: str
    author: str = ""
    kind: str = Kind.FACT
    importance: float = 0.5
    event_ids: tuple[str, ...] = ()
    event_time: datetime | None = None
    session_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    expires_at: datetime | None = None
    supersedes: tuple[str, ...] = ()
    """Ids of memories this one contradicts and replaces (the LLM extractor's verdict)."""
    memory_id: UUID | None = None
    """The id to give the memory if it is new (callers that name their memories)."""
    topic: str = ""
    """A custom topic of the app's memory bank config."""
    context: str = ""
    """What it answers or continues (the turn before it): found by keyword search, never shown, so a reply
    like "Yes, every Sunday!" is found by a question about what it answered."""


@dataclass(frozen=True)
class Generation:
    """How new memories join what is known (the options of Vertex Memory Bank's generation)."""

    consolidate: bool = True
    """Merge a memory said again into the known one; off: every candidate becomes a new memory."""
    metadata_merge: str = MetadataMerge.KEEP_ALL
    allowed_kinds: tuple[str, ...] = ()
    """Keep only candidates of these kinds; empty: every kind."""
    revision_labels: dict[str, str] = field(default_factory=dict)
    """Labels of the revisions written."""
    revision_ttl: timedelta | None = None
    """How long the revisions written are kept (else the app's config says)."""

    def check(self) -> None:
        if self.metadata_merge not in MetadataMerge.values:
            raise MemoryServiceError(f"Unknown metadata merge {self.metadata_merge!r}; one of {', '.join(MetadataMerge.values)}.")
        unknown = sorted(set(self.allowed_kinds) - set(Kind.values))
        if unknown:
            raise MemoryServiceError(f"Unknown kinds {', '.join(unknown)}; one of {', '.join(Kind.values)}.")
        if not isinstance(self.revision_labels, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.revision_labels.items()
        ):
            raise MemoryServiceError("Revision labels map strings to strings.")
        if self.revision_ttl is not None and self.revision_ttl <= timedelta(0):
            raise MemoryServiceError("A revision TTL is a positive duration.")


@dataclass(frozen=True)
class Expiry:
    """When memories written now expire, by the app's memory bank config (None: never)."""

    created_ttl: timedelta | None = None
    updated_ttl: timedelta | None = None

    @classmethod
    def of(cls, config: MemoryBankConfig, *, created_directly: bool) -> Expiry:
        created = config.create_ttl if created_directly else config.generate_created_ttl
        return cls(created_ttl=created or config.default_ttl, updated_ttl=config.generate_updated_ttl or config.default_ttl)

    def created(self) -> datetime | None:
        return _from_now(self.created_ttl)

    def updated(self) -> datetime | None:
        return _from_now(self.updated_ttl)


@dataclass(frozen=True)
class RevisionMark:
    """What every revision of one write carries: its labels and when it is deleted."""

    labels: dict[str, str] = field(default_factory=dict)
    expires_at: datetime | None = None

    @classmethod
    def of(cls, config: MemoryBankConfig, generation: Generation | None = None) -> RevisionMark:
        ttl = (generation.revision_ttl if generation else None) or config.revision_ttl
        return cls(labels=dict(generation.revision_labels) if generation else {}, expires_at=_from_now(ttl))


def _from_now(ttl: timedelta | None) -> datetime | None:
    """When something kept for ``ttl`` from now expires; None (never) without a TTL."""
    return timezone.now() + ttl if ttl else None


@dataclass
class Outcome:
    created: list[UUID] = field(default_factory=list)
    updated: list[UUID] = field(default_factory=list)
    superseded: list[UUID] = field(default_factory=list)


def get_bank_config(app_name: str) -> MemoryBankConfig:
    """The app's memory bank config (an unsaved default one if it has none)."""
    return MemoryBankConfig.objects.filter(app_name=app_name).first() or MemoryBankConfig(app_name=app_name)


def do_configure_bank(*, app_name: str, changes: dict[str, Any]) -> MemoryBankConfig:
    """Change an app's memory bank config (only the fields in ``changes``), checked whole before it is saved."""
    allowed = {
        "managed_topics", "custom_topics", "examples", "default_ttl", "create_ttl", "generate_created_ttl",
        "generate_updated_ttl", "revision_ttl",
    }
    unknown = sorted(set(changes) - allowed)
    if unknown:
        raise MemoryServiceError(f"Not a memory bank setting: {', '.join(unknown)}.")
    with transaction.atomic():
        config, _ = MemoryBankConfig.objects.select_for_update().get_or_create(app_name=app_name)
        for name, value in changes.items():
            setattr(config, name, value)
        check_bank_config(config)
        config.save()
    return config


def check_bank_config(config: MemoryBankConfig) -> None:
    """Refuse a config the extractor could not use: unknown kinds, unnamed or clashing topics, odd examples, TTLs ≤ 0."""
    managed = [kind for kind in Kind.values if kind != Kind.FACT]
    if not isinstance(config.managed_topics, list) or any(k not in managed for k in config.managed_topics):
        raise MemoryServiceError(f"managed_topics are some of {', '.join(managed)}.")
    if not isinstance(config.custom_topics, list):
        raise MemoryServiceError("custom_topics is a list of {label, description}.")
    labels = []
    for topic in config.custom_topics:
        label = topic.get("label") if isinstance(topic, dict) else None
        if not isinstance(label, str) or not label.strip() or len(label) > MAX_TOPIC_LENGTH or set(topic) - {"label", "description"}:
            raise MemoryServiceError(f"A custom topic is {{label, description}} with a label of 1 to {MAX_TOPIC_LENGTH} characters.")
        if not isinstance(topic.get("description", ""), str):
            raise MemoryServiceError(f"The description of custom topic {label!r} is text.")
        labels.append(label)
    if len(set(labels)) != len(labels) or set(labels) & set(Kind.values):
        raise MemoryServiceError("Custom topic labels are unique and differ from the managed topics.")
    if not isinstance(config.examples, list) or not all(_valid_example(e) for e in config.examples):
        raise MemoryServiceError(
            'An example is {"conversation": [{"role", "text"}], "memories": [{"fact", "topic"?}]}.'
        )
    for name in ("default_ttl", "create_ttl", "generate_created_ttl", "generate_updated_ttl", "revision_ttl"):
        ttl = getattr(config, name)
        if ttl is not None and ttl <= timedelta(0):
            raise MemoryServiceError(f"{name} is a positive duration.")


def _valid_example(example: Any) -> bool:
    if not isinstance(example, dict) or set(example) != {"conversation", "memories"}:
        return False
    turns, memories = example["conversation"], example["memories"]
    return (
        isinstance(turns, list) and isinstance(memories, list)
        and all(isinstance(t, dict) and isinstance(t.get("text"), str) and isinstance(t.get("role", ""), str) for t in turns)
        and all(isinstance(m, dict) and isinstance(m.get("fact"), str) and isinstance(m.get("topic", ""), str) for m in memories)
    )


def check_topic(config: MemoryBankConfig, topic: str) -> None:
    if topic not in config.custom_topic_labels():
        raise MemoryServiceError(f"{topic!r} is not a custom topic of {config.app_name}'s memory bank config.")


def check_candidate(candidate: Candidate) -> None:
    if not candidate.text.strip():
        raise MemoryServiceError("A memory needs text.")
    if len(candidate.text) > MAX_MEMORY_LENGTH:
        raise MemoryServiceError(f"A memory is at most {MAX_MEMORY_LENGTH} characters.")
    if candidate.kind not in Kind.values:
        raise MemoryServiceError(f"Unknown kind {candidate.kind!r}; one of {', '.join(Kind.values)}.")
    if not 0 <= candidate.importance <= 1:
        raise MemoryServiceError("importance is between 0 and 1.")


def do_remember(
    *,
    app_name: str,
    user_id: str,
    candidates: Iterable[Candidate],
    cause: str,
    extra_scope: dict[str, str] | None = None,
    generation: Generation = Generation(),
    created_directly: bool = False,
) -> Outcome:
    """Merge candidates into the user's memories: duplicates merge, contradictions supersede.

    Embeddings are computed before the transaction (they are the slow part);
    the comparisons and writes happen under the scope's advisory lock. Memories
    of another ``extra_scope`` are another scope: never merged with these.
    ``generation`` says whether and how candidates merge, and which kinds are kept.
    Expiry follows the app's memory bank config: ``created_directly`` memories
    take its create TTL, generated ones its generate TTLs (a merge renews them).
    """
    generation.check()
    allowed = set(generation.allowed_kinds)
    candidates = [c for c in candidates if c.text.strip() and (not allowed or c.kind in allowed)]
    config = get_bank_config(app_name)
    for candidate in candidates:
        check_candidate(candidate)
        if candidate.topic:
            check_topic(config, candidate.topic)
    if not candidates:
        return Outcome()
    expiry = Expiry.of(config, created_directly=created_directly)
    mark = RevisionMark.of(config, generation)
    embedder = get_embedder()
    vectors = embedder.embed_documents([c.text for c in candidates])
    outcome = Outcome()
    with transaction.atomic():
        _lock_scope(app_name, user_id)
        for candidate, vector in zip(candidates, vectors):
            _remember_one(
                app_name, user_id, extra_scope or {}, candidate, vector, embedder.id, cause, outcome, generation, expiry,
                mark,
            )
    return outcome


def _remember_one(
    app_name: str,
    user_id: str,
    extra_scope: dict[str, str],
    candidate: Candidate,
    vector: np.ndarray,
    embedder_id: str,
    cause: str,
    outcome: Outcome,
    generation: Generation,
    expiry: Expiry,
    mark: RevisionMark,
) -> None:
    same = None
    if generation.consolidate:
        exact = candidate.metadata if generation.metadata_merge == MetadataMerge.REQUIRE_EXACT_MATCH else None
        same = _find_same(app_name, user_id, extra_scope, candidate.text, vector, metadata=exact)
    if same is not None and not candidate.supersedes:
        _merge(same, candidate, cause, metadata_merge=generation.metadata_merge, expires_at=expiry.updated(), mark=mark)
        outcome.updated.append(same.id)
        return
    memory = Memory(
        id=candidate.memory_id or uuid4(),
        app_name=app_name,
        user_id=user_id,
        text=candidate.text.strip(),
        author=candidate.author,
        kind=candidate.kind,
        topic=candidate.topic,
        importance=candidate.importance,
        source_session_id=candidate.session_id,
        source_session_ids=[candidate.session_id] if candidate.session_id else [],
        source_event_ids=list(candidate.event_ids),
        metadata=dict(candidate.metadata),
        extra_scope=extra_scope,
        event_time=candidate.event_time,
        valid_from=candidate.event_time or timezone.now(),
        expires_at=candidate.expires_at or expiry.created(),
        embedding=vector,
        embedder=embedder_id,
        context=candidate.context.strip(),
        search_text=_indexed(candidate.text, candidate.context, candidate.author),
        names=names(_with_speaker(candidate.text, candidate.author)),
    )
    memory.save()
    _revise(memory, RevisionAction.CREATE, cause, text_before="", status_before="", mark=mark)
    outcome.created.append(memory.id)
    olds = Memory.objects.for_scope(app_name, user_id).active().filter(extra_scope=extra_scope)
    for old in olds.filter(id__in=_uuids(candidate.supersedes)):
        before = old.status
        old.status, old.superseded_by = Status.SUPERSEDED, memory
        old.valid_until = max(memory.valid_from, old.valid_from)  # it held until what replaced it happened
        old.save(update_fields=["status", "superseded_by", "valid_until", "updated_at"])
        _revise(old, RevisionAction.SUPERSEDE, cause, text_before=old.text, status_before=before, mark=mark)
        outcome.superseded.append(old.id)


def _indexed(text: str, context: str, author: str) -> str:
    """What keyword search sees of a memory: who said it (when a name the text lacks), its text, its context."""
    said = _with_speaker(text, author)
    return search_text(f"{said}\n{context}" if context.strip() else said)


def _with_speaker(text: str, author: str) -> str:
    """``text`` led by its author's name when the author is a person named in a multi-party session.

    ADK writes a person's turns as ``"user"``; a session of several people writes
    their names, and a question about what Caroline said names her, not the
    words she said. A name the text already carries is not added again.
    """
    name = author.strip()
    if not name or name in ("user", "model") or name.casefold() in text.casefold():
        return text
    return f"{name}: {text}"


def _find_same(
    app_name: str,
    user_id: str,
    extra_scope: dict[str, str],
    text: str,
    embedding: np.ndarray,
    *,
    metadata: dict[str, Any] | None = None,
) -> Memory | None:
    """An active memory of the scope that says the same thing: equal once normalised, or close in meaning with the same words.

    With ``metadata``, only a memory with exactly that metadata counts.
    """
    key, words = normalise(text), content_words(text)
    vector = vector_literal(embedding)
    exact = None if metadata is None else json.dumps(metadata)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT id, 1 - (embedding <=> %s::vector) AS similarity, text
            FROM memories
            WHERE app_name = %s AND user_id = %s AND extra_scope = %s::jsonb AND status = 'active'
              AND (%s::jsonb IS NULL OR metadata = %s::jsonb)
            ORDER BY embedding <=> %s::vector
            LIMIT 5
            """,
            [vector, app_name, user_id, json.dumps(extra_scope), exact, exact, vector],
        )
        for memory_id, similarity, existing in cursor.fetchall():
            near = (similarity or 0) >= NEAR_DUPLICATE_SIMILARITY and content_words(existing) == words
            if near or normalise(existing) == key:
                # Locked and re-checked: the decay may have forgotten it since the read above.
                same = Memory.objects.select_for_update().filter(id=memory_id, status=Status.ACTIVE).first()
                if same is not None:
                    return same
    return None


def _merge(
    memory: Memory, candidate: Candidate, cause: str, *, metadata_merge: str = MetadataMerge.KEEP_ALL,
    expires_at: datetime | None = None, mark: RevisionMark | None = None,
) -> None:
    """Fold a repeated memory into the one already known: sources and metadata add up, strength (and expiry) renews."""
    memory.source_event_ids = list(dict.fromkeys([*memory.source_event_ids, *candidate.event_ids]))
    if candidate.session_id and candidate.session_id not in memory.source_session_ids:
        memory.source_session_ids = [*memory.source_session_ids, candidate.session_id]
    if metadata_merge == MetadataMerge.OVERWRITE:
        memory.metadata = dict(candidate.metadata)
    elif metadata_merge == MetadataMerge.MERGE:
        memory.metadata = {**memory.metadata, **candidate.metadata}
    else:
        memory.metadata = merge_metadata(memory.metadata, candidate.metadata)
    memory.importance = max(memory.importance, candidate.importance)
    memory.strength = 1.0
    if candidate.event_time and (memory.event_time is None or candidate.event_time > memory.event_time):
        memory.event_time = candidate.event_time
    memory.expires_at = candidate.expires_at or expires_at or memory.expires_at
    memory.save(update_fields=[
        "source_event_ids", "source_session_ids", "metadata", "importance", "strength", "event_time", "expires_at",
        "updated_at",
    ])
    _revise(memory, RevisionAction.MERGE, cause, text_before=memory.text, status_before=memory.status, mark=mark)


def merge_metadata(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Keep every source's metadata: a key given different values keeps them all, as a list."""
    merged = dict(old)
    for key, value in new.items():
        if key not in merged or merged[key] == value:
            merged[key] = value
            continue
        values = merged[key] if isinstance(merged[key], list) else [merged[key]]
        if value not in values:
            merged[key] = [*values, value]
    return merged


def do_update_memory(*, memory_id: UUID | str, app_name: str, user_id: str, text: str, cause: str) -> Memory:
    """Change a memory's text (re-embedded) and record the revision."""
    return do_edit_memory(memory_id=memory_id, app_name=app_name, user_id=user_id, text=text, cause=cause)


_UNCHANGED: Any = object()


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
    vector = embedder.embed_documents([text])[0] if text is not None else None
    with transaction.atomic():
        memory = _get_for_update(memory_id, app_name, user_id)
        before = memory.text
        if text is not None and text.strip() != memory.text:
            _set_text(memory, text, vector, embedder.id)
        changes = {"metadata": metadata, "kind": kind, "topic": topic}
        fields = [name for name, value in changes.items() if value is not None]
        if expires_at is not _UNCHANGED:
            changes["expires_at"] = expires_at
            fields.append("expires_at")
        for name in fields:
            setattr(memory, name, changes[name])
        if fields:
            memory.save(update_fields=[*fields, "updated_at"])
        _revise(memory, RevisionAction.UPDATE, cause, text_before=before, status_before=memory.status,
                mark=RevisionMark.of(config, generation))
    return memory


def do_forget(*, memory_id: UUID | str, app_name: str, user_id: str, cause: str) -> Memory:
    """Soft-delete: the memory stops appearing in search, its revisions stay."""
    return _set_status(memory_id, app_name, user_id, Status.FORGOTTEN, RevisionAction.FORGET, cause)


def do_restore(*, memory_id: UUID | str, app_name: str, user_id: str, cause: str) -> Memory:
    """Bring a forgotten or superseded memory back into search."""
    return _set_status(memory_id, app_name, user_id, Status.ACTIVE, RevisionAction.RESTORE, cause)


def do_rollback(*, revision_id: int, app_name: str, user_id: str, cause: str) -> Memory:
    """Return a memory to its text and status right after the given revision."""
    revision = MemoryRevision.objects.filter(
        id=revision_id, memory__app_name=app_name, memory__user_id=user_id
    ).first()
    if revision is None:
        raise MemoryNotFound(f"Revision {revision_id} not found.")
    embedder = get_embedder()
    vector = embedder.embed_documents([revision.text_after or revision.text_before])[0]
    with transaction.atomic():
        memory = _get_for_update(revision.memory_id, app_name, user_id)
        text_before, status_before = memory.text, memory.status
        if revision.text_after and revision.text_after != memory.text:
            _set_text(memory, revision.text_after, vector, embedder.id)
        if revision.status_after and revision.status_after != memory.status:
            _apply_status(memory, revision.status_after)
        _revise(memory, RevisionAction.ROLLBACK, f"{cause} (to revision {revision_id})",
                text_before=text_before, status_before=status_before)
    return memory


def do_delete_memory(*, memory_id: UUID | str, app_name: str, user_id: str) -> bool:
    """Erase one memory with its revisions and embedding; False if it is not this user's."""
    deleted, _ = Memory.objects.for_scope(app_name, user_id).filter(id__in=_uuids([str(memory_id)])).delete()
    return deleted > 0


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
        memories = Memory.objects.for_scope(app_name, user_id).exclude(status=Status.FORGOTTEN).filter(
            source_session_ids__contains=[session_id]
        ).select_for_update()
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
            _revise(memory, RevisionAction.UPDATE, f"{cause} (one of its sources)", text_before=memory.text,
                    status_before=memory.status)
            outcome.detached.append(memory.id)
    return outcome


def do_erase_user(*, app_name: str, user_id: str) -> dict[str, int]:
    """Erase everything remembered about a user: memories, revisions, embeddings, jobs; rows deleted per table."""
    from memory_app.models import ConsolidationJob

    with transaction.atomic():
        _lock_scope(app_name, user_id)
        jobs = rows_by_table(ConsolidationJob.objects.filter(app_name=app_name, user_id=user_id).delete())
        Memory.objects.for_scope(app_name, user_id).update(superseded_by=None)
        return {**rows_by_table(Memory.objects.for_scope(app_name, user_id).delete()), **jobs}


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


def _set_text(memory: Memory, text: str, vector: np.ndarray, embedder_id: str) -> None:
    memory.text = text.strip()
    memory.search_text = _indexed(text, memory.context, memory.author)
    memory.names = names(_with_speaker(text, memory.author))
    memory.embedding = vector
    memory.embedder = embedder_id
    memory.save(update_fields=["text", "search_text", "names", "embedding", "embedder", "updated_at"])


def _get_for_update(memory_id: UUID | str, app_name: str, user_id: str) -> Memory:
    memory = Memory.objects.for_scope(app_name, user_id).select_for_update().filter(id__in=_uuids([str(memory_id)])).first()
    if memory is None:
        raise MemoryNotFound(f"Memory {memory_id} not found.")
    return memory


def _revise(
    memory: Memory, action: str, cause: str, *, text_before: str, status_before: str, mark: RevisionMark | None = None
) -> None:
    """Record a change; without a ``mark``, with the app's default revision TTL and no labels."""
    mark = mark or RevisionMark.of(get_bank_config(memory.app_name))
    MemoryRevision.objects.create(
        memory=memory,
        action=action,
        text_before=text_before,
        text_after=memory.text,
        status_before=status_before,
        status_after=memory.status,
        metadata_after=memory.metadata,
        cause=cause[:256],
        labels=mark.labels,
        expires_at=mark.expires_at,
    )


def _lock_scope(app_name: str, user_id: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", ["memory:" + json.dumps([app_name, user_id])])


def _uuids(ids: Iterable[str]) -> list[UUID]:
    """Ids that are UUIDs; anything else cannot name a memory and is ignored."""
    valid = []
    for value in ids:
        try:
            valid.append(UUID(str(value)))
        except ValueError:
            continue
    return valid


def do_reembed(memories: Iterable[Memory], *, batch_size: int = 64) -> int:
    """Embed memories again with the current embedder (after a change of model); returns the count."""
    embedder = get_embedder()
    batch: list[Memory] = []
    count = 0

    def flush() -> None:
        nonlocal count
        vectors = embedder.embed_documents([m.text for m in batch])
        for memory, vector in zip(batch, vectors):
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
