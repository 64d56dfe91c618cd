"""Whose a document is (issue 41 H): ADK's memory-file names, and the files uploaded before documents had owners."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from knowledge_app import services
from knowledge_app.models import Document

pytestmark = pytest.mark.django_db

MEMORY_FILE = "adk-memory-v1.bW92ZXI.YWxpY2U.czE"
"""What ADK 2.13's ``_build_source_display_name("mover", "alice", "s1")`` gives."""


def test_adks_memory_file_names_say_their_user_and_no_other_name_does():
    from google.adk.memory.vertex_ai_rag_memory_service import _build_source_display_name

    assert _build_source_display_name("mover", "alice", "s1") == MEMORY_FILE
    assert services.get_memory_file_user(MEMORY_FILE) == "alice"
    assert services.get_memory_file_user(_build_source_display_name("a", "Алиса 🙂", "x")) == "Алиса 🙂"
    for name in (
        "handbook.md",
        "mover.alice.s1",
        "adk-memory-v1.bW92ZXI.YWxpY2U",
        "adk-memory-v1.a.!!!.b",
        "adk-memory-v1.bW92ZXI..czE",
        "adk-memory-v1.bW92ZXI.AA.czE",
    ):  # AA: a NUL
        assert services.get_memory_file_user(name) == "", name


def test_the_apps_key_uploading_a_users_memory_file_makes_it_that_users_and_a_users_key_keeps_its_own():
    corpus = services.do_create_corpus(app_name="mover", display_name="Memories")
    by_app = services.do_add_document(corpus, data=b'{"text": "hi"}', filename="f.txt", display_name=MEMORY_FILE)
    by_bob = services.do_add_document(
        corpus, data=b'{"text": "hi"}', filename="f.txt", display_name=MEMORY_FILE, user_id="bob"
    )
    shared = services.do_add_document(corpus, data=b'{"text": "hi"}', filename="f.txt", display_name="f.txt")
    assert (by_app.document.user_id, by_bob.document.user_id, shared.document.user_id) == ("alice", "bob", "")
    assert len({by_app.document.id, by_bob.document.id, shared.document.id}) == 3  # one document per owner
    seen = {
        user: set(services.documents("mover", corpus.id, user_id=user).values_list("id", flat=True))
        for user in ("alice", "bob", "carol", None)
    }
    assert seen == {
        "alice": {by_app.document.id, shared.document.id},
        "bob": {by_bob.document.id, shared.document.id},
        "carol": {shared.document.id},
        None: {by_app.document.id, by_bob.document.id, shared.document.id},
    }


def test_memory_files_stored_before_documents_had_owners_become_their_users():
    corpus = services.do_create_corpus(app_name="mover", display_name="Memories")
    old = services.do_add_document(corpus, data=b"old", filename="f.txt", display_name="f.txt").document
    Document.objects.filter(id=old.id).update(display_name=MEMORY_FILE)  # as a file stored before 0006 is
    other = services.do_add_document(corpus, data=b"other", filename="g.txt", display_name="mover.alice.s1").document
    importlib.import_module("knowledge_app.migrations.0007_memory_files_owned").forwards(apps, None)
    assert dict(Document.objects.values_list("id", "user_id")) == {old.id: "alice", other.id: ""}
