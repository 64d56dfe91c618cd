"""What a client sets on an engine resource besides its Memory Bank: ``displayName``, ``description``, ``labels``,
``spec`` — read from a create's or an update's body, checked, and turned into ``Engine`` columns.

A create sets what its body carries; an update without ``updateMask`` (``memory_banks.update``) replaces what its
body carries, one with a mask (``runtimes.update``, snake_case paths) exactly the paths named, clearing a named field
the body leaves out (shared/memory-bank-more-wire.md §2.3, §4). ``spec`` is kept as sent — top-level keys in
camelCase, everything inside verbatim (a class method's JSON schema names its parameters in any spelling) — as
nothing is deployed from it: clients read back what they set, and register the class methods it lists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from vertex_app.errors import InvalidArgument
from vertex_app.wire import camel, field_mask, snake, string

MAX_DISPLAY_NAME = 128
MAX_DESCRIPTION = 4096
MAX_LABELS = 64
_LABEL = re.compile(r"[^\W\d_A-Z][\w-]{0,62}", re.UNICODE)
"""A label key: a lowercase letter first (any script), then up to 62 letters, digits, '_' or '-' (Google's rule)."""
_LABEL_VALUE = re.compile(r"[\w-]{0,63}", re.UNICODE)
_SPEC_PATH = re.compile(r"spec(?:\.[a-z][a-z0-9_]*)+")
BANK_PATHS = {"context_spec", "context_spec.memory_bank_config"}
PATHS = {"display_name", "description", "labels", "spec", *BANK_PATHS}
"""The update mask paths an engine takes, besides ``spec.…`` ones."""


@dataclass(frozen=True)
class EngineUpdate:
    fields: dict[str, Any]
    """``Engine`` columns to set."""
    bank: dict[str, Any] | None
    """The memory bank config to apply (snake_case), or None to leave it."""


def read(body: dict[str, Any], *, mask: set[str] | None, engine_spec: Any = None) -> EngineUpdate:
    """The columns and memory bank config ``body`` (snake_case names, ``wire.message``) sets under ``mask``.

    ``engine_spec``: the engine's spec now, which ``spec.…`` paths change one key of.
    """
    named = set(body) if mask is None else mask
    fields: dict[str, Any] = {}
    if "display_name" in named:
        fields["display_name"] = _text(body.get("display_name"), "displayName", MAX_DISPLAY_NAME)
    if "description" in named:
        fields["description"] = _text(body.get("description"), "description", MAX_DESCRIPTION)
    if "labels" in named:
        fields["labels"] = _labels(body.get("labels"))
    spec = _spec(body.get("spec"))
    if "spec" in named:
        fields["spec"] = spec
    parts = sorted(path.split(".", 1)[1] for path in named if path.startswith("spec."))
    if parts and "spec" not in named:
        merged = dict(engine_spec or {})
        for part in parts:
            key = camel(part.split(".")[0])
            if spec is not None and key in spec:
                merged[key] = spec[key]
            else:
                merged.pop(key, None)
        fields["spec"] = merged
    bank = None
    if named & BANK_PATHS or (mask is None and "context_spec" in body):
        bank = (body.get("context_spec") or {}).get("memory_bank_config") or {}
    return EngineUpdate(fields=fields, bank=bank)


def mask_of(value: Any) -> set[str] | None:
    """The paths of an engine's ``updateMask`` (either spelling), None when there is none; 400 for one it lacks."""
    if value in (None, ""):
        return None
    given = {snake(part.strip()) for part in str(value).split(",") if part.strip()}
    return field_mask(value, PATHS | {path for path in given if _SPEC_PATH.fullmatch(path)})


def storable(value: Any, name: str) -> None:
    """Refuse text PostgreSQL cannot store: a lone UTF-16 surrogate (``"\\ud800"`` is valid JSON) made a 500."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidArgument(f"'{name}' holds text that is not valid Unicode (a lone surrogate).") from None


def _text(value: Any, name: str, limit: int) -> str:
    text = string(value, name)
    if len(text) > limit:
        raise InvalidArgument(f"'{name}' may be at most {limit} characters long.")
    storable(text, name)
    return text


def _labels(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
        raise InvalidArgument("'labels' must be a JSON object of strings.")
    if len(value) > MAX_LABELS:
        raise InvalidArgument(f"An engine has at most {MAX_LABELS} labels.")
    for key, item in value.items():
        if not _LABEL.fullmatch(key) or not _LABEL_VALUE.fullmatch(item):
            raise InvalidArgument(
                f"Label {key!r}: keys start with a lowercase letter, and keys and values hold at most 63 lowercase "
                "letters, digits, '_' and '-'."
            )
    storable(value, "labels")
    return dict(value)


def _spec(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidArgument("'spec' must be a JSON object.")
    storable(value, "spec")
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = camel(snake(key))
        if name in out:
            raise InvalidArgument(f"Field \"{name}\" is given twice at 'spec'.")
        out[name] = item
    return out
