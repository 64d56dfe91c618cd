"""Run blocking database work off the event loop, on a pool of threads.

Django's own async support (``sync_to_async`` with ``thread_sensitive=True``)
runs every ORM call on one shared thread, so concurrent agents in one process
would queue behind each other. The ADK services run their database work here
instead: each pool thread keeps its own persistent connection (or, with
``DATABASE_POOL_SIZE``, borrows one per call), so as many queries run at once as
there are threads (``COGNIZES_DB_THREADS``).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection, connections

from cognizes.infra.warm_threads import WarmThreadPool

T = TypeVar("T")
logger = logging.getLogger(__name__)

_executor: WarmThreadPool | None = None
_executor_lock = threading.Lock()


def _get_executor() -> WarmThreadPool:
    global _executor
    if _executor is None:
        with _executor_lock:
            if _executor is None:
                # The thread that finished last takes the next call: one agent's turns stay on
                # one thread and its connection (cognizes.infra.warm_threads).
                _executor = WarmThreadPool(max_workers=settings.COGNIZES_DB_THREADS, thread_name_prefix="cognizes-db")
    return _executor


def _forget_executor_after_fork() -> None:
    """A forked child (a Celery worker) inherits no threads: it must start its own pool."""
    global _executor
    _executor = None


os.register_at_fork(after_in_child=_forget_executor_after_fork)


def _call_in_thread(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    try:
        return fn(*args, **kwargs)
    finally:
        # What Django does at the end of a request: a connection the server dropped is
        # replaced on the next call (a health check only after an error), and with a
        # pool (DATABASE_POOL_SIZE, CONN_MAX_AGE 0) the connection goes back to it
        # rather than staying with this thread.
        connection.close_if_unusable_or_obsolete()


async def run_in_db_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Await ``fn(*args, **kwargs)`` run on a database thread, with the caller's context vars."""
    context = contextvars.copy_context()
    call = functools.partial(context.run, _call_in_thread, fn, args, kwargs)
    return await asyncio.get_running_loop().run_in_executor(_get_executor(), call)


def wait_in_db_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` run on a database thread, waited for: for the synchronous hooks ADK calls from
    inside its event loop (an example provider's ``get_examples``), where the ORM may not run on the loop's
    thread. It blocks that loop for as long as the query takes, as ADK's own synchronous providers do."""
    context = contextvars.copy_context()
    return _get_executor().submit(context.run, _call_in_thread, fn, args, kwargs).result()


def submit_in_background(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
    """Run ``fn`` on a database thread without waiting for it; errors are logged, not raised."""

    def run() -> None:
        try:
            _call_in_thread(fn, args, kwargs)
        except Exception:
            logger.exception("background database work failed: %s", getattr(fn, "__name__", fn))

    _get_executor().submit(run)


def close_connections() -> None:
    """Close every pool thread's connection and stop the pool (e.g. before dropping a database)."""
    global _executor
    with _executor_lock:
        executor, _executor = _executor, None
    if executor is None:
        return
    executor.shutdown(wait=True, last=connections.close_all)  # each thread closes its own
