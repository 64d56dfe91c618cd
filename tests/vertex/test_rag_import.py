"""RAG Engine's ``ragFiles:import`` from the server's import root, through agentplatform's ``rag.import_files``.

A directory of files in several formats and scripts is imported as ``gs://BUCKET`` (the bucket a
directory in the app's folder under ``COGNIZES_KNOWLEDGE_IMPORT_ROOT``) by a real worker; the operation is polled
until every file is indexed, with honest counts; importing again skips what is unchanged, replaces the content of
what changed (the same RagFile) and adds what is new; nothing is deleted, as Vertex's import deletes nothing. What the
server cannot or must not read (another app's folder, outside the root, ``..``, links, Drive) is refused,
nothing stored; a link swapped in between listing and reading is not followed.

agentplatform's ``import_files`` first asks Google Cloud Storage whether each bucket belongs to
the client's project (``_gcs_utils.GcsUtils._verify_bucket_ownership``) and gives up when it
cannot tell: that call, outside the machine, is the one thing faked. Its poll interval (10 s)
is shortened so the tests stay fast.
"""

from __future__ import annotations

import functools
import json
import os
import time

import httpx
import pytest
from agentplatform._genai import _gcs_utils, _operations_utils
from google.genai.errors import ClientError

from knowledge_app import imports, services, source_documents
from knowledge_app.models import Document, DocumentStatus, Import, ImportStatus
from tests.knowledge.files import docx_bytes
from tests.knowledge.test_api import HANDBOOK
from tests.vertex.conftest import APP

pytestmark = pytest.mark.django_db(transaction=True)

CHINESE = "会议室预订：请在内部系统中提前一天预订会议室，每次最多使用四个小时。"
RUSSIAN = "Сотрудники могут работать из дома по пятницам, если руководитель согласен."
SECRET = "The outside secret is not to be imported."


class _BucketsOfTheProject:
    """Google Cloud Storage's answer to agentplatform's bucket-ownership check, which Cognizes cannot give."""

    def __init__(self, api_client) -> None:
        pass

    def _verify_bucket_ownership(self, *, bucket_name: str, expected_project: str) -> bool:
        return True


@pytest.fixture(autouse=True)
def _sdk(monkeypatch):
    monkeypatch.setattr(_gcs_utils, "GcsUtils", _BucketsOfTheProject)
    monkeypatch.setattr(
        _operations_utils,
        "await_operation",
        functools.partial(_operations_utils.await_operation, poll_interval=0.2, timeout_seconds=60),
    )


@pytest.fixture
def root(settings, tmp_path):
    """The import root, with the app's bucket ``handbooks`` of files in several formats and scripts, another app's
    bucket ``forecasts``, and a file outside the root."""
    root = tmp_path / "imports"
    bucket = root / APP / "handbooks"
    (root / "weather" / "forecasts").mkdir(parents=True)
    (root / "weather" / "forecasts" / "secret.txt").write_text(SECRET)
    (bucket / "policies" / "old").mkdir(parents=True)
    (bucket / ".git").mkdir()
    (bucket / "policies" / "handbook.md").write_text(HANDBOOK)
    (bucket / "policies" / "中文.txt").write_text(CHINESE)
    (bucket / "policies" / "правила.txt").write_text(RUSSIAN)
    (bucket / "policies" / "old" / "中文.txt").write_text(CHINESE)  # the same bytes at another path: its own file
    (bucket / "prices.csv").write_text("item,price\nbadge,10 euros\nlaptop,1200 euros\n")
    (bucket / "welcome.html").write_text("<html><body><h1>Welcome</h1><p>The canteen opens at noon.</p></body></html>")
    (bucket / "security.docx").write_bytes(docx_bytes((1, "Security"), "Visitors sign in at the front desk."))
    (bucket / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))  # no parser: fails on its document
    (bucket / "empty.txt").write_bytes(b"")  # cannot be stored: failed
    (bucket / ".DS_Store").write_bytes(b"hidden")
    (bucket / ".git" / "config").write_text("hidden too")
    outside = tmp_path / "outside.txt"
    outside.write_text(SECRET)
    os.symlink(outside, bucket / "policies" / "link.txt")  # a link out of the root: failed, not read
    os.symlink(bucket / "prices.csv", bucket / "prices-link.csv")  # a link within the bucket: not followed either
    settings.COGNIZES_KNOWLEDGE_IMPORT_ROOT = str(root)
    return root


