"""Celery tasks of memory_app: thin wrappers that take ids and call one service."""

from __future__ import annotations

import logging

from celery import shared_task

from cognizes.infra.tasks import RETRIED_THROUGH_OUTAGES
from memory_app import consolidation

logger = logging.getLogger(__name__)


@shared_task(name=consolidation.CONSOLIDATE, **RETRIED_THROUGH_OUTAGES)
def consolidate(self, job_id: int) -> None:
    """Ingest one consolidation job."""
    consolidation.run_job(job_id)


@shared_task(name=consolidation.CONSOLIDATE_WHEN_DUE, **RETRIED_THROUGH_OUTAGES)
def consolidate_when_due(self, job_id: int) -> None:
    """Run a session-end job once its session has been quiet long enough; until then, wait again."""
    consolidation.run_when_due(job_id)


from memory_app import beat  # noqa: E402,F401  isort:skip  (registers "memory_app.forget", "memory_app.recover_jobs")
