"""A small Server-Sent Events reader for tests (what a browser's EventSource does)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass
class Message:
    event: str
    id: str | None
    data: Any


async def messages(response: httpx.Response) -> AsyncIterator[Message]:
    """Each message of an event stream (comments skipped), its data decoded from JSON."""
    event, id, data = "message", None, []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield Message(event=event, id=id, data=json.loads("\n".join(data)))
            event, id, data = "message", None, []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                event = value
            elif field == "id":
                id = value
            elif field == "data":
                data.append(value)
