"""Memories over HTTP: create, search, edit, revisions, rollback, ingestion jobs."""

from __future__ import annotations

import pytest

from memory_app.models import ConsolidationJob, Memory

pytestmark = pytest.mark.django_db

BASE = "/api/v1/apps/shop/users/ada"


def remember(api, text: str, **fields) -> str:
    response = api.post(f"{BASE}/memories/", {"text": text, **fields}, format="json")
    assert response.status_code == 201, response.content
    return (response.json()["created"] or response.json()["merged_into"])[0]


def test_create_search_and_list_memories(api):
    remember(api, "I am allergic to peanuts.", kind="personal_info", metadata={"source": "intake"})
    remember(api, "My favourite city is Kyoto.", kind="preference")

    hits = api.post(f"{BASE}/memories/search/", {"query": "food allergy", "limit": 5}, format="json").json()
    assert hits[0]["text"] == "I am allergic to peanuts." and hits[0]["score"] > 0
    assert hits[0]["metadata"] == {"source": "intake"}

    listed = api.get(f"{BASE}/memories/", {"kind": "preference"}).json()
    assert [m["text"] for m in listed["results"]] == ["My favourite city is Kyoto."]


def test_a_repeated_memory_merges_instead_of_duplicating(api):
    first = remember(api, "I live in Porto.")
    response = api.post(f"{BASE}/memories/", {"text": "i live in porto"}, format="json").json()
    assert response == {"created": [], "merged_into": [first]}


def test_edit_revisions_and_rollback(api):
    memory_id = remember(api, "I have two cats.")
    edited = api.patch(f"{BASE}/memories/{memory_id}/", {"text": "I have three cats."}, format="json")
    assert edited.json()["text"] == "I have three cats."

    revisions = api.get(f"{BASE}/memories/{memory_id}/revisions/").json()
    assert [r["action"] for r in revisions] == ["create", "update"]
    assert revisions[1]["cause"].startswith("api:api-key:")

    rolled = api.post(f"{BASE}/memories/{memory_id}/rollback/", {"revision_id": revisions[0]["id"]}, format="json")
    assert rolled.json()["text"] == "I have two cats."


def test_delete_memory(api):
    memory_id = remember(api, "Delete me.")
    assert api.delete(f"{BASE}/memories/{memory_id}/").status_code == 204
    assert api.get(f"{BASE}/memories/{memory_id}/").status_code == 404
    assert not Memory.objects.filter(id=memory_id).exists()


@pytest.mark.parametrize(
    "body",
    [{"text": ""}, {"text": "x", "kind": "gossip"}, {"text": "x", "importance": 2}, {"text": "x", "extra": 1}],
    ids=["empty", "bad-kind", "importance-range", "unknown-field"],
)
def test_invalid_memories_get_400(api, body):
    assert api.post(f"{BASE}/memories/", body, format="json").status_code == 400
    assert Memory.objects.count() == 0


def test_ingesting_a_session_returns_a_job_to_follow(api, django_capture_on_commit_callbacks):
    api.post(f"{BASE}/sessions/", {"id": "s1"}, format="json")
    body = {"event": {"author": "user", "content": {"parts": [{"text": "I work as a pilot."}]}}, "expected_version": 1}
    api.post(f"{BASE}/sessions/s1/events/", body, format="json")

    with django_capture_on_commit_callbacks(execute=False) as queued:
        job = api.post(f"{BASE}/sessions/s1/memory-jobs/").json()
    assert job["status"] == "queued" and len(queued) == 1  # handed to the worker on commit

    from memory_app.consolidation import run_job

    run_job(job["id"])
    followed = api.get(f"{BASE}/memory-jobs/{job['id']}/").json()
    assert (followed["status"], followed["memories_created"]) == ("done", 1)
    assert api.post(f"{BASE}/sessions/missing/memory-jobs/").status_code == 404
    assert ConsolidationJob.objects.count() == 1
