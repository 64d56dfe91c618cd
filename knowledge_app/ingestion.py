"""Indexing a document on a worker: parse → chunk → embed, each batch written as the next is embedded.

A worker claims a document by moving it to ``running`` with a lease
(``knowledge_app.leases.DOCUMENTS``, ``cognizes.infra.jobs``), which it renews while it works, however long that is:
another delivery of the same task finds it claimed and leaves it, and a worker killed
mid-document leaves a lease that runs out, after which ``do_recover_documents`` sends
it again. Which document a task's worker takes is the fair queue's choice
(``knowledge_app.queue``), so one app's many documents never keep another app's waiting.
The slow part (parsing, embedding) holds no lock and no long transaction: each batch is
written by COPY in a short one, while this run's claim still holds, and kept, so a run
stopped mid-document (a killed worker, an outage, a pause after
``COGNIZES_KNOWLEDGE_SLICE_SECONDS`` for another document's turn) goes on where it stopped
(``_Work``, issue 44). A document's first version is found batch by batch as it is
embedded; a new version replaces the old in one transaction once every chunk is there, so
a search sees the old chunks or the new, never half of each. A document that cannot be read
(or asks for more work than ``cognizes.access.limits`` allows) is ``failed`` with the reason,
its old chunks kept.
"""

from __future__ import annotations

import hashlib
import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from cognizes.access import limits
from cognizes.infra.embedders import Embedder, get_embedder
from cognizes.infra.hybrid_search import stored_vector_literal
from cognizes.infra.text import search_text
from knowledge_app import queue, services
from knowledge_app.chunking import Chunk as Piece
from knowledge_app.chunking import chunk
from knowledge_app.leases import DOCUMENTS, MAX_ATTEMPTS, lease
from knowledge_app.models import Chunk, Document, DocumentStatus, EmbeddedChunk
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


NOTHING_WAITING = "nothing waiting (each document done, or held by another worker)"


def do_ingest_next() -> str:
    """Index the document whose turn it is (``knowledge_app.queue``), if any waits; what became of it (for the log).

    What a task runs: its message says there is a document to index, and the fair queue says which.
    """
    document = queue.claim_next(max_attempts=MAX_ATTEMPTS, progress=0)
    if document is None:
        return NOTHING_WAITING
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
                _finish(document, status=DocumentStatus.FAILED, error=f"Indexing failed {MAX_ATTEMPTS} times: {error}")
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
            return _LOST
        return "failed: " + unreadable.reason
    try:
        services.do_claim_embedder(document.app_name, document.corpus_id)
    except services.EmbeddedWithAnother as refused:
        claimed = _finish(document, status=DocumentStatus.FAILED, error=f"{refused} Then index this file again.")
        return f"failed: {refused}" if claimed else _LOST
    headings = [" › ".join(piece.heading_path) for piece in pieces]
    searched = [
        search_text(f"{heading}\n{piece.text}" if heading else piece.text)
        for heading, piece in zip(headings, pieces, strict=True)
    ]
    embedder = get_embedder()
    work = _Work(document, pieces, headings, searched, [vector_digest(embedder.id, text) for text in searched])
    kept = work.kept()
    if kept is None or not _held(document).update(
        pages=parsed.pages, chunks_total=len(pieces), chunks_embedded=len(kept), progress=_percent(len(kept), work)
    ):
        return _LOST
    outcome = work.embed(embedder, [n for n in range(len(pieces)) if n not in kept], done=len(kept))
    return outcome or work.swap_in()


_LOST = "lost its claim: left to the worker that took it over"


def vector_digest(embedder_id: str, text: str) -> str:
    """What an embedded chunk's vector was made from: a chunk whose embedder or text changed is embedded again."""
    return hashlib.sha256(f"{embedder_id}\n{text}".encode()).hexdigest()


def _percent(embedded: int, work: _Work) -> int:
    return 100 * embedded // len(work.pieces)


