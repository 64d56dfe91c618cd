"""Export and import an app's or a user's memories as JSONL (``memory_app.transfer_format``), streaming both ways.

Export reads the memories through a server-side cursor in one transaction (one snapshot), a chunk at a time, with
each chunk's revisions in one more query: a million memories take the memory of one chunk. Import reads a line at
a time and writes a batch at a time, each batch in its own transaction: a refused line stops the import with its
number, the batches before it stay (whole memories with their revisions), nothing of its own batch is written.

Import is idempotent: a memory keeps its id (a UUID, the primary key), so the same file imported twice skips what
is there (``ON CONFLICT DO NOTHING``). Imported into another app, a memory's id is derived from the target app and
its id (uuid5), so the copy never takes the original's id and a second import still finds the copy. An id held by
a memory of another app or user refuses the line: an import never writes into another scope. A vector made by
another model than the target's (``Embedder.id``) is not stored: the text is embedded again by the target's model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any
from uuid import UUID, uuid5

from django.db import connection, transaction
from django.utils import timezone

from cognizes.infra.embedders import get_embedder, get_embedder_id
from cognizes.infra.hybrid_search import stored_vector_literal
from memory_app.models import Memory, MemoryRevision
from memory_app.names import names
from memory_app.services.base import _lock_scope
from memory_app.services.remember import Said, _indexed, _with_speaker, memory_vectors
from memory_app.transfer_format import (
    EXPORTED_COLUMNS,
    MAX_LINE_BYTES,
    REVISION_COLUMNS,
    Header,
    ImportRefused,
    MemoryRecord,
    header_line,
    memory_line,
    parse_header,
    parse_memory,
)

EXPORT_CHUNK = 1000
IMPORT_BATCH = 500
COPY_NAMESPACE = UUID("6f1c2b8e-4c1a-5d7e-9f59-0c0a7e55e7a1")
"""The namespace of the ids of memories imported into another app than the file's (uuid5 of app and id)."""


def get_export_lines(app_name: str, *, user_id: str | None = None, chunk_size: int = EXPORT_CHUNK) -> Iterator[str]:
    """The lines of the export of ``app_name``'s memories (one user's with ``user_id``), header first.

    Newest first: a memory that superseded another was made after it, so the importer meets it first and can link
    the older one to it in the same batch.
    """
    with transaction.atomic():
        yield header_line(
            app=app_name,
            user=user_id,
            embedder=get_embedder_id(),
            dimensions=_column_dimensions(),
            exported_at=timezone.now(),
        )
        memories = Memory.objects.filter(app_name=app_name)
        if user_id is not None:
            memories = memories.filter(user_id=user_id)
        rows = memories.order_by("-created_at", "-id").values(*EXPORTED_COLUMNS).iterator(chunk_size=chunk_size)
        chunk: list[dict[str, Any]] = []
        for row in rows:
            chunk.append(row)
            if len(chunk) >= chunk_size:
                yield from _chunk_lines(chunk)
                chunk = []
        yield from _chunk_lines(chunk)


def _chunk_lines(chunk: list[dict[str, Any]]) -> Iterator[str]:
    if not chunk:
        return
    revisions: dict[UUID, list[dict[str, Any]]] = {}
    for revision in (
        MemoryRevision.objects.filter(memory_id__in=[row["id"] for row in chunk])
        .order_by("memory_id", "id")
        .values("memory_id", *REVISION_COLUMNS)
    ):
        revisions.setdefault(revision.pop("memory_id"), []).append(revision)
    for row in chunk:
        yield memory_line(row, revisions.get(row["id"], []))


@dataclass
class ImportReport:
    created: int = 0
    skipped: int = 0
    """Memories already there (imported before): left as they are."""
    reembedded: int = 0
    """Memories whose vector came from another model than the target's, embedded again."""
    unlinked: int = 0
    """Superseded memories whose successor was not in the file: kept, with no link to it."""


def do_import_memories(
    stream: IO[bytes], *, app_name: str | None = None, batch_size: int = IMPORT_BATCH
) -> ImportReport:
    """Import the JSONL export ``stream`` (binary) into ``app_name`` (default: the file's app).

    Raises ``ImportRefused`` naming the first line refused; the batches before it are kept.
    """
    lines = _numbered_lines(stream)
    first = next(lines, None)
    if first is None:
        raise ImportRefused(1, "the file is empty (line 1 is the header)")
    header = parse_header(first[1])
    target = app_name or header.app
    report = ImportReport()
    load = _Load(header=header, target=target, report=report, dimensions=_column_dimensions())
    batch: list[MemoryRecord] = []
    for number, raw in lines:
        if not raw.strip():
            continue
        batch.append(parse_memory(raw, number, header=header))
        if len(batch) >= batch_size:
            load.write(batch)
            batch = []
    if batch:
        load.write(batch)
    load.finish()
    return report


