"""The Memory Bank surface over plain HTTP: keys, scopes and malformed bodies, nothing stored by a refusal."""

from __future__ import annotations

import json
from datetime import UTC

import httpx
import pytest

from memory_app.models import ConsolidationJob, Memory
from tests.vertex.test_sessions_http import client

pytestmark = pytest.mark.django_db(transaction=True)

ADA = {"user_id": "ada"}


@pytest.fixture
def http(server) -> httpx.Client:
    with client(server) as c:
        yield c


def remember(http: httpx.Client, fact: str, scope: dict = ADA) -> dict:
    response = http.post("memories", json={"fact": fact, "scope": scope})
    assert response.status_code == 200, response.text
    return response.json()["response"]


def test_a_read_only_key_retrieves_and_lists_but_cannot_change_anything(server, http):
    memory = remember(http, "Ada likes tea.")
    with client(server, server.key_for(read_only=True)) as reader:
        found = reader.post(
            "./memories:retrieve", json={"scope": ADA, "similaritySearchParams": {"searchQuery": "tea"}}
        )
        assert found.status_code == 200 and found.json()["retrievedMemories"][0]["memory"]["fact"] == "Ada likes tea."
        assert reader.get("memories").status_code == 200
        memory_path = memory["name"].split("/", 2)[2]
        for response in (
            reader.post("memories", json={"fact": "x", "scope": ADA}),
            reader.patch(memory_path, json={"fact": "y"}),
            reader.delete(memory_path),
            reader.post(
                "./memories:generate", json={"scope": ADA, "directMemoriesSource": {"directMemories": [{"fact": "z"}]}}
            ),
            reader.post(
                "./memories:ingestEvents",
                json={
                    "scope": ADA,
                    "directContentsSource": {"events": [{"content": {"role": "user", "parts": [{"text": "hi"}]}}]},
                },
            ),
            reader.post("./memories:purge", json={"filter": 'scope.user_id="ada"', "force": True}),
        ):
            assert response.status_code == 403, response.text
            assert response.json()["error"]["status"] == "PERMISSION_DENIED"
    assert list(Memory.objects.values_list("text", flat=True)) == ["Ada likes tea."]
    assert ConsolidationJob.objects.count() == 0


def test_a_key_of_one_user_reaches_only_that_users_memories(server, http):
    remember(http, "Ada likes tea.")
    bobs = remember(http, "Bob likes coffee.", {"user_id": "bob"})
    with client(server, server.key_for(user_id="ada")) as ada:
        assert [m["fact"] for m in ada.get("memories").json()["memories"]] == ["Ada likes tea."]
        assert ada.get(bobs["name"].split("/", 2)[2]).status_code == 404
        bob_query = {"scope": {"user_id": "bob"}, "similaritySearchParams": {"searchQuery": "coffee"}}
        assert ada.post("./memories:retrieve", json=bob_query).status_code == 404
        assert ada.post("./memories:purge", json={"force": True}).json()["response"]["purgeCount"] == "1"
    assert list(Memory.objects.values_list("text", flat=True)) == ["Bob likes coffee."]


def test_another_apps_key_gets_404(server, http):
    memory = remember(http, "Ada likes tea.")
    with client(server, server.key_for(app_name="other_app")) as other:
        assert other.get(memory["name"].split("/", 2)[2]).status_code == 404
        assert other.post("./memories:retrieve", json={"scope": ADA}).status_code == 404
        assert other.post("./memories:purge", json={"force": True}).status_code == 404
    assert Memory.objects.count() == 1


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("memories", {"fact": "x"}),
        ("memories", {"fact": "", "scope": ADA}),
        ("memories", {"fact": "x", "scope": {"user_id": 5}}),
        ("memories", {"fact": "x", "scope": {"user_id": "*"}}),
        ("memories", {"fact": "x", "scope": ADA, "metadata": {"k": "plain"}}),
        ("memories", {"fact": "x", "scope": ADA, "metadata": {"k": {"stringValue": 1}}}),
        ("memories", {"fact": "x", "scope": ADA, "topics": [{"managedMemoryTopic": "NOPE"}]}),
        ("memories", {"fact": "x", "scope": ADA, "ttl": "soon"}),
        ("memories", {"fact": "x", "scope": ADA, "surprise": 1}),
        ("./memories:generate", {"scope": ADA}),
        ("./memories:generate", {"scope": ADA, "directMemoriesSource": {"directMemories": [{"fact": "a"}] * 6}}),
        ("./memories:generate", {"scope": ADA, "directContentsSource": {"events": []}}),
        ("./memories:generate", {"vertexSessionSource": {"session": "reasoningEngines/1/sessions/s1"}}),
        (
            "./memories:generate",
            {
                "scope": ADA,
                "metadataMergeStrategy": "SOMETIMES",
                "directMemoriesSource": {"directMemories": [{"fact": "a"}]},
            },
        ),
        (
            "./memories:generate",
            {
                "scope": ADA,
                "allowedTopics": [{"managedMemoryTopic": "GOSSIP"}],
                "directMemoriesSource": {"directMemories": [{"fact": "a"}]},
            },
        ),
        ("./memories:ingestEvents", {"scope": ADA, "directContentsSource": {"events": [{"content": "text"}]}}),
        ("./memories:retrieve", {"scope": ADA, "similaritySearchParams": {"searchQuery": "x", "topK": "many"}}),
        ("./memories:retrieve", {"scope": ADA, "filter": 'fact ~ "x"'}),
        (
            "./memories:retrieve",
            {"scope": ADA, "filterGroups": [{"filters": [{"key": "k", "op": "LIKE", "value": {"stringValue": "v"}}]}]},
        ),
        ("./memories:purge", {"filter": 'color="red"', "force": True}),
    ],
)
def test_malformed_requests_get_400_and_change_nothing(http, path, body):
    remember(http, "Ada likes tea.")

    response = http.post(path, content=json.dumps(body), headers={"Content-Type": "application/json"})

    assert response.status_code == 400, response.text
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert list(Memory.objects.values_list("text", flat=True)) == ["Ada likes tea."]
    assert ConsolidationJob.objects.count() == 0