def _state(rag_file) -> str:
    state = rag_file.file_status.state
    return str(getattr(state, "value", state))


def test_a_bucket_directory_is_imported_indexed_and_searchable_and_importing_again_skips_it(rag, root, celery_worker):
    corpus = rag.create_corpus(rag_corpus={"display_name": "Handbooks"})
    config = {
        "gcs_source": {"uris": ["gs://handbooks"]},
        "max_embedding_requests_per_min": 900,
        "rag_file_transformation_config": {
            "rag_file_chunking_config": {"fixed_length_chunking": {"chunk_size": 512, "chunk_overlap": 64}}
        },
    }

    started = time.monotonic()
    done = rag.import_files(name=corpus.name, import_config=config)

    print(f"imported and indexed in {time.monotonic() - started:.1f} s")
    assert (done.imported_rag_files_count, done.skipped_rag_files_count, done.failed_rag_files_count) == (7, 0, 4)
    files = {f.display_name: f for f in rag.list_files(name=corpus.name).rag_files}
    assert sorted(f.display_name for f in rag.list_files(name=corpus.name).rag_files) == sorted(
        [
            "handbook.md",
            "中文.txt",
            "中文.txt",
            "правила.txt",
            "prices.csv",
            "welcome.html",
            "security.docx",
            "logo.png",
        ]
    )
    assert {name: _state(f) for name, f in files.items() if _state(f) != "ACTIVE"} == {"logo.png": "ERROR"}
    assert "'.png' files" in Document.objects.get(display_name="logo.png").error  # the parser's, as for an upload
    record = Import.objects.get()
    assert (record.chunk_size, record.chunk_overlap) == (512, 64)
    assert sorted(record.failures) == [
        "gs://handbooks/empty.txt is empty (0 bytes): there is nothing to index.",
        "gs://handbooks/policies/link.txt: a link (links are not followed)",
        "gs://handbooks/prices-link.csv: a link (links are not followed)",
    ]
    assert not any(SECRET.encode() in bytes(d.content) for d in Document.objects.all())

    for query, sources in (
        ("会议室要提前多久预订", {"gs://handbooks/policies/中文.txt", "gs://handbooks/policies/old/中文.txt"}),
        ("работать из дома по пятницам", {"gs://handbooks/policies/правила.txt"}),
        ("Where do visitors sign in?", {"gs://handbooks/security.docx"}),
    ):
        found = rag.retrieve_contexts(
            vertex_rag_store={"rag_resources": [{"rag_corpus": corpus.name}]},
            query={"text": query, "similarity_top_k": 1},
        ).contexts.contexts
        assert len(found) == 1 and found[0].source_uri in sources, query

    again = rag.import_files(
        name=corpus.name,
        import_config={"gcs_source": {"uris": ["gs://handbooks/", f"file://{root}/{APP}/handbooks/policies"]}},
    )  # a file named twice is one file
    assert (again.imported_rag_files_count, again.skipped_rag_files_count, again.failed_rag_files_count) == (0, 8, 3)
    assert Document.objects.count() == 8


def test_an_import_is_an_operation_polled_at_its_name_and_only_the_apps_key_reads_it(rag, root, server, celery_worker):
    corpus = rag.create_corpus(rag_corpus={"display_name": "Handbooks"})
    headers = {"x-goog-api-key": server.key}
    started = httpx.post(
        f"{server.base_url}v1beta1/{corpus.name}/ragFiles:import",
        headers=headers,
        json={"importRagFilesConfig": {"gcsSource": {"uris": [f"file://{root}/{APP}/handbooks/policies/handbook.md"]}}},
    )
    assert started.status_code == 200, started.text
    name = started.json()["name"]
    assert name.startswith(corpus.name + "/operations/import-")
    deadline = time.monotonic() + 60
    while not (polled := httpx.get(f"{server.base_url}v1beta1/{name}", headers=headers).json())["done"]:
        assert time.monotonic() < deadline and polled["metadata"]["progressPercentage"] < 100
        time.sleep(0.2)
    assert polled["response"] == {
        "@type": "type.googleapis.com/google.cloud.aiplatform.v1beta1.ImportRagFilesResponse",
        "importedRagFilesCount": "1",
        "failedRagFilesCount": "0",
        "skippedRagFilesCount": "0",
    }
    metadata = polled["metadata"]
    assert metadata["@type"].endswith("v1beta1.ImportRagFilesOperationMetadata")
    assert metadata["progressPercentage"] == 100
    assert metadata["ragCorpusId"] == corpus.name.rsplit("/", 1)[-1]
    assert metadata["genericMetadata"]["createTime"] <= metadata["genericMetadata"]["updateTime"]
    [document] = Document.objects.all()
    assert document.status == DocumentStatus.ACTIVE and document.source_uri.endswith("/handbooks/policies/handbook.md")

    elsewhere = httpx.get(
        f"{server.base_url}v1beta1/{name}", headers={"x-goog-api-key": server.key_for(app_name="elsewhere")}
    )
    assert elsewhere.status_code == 404


