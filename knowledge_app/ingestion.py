"""Indexing a document on a worker: parse → chunk → embed → replace its chunks, all or nothing.

A worker claims a document by moving it to ``running`` with a lease
(``knowledge_app.leases.DOCUMENTS``, ``cognizes.infra.jobs``), which it renews while it works, however long that is:
another delivery of the same task finds it claimed and leaves it, and a worker killed
mid-document leaves a lease that runs out, after which ``do_recover_documents`` sends
it again. Which document a task's worker takes is the fair queue's choice
(``knowledge_app.queue``), so one app's many documents never keep another app's waiting.
The slow part (parsing, embedding) holds no lock and no transaction; the chunks are
swapped in one transaction at the end, and only while this run's claim still holds, so
a search sees the old chunks or the new, never half, and a document that cannot be read
(or asks for more work than ``cognizes.access.limits`` allows) is ``failed`` with the reason,
its old chunks kept.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from cognizes.access import limits
from cognizes.infra.embedders import get_embedder
from cognizes.infra.text import search_text
from knowledge_app import queue, services
from knowledge_app.chunking import chunk
from knowledge_app.leases import DOCUMENTS, MAX_ATTEMPTS, lease
from knowledge_app.models import Chunk, Document, DocumentStatus
from knowledge_app.parsing import UnreadableDocument, parse

logger = logging.getLogger(__name__)

EMBED_BATCH = 32
"""Chunks embedded per call: the model is far faster per text in batches."""


def _claim(document_id: int) -> Document | None:
    """The document, now ``running`` under this worker's lease; None if it is not to be run (done, or claimed)."""
    return queue.claim(document_id, progress=0)


def do_ingest(document_id: int) -> str:
    """Index this document if it is this call's to index (a command indexing its own); what became of it."""
    document = _claim(document_id)
    if document is None:
        return "not to be run (done, or another worker holds it)"
    return _index(document)


def do_ingest_next() -> str:
    """Index the document whose turn it is (``knowledge_app.queue``), if any waits; what became of it (for the log).

    What a task runs: its message says there is a document to index, and the fair queue says which.
    """
    document = queue.claim_next(max_attempts=MAX_ATTEMPTS, progress=0)
    if document is None:
        return "nothing waiting (each document done, or held by another worker)"
    return f"document {document.id} of {document.app_name}: {_index(document)}"


def _index(document: Document) -> str:
    """Parse, chunk, embed and swap in the claimed document's chunks, renewing the claim all the while."""
    try:
        with DOCUMENTS.renewed(document):
            return _parse_and_embed(document)
    except Exception as error:
        # Let go at once: a retry of the task (or recovery) takes it again without waiting out the lease; on the
        # last attempt, say why it failed (the task's own give-up names its message's document, maybe another).
        try:
            if document.attempts >= MAX_ATTEMPTS:
                DOCUMENTS.finish(
                    document, status=DocumentStatus.FAILED, error=f"Indexing failed {MAX_ATTEMPTS} times: {error}"
                )
            else:
                DOCUMENTS.let_go(document)
        except DatabaseError:  # the outage that failed the run: the lease runs out by itself
            pass
        raise


def _held(document: Document) -> QuerySet[Document]:
    """The document while this run's claim holds it: what every write of the run goes through."""
    return DOCUMENTS.held(document)


