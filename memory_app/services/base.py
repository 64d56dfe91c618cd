"""What every memory rule shares: the errors, candidates and generation options, revisions, the scope's lock."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.db import connection
from django.utils import timezone

from memory_app.models import Kind, Memory, MemoryBankConfig, MemoryRevision, MetadataMerge

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
    keep_revisions: bool = True
    """Off: this write records no revisions (Vertex's per-request disableMemoryRevisions)."""

    def check(self) -> None:
        if self.metadata_merge not in MetadataMerge.values:
            raise MemoryServiceError(
                f"Unknown metadata merge {self.metadata_merge!r}; one of {', '.join(MetadataMerge.values)}."
            )
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
        return cls(
            created_ttl=created or config.default_ttl, updated_ttl=config.generate_updated_ttl or config.default_ttl
        )

    def created(self) -> datetime | None:
        return _from_now(self.created_ttl)

    def updated(self) -> datetime | None:
        return _from_now(self.updated_ttl)


@dataclass(frozen=True)
class RevisionMark:
    """What every revision of one write carries: its labels and when it is deleted."""

    labels: dict[str, str] = field(default_factory=dict)
    expires_at: datetime | None = None
    keep: bool = True
    """False: no revision is written (the bank keeps none, or the request asked for none)."""

    @classmethod
    def of(cls, config: MemoryBankConfig, generation: Generation | None = None) -> RevisionMark:
        ttl = (generation.revision_ttl if generation else None) or config.revision_ttl
        return cls(
            labels=dict(generation.revision_labels) if generation else {},
            expires_at=_from_now(ttl),
            keep=config.keep_revisions and (generation.keep_revisions if generation else True),
        )


def _from_now(ttl: timedelta | None) -> datetime | None:
    """When something kept for ``ttl`` from now expires; None (never) without a TTL."""
    return timezone.now() + ttl if ttl else None


@dataclass
class Outcome:
    created: list[UUID] = field(default_factory=list)
    updated: list[UUID] = field(default_factory=list)
    superseded: list[UUID] = field(default_factory=list)


_UNCHANGED: Any = object()


def get_bank_config(app_name: str) -> MemoryBankConfig:
    """The app's memory bank config (an unsaved default one if it has none)."""
    return MemoryBankConfig.objects.filter(app_name=app_name).first() or MemoryBankConfig(app_name=app_name)


def _get_for_update(memory_id: UUID | str, app_name: str, user_id: str) -> Memory:
    memory = (
        Memory.objects.for_scope(app_name, user_id).select_for_update().filter(id__in=_uuids([str(memory_id)])).first()
    )
    if memory is None:
        raise MemoryNotFound(f"Memory {memory_id} not found.")
    return memory


def _revise(
    memory: Memory,
    action: str,
    cause: str,
    *,
    text_before: str,
    status_before: str,
    mark: RevisionMark | None = None,
    structured_data: dict[str, Any] | None = None,
) -> None:
    """Record a change; without a ``mark``, with the app's default revision TTL and no labels.

    Nothing is recorded when the mark says so (revisions turned off): the change itself still happens.
    """
    mark = mark or RevisionMark.of(get_bank_config(memory.app_name))
    if not mark.keep:
        return
    MemoryRevision.objects.create(
        memory=memory,
        action=action,
        text_before=text_before,
        text_after=memory.text,
        status_before=status_before,
        status_after=memory.status,
        metadata_after=memory.metadata,
        structured_data=structured_data,
        cause=cause[:256],
        labels=mark.labels,
        expires_at=mark.expires_at,
    )


def _lock_scope(app_name: str, user_id: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", ["memory:" + json.dumps([app_name, user_id])]
        )


def _uuids(ids: Iterable[str]) -> list[UUID]:
    """Ids that are UUIDs; anything else cannot name a memory and is ignored."""
    valid = []
    for value in ids:
        try:
            valid.append(UUID(str(value)))
        except ValueError:
            continue
    return valid
