"""Corpora and documents: every read and write of knowledge goes through here, scoped by app in one place.

A document uploaded with a key of one user is that user's (``Document.user_id``): ``documents`` is
the one queryset every read of documents starts from, and with the caller's user it holds only the
app's documents and that user's, never another user's (issue 41 H: ADK's VertexAiRagMemoryService
keeps each user's sessions as files of one corpus). The search SQL applies the same rule
(``knowledge_app.search``). The same bytes are one document per owner, so an upload never answers
with, or changes, another user's document.

A document is stored at once and indexed later, by a worker (``knowledge_app.ingestion``):
an upload answers as soon as its bytes are safe, with the document ``pending``. The
same bytes uploaded again to a corpus are the document already there, not a second one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import mimetypes
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Field, QuerySet
from django.utils import timezone

from cognizes.access import key_kinds, limits
from cognizes.access.models import MAX_KEY_LENGTH
from cognizes.infra.embedders import get_embedder_id
from knowledge_app import queue
from knowledge_app.metadata import InvalidMetadata, checked
from knowledge_app.models import NOT_BEGUN, Corpus, Document, DocumentStatus

ADK_MEMORY_PREFIX = "adk-memory-v1."
"""ADK 2.13's ``VertexAiRagMemoryService`` names each session's file ``adk-memory-v1.<app>.<user>.<session>``, each
part unpadded base64url (``vertex_ai_rag_memory_service._build_source_display_name``)."""


class KnowledgeError(ValueError):
    """A request the knowledge store refuses, with what to change."""


class TooLarge(KnowledgeError):
    pass


class DocumentNotYours(KnowledgeError):
    """A key of one user asked to change a document of the app's (403: it may see it, not change it)."""


def corpora(app_name: str) -> QuerySet[Corpus]:
    """The app's corpora: the one scope of every knowledge query."""
    return Corpus.objects.filter(app_name=app_name)


def documents(app_name: str, corpus_id: int, *, user_id: str | None) -> QuerySet[Document]:
    """The corpus's documents the caller may see, without their bytes (up to 50 MB each: only indexing reads them).

    ``user_id``: the user of a key restricted to one user (the app's documents and that user's), None for the
    whole app's key, staff and the server itself (all). Keyword-only and required, so no caller forgets it.
    """
    return Document.objects.filter(app_name=app_name, corpus_id=corpus_id).seen_by(user_id).defer("content")


def check_document_write(document: Document, *, user_id: str | None) -> None:
    """A key of one user changes only the documents it uploaded; the app's key changes any."""
    if user_id is not None and document.user_id != user_id:
        raise DocumentNotYours(
            key_kinds.needs_whole_app(document.app_name, "change a file uploaded with a key of the whole app")
        )


def get_corpus(app_name: str, corpus_id: int) -> Corpus | None:
    return corpora(app_name).filter(id=corpus_id).first()


def check_chunking(size: int, overlap: int) -> None:
    """Refuse a chunking no document can be cut with (how many chunks a document makes is indexing's limit)."""
    if not 1 <= size <= limits.MAX_CHUNK_SIZE or not 0 <= overlap < size:
        raise KnowledgeError(
            f"chunk_size must be from 1 to {limits.MAX_CHUNK_SIZE} and chunk_overlap from 0 to "
            f"below it (got {size}, {overlap})."
        )


def do_create_corpus(
    *, app_name: str, display_name: str, description: str = "", chunk_size: int = 1024, chunk_overlap: int = 200
) -> Corpus:
    if not display_name.strip():
        raise KnowledgeError("A corpus needs a display name.")
    _check_lengths(Corpus, display_name=display_name.strip())
    check_chunking(chunk_size, chunk_overlap)
    return Corpus.objects.create(
        app_name=app_name,
        display_name=display_name.strip(),
        description=description,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
    )


