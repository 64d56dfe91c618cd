"""Django's ASGI handler with one thread hop per request, on threads that outlive it.

Django's own ``ASGIHandler`` calls each middleware's sync hooks through
``sync_to_async`` (two hops per middleware, sixteen per request here) and runs a
request inside a ``ThreadSensitiveContext``, which starts a thread for the request and
another for its ``request_finished``, then throws them away. Our views are sync
(DRF), so all of that is overhead: on this machine more than a millisecond of a
two-millisecond 404.

``OneHopASGIHandler`` reads the body on the event loop, then runs the whole sync part
of a request — ``request_started``, the middleware chain and the view (as under
WSGI), and for an ordinary response its ``close()`` (``request_finished``, which
hands the thread's database connection back to the pool) — as one job on a
long-lived thread pool, and sends the rendered bytes from the event loop. Each job
leaves its thread holding no connection, so any thread may take the next request.

A streaming response with a sync body (a file: WhiteNoise's static files) is read
chunk by chunk on the pool, not iterated on the event loop (where Django warns about
it once per response). Streaming responses (Server-Sent Events) keep Django's behaviour: they are sent
inside a ``ThreadSensitiveContext`` (the stream's sync calls share a thread, as
before), a client that hangs up cancels the stream, and ``close()`` runs at the end.
Sync views that run async code (``async_to_sync``, the run endpoints) still run it on
the server's event loop, because the job is entered through ``sync_to_async``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, cast

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.db import close_old_connections
from django.http import FileResponse, HttpResponseBase, StreamingHttpResponse
from django.urls import set_script_prefix

Receive = Callable[[], Awaitable[Mapping[str, Any]]]
Send = Callable[[Mapping[str, Any]], Awaitable[None]]


class OneHopASGIHandler(ASGIHandler):
    """Serves each request's sync part as one job on a shared pool of ``COGNIZES_WEB_THREADS`` threads."""

    def __init__(self) -> None:
        super().__init__()
        # Threads start as requests need them, up to the limit; a request past it waits its turn.
        self.executor = ThreadPoolExecutor(max_workers=settings.COGNIZES_WEB_THREADS, thread_name_prefix="request")
        self._respond = sync_to_async(self.respond, thread_sensitive=False, executor=self.executor)

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)  # the chain runs on the job's thread, as under WSGI

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        try:
            response = await self._respond(scope, body_file)
            if response.streaming:
                async with ThreadSensitiveContext():
                    await self.stream(response, receive, send)
            else:
                await self.send_response(response, send)
        finally:
            body_file.close()

    def respond(self, scope: dict[str, Any], body_file: IO[bytes]) -> HttpResponseBase:
        """The sync part of a request, on one pool thread; returns with that thread holding no connection."""
        set_script_prefix(get_script_prefix(scope))
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
        assert response is not None  # create_request returns an error response whenever it returns no request
        response._handler_class = self.__class__  # type: ignore[attr-defined]  # as Django's handler; not in its stubs
        if isinstance(response, FileResponse):
            response.block_size = self.chunk_size
        if isinstance(response, StreamingHttpResponse) and not response.is_async:
            response.streaming_content = self._read_in_pool(cast(Iterator[bytes], response.streaming_content))  # sync
        if response.streaming:
            close_old_connections()  # the stream may read later, from another thread
        else:
            response.close()  # request_finished: the connection goes back now, not after the send
        return response

    async def _read_in_pool(self, chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
        def next_chunk() -> bytes | None:
            return next(chunks, None)

        read = sync_to_async(next_chunk, thread_sensitive=False, executor=self.executor)
        while (chunk := await read()) is not None:
            yield chunk

    async def stream(self, response: HttpResponseBase, receive: Receive, send: Send) -> None:
        """Send a streaming response until it ends or the client hangs up (which cancels it), then close it."""
        sending = asyncio.create_task(self.send_response(response, send))
        listening = asyncio.create_task(self.listen_for_disconnect(receive))
        try:
            await asyncio.wait([sending, listening], return_when=asyncio.FIRST_COMPLETED)
            for task in (listening, sending):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, RequestAborted):
                    await task
        finally:
            await sync_to_async(response.close)()
