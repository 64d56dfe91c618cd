"""The ``filter`` query parameter of Vertex list calls (AIP-160, the subset Vertex documents).

``user_id="alice"``, ``timestamp>="2026-11-30T16:42:44+00:00"``,
``update_time>="…" AND display_name="x"``: comparisons joined by AND. Each
list call then says which fields it knows; anything else is a 400, never ignored.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from cognizes.access import limits
from vertex_app.errors import InvalidArgument
from vertex_app.wire import snake

OPERATORS = ("<=", ">=", "!=", "=", "<", ">")
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<op><=|>=|!=|=|<|>)
      | (?P<and>AND\b)
      | (?P<bad>OR\b|NOT\b|\(|\)|-)
      | (?P<word>[^\s"<>=!()]+)
    )""",
    re.VERBOSE,
)


_MAP_KEY = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")
"""A map key a filter may name: letters, digits, '-' and single '_' (no ORM lookup hides in it)."""


@dataclass(frozen=True)
class Condition:
    field: str
    """snake_case, dotted for nested fields (``labels.team``, ``scope.user_id``)."""
    op: str
    value: Any
    """A string (quoted or a bare word), or a number or boolean written bare."""


def parse(
    text: str | None,
    *,
    fields: set[str] | frozenset[str] | None,
    field: str = "filter",
    pattern: re.Pattern[str] = _TOKEN,
    typed: bool = True,
) -> list[Condition]:
    """The conditions of a filter expression; 400 for syntax this server does not support.

    ``fields`` None: any key a map may have, as written (RAG Engine's ``metadata_filter`` over a file's metadata).
    ``field``: the request's name for the expression, named when it is refused for its length. ``pattern``: the
    tokens (feedback entries' adds ``:``, "has"); ``typed`` False keeps bare words as text (no numbers, booleans).
    """
    if not text or not text.strip():
        return []
    tokens = tokenize(text, pattern, field=field)
    conditions: list[Condition] = []
    at = 0  # the next token: an index, not slicing, which copied the rest at each condition (quadratic)
    while at < len(tokens):
        if (
            len(tokens) - at < 3
            or tokens[at][0] != "word"
            or tokens[at + 1][0] != "op"
            or tokens[at + 2][0] not in ("word", "string")
        ):
            raise InvalidArgument(f'Unsupported filter {text!r}: write comparisons such as user_id="u" joined by AND.')
        (_, name), (_, op), (kind, raw) = tokens[at : at + 3]
        head, _, key = name.partition(".")
        field = snake(head) + (f".{key}" if key else "")  # a map key (scope.agentName) keeps its spelling
        if fields is None:
            if not _MAP_KEY.fullmatch(name):
                raise InvalidArgument(f"Unsupported filter field {name!r}: letters, digits, '-' and single '_'.")
            field = name
        elif not _MAP_KEY.fullmatch(key or "x") or not _known(field, fields):
            raise InvalidArgument(f"Unsupported filter field {name!r}; supported: {', '.join(sorted(fields))}.")
        value = _value(kind, raw) if typed else unquote(raw) if kind == "string" else raw
        conditions.append(Condition(field=field, op=op, value=value))
        at += 3
        if at < len(tokens):
            if tokens[at][0] != "and" or at + 1 == len(tokens):
                raise InvalidArgument(f"Unsupported filter {text!r}: only AND joins conditions.")
            at += 1
    return conditions


def _known(field: str, fields: set[str] | frozenset[str]) -> bool:
    """A listed field, or a key of a listed map (``labels.*``)."""
    return field in fields or any(name.endswith(".*") and field.startswith(name[:-1]) for name in fields)


_BLANK_TO_END = re.compile(r"\s*\Z")


def tokenize(text: str, pattern: re.Pattern[str] = _TOKEN, *, field: str = "filter") -> list[tuple[str, str]]:
    """``text`` as (group, text) pairs of ``pattern``'s named groups; a ``bad`` one (OR, NOT, …) or none is a 400.

    Also the Agent Registry's filters' (``registry_filters``), with a pattern of their own. Every filter a
    Vertex surface parses comes through here, so its length is checked here, before any parsing (issue 41 J3).
    """
    limits.check_filter(text, field=field)
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        if _BLANK_TO_END.match(text, position):  # not text[position:].strip(): a copy per token, quadratic
            break
        match = pattern.match(text, position)
        if match is None or match.lastgroup is None:
            raise InvalidArgument(f"Cannot parse the filter {text!r} at {position}.")
        if match.lastgroup == "bad":
            raise InvalidArgument(f"Unsupported filter {text!r}: only comparisons joined by AND.")
        tokens.append((match.lastgroup, match.group(match.lastgroup)))
        position = match.end()
    return tokens


def unquote(raw: str) -> str:
    """A quoted string's text (``"a \\"b\\""`` → ``a "b"``)."""
    return re.sub(r"\\(.)", r"\1", raw[1:-1])


def _value(kind: str, raw: str) -> Any:
    if kind == "string":
        return unquote(raw)
    if raw in ("true", "false"):
        return raw == "true"
    if raw.isascii() and raw.lstrip("-").isdigit():
        return int(raw)
    try:
        number = float(raw)
    except ValueError:
        return raw
    if math.isfinite(number):
        return number
    if raw.lstrip("+-").isalpha():  # nan, inf, Infinity: words, compared as text (jsonb holds no such number)
        return raw
    raise InvalidArgument(f"The number {raw} in the filter is out of range (beyond ±1.8e308).")
