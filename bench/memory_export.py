"""Benchmark: ``cognizes export`` / ``cognizes import`` against plain ``COPY`` of the same rows.

What is measured, and why (issue 45, item 5)
--------------------------------------------
Export and import move memories as JSONL, a line at a time, checked field by field and written a batch per
transaction: what do the format, the checks and the idempotent insert cost next to the fastest way PostgreSQL
has to move rows, which knows no format but its own and no checks? On a scratch database (bench/scratch.py):

* ``--memories`` synthetic memories of one app over 100 users (texts in six scripts, random unit vectors under
  the configured embedder's id, so the import stores them and embeds nothing; one revision each);
* **export**: ``memory_app.services.transfer.get_export_lines`` written to a file, memories/s;
* **COPY TO**: ``COPY memories TO STDOUT`` and ``COPY memory_revisions TO STDOUT`` (text format) of the same
  rows to a file, rows/s;
* **import**: ``do_import_memories`` of the export into a fresh app (every memory inserted, with its
  revisions, the HNSW and GIN indexes maintained), memories/s; then the same file again (every memory skipped);
* **COPY FROM**: the COPY files into ``memories_copy`` / ``memory_revisions_copy``, made ``LIKE`` the tables
  ``INCLUDING ALL`` (the same indexes to maintain), rows/s.

Ratios are of the same run (a shared machine's load falls on both). The process's peak resident memory is
printed after each phase: it should not grow with ``--memories`` (streaming both ways).

    .venv/bin/python bench/memory_export.py [--memories 20000]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import migrated_database

DATABASE = "bench_memory_export"
SCRIPTS = [
    "remembers the blue kite number {i}",
    "我对第{i}种花生过敏",
    "毎朝{i}杯のコーヒーを飲みます",
    "저는 {i}번 버스를 탑니다",
    "Моя собака номер {i} любит парк",
    "La crème brûlée nº {i} à Noël",
]


def seed(count: int, embedder_id: str, dimensions: int) -> None:
    """``count`` memories of app ``bench`` and a revision each, written by SQL (not what is measured)."""
    from django.db import connection

    texts = "ARRAY[" + ", ".join(f"'{t}'" for t in SCRIPTS) + "]"
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO memories (id, app_name, user_id, text, author, kind, topic, importance, strength,
                access_count, source_session_id, source_session_ids, source_event_ids, metadata, extra_scope,
                valid_from, status, embedding, embedder, context, search_text, names, created_at, updated_at)
            SELECT gen_random_uuid(), 'bench', 'user-' || (i %% 100), t, 'user', 'fact', '', 0.5, 1.0, 0, 's' || i,
                ARRAY['s' || i], ARRAY['e' || i], jsonb_build_object('n', i), '{{}}'::jsonb, now(), 'active',
                (SELECT l2_normalize(array_agg(random() - 0.5)::vector) FROM generate_series(1, %s) WHERE i > 0),
                %s, '', t, ARRAY[]::varchar[], now() - i * interval '1 second', now()
            FROM generate_series(1, %s) i,
                LATERAL (SELECT replace(({texts})[1 + i %% 6], '{{i}}', i::text) AS t) text
            """,
            [dimensions, embedder_id, count],
        )
        cursor.execute(
            "INSERT INTO memory_revisions (memory_id, action, text_before, text_after, status_before, status_after,"
            " metadata_after, cause, labels, created_at)"
            " SELECT id, 'create', '', text, '', 'active', metadata, 'bench', '{}'::jsonb, created_at FROM memories"
        )
        cursor.execute("VACUUM ANALYZE memories")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def copy_to(path: Path) -> tuple[float, int]:
    from django.db import connection

    started = time.perf_counter()
    rows = 0
    with open(path, "wb") as out, connection.cursor() as cursor:
        for table in ("memories", "memory_revisions"):
            with cursor.cursor.copy(f"COPY {table} TO STDOUT") as copy:
                for data in copy:
                    out.write(data)
            out.write(b"\\.\n")
        cursor.execute("SELECT count(*) FROM memories")
        rows = cursor.fetchone()[0]
    return time.perf_counter() - started, rows


def copy_from(path: Path) -> float:
    from django.db import connection, transaction

    with connection.cursor() as cursor:
        for table in ("memories", "memory_revisions"):
            cursor.execute(f"DROP TABLE IF EXISTS {table}_copy")
            cursor.execute(f"CREATE TABLE {table}_copy (LIKE {table} INCLUDING ALL)")
    started = time.perf_counter()
    with open(path, "rb") as source, transaction.atomic(), connection.cursor() as cursor:
        for table in ("memories", "memory_revisions"):
            with cursor.cursor.copy(f"COPY {table}_copy FROM STDIN") as copy:
                for line in source:
                    if line == b"\\.\n":
                        break
                    copy.write(line)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=20_000)
    args = parser.parse_args()
    with migrated_database(DATABASE), tempfile.TemporaryDirectory() as folder:
        from cognizes.infra.embedders import get_embedder_id
        from memory_app.services.transfer import _column_dimensions, do_import_memories, export_to, get_export_lines

        seed(args.memories, get_embedder_id(), _column_dimensions())
        print(f"{args.memories:,} memories seeded; peak RSS {peak_mb():.0f} MB", flush=True)
        exported, copied = Path(folder) / "export.jsonl", Path(folder) / "copy.txt"

        started = time.perf_counter()
        with open(exported, "w", encoding="utf-8") as out:
            count = export_to(out, get_export_lines("bench"))
        export_s = time.perf_counter() - started
        print(f"export     {count / export_s:10,.0f} memories/s  {exported.stat().st_size / count:6.0f} B each")

        copy_to_s, rows = copy_to(copied)
        print(f"COPY TO    {rows / copy_to_s:10,.0f} rows/s      {copied.stat().st_size / rows:6.0f} B each")

        started = time.perf_counter()
        with open(exported, "rb") as source:
            report = do_import_memories(source, app_name="bench_copy")
        import_s = time.perf_counter() - started
        assert report.created == count and report.reembedded == 0, report
        print(f"import     {count / import_s:10,.0f} memories/s  peak RSS {peak_mb():.0f} MB")

        started = time.perf_counter()
        with open(exported, "rb") as source:
            again = do_import_memories(source, app_name="bench_copy")
        again_s = time.perf_counter() - started
        assert again.created == 0 and again.skipped == count, again
        print(f"again      {count / again_s:10,.0f} memories/s (all skipped)")

        copy_from_s = copy_from(copied)
        print(f"COPY FROM  {rows / copy_from_s:10,.0f} rows/s")
        print(
            f"ratios (same run): export/COPY TO {copy_to_s / export_s:.2f}, import/COPY FROM "
            f"{copy_from_s / import_s:.2f}, import again/COPY FROM {copy_from_s / again_s:.2f}"
        )


if __name__ == "__main__":
    main()
