"""Importing a folder again keeps the corpus true to it (issue 44, item 2), over the native API with a real worker.

A folder of three files (one in Chinese, Japanese, Korean, Russian and accented Latin) is imported; then one file
changes, one is deleted and one is added, and the folder is imported again. The unchanged file is skipped, the
changed one keeps its document (the same id) and, once indexed again, only its new text is found; the new one is
added; the deleted one's document stays until an import asks for it to go (``delete_missing``). While the changed
document is indexed again, searches still find its old text: never nothing.
"""

from __future__ import annotations

import time

import pytest

from knowledge_app import imports, ingestion, source_documents
from knowledge_app.models import Document, DocumentStatus, Import
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)

APP = "shop"
BASE = f"/api/v1/apps/{APP}/corpora/"
GUIDE = "# Onboarding guide\n\nNew employees collect their badge at the front desk on the first morning.\n"
WORLD = (
    "会议室预订：请提前一天在内部系统中预订会议室。\n"
    "社員食堂は正午に開きます。\n"
    "회의실은 하루 전에 예약해야 합니다.\n"
    "Парковка для сотрудников находится за складом.\n"
    "Le café est offert à tous les employés, même le week-end.\n"
)
WORLD_CHANGED = (
    "会议室预订：现在必须提前三天在新的预订平台上预订会议室。\n"
    "社員食堂は午前十一時半に開くようになりました。\n"
    "회의실은 이제 사흘 전에 새 플랫폼에서 예약해야 합니다.\n"
    "Парковка для сотрудников переехала на крышу нового корпуса.\n"
    "Le café est désormais payant, sauf le vendredi après-midi.\n"
)
OLD = "The old expense policy: receipts go by internal mail to the finance office in Zürich.\n"
NEW = "The new travel policy: book trains through the travel desk, never flights under 600 km.\n"


@pytest.fixture
def folder(settings, tmp_path):
    """The app's bucket ``policies`` in its import folder, with the three files."""
    root = tmp_path / "imports"
    bucket = root / APP / "policies"
    (bucket / "intl").mkdir(parents=True)
    (bucket / "guide.md").write_text(GUIDE)
    (bucket / "intl" / "世界.txt").write_text(WORLD)
    (bucket / "expenses.txt").write_text(OLD)
    settings.COGNIZES_KNOWLEDGE_IMPORT_ROOT = str(root)
    return bucket


def _corpus(api) -> int:
    answer = api.post(BASE, {"display_name": "Policies", "chunk_size": 64, "chunk_overlap": 8}, format="json")
    assert answer.status_code == 201, answer.json()
    return answer.json()["id"]


def _imported(api, corpus_id: int, **asked) -> dict:
    started = api.post(f"{BASE}{corpus_id}/imports/", {"uris": ["gs://policies"], **asked}, format="json")
    assert started.status_code == 202, started.json()
    deadline = time.monotonic() + 180
    while not (state := api.get(f"{BASE}{corpus_id}/imports/{started.json()['id']}/").json())["done"]:
        assert time.monotonic() < deadline, state
        time.sleep(0.2)
    return state


def _counts(state: dict) -> dict:
    return {name: state[name] for name in ("added", "replaced", "skipped", "deleted", "failed", "indexed")}


def _found(api, corpus_id: int, query: str) -> str:
    hits = api.post(f"{BASE}{corpus_id}/search/", {"query": query, "top_k": 20}, format="json").json()
    return "\n".join(hit["text"] for hit in hits)


def _documents(api, corpus_id: int) -> dict[str, dict]:
    listed = api.get(f"{BASE}{corpus_id}/documents/").json()["results"]
    return {document["source_uri"]: document for document in listed}


