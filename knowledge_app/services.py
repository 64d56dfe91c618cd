"""Corpora and documents: every read and write of knowledge goes through here, scoped by app in one place.

A document is stored at once and indexed later, by a worker (``knowledge_app.ingestion``):
an upload answers as soon as its bytes are safe, with the document ``pending``. The
same bytes uploaded again to a corpus are the document already there, not a second one.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from access import limits
from knowledge_app.metadata import InvalidMetadata, checked
from knowledge_app.models import Corpus, Document, DocumentStatus


class KnowledgeError(ValueError):
    """A request the knowledge store refuses, with what to change."""


class TooLarge(KnowledgeError):
    pass


def corpora(app_name: str) -> QuerySet[Corpus]:
    """The app's corpora: the one scope of every knowledge query."""
    return Corpus.objects.filter(app_name=app_name)


def documents(app_name: str, corpus_id: int) -> QuerySet[Document]:
    """The corpus's documents, without their bytes (up to 50 MB each: only indexing reads them, by itself)."""
    return Document.objects.filter(app_name=app_name, corpus_id=corpus_id).defer("content")


def get_corpus(app_name: str, corpus_id: int) -> Corpus | None:
    return corpora(app_name).filter(id=corpus_id).first()


def check_chunking(size: int, overlap: int) -> None:
    """Refuse a chunking no document can be cut with (how many chunks a document makes is indexing's limit)."""
    if not 1 <= size <= limits.MAX_CHUNK_SIZE or not 0 <= overlap < size:
        raise KnowledgeError(f"chunk_size must be from 1 to {limits.MAX_CHUNK_SIZE} and chunk_overlap from 0 to "
                             f"below it (got {size}, {overlap}).")


def do_create_corpus(*, app_name: str, display_name: str, description: str = "", chunk_size: int = 1024,
                     chunk_overlap: int = 200) -> Corpus:
    if not display_name.strip():
        raise KnowledgeError("A corpus needs a display name.")
    check_chunking(chunk_size, chunk_overlap)
    return Corpus.objects.create(app_name=app_name, display_name=display_name.strip(), description=description,
                                 chunk_size=chunk_size, chunk_overlap=chunk_overlap)


def chunking_for(corpus: Corpus, chunk_size: int | None = None,
                 chunk_overlap: int | None = None) -> tuple[int, int] | None:
    """``(size, overlap)`` of a document given either or both, checked; None for neither (the corpus's).

    A size alone keeps no overlap and an overlap alone takes the corpus's size, as Vertex's unset fields are 0.
    """
    if chunk_size is None and chunk_overlap is None:
        return None
    chunking = (corpus.chunk_size if chunk_size is None else chunk_size, chunk_overlap or 0)
    check_chunking(*chunking)
    return chunking


@dataclass(frozen=True)
class Added:
    document: Document
    created: bool
    """False: these bytes were in the corpus already (nothing changed but, if another was asked for, its chunking)."""


def do_add_document(corpus: Corpus, *, data: bytes, filename: str, mime_type: str = "", display_name: str = "",
                    description: str = "", chunk_size: int | None = None, chunk_overlap: int | None = None,
                    metadata: dict[str, Any] | None = None) -> Added:
    """Store a document and have a worker index it (once this transaction commits); the same bytes: the one there.

    ``chunk_size`` / ``chunk_overlap``: this document's chunking instead of the corpus's (Vertex sets it per file;
    ``chunking_for``). The same bytes again with another chunking are indexed again with it, and with ``metadata``
    take those (``knowledge_app.metadata``: what searches may filter on).
    """
    if not data:
        raise KnowledgeError(f"{filename or 'The file'} is empty (0 bytes): there is nothing to index.")
    limit = settings.COGNIZES_KNOWLEDGE_MAX_BYTES
    if len(data) > limit:
        raise TooLarge(f"{filename or 'The file'} is {len(data)} bytes; a document may have at most {limit}.")
    chunking = chunking_for(corpus, chunk_size, chunk_overlap)
    if metadata is not None:
        metadata = _checked(metadata)
    digest = hashlib.sha256(data).hexdigest()
    known = documents(corpus.app_name, corpus.id).filter(content_hash=digest).first()
    if known is not None:
        if metadata is not None and known.metadata != metadata:
            do_set_metadata(known, metadata)
        if chunking is not None and known.chunking != chunking:
            Document.objects.filter(id=known.id).update(chunk_size=chunking[0], chunk_overlap=chunking[1])
            do_reindex(known)
        return Added(documents(corpus.app_name, corpus.id).get(id=known.id), created=False)
    guessed = mime_type.split(";")[0].strip() or mimetypes.guess_type(filename)[0] or "application/octet-stream"
    try:
        with transaction.atomic():
            document = Document.objects.create(
                corpus=corpus, app_name=corpus.app_name, display_name=display_name or filename or digest[:12],
                description=description,
                source_uri=filename, mime_type=guessed, size_bytes=len(data), content_hash=digest, content=data,
                chunk_size=chunking and chunking[0], chunk_overlap=chunking and chunking[1], metadata=metadata or {},
            )
    except IntegrityError:  # the same bytes, uploaded at the same moment by another request
        return Added(documents(corpus.app_name, corpus.id).get(content_hash=digest), created=False)
    _enqueue_on_commit(document.id)
    return Added(document, created=True)


def do_set_metadata(document: Document, metadata: dict[str, Any]) -> None:
    """Replace the document's metadata (its chunks stay: only which searches keep it changes)."""
    document.metadata = _checked(metadata)
    Document.objects.filter(id=document.id).update(metadata=document.metadata, updated_at=timezone.now())


def _checked(metadata: Any) -> dict[str, Any]:
    try:
        return checked(metadata)
    except InvalidMetadata as error:
        raise KnowledgeError(str(error)) from error


def do_delete_document(document: Document) -> None:
    """The document and its chunks (a search under way sees all of them or none)."""
    document.delete()


def do_delete_corpus(corpus: Corpus) -> None:
    corpus.delete()


def do_reindex(document: Document) -> None:
    """Parse, chunk and embed the document again (its chunks are replaced when the new ones are ready)."""
    Document.objects.filter(id=document.id).update(status=DocumentStatus.PENDING, error="", lease_until=None)
    _enqueue_on_commit(document.id)


def _enqueue_on_commit(document_id: int) -> None:
    from knowledge_app.tasks import ingest_document

    transaction.on_commit(lambda: ingest_document.delay(document_id))
