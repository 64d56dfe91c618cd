"""Issue 44 item 1: a long document is embedded once, in turns, and says how far it has got.

Before: a run stopped mid-document (a worker restarted, an outage) embedded every chunk again on the next run; a
117-page PDF held its worker for its whole run while a small upload of another corpus waited behind it; and the
API and admin showed only a percent.
"""

from __future__ import annotations

import hashlib
import threading
import time

import numpy as np
import pytest
from django.test import override_settings

from cognizes.infra.embedders import get_embedder
from knowledge_app import imports, ingestion
from knowledge_app.models import Chunk, Corpus, Document, DocumentStatus, EmbeddedChunk, Import, ImportStatus
from tests.polling import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

# A hundred sentences in every language, cut into more than three batches of chunks (chunk_size 8).
SENTENCES = [
    f"Regel {n}: der Schlüssel Nummer {n} bleibt im Büro." if n % 5 == 0 else
    f"规则{n}：第{n}号钥匙留在办公室。" if n % 5 == 1 else
    f"規則{n}：{n}番の鍵は事務所に置く。" if n % 5 == 2 else
    f"규칙 {n}: {n}번 열쇠는 사무실에 둔다." if n % 5 == 3 else
    f"Правило {n}: ключ номер {n} остаётся в офисе."
    for n in range(100)
]  # fmt: skip
LONG = "\n\n".join(SENTENCES)


class Counting:
    """The offline model, counting the texts it embeds; it fails (a worker's outage) on call ``fail_on``."""

    @property
    def id(self) -> str:
        return get_embedder().id  # the model's own vectors: what a later run with the real model may keep

    def __init__(self, *, fail_on: int = 0) -> None:
        self.texts: list[str] = []
        self.calls, self.fail_on = 0, fail_on

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("the worker lost its model mid-document")
        self.texts.extend(texts)
        return get_embedder().embed_documents(texts)


