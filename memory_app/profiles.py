"""Structured profiles: one per (schema, scope), stored as one ``Memory`` per field, revised like any memory.

An app configures schemas per set of scope keys (``MemoryBankConfig.structured_memory_configs``).
A generation whose scope has every key of a config fills that config's schemas (the default
config, without keys, when none does); a scope's keys are ``app_name`` (always: every memory is an
app's), ``user_id`` when it has one, and its further keys. Each field is a row of type
``structured_profile`` whose ``structured_content`` is ``{"schema_id", "data": {field: value}}``
and whose text reads ``field: value`` (the admin, the revision history). A new value of a field
updates its row (an ``update`` revision; the earlier revision keeps the old value as
``structured_data``); the same value changes nothing. Profile rows are never matched, merged or
superseded by natural-language memories, never found by search unless asked for, and never decay.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid4

from django.db import transaction

from cognizes.infra.embedders import embed_distinct, get_embedder
from cognizes.infra.text import search_text
from memory_app.models import Kind, Memory, MemoryBankConfig, MemoryType, RevisionAction
from memory_app.profile_extraction import extract_profiles
from memory_app.profile_schema import value_error
from memory_app.services import Expiry, MemoryServiceError, RevisionMark, get_bank_config, scope_keys_of
from memory_app.services.base import _get_for_update, _lock_scope, _revise

Profile = dict[str, Any]


@dataclass
class ProfileOutcome:
    created: list[UUID] = field(default_factory=list)
    updated: list[UUID] = field(default_factory=list)


def schemas_for(config: MemoryBankConfig, keys: set[str]) -> dict[str, dict[str, Any]]:
    """The schemas (by id) a scope with ``keys`` fills: every config whose keys it has, else the default one."""
    configs = config.structured_memory_configs or []
    matching = [c for c in configs if c["scope_keys"] and set(c["scope_keys"]) <= keys]
    if not matching:
        matching = [c for c in configs if not c["scope_keys"]]
    schemas: dict[str, dict[str, Any]] = {}
    for config_item in sorted(matching, key=lambda c: -len(c["scope_keys"])):  # the most specific first
        for schema_config in config_item["schema_configs"]:
            schemas.setdefault(schema_config["id"], schema_config["schema"])
    return schemas


def schema_of(app_name: str, schema_id: str) -> dict[str, Any] | None:
    """A schema of the app by id (any config's), or None."""
    for config in get_bank_config(app_name).structured_memory_configs or []:
        for schema_config in config["schema_configs"]:
            if schema_config["id"] == schema_id:
                return dict(schema_config["schema"])
    return None


def profile_rows(app_name: str, user_id: str, extra_scope: dict[str, str]) -> list[Memory]:
    """The current profile fields of exactly this scope (other users', other scope keys' are other profiles)."""
    return list(
        Memory.objects.current()
        .filter(app_name=app_name, user_id=user_id, extra_scope=extra_scope, memory_type=MemoryType.STRUCTURED_PROFILE)
        .order_by("created_at", "id")
    )


def get_profiles(app_name: str, user_id: str, extra_scope: dict[str, str]) -> dict[str, Profile]:
    """``{schema_id: {field: value}}`` of the scope: its profiles that have data."""
    profiles: dict[str, Profile] = {}
    for row in profile_rows(app_name, user_id, extra_scope):
        content = row.structured_content or {}
        profiles.setdefault(content.get("schema_id", ""), {}).update(content.get("data") or {})
    return profiles


def field_text(name: str, value: Any) -> str:
    """How a field reads as a memory's text."""
    return f"{name}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"


def do_store_profiles(
    *,
    app_name: str,
    user_id: str,
    extra_scope: dict[str, str],
    values: dict[str, Profile],
    cause: str,
    mark: RevisionMark | None = None,
    vectors: dict[str, Any] | None = None,
) -> ProfileOutcome:
    """Write the given field values of the scope's profiles: new fields are created, changed ones updated.

    Values must already fit their schemas (``profile_extraction`` checks them). ``vectors``: field text →
    its embedding, computed before the caller's transaction (``embed_fields``); missing ones are computed here.
    """
    if not any(values.values()):
        return ProfileOutcome()
    config = get_bank_config(app_name)
    expiry, mark = Expiry.of(config, created_directly=False), mark or RevisionMark.of(config)
    outcome = ProfileOutcome()
    texts = [field_text(name, value) for profile in values.values() for name, value in profile.items()]
    vectors = {**embed_fields([t for t in texts if t not in (vectors or {})]), **(vectors or {})}
    embedder = get_embedder().id
    with transaction.atomic():
        _lock_scope(app_name, user_id)
        rows = {
            (row.structured_content["schema_id"], name): row
            for row in profile_rows(app_name, user_id, extra_scope)
            if row.structured_content
            for name in row.structured_content.get("data") or {}
        }
        for schema_id, profile in values.items():
            for name, value in profile.items():
                text, data = field_text(name, value), {name: value}
                row = rows.get((schema_id, name))
                if row is None:
                    row = Memory.objects.create(
                        id=uuid4(),
                        app_name=app_name,
                        user_id=user_id,
                        extra_scope=extra_scope,
                        memory_type=MemoryType.STRUCTURED_PROFILE,
                        structured_content={"schema_id": schema_id, "data": data},
                        text=text,
                        search_text=search_text(text),
                        kind=Kind.PERSONAL_INFO,
                        importance=0.8,
                        expires_at=expiry.created(),
                        embedding=vectors[text],
                        embedder=embedder,
                    )
                    _revise_field(row, RevisionAction.CREATE, cause, before="", mark=mark)
                    outcome.created.append(row.id)
                elif row.structured_content != {"schema_id": schema_id, "data": data}:
                    before = _set(row, schema_id, data, text, vectors[text], embedder, expiry.updated())
                    _revise_field(row, RevisionAction.UPDATE, cause, before=before, mark=mark)
                    outcome.updated.append(row.id)
    return outcome


@dataclass(frozen=True)
class ProfileDraft:
    """What a generation would write to a scope's profiles, read and embedded before its transaction."""

    values: dict[str, Profile] = field(default_factory=dict)
    vectors: dict[str, Any] = field(default_factory=dict)


def draft_profiles(
    *,
    app_name: str,
    user_id: str,
    extra_scope: dict[str, str],
    events: list[dict[str, Any]],
    config: MemoryBankConfig | None = None,
) -> ProfileDraft:
    """The field values ``events`` state for the schemas this scope fills (none configured: nothing, at no cost).

    ``config``: the app's bank config, when the caller has read it already (a consolidation job reads it once)."""
    config = config or get_bank_config(app_name)
    schemas = schemas_for(config, scope_keys_of(user_id=user_id, extra_scope=extra_scope))
    if not schemas or not events:
        return ProfileDraft()
    current = get_profiles(app_name, user_id, extra_scope)
    found = extract_profiles(events, schemas, current)
    values = {
        schema_id: changed
        for schema_id, profile in found.items()
        if (changed := {k: v for k, v in profile.items() if current.get(schema_id, {}).get(k, _ABSENT) != v})
    }
    texts = [field_text(name, value) for profile in values.values() for name, value in profile.items()]
    return ProfileDraft(values=values, vectors=embed_fields(texts))


_ABSENT = object()


def embed_fields(texts: list[str]) -> dict[str, Any]:
    """Field texts' embeddings (retrieve finds profile rows by meaning when asked for them)."""
    return embed_distinct(get_embedder(), texts)


def _set(row: Memory, schema_id: str, data: Profile, text: str, vector: Any, embedder: str, expires: Any) -> str:
    """Give a profile row its new value; returns its text before (what the revision says it was)."""
    before = row.text
    row.structured_content = {"schema_id": schema_id, "data": data}
    row.text, row.search_text = text, search_text(text)
    row.embedding, row.embedder = vector, embedder
    row.expires_at = expires or row.expires_at
    row.strength = 1.0
    row.save(
        update_fields=[
            "structured_content",
            "text",
            "search_text",
            "embedding",
            "embedder",
            "expires_at",
            "strength",
            "updated_at",
        ]
    )
    return before


def _revise_field(row: Memory, action: str, cause: str, *, before: str, mark: RevisionMark) -> None:
    """A revision of a profile field, carrying its data after the change (Vertex's ``structuredData``)."""
    data = (row.structured_content or {}).get("data")
    _revise(
        row,
        action,
        cause,
        text_before=before,
        status_before=row.status if before else "",
        mark=mark,
        structured_data=data,
    )


def check_profile_value(row: Memory, value: Any) -> tuple[str, dict[str, Any]]:
    """(field name, schema) of a profile row, if ``value`` fits the field's schema; else MemoryServiceError."""
    content = row.structured_content or {}
    if row.memory_type != MemoryType.STRUCTURED_PROFILE or len(content.get("data") or {}) != 1:
        raise MemoryServiceError("Only a profile field's value is edited this way.")
    (name,) = content["data"]
    schema = schema_of(row.app_name, content.get("schema_id", ""))
    if schema is None or name not in (schema.get("properties") or {}):
        raise MemoryServiceError(f"Schema {content.get('schema_id')!r} no longer has a field {name!r}.")
    error = value_error(schema["properties"][name], value)
    if error is not None:
        raise MemoryServiceError(f"{name}: {error}")
    return name, schema


def do_edit_profile_field(*, memory_id: UUID | str, app_name: str, user_id: str, value: Any, cause: str) -> Memory:
    """Set one profile field to ``value`` (a person's edit), checked against its schema."""
    with transaction.atomic():
        _lock_scope(app_name, user_id)
        row = _get_for_update(memory_id, app_name, user_id)
        name, _ = check_profile_value(row, value)
        content = row.structured_content or {}
        if content["data"] == {name: value}:
            return row
        text = field_text(name, value)
        before = _set(
            row, content["schema_id"], {name: value}, text, embed_fields([text])[text], get_embedder().id, None
        )
        _revise_field(row, RevisionAction.UPDATE, cause, before=before, mark=RevisionMark.of(get_bank_config(app_name)))
    return row