@dataclass
class _Work:
    """A document's chunks to embed in a run, and the rows they are written to as they are embedded.

    A document never indexed before has no chunks a search finds: its chunks are written where search reads them,
    each batch as it is embedded (a long one is found by its first pages while the rest is embedded, and the index's
    inserts overlap the model instead of following it). A new version of a document (imported again, re-indexed)
    writes them aside, in ``knowledge_embedded_chunks``, and they replace the old all at once when every one is
    there: a search sees the old version or the new, never half of each.
    """

    document: Document
    pieces: list[Piece]
    headings: list[str]
    searched: list[str]
    digests: list[str]

    @property
    def in_place(self) -> bool:
        """Whether its chunks go where search reads them: it has never been indexed, so no old version to keep."""
        return self.document.indexed_at is None

    def kept(self) -> set[int] | None:
        """The chunks whose vectors are at hand: embedded by an earlier run from the same text with the same embedder
        (the others, stale, are deleted), and, copied rather than embedded again, those of the document's current
        chunks whose text and embedder are unchanged (a new version of a long document embeds what changed); None
        if the claim is no longer held."""
        with transaction.atomic():
            if not _held(self.document).select_for_update().exists():
                return None
            embedded = (Chunk if self.in_place else EmbeddedChunk).objects.filter(document_id=self.document.id)
            current = {
                ordinal
                for ordinal, digest in embedded.values_list("ordinal", "digest")
                if ordinal < len(self.digests) and self.digests[ordinal] == digest
            }
            embedded.exclude(ordinal__in=current).delete()
            if self.in_place:
                return current
            wanted = {self.digests[n] for n in range(len(self.digests)) if n not in current}
            vectors = dict(
                Chunk.objects.filter(document_id=self.document.id, digest__in=wanted).values_list("digest", "embedding")
            )
            copied = [n for n in range(len(self.digests)) if n not in current and self.digests[n] in vectors]
            self._copy(copied, [vectors[self.digests[n]] for n in copied])
        return current | set(copied)

    def embed(self, embedder: Embedder, todo: list[int], *, done: int) -> str | None:
        """Embed the chunks ``todo``, each batch written as the next is embedded; None once all are, else why the
        run stopped short (its claim lost, or paused for another document's turn: what it embedded is kept)."""
        batches = [todo[start : start + EMBED_BATCH] for start in range(0, len(todo), EMBED_BATCH)]
        began = time.monotonic()
        with ThreadPoolExecutor(1, thread_name_prefix="embedder") as model:

            def ahead(k: int) -> Future[Any] | None:
                texts = [self.searched[n] for n in batches[k]] if k < len(batches) else []
                return model.submit(embedder.embed_documents, texts) if texts else None

            coming, pausing = ahead(0), False
            for k, batch in enumerate(batches):
                assert coming is not None
                vectors = coming.result()
                coming = None if pausing else ahead(k + 1)  # the model works on the next batch while this is written
                done += len(batch)
                if not self._write(batch, vectors, done):
                    return _LOST
                if pausing and k + 1 < len(batches):
                    return self._pause(done)
                sliced = time.monotonic() - began > settings.COGNIZES_KNOWLEDGE_SLICE_SECONDS
                pausing = coming is not None and sliced and queue.another_waits(self.document)
        return None

    def _write(self, batch: list[int], vectors: Any, done: int) -> bool:
        """Store a batch's embedded chunks by COPY, with the document's progress, while the claim holds."""
        with transaction.atomic():
            if not _held(self.document).update(chunks_embedded=done, progress=_percent(done, self)):
                return False
            self._copy(batch, vectors)
        return True

    def _copy(self, ordinals: list[int], vectors: Any) -> None:
        """Store the chunks ``ordinals`` with their vectors by COPY."""
        where = (self.document.corpus_id, self.document.app_name) if self.in_place else ()
        with connection.cursor() as cursor, cursor.cursor.copy(_COPY_IN_PLACE if where else _COPY_EMBEDDED) as copy:
            for n, vector in zip(ordinals, vectors, strict=True):
                piece = self.pieces[n]
                copy.write_row(
                    (
                        self.document.id,
                        *where,
                        n,
                        self.digests[n],
                        piece.text,
                        self.headings[n],
                        piece.start,
                        piece.end,
                        self.searched[n],
                        stored_vector_literal(vector),
                    )
                )

    def _pause(self, done: int) -> str:
        """Let the document wait for its next turn, what it embedded kept: another document waits for a worker."""
        if not DOCUMENTS.finish(self.document, status=DocumentStatus.PENDING, attempts=0):
            return _LOST
        queue.send(self.document.id)
        return f"paused at {done} of {len(self.pieces)} chunks: another document's turn"

    def swap_in(self) -> str:
        """Replace the document's chunks with the embedded ones, all at once, while the claim holds."""
        with transaction.atomic():
            if not _held(self.document).select_for_update().exists():  # re-indexed or taken over: the later run's
                return _LOST
            if self.in_place:
                moved = Chunk.objects.filter(document_id=self.document.id).count()
            else:
                Chunk.objects.filter(document_id=self.document.id).delete()
                with connection.cursor() as cursor:
                    cursor.execute(
                        _SWAP_IN,
                        {
                            "document": self.document.id,
                            "corpus": self.document.corpus_id,
                            "app": self.document.app_name,
                        },
                    )
                    moved = cursor.rowcount
            if moved != len(self.pieces):
                raise RuntimeError(f"{moved} embedded chunks found of {len(self.pieces)}: indexing it again")
            EmbeddedChunk.objects.filter(document_id=self.document.id).delete()
            _finish(
                self.document,
                status=DocumentStatus.ACTIVE,
                chunk_count=moved,
                chunks_embedded=moved,
                progress=100,
                indexed_at=timezone.now(),
            )
        return f"{moved} chunks"