def _parse_and_embed(document: Document) -> str:
    """The work of a run, within the limits of ``cognizes.access.limits``: what became of the document (for the log)."""
    try:
        size, overlap = document.chunking
        with limits.parse_deadline():
            parsed = parse(
                bytes(document.content),
                filename=document.source_uri or document.display_name,
                mime_type=document.mime_type,
            )
            pieces = chunk(parsed, size=size, overlap=overlap, max_chunks=limits.max_chunks())
        if not pieces:
            raise UnreadableDocument("no text in it")
    except (UnreadableDocument, limits.LimitExceeded) as unreadable:
        if not _finish(
            document, status=DocumentStatus.FAILED, error=f"Could not read {document.display_name}: {unreadable.reason}"
        ):
            return "lost its claim: left to the worker that took it over"
        return "failed: " + unreadable.reason
    try:
        services.do_claim_embedder(document.app_name, document.corpus_id)
    except services.EmbeddedWithAnother as refused:
        claimed = _finish(document, status=DocumentStatus.FAILED, error=f"{refused} Then index this file again.")
        return f"failed: {refused}" if claimed else "lost its claim: left to the worker that took it over"
    headings = [" › ".join(piece.heading_path) for piece in pieces]
    texts = [piece.text for piece in pieces]
    searched = [
        search_text(f"{heading}\n{text}" if heading else text) for heading, text in zip(headings, texts, strict=True)
    ]
    embedder = get_embedder()
    vectors: list[Any] = []
    for start in range(0, len(pieces), EMBED_BATCH):
        vectors.extend(embedder.embed_documents(searched[start : start + EMBED_BATCH]))
        # A person following a long document sees it move.
        if len(pieces) > EMBED_BATCH and not _held(document).update(progress=100 * len(vectors) // len(pieces)):
            return "lost its claim: left to the worker that took it over"  # no use embedding the rest
    rows = [
        Chunk(
            document_id=document.id,
            corpus_id=document.corpus_id,
            app_name=document.app_name,
            ordinal=n,
            text=piece.text,
            heading=heading,
            start=piece.start,
            end=piece.end,
            search_text=searched[n],
            embedding=vectors[n],
        )
        for n, (piece, heading) in enumerate(zip(pieces, headings, strict=True))
    ]
    with transaction.atomic():
        if not _held(document).select_for_update().exists():  # re-indexed or taken over: the later run's chunks
            return "lost its claim: left to the worker that took it over"
        Chunk.objects.filter(document_id=document.id).delete()
        Chunk.objects.bulk_create(rows, batch_size=500)
        _finish(document, status=DocumentStatus.ACTIVE, chunk_count=len(rows), progress=100, indexed_at=timezone.now())
    return f"{len(rows)} chunks"


def _finish(document: Document, **fields: object) -> bool:
    """End this run's claim with ``fields``; False if the claim was no longer held (nothing written)."""
    return DOCUMENTS.finish(document, error=fields.pop("error", ""), **fields)


def do_fail_after_error(document_id: int, error: BaseException) -> None:
    """An unexpected error (an outage, a bug) on the last attempt: the document says so instead of staying running."""
    Document.objects.filter(id=document_id, status=DocumentStatus.RUNNING, attempts__gte=MAX_ATTEMPTS).update(
        status=DocumentStatus.FAILED, lease_until=None, error=f"Indexing failed {MAX_ATTEMPTS} times: {error}"
    )


def do_recover_documents() -> list[int]:
    """Send again a message for every document whose worker vanished (its lease ran out) or whose message was
    lost; one whose workers vanished ``MAX_ATTEMPTS`` times is failed, saying so, rather than left running for good.

    A live worker renews its lease (``DOCUMENTS.renewed``), so a lease runs out only when its worker is gone.
    """
    now = timezone.now()
    DOCUMENTS.give_up_on_lost(
        now,
        error=f"Indexing stopped {MAX_ATTEMPTS} times without finishing (its worker was lost each time): "
        "index it again once the workers are healthy.",
    )
    lost = list(
        Document.objects.filter(DOCUMENTS.lost(now) | Q(status=DocumentStatus.PENDING, updated_at__lt=now - lease()))
        .filter(attempts__lt=MAX_ATTEMPTS)
        .values_list("id", flat=True)[:1000]
    )
    # A document waiting its turn behind a long queue looks lost too: sent once a lease, not once a round.
    Document.objects.filter(id__in=lost, status=DocumentStatus.PENDING).update(updated_at=now)
    for document_id in lost:
        queue.send(document_id)
    return lost