def test_uris_outside_the_apps_folder_are_refused_and_nothing_is_stored(rag, root):
    corpus = rag.create_corpus(rag_corpus={"display_name": "Handbooks"})
    malformed = (
        "gs://handbooks/../../outside.txt",
        "gs://../outside.txt",
        "gs://handbooks/policies/link.txt",
        "/etc/hostname",
    )
    elsewhere = (
        "gs://forecasts/secret.txt",
        f"file://{root}/weather/forecasts/secret.txt",  # another app's
        f"file://{root.parent}/outside.txt",
        "file:///etc/hostname",
        "gs://weather/forecasts/secret.txt",
    )
    for uri in malformed + elsewhere:
        with pytest.raises(ClientError) as refused:  # with a URI that is taken: the import is refused as a whole
            rag.import_files(
                name=corpus.name, import_config={"gcs_source": {"uris": ["gs://handbooks/prices.csv", uri]}}
            )
        expected = (400, "INVALID_ARGUMENT") if uri in malformed else (404, "NOT_FOUND")
        assert (refused.value.code, refused.value.status) == expected, uri
        assert uri in refused.value.message, uri
        assert str(root) not in refused.value.message.replace(uri, ""), uri  # the root's place untold
    assert not Import.objects.exists() and not Document.objects.exists()


def test_another_apps_key_finds_none_of_this_apps_files_and_imports_its_own(server, root):
    """A bucket belongs to the app whose folder holds it: weather's key imports gs://forecasts, and this app's
    bucket, by either spelling, is as unknown to it as a bucket no one has (404, nothing read)."""
    weather = {"x-goog-api-key": server.key_for(app_name="weather")}
    created = httpx.post(f"{server.base_url}v1beta1/ragCorpora", headers=weather, json={"displayName": "Forecasts"})
    corpus = created.json()["response"]["name"]
    for uri in ("gs://handbooks/prices.csv", f"file://{root}/{APP}/handbooks/prices.csv", "gs://nowhere/x.txt"):
        refused = httpx.post(
            f"{server.base_url}v1beta1/{corpus}/ragFiles:import",
            headers=weather,
            json={"importRagFilesConfig": {"gcsSource": {"uris": [uri]}}},
        )
        assert refused.status_code == 404, (uri, refused.text)
        assert (
            refused.json()["error"]["message"] == f"{uri} does not exist in this app's import folder."
            or "only in the app's own folder" in refused.json()["error"]["message"]
        )
    assert not Import.objects.exists()
    taken = httpx.post(
        f"{server.base_url}v1beta1/{corpus}/ragFiles:import",
        headers=weather,
        json={"importRagFilesConfig": {"gcsSource": {"uris": ["gs://forecasts"]}}},
    )
    assert taken.status_code == 200, taken.text
    assert Import.objects.get().uris == ["gs://forecasts"]