_COLUMNS = 'ordinal, digest, text, heading, start, "end", search_text, embedding'
_COPY_EMBEDDED = f"COPY knowledge_embedded_chunks (document_id, {_COLUMNS}) FROM STDIN"
_COPY_IN_PLACE = f"COPY knowledge_chunks (document_id, corpus_id, app_name, {_COLUMNS}) FROM STDIN"
_SWAP_IN = f"""
INSERT INTO knowledge_chunks (document_id, corpus_id, app_name, {_COLUMNS})
SELECT document_id, %(corpus)s, %(app)s, {_COLUMNS} FROM knowledge_embedded_chunks
WHERE document_id = %(document)s ORDER BY ordinal
"""


def _finish(document: Document, **fields: object) -> bool:
    """End this run's claim with ``fields``; False if the claim was no longer held (nothing written)."""
    finished = DOCUMENTS.finish(document, error=fields.pop("error", ""), **fields)
    if finished and fields.get("status") == DocumentStatus.FAILED:
        _drop_partial_chunks()
    return finished


def _drop_partial_chunks() -> None:
    """Delete the chunks of documents that failed before they were ever indexed: a first version's chunks are
    searchable as they are embedded (``_Work``), and a document that failed is not half found."""
    Chunk.objects.filter(document__status=DocumentStatus.FAILED, document__indexed_at__isnull=True).delete()


def do_fail_after_error(document_id: int, error: BaseException) -> None:
    """An unexpected error (an outage, a bug) on the last attempt: the document says so instead of staying running."""
    Document.objects.filter(id=document_id, status=DocumentStatus.RUNNING, attempts__gte=MAX_ATTEMPTS).update(
        status=DocumentStatus.FAILED, lease_until=None, error=f"Indexing failed {MAX_ATTEMPTS} times: {error}"
    )
    _drop_partial_chunks()


def do_recover_documents() -> list[int]:
    """Send again a message for every document whose worker vanished (its lease ran out) or whose message was
    lost; one whose workers vanished ``MAX_ATTEMPTS`` times is failed, saying so, rather than left running for good.

    A live worker renews its lease (``DOCUMENTS.renewed``), so a lease runs out only when its worker is gone.
    """
    now = timezone.now()
    if DOCUMENTS.give_up_on_lost(
        now,
        error=f"Indexing stopped {MAX_ATTEMPTS} times without finishing (its worker was lost each time): "
        "index it again once the workers are healthy.",
    ):
        _drop_partial_chunks()
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
