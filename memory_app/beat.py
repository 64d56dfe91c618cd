"""The periodic forgetting task; its schedule is a django-celery-beat PeriodicTask, edited in the admin.

The row "Forget weak and expired memories" is created by migration 0003
(hourly). Both steps are idempotent, so a late, doubled or retried run is harmless.
"""

from __future__ import annotations

import dataclasses
import logging

from celery import shared_task

from cognizes.celery import MAINTENANCE_TASK
from memory_app.decay import do_decay, do_purge_expired_revisions, do_purge_forgotten

logger = logging.getLogger(__name__)


@shared_task(name="memory_app.forget", **MAINTENANCE_TASK)
def forget() -> None:
    """Decay strengths, forget the weak and expired, purge what was forgotten long ago and expired revisions."""
    report = do_decay()
    report = dataclasses.replace(
        report, purged=do_purge_forgotten(), revisions_expired=do_purge_expired_revisions()
    )
    logger.info("memory forgetting: %s", report)
