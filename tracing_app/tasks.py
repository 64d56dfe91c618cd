"""Celery tasks of tracing_app: the retention sweep (scheduled by migration 0002, editable in the admin)."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings

from cognizes.infra.tasks import MAINTENANCE_TASK
from tracing_app import services

logger = logging.getLogger(__name__)


@shared_task(name="tracing_app.delete_old_traces", **MAINTENANCE_TASK)
def delete_old_traces() -> int:
    """Delete traces older than COGNIZES_TRACE_RETENTION_DAYS; idempotent, so a doubled run is harmless."""
    deleted = services.do_delete_old_traces(older_than=timedelta(days=settings.COGNIZES_TRACE_RETENTION_DAYS))
    logger.info("tracing retention: deleted %d traces", deleted)
    return deleted
