"""Which document a worker indexes next: workers shared fairly between apps (issue 41 J1).

A document's Celery message used to name the document it ran, so messages ran in the
order they were sent: an app that uploaded a thousand documents held every worker until
its queue drained, while another app's single document waited behind it. A message now
says only that there is a document to index (each pending document still has one, so
none is forgotten: recovery sends one again for a document whose message was lost), and
the worker that takes it claims the document whose turn it is:

1. of the app with the fewest documents running (an app already on a worker waits while
   another has none running);
2. among those, of the app served longest ago (``IndexingTurn``: with a single worker, an
   app whose document just finished lets another app's go first);
3. within an app, a document no worker has begun before one paused for another's turn (a long document
   embedded in slices of ``COGNIZES_KNOWLEDGE_SLICE_SECONDS``, its work kept: ``knowledge_app.ingestion``), the
   one paused longest ago before the others, then the oldest.

So with any number of workers a newly uploaded document of an app that has none running
is the next one a worker starts, however long another app's queue. Every worker stays
busy while there is any work (no cap leaves a worker idle), and no app is starved:
its turn only ages while others are served. The choice is one statement over the
pending documents and the running ones, locked with ``SKIP LOCKED`` so two workers
claiming at once take two documents.

Documents are sent to the queue from here too: the Celery message names its task
(``INGEST_DOCUMENT``), so the rules that store documents and the recovery that finds lost ones
need not import the tasks that run them (the tasks import them).
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from cognizes.infra import jobs
from knowledge_app.leases import DOCUMENTS
from knowledge_app.models import Document, DocumentStatus, IndexingTurn

INGEST_DOCUMENT = "knowledge_app.tasks.ingest_document"

_NEXT = """
WITH busy AS (
    SELECT app_name, count(*) AS running FROM knowledge_documents
    WHERE status = %(running)s AND lease_until >= %(now)s GROUP BY app_name
)
SELECT d.id FROM knowledge_documents d
LEFT JOIN busy ON busy.app_name = d.app_name
LEFT JOIN knowledge_indexing_turns turn ON turn.app_name = d.app_name
WHERE d.status = %(pending)s
   OR (d.status = %(running)s AND d.lease_until < %(now)s AND d.attempts < %(max_attempts)s)
ORDER BY coalesce(busy.running, 0), turn.served_at NULLS FIRST, d.served_at NULLS FIRST, d.id
LIMIT 1
FOR UPDATE OF d SKIP LOCKED
"""


def claim_next(*, max_attempts: int, **reset: object) -> Document | None:
    """The document whose turn it is, now ``running`` under this worker's lease; None if none is waiting."""
    now = timezone.now()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                _NEXT,
                {
                    "running": DocumentStatus.RUNNING,
                    "pending": DocumentStatus.PENDING,
                    "now": now,
                    "max_attempts": max_attempts,
                },
            )
            row = cursor.fetchone()
        if row is None:
            return None
        document = claim(row[0], **reset)  # the row is locked by this transaction: the claim takes it
        if document is not None:
            _served(document.app_name, now)
    return document


def claim(document_id: int, **reset: object) -> Document | None:
    """The document named, now ``running`` under this worker's lease; None if it is not to be run (done, or held)."""
    return DOCUMENTS.claim(document_id, related=("corpus",), **reset)


def another_waits(document: Document) -> bool:
    """Whether a document other than this one waits for a worker (the one running may pause for its turn)."""
    lost = DOCUMENTS.lost(timezone.now()) & Q(attempts__lt=DOCUMENTS.max_attempts)
    return Document.objects.filter(Q(status=DocumentStatus.PENDING) | lost).exclude(id=document.id).exists()


def send(document_id: int) -> None:
    """Tell a worker there is a document to index (the one whose turn it is: ``document_id`` is only the sender's)."""
    jobs.send(INGEST_DOCUMENT, document_id)


def send_on_commit(document_id: int) -> None:
    """``send`` once this transaction commits: a worker never looks before the document is there to claim."""
    transaction.on_commit(lambda: send(document_id))


def _served(app_name: str, now: datetime) -> None:
    """Mark the app served now (an upsert: two workers may serve one app's first documents at once)."""
    IndexingTurn.objects.bulk_create(
        [IndexingTurn(app_name=app_name, served_at=now)],
        update_conflicts=True,
        unique_fields=["app_name"],
        update_fields=["served_at"],
    )
