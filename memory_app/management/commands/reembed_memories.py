"""Re-embed memories made by another embedder (after COGNIZES_EMBEDDER changed), with a progress bar."""

from __future__ import annotations

import sys

from django.db import connection, transaction

from cognizes.infra.embedders import get_embedder
from cognizes.infra.quick_command import QuickCommand
from memory_app.models import Memory
from memory_app.services import do_reembed

BATCH = 64


class Command(QuickCommand):
    help = "Re-embed every memory whose embedding was made by another model (--all: every memory)."

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="re-embed every memory, not only stale ones")

    def handle(self, *args, all: bool = False, **options) -> None:
        embedder = get_embedder()
        if self._column_dimensions() != embedder.dimensions:
            self._resize_column(embedder.dimensions)
        pending = Memory.objects.all() if all else Memory.objects.exclude(embedder=embedder.id)
        total = pending.count()
        self.stdout.write(f"Re-embedding {total} memories with {embedder.id} ({embedder.dimensions} dims)")
        done = 0
        ids = list(pending.order_by("id").values_list("id", flat=True))
        for start in range(0, total, BATCH):
            done += do_reembed(Memory.objects.filter(id__in=ids[start : start + BATCH]), batch_size=BATCH)
            width = 40
            filled = width * done // max(total, 1)
            sys.stdout.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
            sys.stdout.flush()
        self.stdout.write(self.style.SUCCESS(f"\nDone: {done} memories re-embedded."))

    def _column_dimensions(self) -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
            )
            return cursor.fetchone()[0]

    def _resize_column(self, dimensions: int) -> None:
        """A new model with another dimension: old vectors cannot be kept, so they are cleared first."""
        self.stdout.write(f"Changing the embedding column to vector({dimensions}) and rebuilding its index")
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DROP INDEX IF EXISTS memories_embedding_hnsw")
            cursor.execute(f"ALTER TABLE memories ALTER COLUMN embedding TYPE vector({int(dimensions)}) USING NULL")
            cursor.execute("UPDATE memories SET embedder = ''")
            cursor.execute(
                "CREATE INDEX memories_embedding_hnsw ON memories USING hnsw (embedding vector_cosine_ops) "
                "WITH (m = 32, ef_construction = 128)"
            )
