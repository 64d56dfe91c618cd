"""A generator run on a thread of its own, read through a bounded queue: for a streamed response whose producer
holds one database connection from its first item to its last.

Cognizes' ASGI handler reads a sync streamed response one chunk at a time on whichever pool thread is free
(``cognizes.infra.asgi_handler``), and Django's connections are per thread: a producer in a transaction with a
server-side cursor (``memory_app.services.transfer.get_export_lines``) would find another connection, without its
transaction, at its next chunk. Here it keeps its own thread and connection; the queue's bound keeps a slow
client from making it read ahead without limit, and ``close`` (the response's, when the client hangs up) stops it.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from django.db import connections

T = TypeVar("T")
_END = object()


class ThreadedStream(Generic[T]):
    """Iterate over what ``produce()`` yields, produced on a thread of its own at most ``depth`` items ahead."""

    def __init__(self, produce: Callable[[], Iterator[T]], *, depth: int = 8) -> None:
        self._queue: queue.Queue[tuple[Any, Any]] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(produce,), name="stream", daemon=True)
        self._thread.start()

    def _run(self, produce: Callable[[], Iterator[T]]) -> None:
        try:
            with contextlib.closing(produce()) as items:  # type: ignore[type-var]  # a generator has close()
                for item in items:
                    if not self._put((item, None)):
                        return
            self._put((_END, None))
        except BaseException as error:  # handed to the reader, which raises it
            self._put((_END, error))
        finally:
            connections.close_all()  # this thread's own connections: nothing else will close them

    def _put(self, entry: tuple[Any, Any]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(entry, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        item, error = self._queue.get()
        if error is not None:
            raise error
        if item is _END:
            raise StopIteration
        return item

    def close(self) -> None:
        """Stop producing (the reader is gone)."""
        self._stop.set()
