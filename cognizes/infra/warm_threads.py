"""A pool of threads in which the thread that finished last takes the next call.

``concurrent.futures.ThreadPoolExecutor`` hands work to whichever of its idle threads
its queue wakes, and a call submitted while the last one is still returning finds
another thread (or starts one). One agent appending turn after turn then alternates
between two threads, so between two database threads' connections, two PostgreSQL
backends and two sets of CPU caches, each asleep in turn: an append was measurably
slower than on a single thread (docs/measured.md).
Here idle threads form a stack, and a thread goes back on it *before* it reports
its result, so the caller's next call reaches the same thread (with its connection),
often before it has even gone to sleep. Concurrent calls still spread over up to
``max_workers`` threads; past that they wait in order.
"""

from __future__ import annotations

import atexit
import queue
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

_Call = tuple[Future, Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class WarmThreadPool(Executor):
    """An executor (``submit``, ``shutdown``); ``shutdown(last=fn)`` also runs ``fn`` on every thread as it ends."""

    def __init__(self, max_workers: int, thread_name_prefix: str) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self._max_workers = max_workers
        self._prefix = thread_name_prefix
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []  # a stack: the last to finish is taken first
        self._workers: list[_Worker] = []
        self._waiting: deque[_Call] = deque()
        self._closed = False
        atexit.register(self.shutdown)  # let calls under way finish (the threads are daemons)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        call = (future, fn, args, kwargs)
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot submit to a pool that was shut down")
            if self._idle:
                self._idle.pop().inbox.put(call)
            elif len(self._workers) < self._max_workers:
                worker = _Worker(self, f"{self._prefix}_{len(self._workers)}")
                self._workers.append(worker)
                worker.inbox.put(call)
                worker.start()
            else:
                self._waiting.append(call)
        return future

    def shutdown(
        self, wait: bool = True, *, cancel_futures: bool = False, last: Callable[[], Any] | None = None
    ) -> None:
        """Stop every thread once the calls submitted so far are done (waiting for them unless not ``wait``),
        each thread running ``last`` before it ends."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            workers, self._idle = list(self._workers), []
            if cancel_futures:
                for future, *_ in self._waiting:
                    future.cancel()
        for worker in workers:
            if last is not None:
                worker.inbox.put((Future(), last, (), {}))
            worker.inbox.put(None)
        for worker in workers if wait else ():
            if worker is not threading.current_thread():
                worker.join()
        atexit.unregister(self.shutdown)

    def _next(self, worker: _Worker) -> _Call | None:
        """The next call for ``worker``: one waiting, or whatever reaches its inbox once it is back on the stack."""
        with self._lock:
            if self._waiting:
                return self._waiting.popleft()
            if not self._closed:
                self._idle.append(worker)
        return None


class _Worker(threading.Thread):
    def __init__(self, pool: WarmThreadPool, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self.pool = pool
        self.inbox: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()

    def run(self) -> None:
        call = self.inbox.get()
        while call is not None:
            future, fn, args, kwargs = call
            del call
            if not future.set_running_or_notify_cancel():  # cancelled while it waited
                following = self.pool._next(self)
            else:
                # Back on the stack (or given a waiting call) before the result is out,
                # so the caller's next call comes to this thread.
                try:
                    result = fn(*args, **kwargs)
                except BaseException as error:
                    following = self.pool._next(self)
                    future.set_exception(error)
                    del error
                else:
                    following = self.pool._next(self)
                    future.set_result(result)
                    del result
            del future, fn, args, kwargs
            call = following if following is not None else self.inbox.get()