def test_retrieve_never_returns_a_next_page_token(http):
    """Google's client breaks paging :retrieve (its config refuses page_token), so there is none."""
    for i in range(5):
        remember(http, f"Ada fact number {i}.")
    for body in (
        {"similaritySearchParams": {"searchQuery": "Ada fact", "topK": 2}},
        {"simpleRetrievalParams": {"pageSize": 2}},
    ):
        answer = http.post("./memories:retrieve", json={"scope": ADA, **body}).json()
        assert len(answer["retrievedMemories"]) == 2 and "nextPageToken" not in answer


def test_list_pages_and_orders(http):
    for i in range(5):
        remember(http, f"Ada fact number {i}.")

    newest = http.get("memories", params={"pageSize": 2}).json()
    rest = http.get("memories", params={"pageSize": 2, "pageToken": newest["nextPageToken"]}).json()
    oldest = http.get("memories", params={"orderBy": "create_time", "pageSize": 1}).json()

    assert [m["fact"] for m in newest["memories"]] == ["Ada fact number 4.", "Ada fact number 3."]
    assert [m["fact"] for m in rest["memories"]] == ["Ada fact number 2.", "Ada fact number 1."]
    assert oldest["memories"][0]["fact"] == "Ada fact number 0."
    assert http.get("memories", params={"orderBy": "fact"}).status_code == 400


def test_an_unknown_operation_is_404(http):
    assert http.get("operations/generate-999999").status_code == 404
    assert http.get("operations/whatever").status_code == 404


def test_odd_ids_and_filter_keys_get_4xx_not_500(http):
    memory = remember(http, "Ada likes tea.")
    path = memory["name"].split("/", 2)[2]

    assert http.get(f"{path}/revisions/{'9' * 30}").status_code == 404
    assert http.post(f"{path}:rollback", json={"targetRevisionId": "9" * 30}).status_code == 400
    assert http.get("memories", params={"filter": 'scope.agent__in="x"'}).status_code == 400
    assert http.get(f"{path}/revisions", params={"filter": 'labels.a__contains="x"'}).status_code == 400
    assert http.get("operations/generate-" + "9" * 30).status_code == 404


def test_a_scope_key_filter_keeps_its_spelling(http):
    remember(http, "Ada's travel fact.", {"user_id": "ada", "agentName": "travel"})

    listed = http.get("memories", params={"filter": 'scope.agentName="travel"'}).json()["memories"]

    assert [m["fact"] for m in listed] == ["Ada's travel fact."]
    assert listed[0]["scope"] == {"app_name": "vertex_shop", "user_id": "ada", "agentName": "travel"}


def test_retrieve_with_a_valid_time_returns_what_held_then(http):
    from datetime import datetime

    from memory_app.services import Candidate, do_remember
    from tests.vertex.conftest import APP

    def remember_at(text: str, when: datetime, supersedes: tuple[str, ...] = ()) -> str:
        candidate = Candidate(text=text, event_time=when, supersedes=supersedes)
        return str(do_remember(app_name=APP, user_id="ada", candidates=[candidate], cause="test").created[0])

    lisbon = remember_at("Ada lives in Lisbon.", datetime(2023, 5, 10, tzinfo=UTC))
    remember_at("Ada lives in Berlin.", datetime(2024, 3, 1, tzinfo=UTC), supersedes=(lisbon,))

    def retrieve(**body) -> httpx.Response:
        query = {"scope": ADA, "similaritySearchParams": {"searchQuery": "where does Ada live"}, **body}
        return http.post("./memories:retrieve", json=query)

    def facts(**body) -> list[str]:
        response = retrieve(**body)
        assert response.status_code == 200, response.text
        return [found["memory"]["fact"] for found in response.json()["retrievedMemories"]]

    assert facts() == ["Ada lives in Berlin."]
    assert facts(filter='valid_time="2023-12-24T00:00:00Z"') == ["Ada lives in Lisbon."]
    assert facts(filter='valid_time="2024-06-01T00:00:00Z"') == ["Ada lives in Berlin."]
    assert retrieve(filter='valid_time>"2023-12-24T00:00:00Z"').status_code == 400
    assert retrieve(filter='valid_time="last May"').status_code == 400