def do_update_corpus(corpus: Corpus, *, display_name: str | None = None, description: str | None = None) -> Corpus:
    """Rename or redescribe a corpus (None: left as it is); its documents and chunks are untouched.

    The chunking is not changed here: the documents already cut would disagree with it (``do_reindex`` each).
    """
    changed: dict[str, str] = {}
    if display_name is not None:
        if not display_name.strip():
            raise KnowledgeError("A corpus needs a display name.")
        _check_lengths(Corpus, display_name=display_name.strip())
        changed["display_name"] = display_name.strip()
    if description is not None:
        changed["description"] = description
    for field, value in changed.items():
        setattr(corpus, field, value)
    if changed:
        corpus.save(update_fields=[*changed, "updated_at"])
    return corpus


def chunking_for(
    corpus: Corpus, chunk_size: int | None = None, chunk_overlap: int | None = None
) -> tuple[int, int] | None:
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


def do_add_document(
    corpus: Corpus,
    *,
    data: bytes,
    filename: str,
    mime_type: str = "",
    display_name: str = "",
    description: str = "",
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    metadata: dict[str, Any] | None = None,
    user_id: str = "",
) -> Added:
    """Store a document and have a worker index it (once this transaction commits); the same bytes: the one there.

    ``chunk_size`` / ``chunk_overlap``: this document's chunking instead of the corpus's (Vertex sets it per file;
    ``chunking_for``). The same bytes again with another chunking are indexed again with it, and with ``metadata``
    take those (``knowledge_app.metadata``: what searches may filter on). ``user_id``: the user of the key it was
    uploaded with, whose document it is ("": the app's); the same bytes are the one there only if it is the same
    owner's. A file the app's key uploads under ADK's memory-file name for a user is that user's
    (``get_memory_file_user``).
    """
    check_size(data, filename)
    chunking = chunking_for(corpus, chunk_size, chunk_overlap)
    check_embedder(corpus.app_name, [corpus.id])
    user_id = user_id or get_memory_file_user(display_name)
    if metadata is not None:
        metadata = _checked(metadata)
    digest = hashlib.sha256(data).hexdigest()
    owned = documents(corpus.app_name, corpus.id, user_id=user_id or None).filter(user_id=user_id)
    known = owned.filter(content_hash=digest).first()
    if known is not None:
        if metadata is not None and known.metadata != metadata:
            do_set_metadata(known, metadata)
        if chunking is not None and known.chunking != chunking:
            Document.objects.filter(id=known.id).update(chunk_size=chunking[0], chunk_overlap=chunking[1])
            do_reindex(known)
        return Added(owned.get(id=known.id), created=False)
    guessed = check_document_fields(filename=filename, mime_type=mime_type, display_name=display_name)
    try:
        with transaction.atomic():
            document = Document.objects.create(
                corpus=corpus,
                app_name=corpus.app_name,
                user_id=user_id,
                display_name=display_name or filename or digest[:12],
                description=description,
                source_uri=filename,
                mime_type=guessed,
                size_bytes=len(data),
                content_hash=digest,
                content=data,
                chunk_size=chunking and chunking[0],
                chunk_overlap=chunking and chunking[1],
                metadata=metadata or {},
            )
    except IntegrityError:  # the same bytes, uploaded at the same moment by another request
        return Added(owned.get(content_hash=digest, source_path=""), created=False)
    queue.send_on_commit(document.id)
    return Added(document, created=True)


def check_size(data: bytes, filename: str) -> None:
    """Refuse bytes no document may have: none, or more than the server's limit."""
    if not data:
        raise KnowledgeError(f"{filename or 'The file'} is empty (0 bytes): there is nothing to index.")
    limit = settings.COGNIZES_KNOWLEDGE_MAX_BYTES
    if len(data) > limit:
        raise TooLarge(f"{filename or 'The file'} is {len(data)} bytes; a document may have at most {limit}.")


