"""Request bodies are read whole before Django sees them, within a size and a time limit.

Django's ASGI handler reads a body to its end before it dispatches, however long
it is and however slowly it comes: a chunked upload (no ``Content-Length``) of
any size was spooled to disk before the parser's limit could refuse it, and a
client declaring more bytes than it sends held the request open until it gave
up. This ASGI middleware does that reading instead, on the API's paths: over
``COGNIZES_API_MAX_BODY_BYTES`` it answers 413 as soon as the excess arrives (or
at once, from a declared length), and a body not complete within
``COGNIZES_API_BODY_TIMEOUT_SECONDS`` gets 408. Django is then told the body's
length, which it needs to read a chunked body at all (it read none before).
(``LimitedJSONParser`` keeps the size check for WSGI servers.)

Before any byte of a body is read, its sender is checked from the headers (``authenticate``, issue 41 J4): a 50 MB
body with no key, or a wrong one, is refused at once rather than read. A refusal sent while the client is still
sending must still reach it: closing at once makes the kernel answer the rest with a reset, which discards the
response unread (Python's http.client saw 9 of 40). As web servers do (nginx's lingering close), the answer goes out
with ``Connection: close`` and the rest of the body is read and dropped, for at most ``LINGER_SECONDS`` and
``LINGER_BYTES``, before the connection is closed.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from django.conf import settings

from cognizes.access.outages import RETRY_AFTER_SECONDS

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ErrorBody = Callable[[int, str], dict[str, Any]]
"""The error shape of a surface: (HTTP status, message) → JSON body."""
Authenticate = Callable[[Scope], Awaitable["tuple[int, str] | None"]]
"""A request's headers → None if its sender may send a body, else the (HTTP status, message) to refuse it with."""

LINGER_SECONDS = 2.0
LINGER_BYTES = 16 * 1024 * 1024
"""How long and how much of a refused body is read and dropped so that the client reads its answer (nginx lingers
up to 30 s; a client still sending after 2 s on loopback or a LAN is not one a plain answer would reach anyway)."""


class BodyLimit:
    """Reads the bodies of requests under ``surfaces``' path prefixes within the limits, answering in their shapes.

    ``larger``: paths allowed a larger body (an upload), as (regular expression, setting name) pairs.
    ``authenticate``: who may send a body, from the headers alone, asked before anything is read.
    """

    def __init__(
        self,
        app: ASGIApp,
        surfaces: Mapping[str, ErrorBody],
        larger: Sequence[tuple[str, str]] = (),
        authenticate: Authenticate | None = None,
    ) -> None:
        self.app = app
        self.surfaces = surfaces
        self.larger = [(re.compile(pattern), setting) for pattern, setting in larger]
        self.authenticate = authenticate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        error_body = self._surface(scope)
        if error_body is None:
            return await self.app(scope, receive, send)
        if _declares_no_body(scope):
            return await self.app(scope, receive, send)  # nothing to wait for or count: no timer, no copy
        if self.authenticate is not None and _declares_content(scope):
            refused = await self.authenticate(scope)
            if refused is not None:
                status, reason = refused
                return await _answer(send, status, error_body(status, reason), receive=receive, scope=scope)
        limit = self._limit(scope["path"])
        too_large = f"The request body is larger than {limit} bytes."
        if _declared_length(scope) > limit:
            return await _answer(send, 413, error_body(413, too_large), receive=receive, scope=scope)
        chunks: list[bytes] = []
        size, timeout = 0, settings.COGNIZES_API_BODY_TIMEOUT_SECONDS
        try:
            # One timer for the whole body (asyncio.wait_for started a task per message).
            async with asyncio.timeout(timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None  # the client hung up: nothing to answer, nothing was done
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        break
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            return await _answer(send, 408, error_body(408, f"The request body did not arrive within {timeout} s."))
        if size > limit:
            return await _answer(send, 413, error_body(413, too_large), receive=receive, scope=scope)
        body = b"".join(chunks)
        await self.app(_with_length(scope, len(body)), replay(body, receive), send)
        return None

    def _limit(self, path: str) -> int:
        setting = next((name for pattern, name in self.larger if pattern.search(path)), "COGNIZES_API_MAX_BODY_BYTES")
        return getattr(settings, setting)

    def _surface(self, scope: Scope) -> ErrorBody | None:
        if scope["type"] != "http":
            return None
        path = scope["path"]
        return next((body for prefix, body in self.surfaces.items() if path.startswith(prefix)), None)


def _declared_length(scope: Scope) -> int:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0  # the server refuses a malformed length itself
    return 0


def _declares_no_body(scope: Scope) -> bool:
    """Neither a length nor chunks: an HTTP/1.1 request framed so has no body (most GETs and DELETEs).

    Its one empty message is already parsed when the app is called, so the timed read (a task per request, a
    measurable share of a small GET's server CPU: docs/measured.md) would guard nothing.
    """
    return not any(name in (b"content-length", b"transfer-encoding") for name, _ in scope.get("headers", []))


def _declares_content(scope: Scope) -> bool:
    """A body of at least one byte may follow (an empty one is no work to guard: the view answers as it would)."""
    return _declared_length(scope) > 0 or any(name == b"transfer-encoding" for name, _ in scope.get("headers", []))


def _with_length(scope: Scope, length: int) -> Scope:
    """The scope with the body's actual length: Django reads no more than ``Content-Length`` (none when chunked)."""
    headers = [(k, v) for k, v in scope.get("headers", []) if k not in (b"content-length", b"transfer-encoding")]
    return {**scope, "headers": [*headers, (b"content-length", str(length).encode())]}


def replay(body: bytes, receive: Receive) -> Receive:
    """The body, read already, as one message; then the client's own messages (a disconnect)."""
    sent = False

    async def replayed() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _answer(
    send: Send, status: int, body: dict[str, Any], *, receive: Receive | None = None, scope: Scope | None = None
) -> None:
    """Answer and close; with ``receive``, first read and drop what the client still sends (the module says why)."""
    content = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(content)).encode()),
        (b"connection", b"close"),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="cognizes"'))
    if status == 503:
        headers.append((b"retry-after", str(RETRY_AFTER_SECONDS).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    # A client that asked "Expect: 100-continue" sends nothing until told to: there is nothing to drain, and
    # asking for the body would send it the 100 after the answer.
    linger = receive is not None and scope is not None and not _expects_continue(scope)
    await send({"type": "http.response.body", "body": content, "more_body": linger})
    if linger and receive is not None:  # linger implies it: said again for the type checker
        await _drain(receive)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _drain(receive: Receive) -> None:
    """Read and drop the rest of a refused body, within ``LINGER_SECONDS`` and ``LINGER_BYTES``."""
    dropped = 0
    try:
        async with asyncio.timeout(LINGER_SECONDS):
            while dropped <= LINGER_BYTES:
                message = await receive()
                if message["type"] == "http.disconnect" or not message.get("more_body", False):
                    return
                dropped += len(message.get("body", b""))
    except TimeoutError:
        return


def _expects_continue(scope: Scope) -> bool:
    return any(name == b"expect" and value.lower() == b"100-continue" for name, value in scope.get("headers", []))
