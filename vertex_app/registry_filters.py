"""The ``filter`` of Agent Registry lists: AIP-160's comparisons, matched against the records' own JSON.

What the clients send (``../shared/agent-registry-wire.md``): a field of the record as
its JSON spells it, map keys quoted (``attributes."agentregistry.googleapis.com/system/RuntimeReference".uri``,
which ADK for Python sends to find its own deployment), ``=``, ``!=`` or ``:`` (has: for
text, a substring, as Google's registry matches it; ``:*``, present), joined by ``AND``::

    agentId="weather"
    displayName:"weather" AND skills.name:"Get weather"

A field inside a list (``skills.name``, ``tools.name``) matches when any element does.
The records are few per app (one agent, its MCP servers), so they are filtered in
Python after they are built, not in SQL. A field the records do not have is a 400.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from vertex_app.errors import InvalidArgument
from vertex_app.filters import tokenize, unquote

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<op>!=|=|:)
      | (?P<and>AND\b)
      | (?P<bad>OR\b|NOT\b|[()<>])
      | (?P<dot>\.)
      | (?P<word>[^\s".:=!<>()]+)
    )""",
    re.VERBOSE,
)
Record = dict[str, Any]


@dataclass(frozen=True)
class Condition:
    path: tuple[str, ...]
    op: str
    value: str

    def matches(self, record: Record) -> bool:
        found = [_text(value) for value in _values(record, self.path)]
        if self.op == ":":
            return bool(found) if self.value == "*" else any(self.value in value for value in found)
        equal = any(value == self.value for value in found)
        return equal if self.op == "=" else not equal


def parse(text: str | None, *, fields: set[str]) -> Callable[[Record], bool]:
    """A test of a record for the filter ``text`` (everything passes an empty one); 400 for what it cannot read.

    ``fields`` are the records' top-level fields a filter may name.
    """
    conditions = list(_conditions(text or "", fields))
    return lambda record: all(condition.matches(record) for condition in conditions)


def _conditions(text: str, fields: set[str]) -> Iterator[Condition]:
    tokens = tokenize(text, _TOKEN)
    at = 0  # the next token: an index, not ``pop(0)``, which moved the rest at each token (quadratic)
    previous = ""
    while at < len(tokens):
        path: list[str] = []
        while at < len(tokens) and tokens[at][0] in ("word", "string") and (not path or previous == "dot"):
            kind, raw = tokens[at]
            at += 1
            path.append(unquote(raw) if kind == "string" else raw)
            previous = ""
            if at < len(tokens) and tokens[at][0] == "dot":
                previous, at = "dot", at + 1
        if (
            not path
            or at >= len(tokens)
            or tokens[at][0] != "op"
            or len(tokens) - at < 2
            or tokens[at + 1][0] not in ("word", "string")
        ):
            raise InvalidArgument(
                f'Unsupported filter {text!r}: write comparisons such as displayName:"weather" joined by AND.'
            )
        if path[0] not in fields:
            raise InvalidArgument(f"Unsupported filter field {path[0]!r}; supported: {', '.join(sorted(fields))}.")
        (_, op), (kind, raw) = tokens[at], tokens[at + 1]
        at += 2
        yield Condition(path=tuple(path), op=op, value=unquote(raw) if kind == "string" else raw)
        if at < len(tokens):
            if tokens[at][0] != "and" or at + 1 == len(tokens):
                raise InvalidArgument(f"Unsupported filter {text!r}: only AND joins conditions.")
            at += 1


def _values(node: Any, path: tuple[str, ...]) -> Iterator[Any]:
    """The values at ``path`` in ``node``, through lists (any element)."""
    if isinstance(node, list):
        for item in node:
            yield from _values(item, path)
    elif not path:
        yield node
    elif isinstance(node, dict) and path[0] in node:
        yield from _values(node[path[0]], path[1:])


def _text(value: Any) -> str:
    """A value as a filter writes it: JSON's spelling of booleans, numbers as written."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)