def get_memory_file_user(display_name: str) -> str:
    """The user a file named as ADK's ``VertexAiRagMemoryService`` names a user's session is for; "" for any other.

    That service, run with the app's key, keeps every user's sessions in one corpus and filters by user only in the
    client: a file it names for a user is that user's, so other users' keys never see it (issue 41 H). Only its
    unambiguous v1 names are read (not the legacy dotted ones, which any "a.b.c" file name would match).
    """
    if not display_name.startswith(ADK_MEMORY_PREFIX):
        return ""
    parts = display_name[len(ADK_MEMORY_PREFIX) :].split(".")
    if len(parts) != 3:
        return ""
    try:
        user = base64.b64decode(parts[1] + "=" * (-len(parts[1]) % 4), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return ""
    return user if 0 < len(user) <= MAX_KEY_LENGTH and "\x00" not in user else ""


def check_document_fields(*, filename: str, mime_type: str, display_name: str = "") -> str:
    """The media type a document of these names is stored with (the type's own, else the name's guess); a
    ``KnowledgeError`` if a name or the type is longer than what is kept, said before an upload's bytes are sent."""
    guessed = mime_type.split(";")[0].strip() or mimetypes.guess_type(filename)[0] or "application/octet-stream"
    _check_lengths(Document, display_name=display_name or filename, source_uri=filename, mime_type=guessed)
    return guessed


_LABELS = {"display_name": "A display name", "source_uri": "A file name", "mime_type": "A media type (Content-Type)"}


def _check_lengths(model: type[Corpus] | type[Document], **values: str) -> None:
    """Refuse text longer than its column with a message naming the limit (it was PostgreSQL's DataError, a 500:
    issue 41 K). Refused, not cut: a name kept shorter than given would no longer be the one the caller knows."""
    for name, value in values.items():
        field = model._meta.get_field(name)
        assert isinstance(field, Field)  # a column, not a relation
        limit = field.max_length
        if limit is not None and len(value) > limit:
            raise KnowledgeError(f"{_LABELS[name]} may have at most {limit} characters (this one has {len(value)}).")


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
    Document.objects.filter(id=document.id).update(
        status=DocumentStatus.PENDING, error="", lease_until=None, **NOT_BEGUN
    )
    queue.send_on_commit(document.id)


class EmbeddedWithAnother(KnowledgeError):
    """A corpus embedded by another model than the one this server embeds with (409): the two models' vectors
    cannot be compared, so a query of one against chunks of the other would find noise (issue 44 item 6)."""


def check_embedder(app_name: str, corpus_ids: list[int]) -> None:
    """Refuse to search, or add documents to, corpora whose chunks another embedder made (one indexed query).

    A corpus with no embedder yet (empty, or indexed before its embedder was recorded) takes any: its first
    indexed document records one (``do_claim_embedder``).
    """
    current = get_embedder_id()
    other = (
        corpora(app_name)
        .filter(id__in=corpus_ids)
        .exclude(embedder__in=["", current])
        .values_list("id", "display_name", "embedder")
        .first()
    )
    if other is not None:
        corpus_id, name, embedder_id = other
        raise EmbeddedWithAnother(
            f"The corpus {name!r} was embedded with {embedder_id}, and this server embeds with {current} "
            f"(COGNIZES_EMBEDDER): their vectors cannot be compared. Re-embed it with `cognizes reembed_corpus "
            f"{corpus_id}`, or set COGNIZES_EMBEDDER back to the model it was embedded with."
        )


def do_claim_embedder(app_name: str, corpus_id: int) -> None:
    """Record that this server's embedder embeds the corpus, if none does yet; ``EmbeddedWithAnother`` if another
    one does (a document queued before COGNIZES_EMBEDDER changed).

    One conditional UPDATE: two workers with different embedders (a deployment half rolled out) cannot both win.
    """
    current = get_embedder_id()
    if not Corpus.objects.filter(id=corpus_id, embedder__in=["", current]).update(embedder=current):
        check_embedder(app_name, [corpus_id])