def _numbered_lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """(number, line) from 1, reading at most ``MAX_LINE_BYTES`` + 1 bytes at a time: a huge line is refused
    without being held whole."""
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise ImportRefused(number, f"longer than {MAX_LINE_BYTES} bytes")
        yield number, raw


class _Load:
    """One import's writing: batches, the ids' mapping, links waiting for their successor."""

    def __init__(self, *, header: Header, target: str, report: ImportReport, dimensions: int) -> None:
        self.header, self.target, self.report, self.dimensions = header, target, report, dimensions
        self.embedder_id = get_embedder_id()
        self.waiting: dict[UUID, UUID] = {}  # a superseded memory → its successor, not yet imported

    def id_of(self, original: UUID) -> UUID:
        return original if self.target == self.header.app else uuid5(COPY_NAMESPACE, f"{self.target}\n{original}")

    def write(self, batch: list[MemoryRecord]) -> None:
        vectors = self._vectors(batch)
        rows: dict[UUID, tuple[MemoryRecord, Any]] = {}
        for record, vector in zip(batch, vectors, strict=True):
            rows.setdefault(self.id_of(record.id), (record, vector))  # an id twice in a file: its first line
        with transaction.atomic():
            for user_id in sorted({record.user_id for record, _ in rows.values()}):
                _lock_scope(self.target, user_id)
            created = self._insert(rows)
            self._refuse_other_scopes(rows, created)
            self._insert_revisions({memory_id: rows[memory_id][0] for memory_id in created})
            for memory_id in created:
                successor = rows[memory_id][0].superseded_by
                if successor is not None:
                    self.waiting[memory_id] = self.id_of(successor)
            self._link()
        self.report.created += len(created)
        self.report.skipped += len(batch) - len(created)

    def _vectors(self, batch: list[MemoryRecord]) -> list[Any]:
        """Each record's vector for the target: its own when the target's model made it, else its text embedded
        again (before the batch's transaction: a model is slow, a transaction should not wait on it)."""
        vectors: list[Any] = []
        again: list[int] = []
        for index, record in enumerate(batch):
            if record.embedder == self.embedder_id and record.embedding is not None:
                if len(record.embedding) != self.dimensions:
                    raise ImportRefused(
                        record.line,
                        f"embedding has {len(record.embedding)} numbers; {record.embedder}'s have {self.dimensions}",
                    )
                vectors.append(record.embedding)
            else:
                vectors.append(None)
                again.append(index)
        if again:
            embedded = memory_vectors(
                get_embedder(),
                [
                    Said(batch[index].text, batch[index].columns["author"], batch[index].columns["context"])
                    for index in again
                ],
            )
            for index, vector in zip(again, embedded, strict=True):
                vectors[index] = vector
            self.report.reembedded += len(again)
        return vectors

    def _insert(self, rows: dict[UUID, tuple[MemoryRecord, Any]]) -> set[UUID]:
        """Insert the memories not there yet; the ids inserted."""
        columns = [*_INSERTED, "embedder", "embedding", "app_name", "user_id", "text", "id"]
        placeholders = "(" + ", ".join(_CASTS.get(name, "%s") for name in columns) + ")"
        params: list[Any] = []
        now = timezone.now()
        for memory_id, (record, vector) in rows.items():
            fields = record.columns
            search_text = fields["search_text"]
            mentioned = fields["names"]
            row = {
                **fields,
                "valid_from": fields["valid_from"] or fields["created_at"] or now,
                "created_at": fields["created_at"] or now,
                "updated_at": fields["updated_at"] or now,
                "search_text": _indexed(record.text, fields["context"], fields["author"])
                if search_text is None
                else search_text,
                "names": names(_with_speaker(record.text, fields["author"])) if mentioned is None else mentioned,
                "metadata": json.dumps(fields["metadata"]),
                "extra_scope": json.dumps(fields["extra_scope"]),
                "structured_content": None
                if fields["structured_content"] is None
                else json.dumps(fields["structured_content"]),
            }
            params.extend(row[name] for name in _INSERTED)
            params.extend(
                [self.embedder_id, stored_vector_literal(vector), self.target, record.user_id, record.text, memory_id]
            )
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO memories ({', '.join(columns)}) VALUES {', '.join([placeholders] * len(rows))} "
                "ON CONFLICT (id) DO NOTHING RETURNING id",
                params,
            )
            return {row[0] for row in cursor.fetchall()}

    def _refuse_other_scopes(self, rows: dict[UUID, tuple[MemoryRecord, Any]], created: set[UUID]) -> None:
        """A skipped id must be this scope's own memory (imported before), never another app's or user's."""
        skipped = [memory_id for memory_id in rows if memory_id not in created]
        if not skipped:
            return
        for memory_id, app, user in Memory.objects.filter(id__in=skipped).values_list("id", "app_name", "user_id"):
            record = rows[memory_id][0]
            if (app, user) != (self.target, record.user_id):
                raise ImportRefused(record.line, f"id {record.id} is taken by a memory of another app or user")

    @staticmethod
    def _insert_revisions(created: dict[UUID, MemoryRecord]) -> None:
        """The revisions of the memories inserted, with their own times (a raw insert: ``created_at`` is
        ``auto_now_add``, which the ORM would stamp with now)."""
        revisions = [(memory_id, r) for memory_id, record in created.items() for r in record.revisions]
        if not revisions:
            return
        now = timezone.now()

        def column(name: str) -> list[Any]:
            return [r[name] for _, r in revisions]

        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO memory_revisions (memory_id, action, text_before, text_after, status_before,"
                " status_after, metadata_after, cause, labels, expires_at, created_at, structured_data)"
                " SELECT m, a, tb, ta, sb, sa, md::jsonb, c, l::jsonb, e, t, sd::jsonb FROM unnest(%s::uuid[],"
                " %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],"
                " %s::timestamptz[], %s::timestamptz[], %s::text[])"
                " WITH ORDINALITY v(m, a, tb, ta, sb, sa, md, c, l, e, t, sd, n) ORDER BY n",
                [
                    [memory_id for memory_id, _ in revisions],
                    column("action"),
                    column("text_before"),
                    column("text_after"),
                    column("status_before"),
                    column("status_after"),
                    [json.dumps(r["metadata_after"]) for _, r in revisions],
                    column("cause"),
                    [json.dumps(r["labels"]) for _, r in revisions],
                    column("expires_at"),
                    [r["created_at"] or now for _, r in revisions],
                    [None if r["structured_data"] is None else json.dumps(r["structured_data"]) for _, r in revisions],
                ],
            )

    def _link(self) -> None:
        """Link the superseded memories waiting to their successor where it is there, in the same scope (a file
        cannot link a memory to another user's); the others wait for a later batch."""
        if not self.waiting:
            return
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memories m SET superseded_by_id = v.new FROM unnest(%s::uuid[], %s::uuid[]) v(old, new)"
                " JOIN memories s ON s.id = v.new"
                " WHERE m.id = v.old AND s.app_name = m.app_name AND s.user_id = m.user_id RETURNING m.id",
                [list(self.waiting), list(self.waiting.values())],
            )
            for (linked,) in cursor.fetchall():
                del self.waiting[linked]

    def finish(self) -> None:
        """Link what waits on a successor of a later batch; what is left has none in the file."""
        with transaction.atomic():
            self._link()
        self.report.unlinked = len(self.waiting)


_SET_APART = ("id", "app_name", "user_id", "text", "superseded_by_id", "embedder", "embedding")
_INSERTED = [name for name in EXPORTED_COLUMNS if name not in _SET_APART]
"""The columns an import writes as the file has them; those set apart it writes itself (ids, scope, vector) or
links after (``superseded_by_id``)."""
_CASTS = {
    "metadata": "%s::jsonb",
    "extra_scope": "%s::jsonb",
    "structured_content": "%s::jsonb",
    "source_session_ids": "%s::varchar[]",
    "source_event_ids": "%s::varchar[]",
    "names": "%s::varchar[]",
    "embedding": "%s::vector",
    "id": "%s::uuid",
}


def _column_dimensions() -> int:
    """The size of the stored vectors (the column's, which ``reembed_memories`` resizes with the model)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
        )
        return int(cursor.fetchone()[0])


def export_to(out: IO[str], lines: Iterable[str]) -> int:
    """Write ``lines`` to ``out``; the number of memories written (the lines after the header)."""
    count = -1
    for line in lines:
        out.write(line)
        count += 1
    return max(count, 0)
