"""Celery tasks of knowledge_app: thin wrappers that take ids and call one service.

The tasks import what they run, never the other way round: what sends them names them (``queue.INGEST_DOCUMENT``,
``imports.RUN_IMPORT``), and ``.importlinter`` keeps it so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from celery import Task, shared_task
from celery.signals import worker_ready
from django.conf import settings

from cognizes.infra.tasks import MAINTENANCE_TASK, RETRIED_THROUGH_OUTAGES, run_on_a_timer
from knowledge_app import imports, ingestion, queue

logger = logging.getLogger(__name__)


def _giving_up_after_the_last_try(
    task: Task, work: Callable[[int], str], give_up: Callable[[int, BaseException], None], object_id: int
) -> str:
    """``work(object_id)``; on an error that will not be retried (the last try, or not transient), ``give_up`` first."""
    try:
        return work(object_id)
    except Exception as error:
        if task.request.retries >= task.max_retries or not isinstance(error, task.autoretry_for):
            give_up(object_id, error)
        raise


@shared_task(name=queue.INGEST_DOCUMENT, **RETRIED_THROUGH_OUTAGES)
def ingest_document(self, document_id: int) -> str:
    """Index one document (parse, chunk, embed, swap its chunks in): the one whose turn it is
    (``knowledge_app.queue``). Each pending document has sent one of these messages; which document a message
    runs is the fair queue's choice, so ``document_id`` is only what the sender added."""
    return _giving_up_after_the_last_try(
        self, lambda _: ingestion.do_ingest_next(), ingestion.do_fail_after_error, document_id
    )


@shared_task(name=imports.RUN_IMPORT, **RETRIED_THROUGH_OUTAGES)
def run_import(self, import_id: int) -> str:
    """Add an import's files to its corpus (each then indexed by ``ingest_document``)."""
    return _giving_up_after_the_last_try(self, imports.do_run_import, imports.do_fail_after_error, import_id)


@shared_task(name="knowledge_app.recover_documents", **MAINTENANCE_TASK)
def recover_documents() -> None:
    """Send again the documents whose worker vanished or whose message was lost."""
    ingestion.do_recover_documents()


@shared_task(name="knowledge_app.recover_imports", **MAINTENANCE_TASK)
def recover_imports() -> None:
    """Send again the imports whose worker vanished or whose message was lost."""
    imports.do_recover_imports()


@worker_ready.connect
def _recover_while_running(**_: object) -> None:
    """Every worker sends lost documents and imports again on timers of its own, beat or no beat (as memory's jobs)."""
    for name, recover in (
        ("recover-documents", ingestion.do_recover_documents),
        ("recover-imports", imports.do_recover_imports),
    ):
        run_on_a_timer(
            name,
            recover,
            first=settings.COGNIZES_KNOWLEDGE_LEASE_SECONDS + 1,
            every=lambda: settings.COGNIZES_JOB_RECOVERY_SECONDS,
        )
