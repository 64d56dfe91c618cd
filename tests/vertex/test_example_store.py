"""Vertex's Example Store on a real server (issue 47 item 3): stores made, listed, changed and deleted as the proto
routes have it; examples upserted, searched by similarity in five scripts (with the function-name filter), fetched
and removed through agentplatform 2.6's ``client.example_stores``; ADK's ``VertexAiExampleStore`` (cognizes.vertex's
subclass) giving few-shot examples from it; other apps' keys and hostile bodies refused."""

from __future__ import annotations

import httpx
import pytest
from google.adk.examples import example_util
from google.genai.errors import ClientError

from cognizes.vertex import VertexAiExampleStore

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.filterwarnings("ignore::UserWarning")]

PARENT = "projects/my-project/locations/us-central1"
# One example per language, each on another errand: a search in that language must find its own first.
EXAMPLES = [
    ("restaurant", "Réserve une table pour deux au restaurant ce soir", "book_table", {"people": 2}),
    ("weather", "北京明天会下雨吗？", "get_weather", {"city": "北京"}),
    ("train", "東京までの新幹線の切符を買いたい", "buy_ticket", {"to": "東京"}),
    ("password", "비밀번호를 재설정하고 싶어요", "reset_password", {}),
    ("parcel", "Сколько стоит доставка посылки в Москву?", "shipping_quote", {"city": "Москва"}),
]
QUERIES = [
    ("Je voudrais réserver un dîner pour deux personnes", "restaurant"),
    ("明天北京天气怎么样", "weather"),
    ("新幹線のチケットを予約したい", "train"),
    ("비밀번호를 잊어버렸어요", "password"),
    ("Какова стоимость доставки посылки?", "parcel"),
]


def _example(example_id: str, text: str, function: str, args: dict) -> dict:
    """An example as a caller writes it for the SDK: snake_case, the search key left to the last content."""
    return {
        "example_id": example_id,
        "stored_contents_example": {
            "contents_example": {
                "contents": [{"role": "user", "parts": [{"text": text}]}],
                "expected_contents": [
                    {"content": {"role": "model", "parts": [{"function_call": {"name": function, "args": args}}]}},
                    {"content": {"role": "model", "parts": [{"text": f"{function} done."}]}},
                ],
            },
            "search_key_generation_method": {"last_entry": {}},
        },
    }


def _create_store(base_url: str, key: str, parent: str = PARENT, **fields) -> dict:
    """A store made as GAPIC makes one (the proto's route; agentplatform's own create is broken)."""
    body = {"displayName": "few-shot", "exampleStoreConfig": {"vertexEmbeddingModel": "text-embedding-005"}, **fields}
    response = httpx.post(
        f"{base_url}v1beta1/{parent}/exampleStores", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30
    )
    assert response.status_code == 200, response.text
    operation = response.json()
    assert operation["done"] is True and operation["response"]["@type"].endswith("ExampleStore")
    return operation["response"]


def _client(server, key: str | None = None):
    return server.project_client(key).example_stores


def test_stores_are_created_listed_read_changed_and_deleted(server):
    headers = {"x-goog-api-key": server.key}
    first = _create_store(server.base_url, server.key, description="Für Schnellbeispiele")
    second = httpx.post(
        f"{server.base_url}v1beta1/exampleStores:create", json={"displayName": "二号"}, headers=headers, timeout=30
    ).json()["response"]
    assert first["name"].startswith(f"{PARENT}/exampleStores/") and second["name"].startswith("exampleStores/")

    got = _client(server).get(name=first["name"])
    assert (got.display_name, got.description, got.example_store_config.vertex_embedding_model) == (
        "few-shot",
        "Für Schnellbeispiele",
        "text-embedding-005",
    )
    listed = httpx.get(f"{server.base_url}v1beta1/exampleStores", params={"pageSize": 1}, headers=headers).json()
    rest = httpx.get(
        f"{server.base_url}v1beta1/exampleStores", params={"pageToken": listed["nextPageToken"]}, headers=headers
    ).json()
    assert [s["displayName"] for s in listed["exampleStores"] + rest["exampleStores"]] == ["few-shot", "二号"]

    patched = httpx.patch(
        f"{server.base_url}v1beta1/{second['name']}",
        params={"updateMask": "description"},
        json={"description": "Примеры", "displayName": "ignored"},
        headers=headers,
    ).json()
    assert (patched["displayName"], patched["description"]) == ("二号", "Примеры")

    deleted = _client(server)._delete(name=f"{PARENT}/{second['name']}")  # the SDK's own (private) delete
    assert deleted.done is True
    with pytest.raises(ClientError) as gone:
        _client(server).get(name=f"{PARENT}/{second['name']}")
    assert gone.value.code == 404


