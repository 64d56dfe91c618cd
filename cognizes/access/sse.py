"""Server-Sent Events: the wire format and the streaming response both live endpoints use.

Streams need an ASGI server (``make run`` uses uvicorn): the response iterates an
async generator on the event loop while the agent or the database works.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from django.db import connection
from django.http import StreamingHttpResponse
from rest_framework.renderers import BaseRenderer


def message(data: Any, *, event: str | None = None, id: int | str | None = None) -> str:
    """One SSE message; ``data`` is sent as one line of JSON."""
    lines = []
    if id is not None:
        lines.append(f"id: {id}")
    if event is not None:
        lines.append(f"event: {event}")
    lines.append("data: " + json.dumps(data, separators=(",", ":"), default=str))
    return "\n".join(lines) + "\n\n"


def comment(text: str = "keepalive") -> str:
    """A line clients ignore: keeps idle connections (and proxies) open."""
    return f": {text}\n\n"


def response(messages: AsyncIterator[str]) -> StreamingHttpResponse:
    """A stream of ``messages``; the request thread's database connection is given back first.

    Django closes it when the response ends, which for an event stream may be
    hours away; meanwhile it would hold one of the pool's connections, idle (a
    stream's own database work runs on ``cognizes.infra.db_threads``).
    """
    connection.close()
    return StreamingHttpResponse(
        messages,
        content_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


class EventStreamRenderer(BaseRenderer):
    """Lets DRF accept ``Accept: text/event-stream``; only errors are rendered through it (as JSON)."""

    media_type = "text/event-stream"
    format = "sse"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        return json.dumps(data).encode()
