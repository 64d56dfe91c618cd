"""Celery tasks of knowledge_app: thin wrappers that take ids and call one service."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from infra.tasks import MAINTENANCE_TASK, RETRIED_THROUGH_OUTAGES, run_on_a_timer
from knowledge_app import ingestion

logger = logging.getLogger(__name__)


@shared_task(**RETRIED_THROUGH_OUTAGES)
def ingest_document(self, document_id: int) -> str:
    """Index one document (parse, chunk, embed, swap its chunks in)."""
    try:
        return ingestion.do_ingest(document_id)
    except Exception as error:
        if self.request.retries >= self.max_retries or not isinstance(error, self.autoretry_for):
            ingestion.do_fail_after_error(document_id, error)
        raise


@shared_task(name="knowledge_app.recover_documents", **MAINTENANCE_TASK)
def recover_documents() -> None:
    """Send again the documents whose worker vanished or whose message was lost."""
    ingestion.do_recover_documents()


@worker_ready.connect
def _recover_while_running(**_: object) -> None:
    """Every worker sends lost documents again on a timer of its own, beat or no beat (as for memory's jobs)."""
    run_on_a_timer("recover-documents", ingestion.do_recover_documents,
                   first=settings.COGNIZES_KNOWLEDGE_LEASE_SECONDS + 1,
                   every=lambda: settings.COGNIZES_JOB_RECOVERY_SECONDS)