def test_importing_a_changed_folder_again_replaces_skips_adds_and_deletes_only_when_asked(folder, celery_worker):
    api = client_for(APP)
    corpus_id = _corpus(api)
    first = _imported(api, corpus_id)
    assert _counts(first) == {"added": 3, "replaced": 0, "skipped": 0, "deleted": 0, "failed": 0, "indexed": 3}
    before = _documents(api, corpus_id)
    world = before["gs://policies/intl/世界.txt"]

    (folder / "intl" / "世界.txt").write_text(WORLD_CHANGED)
    (folder / "expenses.txt").unlink()
    (folder / "travel.txt").write_text(NEW)
    again = _imported(api, corpus_id)

    assert _counts(again) == {"added": 1, "replaced": 1, "skipped": 1, "deleted": 0, "failed": 0, "indexed": 2}
    after = _documents(api, corpus_id)
    assert sorted(after) == [
        "gs://policies/expenses.txt",  # its file is gone, but this import did not ask for it to go
        "gs://policies/guide.md",
        "gs://policies/intl/世界.txt",
        "gs://policies/travel.txt",
    ]
    replaced = after["gs://policies/intl/世界.txt"]
    assert replaced["id"] == world["id"] and replaced["status"] == "active"
    assert replaced["content_hash"] != world["content_hash"]
    assert after["gs://policies/guide.md"] == before["gs://policies/guide.md"]  # skipped: not indexed again
    for query, new, old in (
        ("会议室要提前几天预订", "提前三天", "提前一天"),
        ("社員食堂は何時に開きますか", "午前十一時半", "正午に"),
        ("회의실 예약", "사흘 전에", "하루 전에"),
        ("где парковка для сотрудников", "на крышу", "за складом"),
        ("le café est-il gratuit", "désormais payant", "offert à tous"),
    ):
        found = _found(api, corpus_id, query)
        assert new in found and old not in found, query

    synced = _imported(api, corpus_id, delete_missing=True)

    assert _counts(synced) == {"added": 0, "replaced": 0, "skipped": 3, "deleted": 1, "failed": 0, "indexed": 0}
    assert sorted(_documents(api, corpus_id)) == [
        "gs://policies/guide.md",
        "gs://policies/intl/世界.txt",
        "gs://policies/travel.txt",
    ]
    assert "Zürich" not in _found(api, corpus_id, "where do expense receipts go")


def test_a_changed_file_keeps_answering_with_its_old_text_until_its_new_text_is_indexed(folder):
    """No worker: the import and the indexing are run by hand, one after the other, so the moment between them (the
    document's content replaced, its new chunks not yet made) can be searched."""
    api = client_for(APP)
    corpus_id = _corpus(api)
    _run_import(corpus_id)
    for document_id in Document.objects.values_list("id", flat=True):
        assert ingestion.do_ingest(document_id).endswith("chunks")
    [world] = Document.objects.filter(source_uri="gs://policies/intl/世界.txt")
    (folder / "intl" / "世界.txt").write_text(WORLD_CHANGED)

    record = _run_import(corpus_id)

    world.refresh_from_db()
    assert world.status == DocumentStatus.PENDING and bytes(world.content).decode() == WORLD_CHANGED
    during = _found(api, corpus_id, "Парковка для сотрудников")
    assert "за складом" in during and "на крышу" not in during  # the old chunks still answer
    assert not imports.get_progress(record).done

    assert ingestion.do_ingest(world.id).endswith("chunks")

    after = _found(api, corpus_id, "Парковка для сотрудников")
    assert "на крышу" in after and "за складом" not in after
    progress = imports.get_progress(Import.objects.get(id=record.id))
    assert progress.done and (progress.imported, progress.replaced, progress.skipped) == (1, 1, 2)
    assert Document.objects.filter(source_uri="gs://policies/intl/世界.txt").count() == 1


def _run_import(corpus_id: int) -> Import:
    """An import run as its worker would run it, here (no message sent)."""
    record = Import.objects.create(corpus_id=corpus_id, app_name=APP, uris=["gs://policies"])
    assert "files" in imports.do_run_import(record.id)
    return Import.objects.get(id=record.id)


def test_a_copy_of_a_file_at_another_path_is_a_document_of_its_own_and_uploads_keep_their_bytes_rule(
    folder, celery_worker
):
    """Two paths with the same bytes are two documents (deleting either file leaves the other's); an upload of
    bytes already in the corpus answers with the document there (200), as before."""
    api = client_for(APP)
    corpus_id = _corpus(api)
    (folder / "intl" / "copy-of-guide.md").write_text(GUIDE)
    first = _imported(api, corpus_id)
    assert _counts(first) == {"added": 4, "replaced": 0, "skipped": 0, "deleted": 0, "failed": 0, "indexed": 4}

    (folder / "guide.md").unlink()
    synced = _imported(api, corpus_id, delete_missing=True)
    assert _counts(synced) == {"added": 0, "replaced": 0, "skipped": 3, "deleted": 1, "failed": 0, "indexed": 0}
    assert "front desk" in _found(api, corpus_id, "where do I collect my badge")

    uploaded = api.generic(
        "POST", f"{BASE}{corpus_id}/documents/?filename=guide.md", GUIDE.encode(), content_type="text/markdown"
    )
    assert uploaded.status_code == 200 and uploaded.json()["source_uri"] == "gs://policies/intl/copy-of-guide.md"
    again = api.generic("POST", f"{BASE}{corpus_id}/documents/?filename=notes.md", b"Notes", content_type="text/plain")
    assert again.status_code == 201
    assert (
        api.generic(
            "POST", f"{BASE}{corpus_id}/documents/?filename=notes.md", b"Notes", content_type="text/plain"
        ).json()["id"]
        == again.json()["id"]
    )