def test_examples_are_upserted_searched_in_five_scripts_fetched_and_removed(server):
    stores = _client(server)
    name = _create_store(server.base_url, server.key)["name"]

    upserted = stores.upsert_examples(name=name, examples=[_example(*each) for each in EXAMPLES])
    assert [r.example.example_id for r in upserted.results] == [each[0] for each in EXAMPLES]
    stored = upserted.results[1].example.stored_contents_example
    assert stored.search_key == "北京明天会下雨吗？"  # made from the last content, as lastEntry asks
    again = stores.upsert_examples(name=name, examples=[_example(*EXAMPLES[0]), {"stored_contents_example": {}}])
    assert [r.status.code if r.status else None for r in again.results] == [6, 3]  # exists without overwrite; invalid
    stores.upsert_examples(
        name=name,
        examples=[{**_example(*EXAMPLES[0]), "display_name": "réservation"}],
        config={"overwrite": True},
    )

    for query, expected in QUERIES:
        found = stores.search_examples(
            name=name, stored_contents_example_parameters={"search_key": query}, config={"top_k": 3}
        ).results
        assert found[0].example.example_id == expected, (
            query,
            [(r.example.example_id, r.similarity_score) for r in found],
        )
        assert found[0].similarity_score >= 0.5 and found[0].similarity_score >= found[-1].similarity_score
    filtered = stores.search_examples(
        name=name,
        stored_contents_example_parameters={
            "search_key": "明天北京天气怎么样",
            "function_names": {"array_operator": "CONTAINS_ANY", "values": ["book_table", "reset_password"]},
        },
        config={"top_k": 5},
    ).results
    assert sorted(r.example.example_id for r in filtered) == ["password", "restaurant"]

    fetched = stores.fetch_examples(name=name, config={"example_ids": ["train", "parcel"]})
    assert sorted(e.example_id for e in fetched.examples) == ["parcel", "train"]
    first_page = stores.fetch_examples(name=name, config={"page_size": 2})
    assert len(first_page.examples) == 2 and first_page.next_page_token
    by_function = stores.fetch_examples(
        name=name,
        config={
            "stored_contents_example_filter": {
                "function_names": {"array_operator": "CONTAINS_ALL", "values": ["get_weather"]}
            }
        },
    )
    assert [e.example_id for e in by_function.examples] == ["weather"]
    assert [
        e.display_name for e in stores.fetch_examples(name=name, config={"example_ids": ["restaurant"]}).examples
    ] == ["réservation"]

    removed = stores.remove_examples(name=name, config={"example_ids": ["weather"]})
    assert removed.example_ids == ["weather"]
    by_key = stores.remove_examples(
        name=name, config={"stored_contents_example_filter": {"search_keys": ["비밀번호를 재설정하고 싶어요"]}}
    )
    assert by_key.example_ids == ["password"]
    assert sorted(e.example_id for e in stores.fetch_examples(name=name).examples) == ["parcel", "restaurant", "train"]


def test_adks_example_store_gives_few_shot_examples_from_cognizes(server):
    name = _create_store(server.base_url, server.key)["name"]
    _client(server).upsert_examples(name=name, examples=[_example(*each) for each in EXAMPLES])

    provider = VertexAiExampleStore(name, base_url=server.base_url, api_key=server.key)
    examples = provider.get_examples("明天北京天气怎么样")
    instruction = example_util.build_example_si(provider, "明天北京天气怎么样", None)

    assert examples and examples[0].input.parts[0].text == "北京明天会下雨吗？"
    # ADK keeps examples of similarity 0.5 and up: a question about the weather is not shown how to book a table,
    # reset a password or price a parcel (e5's cosines of unrelated texts are about 0.8: scores are rescaled)
    assert {e.output[0].parts[0].function_call.name for e in examples} <= {"get_weather", "buy_ticket"}
    assert examples[0].output[0].parts[0].function_call.name == "get_weather"
    assert "get_weather(city='北京')" in instruction and "北京明天会下雨吗？" in instruction
    express = VertexAiExampleStore(
        "exampleStores/" + name.rsplit("/", 1)[1], base_url=server.base_url, api_key=server.key
    )
    assert express.get_examples("Какова стоимость доставки посылки?")[0].output[0].parts[0].function_call.name == (
        "shipping_quote"
    )


def test_other_apps_keys_see_no_store_and_a_users_key_only_reads(server):
    name = _create_store(server.base_url, server.key)["name"]
    _client(server).upsert_examples(name=name, examples=[_example(*EXAMPLES[1])])

    stranger = _client(server, server.key_for(app_name="another_app"))
    for call in (
        lambda: stranger.get(name=name),
        lambda: stranger.search_examples(name=name, stored_contents_example_parameters={"search_key": "雨"}),
        lambda: stranger.fetch_examples(name=name),
        lambda: stranger.upsert_examples(name=name, examples=[_example(*EXAMPLES[0])]),
        lambda: stranger.remove_examples(name=name, config={"example_ids": ["weather"]}),
    ):
        with pytest.raises(ClientError) as hidden:
            call()
        assert hidden.value.code == 404
    ada = _client(server, server.key_for(user_id="ada"))
    assert ada.search_examples(name=name, stored_contents_example_parameters={"search_key": "雨"}).results
    with pytest.raises(ClientError) as refused:
        ada.remove_examples(name=name, config={"example_ids": ["weather"]})
    assert refused.value.code == 403


