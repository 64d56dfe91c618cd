"""Issue 41 J1: a document that takes longer than its lease keeps its one worker, and workers are shared by apps.

Before: a 117-page PDF that embedded for longer than its 120 s lease was claimed by a second worker while the
first still worked, three times, then failed; and Celery ran documents in the order they were sent, so one app's
queue held every worker while another app's single document waited for it to drain.
"""

from __future__ import annotations

import hashlib
import threading
import time

import pytest
from django.db import connection, transaction
from django.test import override_settings

from cognizes.infra.embedders import get_embedder
from knowledge_app import ingestion, queue
from knowledge_app.models import Chunk, Corpus, Document, DocumentStatus
from knowledge_app.services import do_add_document
from tests.knowledge.test_api import HANDBOOK
from tests.polling import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

LEASE_SECONDS = 1.0
LONG = "\n\n".join(f"Rule {n} of the handbook: every employee keeps badge {n} safe." for n in range(150))


def _document(app_name: str, text: str, *, chunk_size: int = 8) -> Document:
    corpus = Corpus.objects.create(app_name=app_name, display_name="Handbook", chunk_size=chunk_size, chunk_overlap=0)
    data = text.encode()
    return Document.objects.create(
        corpus=corpus,
        app_name=app_name,
        display_name="h.md",
        source_uri="h.md",
        mime_type="text/markdown",
        size_bytes=len(data),
        content_hash=hashlib.sha256(data).hexdigest(),
        content=data,
    )


@override_settings(COGNIZES_KNOWLEDGE_LEASE_SECONDS=LEASE_SECONDS)
def test_a_document_embedding_for_several_leases_is_claimed_once_and_ends_active_with_every_chunk(monkeypatch):
    model = get_embedder()

    class Loaded:
        """The offline model on a loaded machine: each batch takes most of a lease."""

        id = "test/loaded"

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            time.sleep(0.8 * LEASE_SECONDS)
            return model.embed_documents(texts)

    monkeypatch.setattr(ingestion, "get_embedder", Loaded)
    document = _document("shop", LONG)
    outcome: list[str] = []

    def work() -> None:
        try:
            outcome.append(ingestion.do_ingest(document.id))
        finally:
            connection.close()

    worker = threading.Thread(target=work)
    started = time.monotonic()
    worker.start()
    wait_for(
        lambda: Document.objects.filter(id=document.id, status=DocumentStatus.RUNNING).exists(),
        30,
        "the worker claims the document",
    )
    others = []
    while worker.is_alive():  # a second worker, and the fair queue, try to take it all the while
        others += [ingestion._claim(document.id), queue.claim_next(max_attempts=ingestion.MAX_ATTEMPTS)]
        time.sleep(LEASE_SECONDS / 4)
    worker.join()
    took = time.monotonic() - started

    assert took > 3 * LEASE_SECONDS, f"the embedding took {took:.1f} s ({outcome}): not long enough to show anything"
    assert others and not any(others)  # nobody else got it
    document.refresh_from_db()
    assert outcome == [f"{document.chunk_count} chunks"]
    assert (document.status, document.attempts, document.error, document.lease_until) == (
        DocumentStatus.ACTIVE,
        1,
        "",
        None,
    )
    assert document.chunk_count > 4 * ingestion.EMBED_BATCH
    ordinals = list(Chunk.objects.filter(document=document).order_by("ordinal").values_list("ordinal", flat=True))
    assert ordinals == list(range(document.chunk_count))  # every chunk, once


@override_settings(COGNIZES_KNOWLEDGE_LEASE_SECONDS=LEASE_SECONDS)
def test_a_run_whose_claim_was_taken_over_writes_nothing(monkeypatch):
    """The claim is the attempt: a run that lost it (a worker frozen past its lease) leaves the document alone."""
    document = _document("shop", HANDBOOK, chunk_size=40)
    first = ingestion._claim(document.id)
    Document.objects.filter(id=document.id).update(lease_until=first.lease_until.replace(year=2000))
    second = ingestion._claim(document.id)  # the lease ran out: another worker takes it
    assert second.attempts == first.attempts + 1

    assert ingestion._index(first).startswith("lost its claim")
    assert not Chunk.objects.filter(document=document).exists()
    assert Document.objects.get(id=document.id).status == DocumentStatus.RUNNING  # the second's to finish
    assert ingestion._index(second).endswith("chunks")
    assert Document.objects.get(id=document.id).status == DocumentStatus.ACTIVE


def test_one_apps_queue_does_not_keep_another_apps_document_waiting(celery_worker):
    """alpha uploads five documents, then beta one: beta's is indexed second, not after alpha's queue drains."""
    alpha = Corpus.objects.create(app_name="alpha", display_name="Handbook", chunk_size=40, chunk_overlap=5)
    beta = Corpus.objects.create(app_name="beta", display_name="Handbook", chunk_size=40, chunk_overlap=5)
    with transaction.atomic():  # every message sent at once, alpha's first, as a burst of uploads would be
        queued = [
            do_add_document(alpha, data=f"{HANDBOOK}\n\nCopy {n}.".encode(), filename=f"a{n}.md").document
            for n in range(5)
        ]
        queued.append(do_add_document(beta, data=HANDBOOK.encode(), filename="b.md").document)

    wait_for(
        lambda: not Document.objects.exclude(status=DocumentStatus.ACTIVE).exists(), 300, "every document is indexed"
    )
    order = list(Document.objects.order_by("indexed_at").values_list("app_name", flat=True))
    assert order == ["alpha", "beta", "alpha", "alpha", "alpha", "alpha"]


def test_a_run_that_errs_lets_go_at_once_and_on_its_last_attempt_fails_saying_why(monkeypatch):
    class Broken:
        id = "test/broken"

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise RuntimeError("the model server answered 500")

    monkeypatch.setattr(ingestion, "get_embedder", Broken)
    document = _document("shop", HANDBOOK, chunk_size=40)
    for attempt in range(1, ingestion.MAX_ATTEMPTS + 1):
        with pytest.raises(RuntimeError):
            ingestion.do_ingest_next()  # what the task runs; its retry (or recovery) takes the document again
        document.refresh_from_db()
        assert document.attempts == attempt
    assert document.status == DocumentStatus.FAILED and document.lease_until is None
    assert document.error == "Indexing failed 3 times: the model server answered 500"