def test_a_file_swapped_for_a_link_between_listing_and_reading_is_not_followed(root, tmp_path, monkeypatch):
    """Issue 41 C: the worker lists the bucket, then reads each file. Between the two, a listed file and a listed
    directory are replaced on disk by links to outside the root: neither is followed, the outside never read."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "中文.txt").write_text(SECRET + " (a directory swapped)")
    policies = root / APP / "handbooks" / "policies"
    corpus = services.do_create_corpus(app_name=APP, display_name="Handbooks")
    record = Import.objects.create(corpus=corpus, app_name=APP, uris=["gs://handbooks/policies"])
    real_batch, swapped = imports._add_batch, []

    def swap_then_add(*args, **kwargs):
        if not swapped:  # the files are listed; none read yet
            (policies / "handbook.md").unlink()
            os.symlink(tmp_path / "outside.txt", policies / "handbook.md")
            (policies / "old" / "中文.txt").unlink()
            (policies / "old").rmdir()
            os.symlink(elsewhere, policies / "old")
            swapped.append(True)
        return real_batch(*args, **kwargs)

    monkeypatch.setattr(imports, "_add_batch", swap_then_add)
    imports.do_run_import(record.id)

    assert swapped
    assert not any(SECRET.encode() in bytes(d.content) for d in Document.objects.all())
    record.refresh_from_db()
    assert sorted(record.failures) == [
        "gs://handbooks/policies/handbook.md: a link (links are not followed)",
        "gs://handbooks/policies/link.txt: a link (links are not followed)",
        "gs://handbooks/policies/old/中文.txt: a link (links are not followed)",
    ]
    assert sorted(Document.objects.values_list("display_name", flat=True)) == ["правила.txt", "中文.txt"]


def test_imports_are_refused_naming_the_setting_while_no_root_is_configured(rag, settings):
    settings.COGNIZES_KNOWLEDGE_IMPORT_ROOT = ""
    corpus = rag.create_corpus(rag_corpus={"display_name": "Handbooks"})
    with pytest.raises(ClientError) as refused:
        rag.import_files(name=corpus.name, import_config={"gcs_source": {"uris": ["gs://handbooks"]}})
    assert refused.value.status == "FAILED_PRECONDITION"
    assert "COGNIZES_KNOWLEDGE_IMPORT_ROOT" in refused.value.message
    assert not Import.objects.exists()


def test_a_google_drive_source_is_refused_saying_what_is_taken_instead(rag, root):
    corpus = rag.create_corpus(rag_corpus={"display_name": "Handbooks"})
    drive = {"google_drive_source": {"resource_ids": [{"resource_id": "1abc", "resource_type": "RESOURCE_TYPE_FILE"}]}}
    with pytest.raises(ClientError) as refused:
        rag.import_files(name=corpus.name, import_config=drive)
    assert refused.value.status == "FAILED_PRECONDITION"
    assert "Google Drive" in refused.value.message and "gs://BUCKET/path" in refused.value.message
    assert not Import.objects.exists()


def test_an_import_whose_worker_died_mid_way_runs_again_counting_each_file_once(root, monkeypatch, celery_worker):
    """Killed after its first batch, mid-way through the second: sent again once its lease ran out, each file
    counted once (the first batch's document as imported, not as already there)."""
    corpus = services.do_create_corpus(app_name=APP, display_name="Handbooks")
    record = Import.objects.create(corpus=corpus, app_name=APP, uris=["gs://handbooks/policies"])  # no message
    monkeypatch.setattr(imports, "BATCH_FILES", 2)
    real_add, calls = source_documents.do_put_file, []

    def dies_on_the_third_file(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # what a SIGKILL leaves: no except clause runs, the lease is not let go
        return real_add(*args, **kwargs)

    monkeypatch.setattr(source_documents, "do_put_file", dies_on_the_third_file)
    with pytest.raises(KeyboardInterrupt):
        imports.do_run_import(record.id)
    monkeypatch.setattr(source_documents, "do_put_file", real_add)
    killed = Import.objects.get(id=record.id)
    # handbook.md and link.txt were the first batch, committed; правила.txt went with the second
    assert killed.status == ImportStatus.RUNNING and killed.added_count == 1 and killed.documents.count() == 1

    Import.objects.filter(id=record.id).update(lease_until=killed.lease_until.replace(year=2000))  # it runs out
    assert imports.do_recover_imports() == [record.id]
    deadline = time.monotonic() + 60
    while not (progress := imports.get_progress(Import.objects.get(id=record.id))).done:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    recovered = Import.objects.get(id=record.id)
    assert (progress.imported, progress.skipped, progress.failed) == (4, 0, 1)  # handbook.md imported, not skipped
    assert recovered.attempts == 2 and recovered.added_count == 4 and Document.objects.count() == 4


@pytest.mark.parametrize(
    "uri",
    [
        "gs://handbooks/" + "x" * 600,
        "gs://handbooks/a\x00b",
        "file:///a%00b",
        "gs://handbooks/\ud800",
        "file:///%ED%A0%80",
        "gs://" + "a/" * 3000,
        "file://elsewhere/x",
        "file:///",
        "gs:///x",
        "gs://handbooks/prices.csv/x",
    ],
)
def test_hostile_uris_get_a_4xx_that_says_what_is_wrong_and_nothing_is_stored(server, root, uri):
    headers = {"x-goog-api-key": server.key, "Content-Type": "application/json"}
    created = httpx.post(f"{server.base_url}v1beta1/ragCorpora", headers=headers, json={"displayName": "H"})
    corpus = created.json()["response"]["name"]
    body = '{"importRagFilesConfig": {"gcsSource": {"uris": [' + json.dumps(uri) + "]}}}"  # a lone surrogate as sent
    refused = httpx.post(f"{server.base_url}v1beta1/{corpus}/ragFiles:import", headers=headers, content=body)
    assert refused.status_code in (400, 404), refused.text
    assert refused.json()["error"]["message"] and str(root) not in refused.json()["error"]["message"]
    assert not Import.objects.exists()


WORLD = (
    "会议室请提前一天预订。社員食堂は正午に開きます。회의실은 하루 전에 예약합니다. Парковка за складом. "
    "Le café est offert."
)
WORLD_CHANGED = (
    "会议室现在须提前三天预订。社員食堂は十一時半に開きます。회의실은 사흘 전에 예약합니다. Парковка на крыше. "
    "Le café est désormais payant."
)


def test_importing_a_changed_bucket_again_replaces_the_changed_ragfile_in_place_and_counts_as_vertex_does(
    rag, settings, tmp_path, celery_worker
):
    """One file changed, one deleted, one added, then ``import_files`` again: Vertex's counts (imported: the added
    and the changed; skipped: the unchanged), the changed file the same RagFile answering only its new text, and the
    deleted file's RagFile kept (Vertex's import deletes nothing; Cognizes' own import API can: ``delete_missing``)."""
    bucket = tmp_path / "imports" / APP / "notes"
    bucket.mkdir(parents=True)
    (bucket / "handbook.md").write_text(HANDBOOK)
    (bucket / "世界.txt").write_text(WORLD)
    (bucket / "правила.txt").write_text(RUSSIAN)
    settings.COGNIZES_KNOWLEDGE_IMPORT_ROOT = str(tmp_path / "imports")
    corpus = rag.create_corpus(rag_corpus={"display_name": "Notes"})
    first = rag.import_files(name=corpus.name, import_config={"gcs_source": {"uris": ["gs://notes"]}})
    assert (first.imported_rag_files_count, first.skipped_rag_files_count, first.failed_rag_files_count) == (3, 0, 0)
    before = {f.display_name: f.name for f in rag.list_files(name=corpus.name).rag_files}

    (bucket / "世界.txt").write_text(WORLD_CHANGED)
    (bucket / "правила.txt").unlink()
    (bucket / "travel.txt").write_text("Trains, not flights, for trips under 600 km.")
    again = rag.import_files(name=corpus.name, import_config={"gcs_source": {"uris": ["gs://notes/"]}})

    assert (again.imported_rag_files_count, again.skipped_rag_files_count, again.failed_rag_files_count) == (2, 1, 0)
    after = {f.display_name: f for f in rag.list_files(name=corpus.name).rag_files}
    assert sorted(after) == ["handbook.md", "travel.txt", "правила.txt", "世界.txt"]
    assert after["世界.txt"].name == before["世界.txt"] and _state(after["世界.txt"]) == "ACTIVE"
    for query, new, old in (
        ("会议室要提前几天预订", "提前三天", "提前一天"),
        ("Где парковка?", "на крыше", "за складом"),
        ("Le café est-il gratuit ?", "désormais payant", "offert"),
    ):
        texts = " ".join(
            context.text
            for context in rag.retrieve_contexts(
                vertex_rag_store={"rag_resources": [{"rag_corpus": corpus.name}]},
                query={"text": query, "similarity_top_k": 10},
            ).contexts.contexts
        )
        assert new in texts and old not in texts, query