def test_hostile_bodies_are_400_not_500(server):
    name = _create_store(server.base_url, server.key)["name"]
    headers = {"Authorization": f"Bearer {server.key}"}
    url = f"{server.base_url}v1beta1/{name}"
    cases = [
        (f"{server.base_url}v1beta1/{PARENT}/exampleStores", {"displayName": ""}),
        (f"{server.base_url}v1beta1/{PARENT}/exampleStores", {"displayName": "x" * 300}),
        (url + ":upsertExamples", {"examples": "nope"}),
        (url + ":upsertExamples", {"examples": [_example("a", "b", "c", {})] * 101}),
        (url + ":searchExamples", {"storedContentsExampleParameters": {}}),
        (url + ":searchExamples", {"storedContentsExampleParameters": {"searchKey": "x"}, "topK": 10**9}),
        (
            url + ":searchExamples",
            {"storedContentsExampleParameters": {"contentSearchKey": {"contents": [{"parts": 5}]}}},
        ),
        (
            url + ":searchExamples",
            {
                "storedContentsExampleParameters": {
                    "searchKey": "x",
                    "functionNames": {"values": [1], "arrayOperator": "X"},
                }
            },
        ),
        (url + ":fetchExamples", {"exampleIds": "x"}),
        (url + ":fetchExamples", {"pageToken": "-5"}),
        (url + ":removeExamples", {}),
        (f"{server.base_url}v1beta1/exampleStores/99999999999999999999999:searchExamples", {}),
    ]
    for target, body in cases:
        response = httpx.post(target, json=body, headers=headers, timeout=30)
        assert response.status_code in (400, 404), (target, body, response.text)
        assert response.json()["error"]["status"] in ("INVALID_ARGUMENT", "NOT_FOUND")
    upsert = httpx.post(
        url + ":upsertExamples",
        json={"examples": [{"storedContentsExample": {"contentsExample": {"contents": [{"role": "user"}]}}}]},
        headers=headers,
    ).json()
    assert upsert["results"][0]["status"]["code"] == 3  # no text to make a key of: that example refused, said why


def test_an_adk_agent_beside_the_database_gets_its_few_shots_from_cognizes_adk(server):
    """cognizes.adk's PostgresExampleStore: ExampleTool in a running agent, the store read in-process (ADK calls
    the provider synchronously inside its event loop)."""
    import asyncio

    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.adk.tools.example_tool import ExampleTool
    from google.genai import types

    from memory_app.example_provider import PostgresExampleStore
    from tests.fake_llm import OfflineLlm
    from tests.vertex.conftest import APP

    class ShowsItsInstruction(OfflineLlm):
        model: str = "shows-instruction"

        def reply(self, text, llm_request):
            return types.Part(text=str(llm_request.config.system_instruction))

    name = _create_store(server.base_url, server.key)["name"]
    _client(server).upsert_examples(name=name, examples=[_example(*each) for each in EXAMPLES])
    provider = PostgresExampleStore(name, app_name=APP)
    agent = LlmAgent(name="helper", model=ShowsItsInstruction(), tools=[ExampleTool(provider)])
    runner = InMemoryRunner(agent=agent, app_name=APP)

    async def turn() -> str:
        session = await runner.session_service.create_session(app_name=APP, user_id="ada")
        message = types.Content(role="user", parts=[types.Part(text="비밀번호를 잊어버렸어요")])
        texts = [
            part.text
            async for event in runner.run_async(user_id="ada", session_id=session.id, new_message=message)
            for part in (event.content.parts if event.content else [])
            if part.text
        ]
        return texts[-1]

    instruction = asyncio.run(turn())
    assert (
        "<EXAMPLES>" in instruction
        and "비밀번호를 재설정하고 싶어요" in instruction
        and "reset_password()" in instruction
    )
    with pytest.raises(ValueError):  # another app's store is not this app's
        PostgresExampleStore(name, app_name="another_app").get_examples("x")


def test_the_admin_shows_a_stores_examples_inert(server, admin_user):
    from django.test import Client

    name = _create_store(server.base_url, server.key)["name"]
    hostile = _example("x", "<img src=x onerror=alert(1)> 北京明天会下雨吗？", "get_weather", {})
    _client(server).upsert_examples(name=name, examples=[hostile])
    staff = Client()
    staff.force_login(admin_user)

    page = staff.get(f"/admin/memory_app/examplestore/{name.rsplit('/', 1)[1]}/change/").content.decode()

    assert "北京明天会下雨吗？" in page and "get_weather" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
