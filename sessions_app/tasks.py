"""Celery tasks of sessions_app; the schedule is a django-celery-beat PeriodicTask, edited in the admin."""

from __future__ import annotations

import logging

from celery import shared_task

from cognizes.infra.tasks import MAINTENANCE_TASK
from sessions_app.services import do_delete_expired_sessions

logger = logging.getLogger(__name__)


@shared_task(name="sessions_app.remove_expired", **MAINTENANCE_TASK)
def remove_expired() -> None:
    """Remove expired sessions with their events (hidden since they expired; idempotent)."""
    logger.info("expired sessions removed: %s", do_delete_expired_sessions())