class Slow(Counting):
    """A model on a loaded machine: each batch takes a while (its vectors stand in: their values do not matter here)."""

    id = "test/slow"

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        time.sleep(0.25)
        self.texts.extend(texts)
        vectors = np.random.default_rng(len(self.texts)).standard_normal((len(texts), 384)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _document(corpus: Corpus, name: str, text: str) -> Document:
    data = text.encode()
    return Document.objects.create(
        corpus=corpus,
        app_name=corpus.app_name,
        display_name=name,
        source_uri=name,
        mime_type="text/plain",
        size_bytes=len(data),
        content_hash=hashlib.sha256(data).hexdigest(),
        content=data,
    )


def _corpus(name: str) -> Corpus:
    return Corpus.objects.create(app_name="shop", display_name=name, chunk_size=8, chunk_overlap=0)


def test_a_run_stopped_mid_document_keeps_what_it_embedded_and_the_next_run_embeds_only_the_rest(monkeypatch):
    document = _document(_corpus("Rules"), "rules.txt", LONG)
    stopped = Counting(fail_on=3)
    monkeypatch.setattr(ingestion, "get_embedder", lambda: stopped)
    with pytest.raises(RuntimeError, match="lost its model"):
        ingestion.do_ingest(document.id)
    # A first version's chunks are where search reads them as they are embedded: found while the rest is not.
    kept = Chunk.objects.filter(document=document).count()
    interrupted = Document.objects.get(id=document.id)
    assert kept == len(stopped.texts) == 64 == interrupted.chunks_embedded  # two batches written, then the outage
    total = interrupted.chunks_total
    assert total > 96 and interrupted.progress == 64 * 100 // total  # more than three batches, known when parsed
    assert interrupted.state == f"running: 64 of {total} chunks embedded"

    resumed = Counting()
    monkeypatch.setattr(ingestion, "get_embedder", lambda: resumed)
    assert ingestion.do_ingest(document.id) == f"{total} chunks"
    indexed = Document.objects.get(id=document.id)
    assert (indexed.status, indexed.chunk_count, indexed.chunks_embedded, indexed.progress) == (
        "active",
        total,
        total,
        100,
    )
    chunks = list(Chunk.objects.filter(document=document).order_by("ordinal"))
    assert [chunk.ordinal for chunk in chunks] == list(range(total))
    assert chunks[0].text.startswith("Regel 0:") and chunks[-1].text.endswith("остаётся в офисе.")
    searched = [chunk.search_text for chunk in chunks]
    assert (stopped.texts, resumed.texts) == (searched[:64], searched[64:])  # each chunk embedded once
    # Each kept vector is the one its own text gives: none was stored against another chunk's ordinal.
    fresh = get_embedder().embed_documents([chunks[n].search_text for n in (0, 63, 64, total - 1)])
    stored = np.asarray([chunks[n].embedding for n in (0, 63, 64, total - 1)])
    assert np.allclose(np.sum(fresh * stored, axis=1), 1, atol=1e-3)
    assert not EmbeddedChunk.objects.filter(document=document).exists()  # swapped in, nothing left behind


def test_kept_chunks_of_an_earlier_text_or_another_model_are_embedded_again(monkeypatch):
    document = _document(_corpus("Rules"), "rules.txt", LONG)
    monkeypatch.setattr(ingestion, "get_embedder", lambda: Counting(fail_on=3))
    with pytest.raises(RuntimeError):
        ingestion.do_ingest(document.id)
    changed = LONG.replace("Regel 0:", "Regel null:")  # its first chunk's text is another now
    Document.objects.filter(id=document.id).update(content=changed.encode())

    class Other(Counting):
        id = "another/model"

    other = Other()
    monkeypatch.setattr(ingestion, "get_embedder", lambda: other)
    assert ingestion.do_ingest(document.id) == f"{Document.objects.get(id=document.id).chunks_total} chunks"
    assert (
        len(other.texts) == Document.objects.get(id=document.id).chunk_count
    )  # another model's vectors are not this one's: every chunk again


@override_settings(COGNIZES_KNOWLEDGE_SLICE_SECONDS=0.3)
def test_a_long_document_lets_small_ones_of_other_corpora_go_first_and_still_embeds_each_chunk_once(monkeypatch):
    model = Slow()
    monkeypatch.setattr(ingestion, "get_embedder", lambda: model)
    long = _document(_corpus("Rules"), "rules.txt", "\n\n".join([LONG] * 5))  # 25 batches: seconds of work

    def one_worker() -> None:  # what one worker process does with the messages it is sent
        while ingestion.do_ingest_next() != ingestion.NOTHING_WAITING:
            pass

    worker = threading.Thread(target=one_worker)
    worker.start()
    try:
        wait_for(lambda: Document.objects.get(id=long.id).chunks_embedded > 0, 60, "the long document is begun")
        # More small uploads than a document has attempts: a pause is not an attempt that failed.
        for n in range(ingestion.MAX_ATTEMPTS + 1):
            small = _document(_corpus(f"Notes {n}"), f"note-{n}.txt", f"Note {n}: the printer is on floor {n}.")
            wait_for(lambda s=small: Document.objects.get(id=s.id).status == "active", 60, f"note {n} is indexed")
            assert Document.objects.get(id=long.id).status != DocumentStatus.ACTIVE, "the note waited for it"
    finally:
        worker.join(120)
    indexed = Document.objects.get(id=long.id)
    assert indexed.status == DocumentStatus.ACTIVE and indexed.chunk_count > 96, indexed.error
    notes = Document.objects.exclude(id=long.id)
    assert all(note.indexed_at < indexed.indexed_at for note in notes) and notes.count() == ingestion.MAX_ATTEMPTS + 1
    long_texts = [text for text in model.texts if not text.startswith("Note")]
    assert len(long_texts) == indexed.chunk_count  # paused four times, each chunk embedded once


def test_how_far_a_long_document_has_got_shows_in_the_api_the_admin_and_its_import_operation(admin_client):
    from tests.api.conftest import client_for
    from vertex_app.rag_import import import_operation

    corpus = _corpus("Rules")
    document = _document(corpus, "manual.pdf", LONG)
    Document.objects.filter(id=document.id).update(
        status=DocumentStatus.RUNNING, pages=117, chunks_total=610, chunks_embedded=230, progress=37
    )
    record = Import.objects.create(corpus=corpus, app_name="shop", status=ImportStatus.ADDED, files_found=2)
    record.documents.add(document)  # and a second file that was already there
    Import.objects.filter(id=record.id).update(skipped_count=1)

    shown = client_for("shop").get(f"/api/v1/apps/shop/corpora/{corpus.id}/documents/{document.id}/").json()
    assert (shown["pages"], shown["chunks_embedded"], shown["chunks_total"]) == (117, 230, 610)
    assert shown["state"] == "running: 117 pages parsed, 230 of 610 chunks embedded"
    page = admin_client.get("/admin/knowledge_app/document/").content.decode()
    assert "running: 117 pages parsed, 230 of 610 chunks embedded" in page
    # One of two files done, the other 230/610 embedded: 68 %, not the 50 % of files alone.
    progress = imports.get_progress(Import.objects.get(id=record.id))
    assert progress.percent == 68 and not progress.done
    operation = import_operation("projects/p/locations/l/ragCorpora/1/operations/import-1", record, progress)
    assert operation["metadata"]["progressPercentage"] == 68 and not operation["done"]


def test_a_late_run_of_a_paused_document_writes_nothing_though_the_next_claim_has_its_attempt_number():
    from knowledge_app import queue
    from knowledge_app.leases import DOCUMENTS

    document = _document(_corpus("Rules"), "rules.txt", LONG)
    late = queue.claim(document.id)
    assert late is not None and late.attempts == 1
    assert DOCUMENTS.finish(late, status=DocumentStatus.PENDING, attempts=0)  # paused: no attempt used up
    current = queue.claim(document.id)
    assert current is not None and current.attempts == late.attempts  # the same attempt number, another claim
    assert not DOCUMENTS.held(late).exists() and DOCUMENTS.held(current).exists()
    assert not DOCUMENTS.finish(late, status=DocumentStatus.FAILED, error="a late run's outcome")
    assert Document.objects.get(id=document.id).status == DocumentStatus.RUNNING


def test_a_new_version_of_a_document_embeds_only_the_chunks_it_changed(monkeypatch):
    from knowledge_app.services import do_reindex

    document = _document(_corpus("Rules"), "rules.txt", LONG)
    first = Counting()
    monkeypatch.setattr(ingestion, "get_embedder", lambda: first)
    total = int(ingestion.do_ingest(document.id).split()[0])
    assert len(first.texts) == total
    changed = LONG.replace("Правило 99: ключ номер 99", "Правило 99: ключ номер сто")  # the last paragraph only
    Document.objects.filter(id=document.id).update(content=changed.encode())
    do_reindex(Document.objects.get(id=document.id))

    class Watching(Counting):
        def embed_documents(self, texts: list[str]) -> np.ndarray:
            # What search reads while the new version is embedded: the old version, whole.
            self.seen = list(Chunk.objects.filter(document=document).values_list("text", flat=True))
            return super().embed_documents(texts)

    second = Watching()
    monkeypatch.setattr(ingestion, "get_embedder", lambda: second)
    assert ingestion.do_ingest(document.id) == f"{total} chunks"
    assert len(second.seen) == total and not any("сто" in text for text in second.seen)
    assert 1 <= len(second.texts) <= 2 and all("сто" in text for text in second.texts[-1:])
    chunks = Chunk.objects.filter(document=document).order_by("ordinal")
    assert "ключ номер сто" in chunks.last().text and chunks.count() == total
    fresh = get_embedder().embed_documents([chunks.first().search_text])[0]  # a copied vector is its own text's
    assert float(np.dot(fresh, chunks.first().embedding)) > 0.999


def test_a_first_version_that_fails_leaves_none_of_its_chunks_to_be_found(monkeypatch):
    document = _document(_corpus("Rules"), "rules.txt", LONG)
    for _ in range(ingestion.MAX_ATTEMPTS):  # each run embeds a batch, then fails
        monkeypatch.setattr(ingestion, "get_embedder", lambda: Counting(fail_on=2))
        with pytest.raises(RuntimeError):
            ingestion.do_ingest(document.id)
    failed = Document.objects.get(id=document.id)
    assert failed.status == DocumentStatus.FAILED and "lost its model" in failed.error
    assert not Chunk.objects.filter(document=document).exists()  # 64 were searchable until it failed
