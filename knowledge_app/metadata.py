"""Documents' metadata: what an uploader may attach, and the documents a list of conditions on it keeps.

Metadata are a flat JSON object of scalars (or lists of them) under keys a filter
can name: letters, digits, '-' and single '_' — never '__', which Django would read
as a lookup. A condition ``(key, op, value)`` compares the document's value of
``key``; ``=`` also keeps a document whose value is a list holding ``value`` (tags).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

from django.db.models import Q

MAX_KEYS = 64
MAX_BYTES = 8192
OPERATORS = ("=", "!=", "<", "<=", ">", ">=")
_KEY = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")
_SCALARS = (str, int, float, bool)
_LOOKUPS = {"<": "lt", "<=": "lte", ">": "gt", ">=": "gte"}

Condition = tuple[str, str, Any]


class InvalidMetadata(ValueError):
    """Metadata or a condition on them that cannot be kept or applied, with what to change."""


def checked(metadata: Any) -> dict[str, Any]:
    """``metadata`` if it may be kept; ``InvalidMetadata`` saying why not."""
    if not isinstance(metadata, dict):
        raise InvalidMetadata("Metadata must be a JSON object of keys and values.")
    if len(metadata) > MAX_KEYS or len(json.dumps(metadata, ensure_ascii=False).encode()) > MAX_BYTES:
        raise InvalidMetadata(f"Metadata may have at most {MAX_KEYS} keys and {MAX_BYTES} bytes.")
    for key, value in metadata.items():
        check_key(key)
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(item, _SCALARS) for item in values):
            raise InvalidMetadata(f"Metadata {key!r}: a value is a string, number or boolean, or a list of them.")
        for item in values:
            check_storable(key, item)
    return metadata


def check_storable(key: str, value: Any) -> None:
    """Refuse what PostgreSQL's jsonb cannot hold: NaN and infinite numbers (``1e400`` reads as inf), and NUL in text.

    Metadata arrive by more ways than a JSON body the API's parser checks (a query parameter, python-aiplatform's
    Python-literal form part), so the store checks them itself (issue 41 K: each was a 500).
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidMetadata(f"Metadata {key!r}: a number must be finite (not NaN, nor beyond ±1.8e308).")
    if isinstance(value, str) and "\x00" in value:
        raise InvalidMetadata(f"Metadata {key!r}: text may not contain NUL (\\u0000) characters.")


def check_key(key: str) -> None:
    if not isinstance(key, str) or len(key) > 64 or not _KEY.fullmatch(key):
        raise InvalidMetadata(f"Metadata key {key!r}: letters, digits, '-' and single '_', up to 64 characters.")


def matching(conditions: Iterable[Condition]) -> Q:
    """The documents whose metadata meet every condition (at most ``MAX_KEYS``: each is a clause of the SQL)."""
    conditions = list(conditions)
    if len(conditions) > MAX_KEYS:
        raise InvalidMetadata(f"A search may compare at most {MAX_KEYS} metadata keys (got {len(conditions)}).")
    kept = Q()
    for key, op, value in conditions:
        check_key(key)
        if op not in OPERATORS or not isinstance(value, _SCALARS):
            raise InvalidMetadata(
                f"Compare metadata {key!r} with one of {', '.join(OPERATORS)} to a string, number or boolean."
            )
        check_storable(key, value)
        if op in ("=", "!="):
            equal = Q(metadata__contains={key: value}) | Q(metadata__contains={key: [value]})
            kept &= equal if op == "=" else ~equal
        else:
            kept &= Q(**{f"metadata__{key}__{_LOOKUPS[op]}": value})
    return kept
