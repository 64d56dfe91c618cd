"""Field names between proto3 JSON's camelCase and Python's snake_case, in one place for every floor.

Google's clients send either spelling (and mix them in one body), so what reads a client's message, the Vertex
surface and the domain rules it hands schemas to, turns names to snake_case here, and writes them back in camelCase.
"""

from __future__ import annotations

import re

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake(name: str) -> str:
    """``maxLength`` → ``max_length`` (a snake_case name is unchanged)."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def camel(name: str) -> str:
    """``max_length`` → ``maxLength`` (a camelCase name is unchanged)."""
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)
