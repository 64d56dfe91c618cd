"""``cognizes export`` / ``cognizes import`` (issue 45 item 5): memories move between apps and servers as JSONL, with
their revisions, scopes and vectors, in every language; importing twice adds nothing; a file of another model is
embedded again; a hostile line is refused by number, and nothing of its batch is written."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from cognizes.infra.embedders import get_embedder
from memory_app.models import Memory, MemoryRevision, Status
from memory_app.search import search_memories
from memory_app.services import Candidate, do_edit_memory, do_forget, do_remember

pytestmark = pytest.mark.django_db

APP = "transfer_src"
COPY = "transfer_copy"
SAID = {
    "ada": [
        "I live in Paris.",
        "我对花生过敏。",
        "毎朝コーヒーを二杯飲みます。",
        "저는 서울에서 일합니다.",
        "Моя собака любит гулять в парке.",
        "J'adore la crème brûlée à Noël, señor Müller.",
    ],
    "bob": ["Bob is allergic to cats.", "Боб играет на гитаре."],
}
QUERIES = ["where does she live", "花生", "コーヒー", "서울", "собака", "crème brûlée", "allergy"]


@pytest.fixture
def memories() -> None:
    """Two users' memories in six scripts, with metadata, a scope key, an edit, a supersession and a forgetting."""
    for user, texts in SAID.items():
        do_remember(
            app_name=APP,
            user_id=user,
            candidates=[Candidate(text=t, author="user", metadata={"lang": t[:2]}) for t in texts],
            cause="test",
        )
    do_remember(
        app_name=APP,
        user_id="ada",
        candidates=[Candidate(text="Ada's team meets on Tuesdays.")],
        extra_scope={"team": "研究"},
        cause="test",
    )
    paris = Memory.objects.get(app_name=APP, text="I live in Paris.")
    do_remember(
        app_name=APP,
        user_id="ada",
        candidates=[Candidate(text="I moved to Lyon.", supersedes=(str(paris.id),))],
        cause="test",
    )
    dog = Memory.objects.get(app_name=APP, text__startswith="Моя собака")
    do_edit_memory(memory_id=dog.id, app_name=APP, user_id="ada", text="Моя собака Шарик любит парк.", cause="test")
    cats = Memory.objects.get(app_name=APP, text="Bob is allergic to cats.")
    do_forget(memory_id=cats.id, app_name=APP, user_id="bob", cause="test")


def _export(tmp_path: Path, *args: str, **options) -> Path:
    path = tmp_path / "memories.jsonl"
    call_command("export", *args, output=str(path), **options)
    return path


def _snapshot(app: str) -> list[tuple]:
    """What a person sees of an app's memories, in an order that does not depend on ids."""
    rows = []
    for memory in Memory.objects.filter(app_name=app).order_by("user_id", "text"):
        rows.append(
            (
                memory.user_id,
                memory.text,
                memory.author,
                memory.kind,
                memory.metadata,
                memory.extra_scope,
                memory.status,
                memory.superseded_by.text if memory.superseded_by else None,
                memory.valid_from,
                memory.valid_until,
                memory.created_at,
                memory.updated_at,
                memory.names,
                memory.search_text,
                memory.embedder,
                np.asarray(memory.embedding, dtype=np.float32).tobytes(),
                [
                    (r.action, r.text_before, r.text_after, r.status_after, r.metadata_after, r.cause, r.created_at)
                    for r in memory.revisions.order_by("id")
                ],
            )
        )
    return rows


def _results(app: str) -> list[list[tuple[str, float]]]:
    return [
        [
            (hit.text, round(hit.score, 9))
            for hit in search_memories(app_name=app, user_id=user, query=query, reinforce=False)
        ]
        for user in SAID
        for query in QUERIES
    ]


@pytest.mark.parametrize("batch", [500, 1], ids=["one batch", "a memory a batch"])
def test_an_export_imported_into_a_fresh_app_holds_the_same_memories_and_finds_the_same(memories, tmp_path, batch):
    path = _export(tmp_path, APP)

    call_command("import", str(path), app=COPY, batch=batch)

    assert Memory.objects.filter(app_name=COPY).count() == Memory.objects.filter(app_name=APP).count() == 10
    assert _snapshot(COPY) == _snapshot(APP)  # texts byte-exact in every script, vectors bit-exact, revisions
    assert _results(COPY) == _results(APP)
    copied = set(Memory.objects.filter(app_name=COPY).values_list("id", flat=True))
    assert not copied & set(Memory.objects.filter(app_name=APP).values_list("id", flat=True))
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert (header["format"], header["version"], header["app"], header["embedder"]) == (
        "cognizes.memories",
        1,
        APP,
        get_embedder().id,
    )
    assert "我对花生过敏。" in path.read_text(encoding="utf-8")  # readable, not \\u escapes


def test_importing_the_same_file_twice_adds_nothing(memories, tmp_path):
    path = _export(tmp_path, APP)

    call_command("import", str(path), app=COPY)
    first = _snapshot(COPY)
    call_command("import", str(path), app=COPY)
    call_command("import", str(path))  # into its own app: every id is there already

    assert _snapshot(COPY) == first
    assert Memory.objects.filter(app_name=APP).count() == Memory.objects.filter(app_name=COPY).count() == 10
    assert MemoryRevision.objects.filter(memory__app_name=COPY).count() == (
        MemoryRevision.objects.filter(memory__app_name=APP).count()
    )


