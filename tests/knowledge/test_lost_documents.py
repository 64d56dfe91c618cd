"""A document whose worker was SIGKILLed mid-indexing is indexed by the next worker, beat or no beat, once.

The doomed worker stalls while embedding (a slow model), then dies without a word (the
container OOM kill): the document is left ``running`` under a lease nobody renews, its
task unacknowledged. The next worker's own recovery timer sends it again once the
lease has passed; it ends ``active`` with one clean set of chunks.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from cognizes.celery import app as celery_app
from knowledge_app.models import Chunk, Corpus, Document, DocumentStatus
from tests.knowledge.test_api import HANDBOOK
from tests.polling import wait_for
from tests.processes import ROOT, database_env

LEASE_SECONDS = 3

STALLING_WORKER = """
import os, pathlib, time
import django
django.setup()
from knowledge_app import ingestion

class Stalls:
    id = "test/stalls"

    def embed_documents(self, texts):
        pathlib.Path(os.environ["STARTED_FILE"]).touch()
        time.sleep(3600)

ingestion.get_embedder = Stalls
from cognizes.celery import app
app.worker_main(["worker", "--pool", "solo", "-n", "doomed@%h", "--without-mingle", "--without-gossip"])
"""


def _worker(command: list[str], log: Path, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env={
            **database_env(),
            "COGNIZES_KNOWLEDGE_LEASE_SECONDS": str(LEASE_SECONDS),
            "COGNIZES_JOB_RECOVERY_SECONDS": "2",
            **env,
        },
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def test_a_document_whose_worker_was_sigkilled_is_indexed_by_the_next_worker(transactional_db, tmp_path):
    from knowledge_app.services import do_add_document

    celery_app.control.purge()
    started = tmp_path / "started"
    doomed = _worker([sys.executable, "-c", STALLING_WORKER], tmp_path / "doomed.log", STARTED_FILE=str(started))
    corpus = Corpus.objects.create(app_name="shop", display_name="Handbook", chunk_size=40, chunk_overlap=5)
    try:
        document = do_add_document(corpus, data=HANDBOOK.encode(), filename="handbook.md").document
        wait_for(started.exists, 60, "the first worker starts embedding")
        assert Document.objects.get(pk=document.pk).status == DocumentStatus.RUNNING
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait(10)
    finally:
        if doomed.poll() is None:
            os.killpg(doomed.pid, signal.SIGKILL)

    second = _worker(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "cognizes",
            "worker",
            "--pool",
            "solo",
            "-n",
            "second@%h",
            "--without-mingle",
            "--without-gossip",
        ],
        tmp_path / "second.log",
    )
    try:
        took = wait_for(
            lambda: Document.objects.get(pk=document.pk).status == DocumentStatus.ACTIVE,
            60,
            "the document is indexed after the second worker starts",
        )
    finally:
        os.killpg(second.pid, signal.SIGTERM)
        second.wait(30)
    print(f"indexed {took:.1f} s after the second worker started (lease {LEASE_SECONDS} s)")
    indexed = Document.objects.get(pk=document.pk)
    assert indexed.attempts == 2 and indexed.lease_until is None and indexed.error == ""
    chunks = Chunk.objects.filter(document=indexed)
    assert chunks.count() == indexed.chunk_count > 0
    assert sorted(chunks.values_list("ordinal", flat=True)) == list(range(indexed.chunk_count))  # one set
    assert hashlib.sha256(HANDBOOK.encode()).hexdigest() == indexed.content_hash


def test_a_document_whose_workers_kept_vanishing_is_failed_with_the_reason_not_left_running(transactional_db):
    from datetime import timedelta

    from django.utils import timezone

    from knowledge_app.ingestion import MAX_ATTEMPTS, do_recover_documents

    corpus = Corpus.objects.create(app_name="shop", display_name="Handbook")
    data = HANDBOOK.encode()
    lost = Document.objects.create(
        corpus=corpus,
        app_name="shop",
        display_name="h.md",
        size_bytes=len(data),
        content_hash=hashlib.sha256(data).hexdigest(),
        content=data,
        status=DocumentStatus.RUNNING,
        attempts=MAX_ATTEMPTS,
        lease_until=timezone.now() - timedelta(seconds=1),
    )
    assert do_recover_documents() == []
    lost.refresh_from_db()
    assert lost.status == DocumentStatus.FAILED and "without finishing" in lost.error and lost.lease_until is None


def test_a_document_is_claimed_while_another_transaction_adds_to_its_corpus(transactional_db):
    """A worker's claim locks the document, not its corpus: an upload or another document's chunks going into the
    same corpus (each locks the corpus row FOR KEY SHARE, for its foreign key) must not make the claim skip the
    document, whose message would then be gone and the document left pending until recovery."""
    import psycopg
    from django.conf import settings

    from knowledge_app.ingestion import _claim
    from tests.processes import database_url

    corpus = Corpus.objects.create(app_name="shop", display_name="Handbook")
    data = HANDBOOK.encode()
    document = Document.objects.create(
        corpus=corpus,
        app_name="shop",
        display_name="h.md",
        size_bytes=len(data),
        content_hash=hashlib.sha256(data).hexdigest(),
        content=data,
    )
    with psycopg.connect(database_url(settings.DATABASES["default"])) as other:
        other.execute("SELECT 1 FROM knowledge_corpora WHERE id = %s FOR KEY SHARE", [corpus.id])
        claimed = _claim(document.id)
    assert claimed is not None and claimed.status == DocumentStatus.RUNNING and claimed.attempts == 1
