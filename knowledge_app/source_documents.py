"""Documents kept in step with the files of an app's import folder: one per path, its content replaced when it changes.

An upload is known by its bytes (``services.do_add_document``: the same bytes again are the document there). An
imported file is known by its path in the app's folder (``Document.source_path``, the same whichever URI named it,
``gs://`` or ``file://``), so importing a folder again keeps the corpus true to it (issue 44, item 2):

- a file unchanged (the same bytes, and no other chunking asked for) is skipped: nothing is done;
- a file changed is the same document (its id, its RagFile name) with the new content, indexed again. Its old
  chunks keep answering searches until the new ones are swapped in, in one transaction, by the indexing that
  follows (``knowledge_app.ingestion``): a search finds the old text or the new, never neither, never half;
- a file gone is deleted only when the import asks for it (``do_delete_missing``): Vertex's import has no such
  option and deletes nothing, so neither does an import that does not say so.

This follows Vertex's own rule: a file is skipped "if it was already imported, has not changed, and its chunking
configuration has not changed" (RAG Engine's data ingestion guide, "Data deduplication").

A copy of a file at another path is a document of its own, not skipped as the same bytes: the folder is what the
corpus mirrors, and each file's document must go with that file alone when it is deleted.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.db.models.functions import MD5
from django.utils import timezone

from knowledge_app import queue, services
from knowledge_app.models import NOT_BEGUN, Corpus, Document, DocumentStatus


class Outcome(enum.Enum):
    ADDED = "added"
    """A path not imported before: a new document."""
    REPLACED = "replaced"
    """Its bytes changed (or another chunking was asked for): the same document, indexed again."""
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class Put:
    document: Document
    outcome: Outcome


def by_path(corpus: Corpus, path: str) -> QuerySet[Document]:
    """The corpus's documents imported from ``path``, whoever's: found by the unique index on the path's MD5."""
    digest = hashlib.md5(path.encode(), usedforsecurity=False).hexdigest()
    return (
        Document.objects.filter(app_name=corpus.app_name, corpus=corpus)
        .exclude(source_path="")
        .alias(path_md5=MD5("source_path"))
        .filter(path_md5=digest, source_path=path)
    )


def do_put_file(
    corpus: Corpus,
    *,
    path: str,
    uri: str,
    data: bytes,
    display_name: str,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
) -> Put:
    """The document of the file at ``path`` with ``data`` as its content: added, replaced or left as it was.

    Run inside a transaction (an import's batch): a replaced document stays locked until it commits, and is indexed
    once it has. ``uri``: how this import named the file (the document's ``source_uri``, shown as Vertex's
    ``sourceUri``). A ``KnowledgeError`` for bytes no document may have (the document already there is kept).
    """
    services.check_size(data, uri)
    chunking = services.chunking_for(corpus, chunk_size, chunk_overlap)
    user_id = services.get_memory_file_user(display_name)  # as an upload of that name would be
    digest = hashlib.sha256(data).hexdigest()
    known = by_path(corpus, path).filter(user_id=user_id).select_for_update().defer("content").first()
    if known is None:
        mime_type = services.check_document_fields(filename=uri, mime_type="", display_name=display_name)
        try:
            with transaction.atomic():
                document = Document.objects.create(
                    corpus=corpus,
                    app_name=corpus.app_name,
                    user_id=user_id,
                    display_name=display_name or uri,
                    source_uri=uri,
                    source_path=path,
                    mime_type=mime_type,
                    size_bytes=len(data),
                    content_hash=digest,
                    content=data,
                    chunk_size=chunking and chunking[0],
                    chunk_overlap=chunking and chunking[1],
                )
        except IntegrityError:  # another import of the same path added it this instant: that document it is
            known = by_path(corpus, path).filter(user_id=user_id).select_for_update().defer("content").get()
        else:
            queue.send_on_commit(document.id)
            return Put(document, Outcome.ADDED)
    if known.content_hash == digest and (chunking is None or known.chunking == chunking):
        return Put(known, Outcome.UNCHANGED)
    return Put(_replace(known, uri=uri, data=data, digest=digest, chunking=chunking), Outcome.REPLACED)


def _replace(document: Document, *, uri: str, data: bytes, digest: str, chunking: tuple[int, int] | None) -> Document:
    """The document with new content, ``pending``: its chunks are those of its old content until the new are ready.

    Search reads chunks whatever their document's status, and indexing replaces them in one transaction at its end;
    a run still indexing the old content loses its claim here (the status is no longer ``running``) and writes
    nothing (a claim is its attempt number and when it was taken: the attempts start again from 0).
    """
    fields: dict[str, object] = {
        "content": data,
        "content_hash": digest,
        "size_bytes": len(data),
        "source_uri": uri,
        "mime_type": services.check_document_fields(filename=uri, mime_type="", display_name=document.display_name),
        "status": DocumentStatus.PENDING,
        "error": "",
        "lease_until": None,
        **NOT_BEGUN,
        "updated_at": timezone.now(),
    }
    if chunking is not None:
        fields["chunk_size"], fields["chunk_overlap"] = chunking
    Document.objects.filter(id=document.id).update(**fields)
    queue.send_on_commit(document.id)
    return Document.objects.defer("content").get(id=document.id)


def do_delete_missing(corpus: Corpus, *, under: Iterable[str], found: set[str], kept_under: Iterable[str]) -> int:
    """Delete the corpus's imported documents under ``under`` (paths of the files and directories imported) whose
    files were not ``found``; how many. None under ``kept_under`` (a directory that could not be listed, a file
    that could not be read: what became of its files is not known, so their documents stay)."""
    scopes, kept = list(under), [path + "/" for path in kept_under]
    if not scopes:
        return 0
    imported = Document.objects.filter(app_name=corpus.app_name, corpus=corpus).exclude(source_path="")
    gone = [
        document_id
        for document_id, path in imported.values_list("id", "source_path").iterator()
        if path not in found
        and any(_within(path, scope) for scope in scopes)
        and not any((path + "/").startswith(prefix) for prefix in kept)
    ]
    deleted = 0
    for start in range(0, len(gone), 500):
        deleted += Document.objects.filter(id__in=gone[start : start + 500]).delete()[1].get(Document._meta.label, 0)
    return deleted


def _within(path: str, scope: str) -> bool:
    """Whether the file at ``path`` is ``scope`` or under it ("": the app's whole folder)."""
    return not scope or path == scope or path.startswith(scope + "/")
