"""Imports: files of the app's import folder added to a corpus by a worker, then indexed like uploads.

The request only checks the URIs (``import_sources``: no listing) and stores an ``Import``;
ten thousand files are listed and added by a worker, never in a request. Each file is the
document of its path in the app's folder (``source_documents``): a path imported before and
unchanged is skipped, one changed has its document's content replaced (the same document, indexed
again), a new one is a new document; with ``delete_missing`` the documents of files gone from
under the URIs are deleted once every file is listed and added. A file of a format no parser takes is still added,
and fails on its document with the parser's reason, as its upload would: the format rule stays the
parser's alone, and the client sees which files failed and why in the corpus's file list.
Files that cannot even be stored (unreadable, empty, too large, a link, which is never followed) are
counted failed, the first of them kept with why on the import.

An import is done, as Vertex's is, once every document it added is indexed or failed
(``get_progress`` reads their states: nothing has to remember to finish it).

Recovery makes the import idempotent rather than resumable. A worker holds an import under a
lease renewed with every batch, each batch's documents and counts committed together; a
worker killed mid-import leaves a lease that runs out, and ``do_recover_imports`` sends the
import again (``knowledge_app.leases.IMPORTS``, ``cognizes.infra.jobs``). The new run lists the
files again and counts afresh: what the killed run added or replaced is a document already linked
to this import, counted as it was rather than skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, FloatField, Max, Q, QuerySet, Sum
from django.db.models.functions import Cast
from django.utils import timezone

from cognizes.infra import jobs
from knowledge_app import import_sources, services, source_documents
from knowledge_app.leases import IMPORTS, MAX_ATTEMPTS, lease
from knowledge_app.models import Corpus, Document, DocumentStatus, Import, ImportStatus
from knowledge_app.source_documents import Outcome

logger = logging.getLogger(__name__)

BATCH_FILES = 50
BATCH_BYTES = 16 * 1024 * 1024
"""A batch of files is added (and the lease renewed) in one transaction: few commits for small files,
short transactions for large ones."""
MAX_FAILURES_KEPT = 100
RUN_IMPORT = "knowledge_app.tasks.run_import"
"""The task that runs an import, sent by name: the tasks import this module, not the other way round."""


@dataclass(frozen=True)
class Progress:
    """Where an import stands, as its operation reports it."""

    done: bool
    imported: int
    """Documents it added or replaced that are indexed (Vertex's importedRagFilesCount)."""
    added: int
    """Files that became new documents."""
    replaced: int
    """Files imported before that changed: their documents' content replaced."""
    skipped: int
    """Files imported before and unchanged."""
    deleted: int
    """Documents deleted because their files were gone (asked for with ``delete_missing``)."""
    failed: int
    """Files that could not be stored, and documents it added that could not be indexed."""
    percent: int
    error: str
    """Why it could not run at all ('' when it ran)."""
    updated_at: datetime


def imports(app_name: str, corpus_id: int) -> QuerySet[Import]:
    return Import.objects.filter(app_name=app_name, corpus_id=corpus_id)


def get_import(app_name: str, corpus_id: int, import_id: int) -> Import | None:
    return imports(app_name, corpus_id).filter(id=import_id).first()


def do_create_import(
    corpus: Corpus,
    *,
    uris: list[str],
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    delete_missing: bool = False,
) -> Import:
    """Check the URIs and have a worker import them (once this transaction commits); nothing is stored if refused.

    ``delete_missing``: also delete the documents imported before from under these URIs whose files are gone.
    """
    if not uris:
        raise services.KnowledgeError("Name at least one file or directory to import.")
    folder = import_sources.import_folder(corpus.app_name)
    for uri in uris:
        import_sources.check_source(uri, folder)
    if chunk_size is not None or chunk_overlap is not None:
        services.check_chunking(
            corpus.chunk_size if chunk_size is None else chunk_size,
            corpus.chunk_overlap if chunk_overlap is None else chunk_overlap,
        )
    record = Import.objects.create(
        corpus=corpus,
        app_name=corpus.app_name,
        uris=[uri.strip() for uri in uris],
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        delete_missing=delete_missing,
    )
    _enqueue_on_commit(record.id)
    return record


def get_progress(record: Import) -> Progress:
    """The import's counts and whether it is done: its files added, and each document it added indexed or failed."""
    states = Document.objects.filter(imports=record).aggregate(
        active=Count("id", filter=Q(status=DocumentStatus.ACTIVE)),
        failed=Count("id", filter=Q(status=DocumentStatus.FAILED)),
        waiting=Count("id", filter=Q(status__in=[DocumentStatus.PENDING, DocumentStatus.RUNNING])),
        changed=Max("updated_at"),
        # A long document being embedded counts for the part of it done: a big file's import does not sit still.
        embedding=Sum(
            Cast("chunks_embedded", FloatField()) / F("chunks_total"),
            filter=Q(status__in=[DocumentStatus.PENDING, DocumentStatus.RUNNING], chunks_total__gt=0),
        ),
    )
    done = record.status == ImportStatus.FAILED or (record.status == ImportStatus.ADDED and not states["waiting"])
    finished = record.skipped_count + record.refused_count + states["active"] + states["failed"]
    finished += states["embedding"] or 0
    percent = 100 if done else min(99, int(finished * 100 / record.files_found)) if record.files_found else 0
    return Progress(
        done=done,
        imported=states["active"],
        added=record.added_count,
        replaced=record.replaced_count,
        skipped=record.skipped_count,
        deleted=record.deleted_count,
        failed=record.refused_count + states["failed"],
        percent=percent,
        error=record.error,
        updated_at=max(filter(None, [record.updated_at, states["changed"]])),
    )


@dataclass
class _Tally:
    added: int = 0
    replaced: int = 0
    skipped: int = 0
    refused: int = 0
    deleted: int = 0
    failures: list[str] = field(default_factory=list)
    found: set[str] = field(default_factory=set)
    """The paths of every file listed, read or not: their documents are not the missing ones."""
    unknown: list[str] = field(default_factory=list)
    """Paths that could not be listed or read: what lies there is not known, so no document under them is missing."""

    def refuse(self, reason: str) -> None:
        self.refused += 1
        if len(self.failures) < MAX_FAILURES_KEPT:
            self.failures.append(reason)

    def fields(self) -> dict[str, Any]:
        return {
            "added_count": self.added,
            "replaced_count": self.replaced,
            "skipped_count": self.skipped,
            "refused_count": self.refused,
            "deleted_count": self.deleted,
            "failures": self.failures,
        }


def do_run_import(import_id: int) -> str:
    """Add the import's files if it is this call's to run; what became of it (for the task's log)."""
    record = _claim(import_id)
    if record is None:
        return "not to be run (added, failed, or another worker holds it)"
    try:
        return _run(record)
    except Exception:
        IMPORTS.let_go(record)
        raise  # the lease let go: a retry of the task takes the import at once


def _run(record: Import) -> str:
    try:
        folder = import_sources.import_folder(record.app_name)
        sources = [import_sources.check_source(uri, folder) for uri in record.uris]
    except services.KnowledgeError as refused:  # changed since the request: the root, or a file gone
        _finish(record, status=ImportStatus.FAILED, error=str(refused))
        return f"failed: {refused}"
    files = _unique(file for source in sources for file in import_sources.files_of(source, folder))
    Import.objects.filter(id=record.id).update(files_found=len(files))
    earlier = set(record.documents.values_list("id", flat=True))  # added by a run killed before this one
    chunking = {
        name: value
        for name, value in (("chunk_size", record.chunk_size), ("chunk_overlap", record.chunk_overlap))
        if value is not None
    }
    tally, remaining, ours = _Tally(), iter(files), set[int]()
    while True:
        with transaction.atomic():  # the lease renewed with the batch: the import locked until it commits
            if not IMPORTS.renew(record):  # the lease ran out and another worker took it: its counts will be the ones
                return "lost its lease: left to the worker that took it over"
            taken = _add_batch(record, folder, remaining, tally, earlier, ours, chunking)
            Import.objects.filter(id=record.id).update(**tally.fields(), updated_at=timezone.now())
        if not taken:
            break
    if record.delete_missing:
        with transaction.atomic():
            if not IMPORTS.renew(record):
                return "lost its lease: left to the worker that took it over"
            tally.deleted = source_documents.do_delete_missing(
                record.corpus,
                under=[_path(source.parts) for source in sources],
                found=tally.found,
                kept_under=tally.unknown,
            )
    _finish(record, status=ImportStatus.ADDED, **tally.fields())
    return (
        f"{len(files)} files: {tally.added} added, {tally.replaced} replaced, {tally.skipped} skipped, "
        f"{tally.refused} refused; {tally.deleted} documents of files gone deleted"
    )


def _add_batch(
    record: Import,
    folder: import_sources.Folder,
    remaining: Iterator[import_sources.SourceFile],
    tally: _Tally,
    earlier: set[int],
    ours: set[int],
    chunking: dict[str, Any],
) -> int:
    """Add files until a batch is full; how many were taken (0: none were left).

    A file's document is new (added), replaced (it changed) or unchanged: skipped, unless an earlier run of this
    import added or replaced it (and this run has not counted it yet): counted as that run did.
    """
    taken, read, links = 0, 0, []
    for file in remaining:
        taken += 1
        path = _path(file.parts)
        tally.found.add(path)
        data = _read(folder, file, tally)
        if data is None:
            tally.unknown.append(path)
        else:
            read += len(data)
            try:
                put = source_documents.do_put_file(
                    record.corpus, path=path, uri=file.uri, data=data, display_name=file.name, **chunking
                )
            except services.KnowledgeError as refused:
                tally.refuse(str(refused))
            else:
                outcome = _counted(record, put, earlier, ours)
                if outcome is Outcome.UNCHANGED:
                    tally.skipped += 1
                else:
                    tally.added += outcome is Outcome.ADDED
                    tally.replaced += outcome is Outcome.REPLACED
                    ours.add(put.document.id)
                    links.append(Import.documents.through(import_id=record.id, document_id=put.document.id))
        if taken >= BATCH_FILES or read >= BATCH_BYTES:
            break
    Import.documents.through.objects.bulk_create(links, ignore_conflicts=True)
    return taken


def _counted(record: Import, put: source_documents.Put, earlier: set[int], ours: set[int]) -> Outcome:
    """How this run counts a file: as ``put`` says, or, for a document an earlier (killed) run of this import
    added or replaced and this run found unchanged, as that run did (a document made since the import began was
    added by it)."""
    document = put.document
    if put.outcome is not Outcome.UNCHANGED or document.id not in earlier or document.id in ours:
        return put.outcome
    return Outcome.ADDED if document.created_at >= record.created_at else Outcome.REPLACED


def _read(folder: import_sources.Folder, file: import_sources.SourceFile, tally: _Tally) -> bytes | None:
    """The file's bytes (at most one more than a document may have: do_add_document refuses those), or None.

    Read from a descriptor opened without following links (``import_sources.read_file``): the file listed may
    have been swapped for a link since (issue 41 C), which is refused, not followed.
    """
    if file.problem:
        tally.refuse(f"{file.uri}: {file.problem}")
        return None
    try:
        return import_sources.read_file(folder, file, settings.COGNIZES_KNOWLEDGE_MAX_BYTES + 1)
    except OSError as error:
        tally.refuse(f"{file.uri}: {import_sources.why(error)}")
        return None


def _path(parts: tuple[str, ...]) -> str:
    """A file's path in the app's folder as its document keeps it (``Document.source_path``)."""
    return "/".join(parts)


def _unique(files: Iterator[import_sources.SourceFile]) -> list[import_sources.SourceFile]:
    """Each file once, though two URIs (a directory and a file in it) name it."""
    seen: dict[tuple[str, ...], import_sources.SourceFile] = {}
    for file in files:
        seen.setdefault(file.parts, file)
    return list(seen.values())


def _claim(import_id: int) -> Import | None:
    """The import, now ``running`` under this worker's lease and counted afresh; None if it is not to be run."""
    return IMPORTS.claim(import_id, related=("corpus",), **_Tally().fields(), files_found=0)


def _finish(record: Import, **fields: Any) -> None:
    IMPORTS.finish(record, finished_at=timezone.now(), **fields)


def do_fail_after_error(import_id: int, error: BaseException) -> None:
    """An unexpected error (an outage, a bug) not to be retried: the import says so instead of waiting forever."""
    now = timezone.now()
    Import.objects.filter(id=import_id, status__in=[ImportStatus.PENDING, ImportStatus.RUNNING]).update(
        status=ImportStatus.FAILED,
        lease_until=None,
        finished_at=now,
        updated_at=now,
        error=f"The import stopped: {error}. The files added before are kept; importing again adds the rest.",
    )


def do_recover_imports() -> list[int]:
    """Send again every import whose worker vanished (its lease ran out) or whose message was lost.

    One whose workers vanished ``MAX_ATTEMPTS`` times fails, saying so, rather than staying running.
    """
    now = timezone.now()
    IMPORTS.give_up_on_lost(
        now,
        finished_at=now,
        error=f"The import's worker stopped {MAX_ATTEMPTS} times before it was done (killed, or out of memory). "
        "The files added before are kept; importing again adds the rest.",
    )
    lost = list(
        Import.objects.filter(
            IMPORTS.lost(now) | Q(status=ImportStatus.PENDING, updated_at__lt=now - lease())
        ).values_list("id", flat=True)[:100]
    )
    for import_id in lost:
        jobs.send(RUN_IMPORT, import_id)
    return lost


def _enqueue_on_commit(import_id: int) -> None:
    transaction.on_commit(lambda: jobs.send(RUN_IMPORT, import_id))