def test_one_users_memories_are_exported_alone(memories, tmp_path):
    path = _export(tmp_path, APP, user="bob")

    call_command("import", str(path), app=COPY)

    assert sorted(Memory.objects.filter(app_name=COPY).values_list("user_id", "text", "status")) == [
        ("bob", "Bob is allergic to cats.", Status.FORGOTTEN),
        ("bob", "Боб играет на гитаре.", Status.ACTIVE),
    ]


def test_a_file_of_another_model_is_embedded_again_by_this_servers_model(memories, tmp_path):
    lines = _export(tmp_path, APP).read_text(encoding="utf-8").splitlines()
    header, records = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    header["embedder"], header["dimensions"] = "other/model@8", 8
    for record in records:  # another model's vectors, of another size: never stored
        record["embedder"] = "other/model@8"
        record["embedding"] = base64.b64encode(np.ones(8, dtype="<f4").tobytes()).decode()
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text("\n".join(json.dumps(v, ensure_ascii=False) for v in [header, *records]) + "\n", "utf-8")

    call_command("import", str(foreign), app=COPY)

    copied = list(Memory.objects.filter(app_name=COPY).order_by("text"))
    expected = get_embedder().embed_documents([m.text for m in copied])
    assert {m.embedder for m in copied} == {get_embedder().id}
    assert np.allclose(np.stack([m.embedding for m in copied]), expected, atol=1e-6)
    assert _results(COPY) == _results(APP)


def _refused(tmp_path: Path, lines: list[str], **options) -> str:
    path = tmp_path / "hostile.jsonl"
    path.write_bytes("".join(lines).encode("utf-8") if isinstance(lines[0], str) else b"".join(lines))
    with pytest.raises(CommandError) as refused:
        call_command("import", str(path), **options)
    return str(refused.value)


def _edited(line: str, **changes) -> str:
    return json.dumps({**json.loads(line), **changes}, ensure_ascii=False) + "\n"


BAD_LINES = {
    "malformed": lambda line: '{"type": "memory", "id": \n',
    "another app": lambda line: _edited(line, app="someone_else"),
    "huge": lambda line: _edited(line, text="x" * (9 * 1024 * 1024)),
    "wrong vector size": lambda line: _edited(line, embedding=base64.b64encode(np.ones(7, "<f4").tobytes()).decode()),
    "not a number": lambda line: line.replace('"importance":0.5', '"importance":NaN'),
    "NUL": lambda line: _edited(line, text="a\u0000b"),
    "profile": lambda line: '{"type": "profile", "scope": {"user_id": "ada"}}\n',
    "lone surrogate": lambda line: line.replace('"text":"', '"text":"\\ud800', 1),
    "deeply nested": lambda line: line.replace(
        '"metadata":{', '"metadata":{"x":' + "[" * 100_000 + "]" * 100_000 + ",", 1
    ),
}


@pytest.mark.parametrize("bad", list(BAD_LINES), ids=list(BAD_LINES))
def test_a_hostile_line_is_refused_by_number_keeping_earlier_batches_and_none_of_its_own(memories, tmp_path, bad):
    lines = [line + "\n" for line in _export(tmp_path, APP).read_text("utf-8").splitlines()]
    lines[5] = BAD_LINES[bad](lines[5])  # line 6: the third batch of two

    message = _refused(tmp_path, lines, app=COPY, batch=2)

    assert "line 6" in message
    assert Memory.objects.filter(app_name=COPY).count() == 4  # lines 2-5: two whole batches
    assert MemoryRevision.objects.filter(memory__app_name=COPY).count() >= 4


def test_a_file_of_an_unknown_format_version_is_refused_at_its_header(memories, tmp_path):
    lines = [line + "\n" for line in _export(tmp_path, APP).read_text("utf-8").splitlines()]
    lines[0] = _edited(lines[0], version=2)

    assert "line 1: format version 2" in _refused(tmp_path, lines, app=COPY)
    assert not Memory.objects.filter(app_name=COPY).exists()


def test_an_import_never_takes_an_id_of_another_apps_memory(memories, tmp_path):
    """A file written by hand naming another app's memory by its id is refused, and that memory is untouched."""
    theirs = Memory.objects.get(app_name=APP, text="Боб играет на гитаре.")
    lines = [line + "\n" for line in _export(tmp_path, APP, user="bob").read_text("utf-8").splitlines()]
    lines[0] = _edited(lines[0], app="intruder")
    lines[1:] = [_edited(line, app="intruder", text="overwritten", id=str(theirs.id)) for line in lines[1:]]

    message = _refused(tmp_path, lines)

    assert "line 2" in message and "another app or user" in message
    theirs.refresh_from_db()
    assert (theirs.app_name, theirs.text) == (APP, "Боб играет на гитаре.")
    assert not Memory.objects.filter(app_name="intruder").exists()