def test_delete_missing_deletes_only_under_the_uris_imported_and_never_uploads(folder, celery_worker):
    api = client_for(APP)
    corpus_id = _corpus(api)
    _imported(api, corpus_id)
    uploaded = api.generic(
        "POST", f"{BASE}{corpus_id}/documents/?filename=expenses.txt", b"An upload.", content_type="text/plain"
    )
    assert uploaded.status_code == 201
    (folder / "expenses.txt").unlink()
    (folder / "intl" / "世界.txt").unlink()

    started = api.post(
        f"{BASE}{corpus_id}/imports/", {"uris": ["gs://policies/intl"], "delete_missing": True}, format="json"
    )
    assert started.status_code == 202, started.json()
    deadline = time.monotonic() + 60
    while not (state := api.get(f"{BASE}{corpus_id}/imports/{started.json()['id']}/").json())["done"]:
        assert time.monotonic() < deadline
        time.sleep(0.2)

    assert state["deleted"] == 1 and state["files_found"] == 0
    assert sorted(_documents(api, corpus_id)) == [
        "expenses.txt",
        "gs://policies/expenses.txt",
        "gs://policies/guide.md",
    ]


def test_only_the_apps_key_imports_and_another_app_sees_no_import(folder):
    api = client_for(APP)
    corpus_id = _corpus(api)
    users = client_for(APP, user_id="ana").post(
        f"{BASE}{corpus_id}/imports/", {"uris": ["gs://policies"]}, format="json"
    )
    assert users.status_code == 403
    started = api.post(f"{BASE}{corpus_id}/imports/", {"uris": ["gs://policies"]}, format="json")
    assert started.status_code == 202
    elsewhere = client_for("weather").get(f"/api/v1/apps/weather/corpora/{corpus_id}/imports/{started.json()['id']}/")
    assert elsewhere.status_code == 404
    for body in (
        {"uris": []},
        {"uris": "gs://policies"},
        {"uris": [None]},
        {"uris": ["gs://nowhere"]},
        {"uris": ["gs://policies/../../outside"]},
        {"uris": ["gs://weather/forecasts"]},
        {"uris": ["gs://policies"] * 1001},
        {"uris": ["gs://policies"], "delete_missing": "maybe"},
        {"uris": ["gs://policies"], "chunk_size": 0},
    ):
        refused = api.post(f"{BASE}{corpus_id}/imports/", body, format="json")
        assert refused.status_code in (400, 404), (body, refused.json())
    surrogate = api.generic(
        "POST", f"{BASE}{corpus_id}/imports/", '{"uris": ["gs://policies/\\ud800"]}', content_type="application/json"
    )
    assert surrogate.status_code == 400, surrogate.json()
    assert Import.objects.count() == 1


def test_an_import_killed_after_replacing_a_file_counts_it_replaced_when_run_again(folder, monkeypatch):
    """Its worker killed mid-way, the import is run again: the file its first run replaced is unchanged by then,
    and is counted replaced (as that run did), not skipped; each file counted once."""
    corpus_id = _corpus(client_for(APP))
    _run_import(corpus_id)
    (folder / "expenses.txt").write_text(NEW)  # listed first: the first batch
    record = Import.objects.create(corpus_id=corpus_id, app_name=APP, uris=["gs://policies"])
    monkeypatch.setattr(imports, "BATCH_FILES", 1)
    real_put, calls = source_documents.do_put_file, []

    def dies_on_the_second_file(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # what a SIGKILL leaves: the lease is not let go
        return real_put(*args, **kwargs)

    monkeypatch.setattr(source_documents, "do_put_file", dies_on_the_second_file)
    with pytest.raises(KeyboardInterrupt):
        imports.do_run_import(record.id)
    monkeypatch.setattr(source_documents, "do_put_file", real_put)
    killed = Import.objects.get(id=record.id)
    assert (killed.replaced_count, killed.skipped_count) == (1, 0)
    Import.objects.filter(id=record.id).update(lease_until=killed.lease_until.replace(year=2000))  # it runs out

    imports.do_run_import(record.id)

    again = Import.objects.get(id=record.id)
    assert (again.added_count, again.replaced_count, again.skipped_count, again.attempts) == (0, 1, 2, 2)
    assert Document.objects.count() == 3
