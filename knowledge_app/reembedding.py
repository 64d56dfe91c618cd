"""Re-embedding a corpus's chunks with the configured embedder, after ``COGNIZES_EMBEDDER`` changed (issue 44 item 6).

The chunks keep their text (``search_text``, what indexing embedded), so only the vectors are made again: no
document is parsed or chunked anew. Until the last chunk is done the corpus still names its old embedder, so
searches and uploads keep being refused (``services.check_embedder``) rather than meeting half old, half new
vectors; then it names the new one, in the same transaction as the last batch.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from cognizes.infra.embedders import DIMENSIONS, get_embedder
from knowledge_app.ingestion import vector_digest
from knowledge_app.models import Chunk, Corpus

BATCH = 64
"""Chunks embedded per call (and written per UPDATE)."""


class CannotStore(ValueError):
    """The embedder's vectors do not fit the chunks' column."""


def do_reembed_corpus(corpus: Corpus, *, progress: Callable[[int, int], None] | None = None) -> int:
    """Embed every chunk of ``corpus`` again with the configured embedder and record it; how many were embedded.

    A document indexed while this runs (by a worker still on the old settings) swaps in chunks with new ids:
    they are picked up by the next round, until a round finds none it has not done.
    """
    embedder = get_embedder()
    if embedder.dimensions != DIMENSIONS:
        raise CannotStore(
            f"{embedder.id} makes {embedder.dimensions}-dimension vectors; the chunks' column holds {DIMENSIONS}."
        )
    done: set[int] = set()
    while True:
        pending = list(
            Chunk.objects.filter(corpus_id=corpus.id).exclude(id__in=done).order_by("id").values_list("id", flat=True)
        )
        if not pending:
            break
        total = len(done) + len(pending)
        for start in range(0, len(pending), BATCH):
            chunks = list(Chunk.objects.filter(id__in=pending[start : start + BATCH]).only("id", "search_text"))
            for chunk, vector in zip(chunks, embedder.embed_documents([c.search_text for c in chunks]), strict=True):
                chunk.embedding, chunk.digest = vector, vector_digest(embedder.id, chunk.search_text)
            Chunk.objects.bulk_update(chunks, ["embedding", "digest"])
            done.update(pending[start : start + BATCH])
            if progress is not None:
                progress(len(done), total)
    with transaction.atomic():
        Corpus.objects.filter(id=corpus.id).update(embedder=embedder.id)
    return len(done)
