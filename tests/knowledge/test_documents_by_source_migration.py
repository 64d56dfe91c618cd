"""Migration 0009_documents_by_source: documents imports added before are given their paths, so that the first
import after the upgrade replaces them in place instead of adding a second document beside each."""

from __future__ import annotations

import hashlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from knowledge_app import imports
from knowledge_app.models import Document, Import

pytestmark = pytest.mark.django_db(transaction=True)

APP = "shop"
BEFORE, AFTER = ("knowledge_app", "0008_indexing_turns_fair_share"), ("knowledge_app", "0009_documents_by_source")


def test_documents_imported_before_take_their_paths_and_the_next_import_replaces_them_in_place(settings, tmp_path):
    root = tmp_path / "imports"
    (root / APP / "policies" / "intl").mkdir(parents=True)
    (root / APP / "policies" / "intl" / "世界.txt").write_text("新的内容：会议室须提前三天预订。")
    (root / APP / "policies" / "guide.md").write_text("The guide, unchanged.")
    settings.COGNIZES_KNOWLEDGE_IMPORT_ROOT = str(root)
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    try:
        old = executor.loader.project_state([BEFORE]).apps
        OldCorpus, OldDocument, OldImport = (
            old.get_model("knowledge_app", name) for name in ("Corpus", "Document", "Import")
        )
        corpus = OldCorpus.objects.create(app_name=APP, display_name="Policies")
        record = OldImport.objects.create(corpus=corpus, app_name=APP, uris=["gs://policies"], status="added")

        def document(uri: str, content: bytes, *, imported: bool = True):
            made = OldDocument.objects.create(
                corpus=corpus,
                app_name=APP,
                display_name=uri.rsplit("/", 1)[-1],
                source_uri=uri,
                status="active",
                content=content,
                content_hash=hashlib.sha256(content).hexdigest(),
                size_bytes=len(content),
            )
            if imported:
                record.documents.add(made)
            return made

        stale = document("gs://policies/intl/世界.txt", "旧的内容".encode())  # imported, then changed and imported
        newest = document("gs://policies/intl/世界.txt", "较新的内容".encode())  # again: the bug's second document
        guide = document(f"file://{root}/{APP}/policies/guide.md", b"The guide, unchanged.")
        outside = document("file:///elsewhere/guide.md", b"Not under the root.")
        upload = document("gs://policies/uploaded.txt", b"An upload's name.", imported=False)

        executor = MigrationExecutor(connection)
        executor.migrate([AFTER])
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes("knowledge_app"))

    paths = dict(Document.objects.values_list("id", "source_path"))
    assert paths == {
        stale.id: "",
        newest.id: "policies/intl/世界.txt",
        guide.id: "policies/guide.md",
        outside.id: "",
        upload.id: "",
    }
    again = Import.objects.create(corpus_id=corpus.id, app_name=APP, uris=["gs://policies"])
    imports.do_run_import(again.id)
    again.refresh_from_db()
    assert (again.added_count, again.replaced_count, again.skipped_count) == (0, 1, 1)
    assert Document.objects.count() == 5
    assert bytes(Document.objects.get(id=newest.id).content).decode() == "新的内容：会议室须提前三天预订。"
