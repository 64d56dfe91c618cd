"""What the apps' Celery tasks share (the Celery app itself is the project's: ``cognizes.celery``)."""

import logging
import threading
import time
from collections.abc import Callable

from django.db import InterfaceError, OperationalError, connection

logger = logging.getLogger(__name__)

# The options of the periodic maintenance tasks (forgetting, trace retention): no
# result kept; a database outage is retried with backoff, the work being idempotent.
MAINTENANCE_TASK = {
    "ignore_result": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": True,
    "retry_backoff_max": 300,
    "max_retries": 3,
}

# The options of tasks that do a unit of work by id (a consolidation job, a document): acknowledged
# once done (a killed worker's task is delivered again); transient database and network errors retry
# with backoff, the work itself being idempotent.
RETRIED_THROUGH_OUTAGES = {
    "bind": True,
    "acks_late": True,
    "autoretry_for": (OperationalError, InterfaceError, ConnectionError, TimeoutError),
    "retry_backoff": True,
    "retry_backoff_max": 300,
    "max_retries": 5,
}


def run_on_a_timer(name: str, work: Callable[[], object], *, first: float, every: Callable[[], float]) -> None:
    """Run ``work`` after ``first`` seconds, then every ``every()`` seconds, on a daemon thread of this process.

    A worker's own recoveries (lost jobs, lost documents), so that losing beat's host
    loses no work; a failed round (an outage) is logged and the next one tries again.
    """

    def loop() -> None:
        delay = first
        while True:
            time.sleep(delay)
            delay = every()
            try:
                work()
            except Exception:
                logger.exception("%s failed", name)
            finally:
                connection.close()

    threading.Thread(target=loop, name=name, daemon=True).start()
