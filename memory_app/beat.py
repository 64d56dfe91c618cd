"""The periodic tasks of memory_app; their schedules are django-celery-beat PeriodicTasks, edited in the admin.

"Forget weak and expired memories" (migration 0003, hourly) and "Recover lost
consolidation jobs" (migration 0010, every 30 s). Each is idempotent, so a late,
doubled or retried run is harmless.
"""

from __future__ import annotations

import dataclasses
import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from cognizes.infra.tasks import MAINTENANCE_TASK, run_on_a_timer
from memory_app.consolidation import do_recover_jobs
from memory_app.decay import do_decay, do_purge_expired_revisions, do_purge_forgotten

logger = logging.getLogger(__name__)


@shared_task(name="memory_app.forget", **MAINTENANCE_TASK)
def forget() -> None:
    """Decay strengths, forget the weak and expired, purge what was forgotten long ago and expired revisions."""
    report = do_decay()
    report = dataclasses.replace(report, purged=do_purge_forgotten(), revisions_expired=do_purge_expired_revisions())
    logger.info("memory forgetting: %s", report)


@shared_task(name="memory_app.recover_jobs", **MAINTENANCE_TASK)
def recover_jobs() -> None:
    """Send again the consolidation jobs whose worker vanished or whose message was lost."""
    do_recover_jobs()


@worker_ready.connect
def _recover_while_running(**_: object) -> None:
    """Every worker recovers lost jobs itself, beat or no beat, on a timer of its own.

    The first time once a lease has passed (a job whose worker was killed just
    before this one started is only then known to be lost), then every
    ``COGNIZES_JOB_RECOVERY_SECONDS``. Recoveries on many workers at once send
    each job once (``do_recover_jobs`` claims what it sends).
    """
    run_on_a_timer(
        "recover-jobs",
        do_recover_jobs,
        first=settings.COGNIZES_JOB_LEASE_SECONDS + 1,
        every=lambda: settings.COGNIZES_JOB_RECOVERY_SECONDS,
    )
