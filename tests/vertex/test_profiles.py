"""Structured profiles over Vertex AI's wire, driven by Google's own clients (issue 45 item 1).

An engine's ``structuredMemoryConfigs`` (PATCH, echoed camelCase) makes generation fill profiles;
ADK 2.13's ``retrieve_profiles`` and its ``load_profiles`` tool and agentplatform's ``retrieve_profiles``
read them for exactly one scope, ``memories:retrieve`` returns profile fields only when ``memoryTypes``
asks, and ADK's ``search_memory`` never does.
"""

from __future__ import annotations

import agentplatform
import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.runners import InMemoryRunner
from google.adk.tools.vertex_ai_load_profiles_tool import VertexAiLoadProfilesTool
from google.genai import types
from google.genai.errors import ClientError

from cognizes.access.services import do_create_api_key
from tests.fake_llm import ScriptedLlm
from tests.polling import eventually
from tests.vertex.conftest import APP
from tests.vertex.test_memory_bank import background_ingestions_succeed, recalled
from vertex_app.services import do_get_or_create_engine

pytestmark = pytest.mark.django_db(transaction=True)

ADA = {"app_name": APP, "user_id": "ada"}
SCHEMA = {  # as agentplatform sends it: keywords snake_case, types any case
    "type": "OBJECT",
    "properties": {
        "name": {"type": "string", "max_length": 40},
        "city": {"type": "STRING", "description": "Where the user lives"},
    },
    "property_ordering": ["name", "city"],
}
CONFIGS = [{"scopeKeys": ["user_id"], "schemaConfigs": [{"id": "user-profile", "schema": SCHEMA}]}]


def configure(server, configs, key: str | None = None) -> httpx.Response:
    return httpx.patch(
        f"{server.base_url}v1beta1/reasoningEngines/{server.engine_id}",
        params={"updateMask": "context_spec"},
        headers={"x-goog-api-key": key or server.key},
        json={"contextSpec": {"memoryBankConfig": {"structuredMemoryConfigs": configs}}},
        timeout=30,
    )


def said(text: str) -> Event:
    return Event(author="user", invocation_id="i", content=types.Content(role="user", parts=[types.Part(text=text)]))


@pytest.fixture
def bank(server):
    client = agentplatform.Client(api_key=server.key, http_options={"base_url": server.base_url})
    assert configure(server, CONFIGS).status_code == 200
    return client.memory_banks.memories, f"reasoningEngines/{server.engine_id}"


def test_the_config_is_echoed_camel_case_and_an_unusable_one_is_refused(server):
    assert configure(server, CONFIGS).status_code == 200
    engine = httpx.get(
        f"{server.base_url}v1beta1/reasoningEngines/{server.engine_id}", headers={"x-goog-api-key": server.key}
    ).json()

    (config,) = engine["contextSpec"]["memoryBankConfig"]["structuredMemoryConfigs"]
    assert config["scopeKeys"] == ["user_id"]
    (schema,) = config["schemaConfigs"]
    assert (schema["id"], schema["memoryType"]) == ("user-profile", "STRUCTURED_PROFILE")
    assert schema["schema"]["propertyOrdering"] == ["name", "city"]
    assert schema["schema"]["properties"]["name"] == {"type": "STRING", "maxLength": 40}
    sdk = agentplatform.Client(api_key=server.key, http_options={"base_url": server.base_url})
    bank = sdk.runtimes.get(name=f"reasoningEngines/{server.engine_id}").api_resource.context_spec.memory_bank_config
    (read,) = bank.structured_memory_configs[0].schema_configs
    assert (read.id, read.memory_schema.properties["name"].max_length) == ("user-profile", 40)
    bad_id = configure(server, [{"schemaConfigs": [{"id": "User Profile", "schema": SCHEMA}]}])
    bad_type = configure(
        server, [{"schemaConfigs": [{"id": "p", "schema": {"type": "OBJECT", "properties": {"x": {"type": "TEXT"}}}}]}]
    )
    assert bad_id.status_code == 400 and "User Profile" in bad_id.json()["error"]["message"]
    assert bad_type.status_code == 400 and "TEXT" in bad_type.json()["error"]["message"]
    assert configure(server, []).status_code == 200  # configs removed: none echoed
    engine = httpx.get(
        f"{server.base_url}v1beta1/reasoningEngines/{server.engine_id}", headers={"x-goog-api-key": server.key}
    ).json()
    assert "structuredMemoryConfigs" not in engine["contextSpec"]["memoryBankConfig"]


async def test_adk_fills_a_profile_from_sessions_reads_it_and_its_tool_loads_it(server, celery_worker):
    assert configure(server, CONFIGS).status_code == 200
    sessions, memory = server.sessions(), server.memory()
    session = await sessions.create_session(app_name=APP, user_id="ada")
    for text in ("My name is Ada.", "I live in Paris."):
        await sessions.append_event(session, said(text))
    await memory.add_session_to_memory(await sessions.get_session(app_name=APP, user_id="ada", session_id=session.id))
    await background_ingestions_succeed()

    async def profiles(user: str = "ada") -> list[dict]:
        return [p.profile for p in await memory.retrieve_profiles(app_name=APP, user_id=user)]

    assert await eventually(profiles) == [{"name": "Ada", "city": "Paris"}]
    await memory.add_events_to_memory(app_name=APP, user_id="ada", events=[said("I moved to Lyon.")])
    await background_ingestions_succeed()

    async def in_lyon() -> list[dict] | None:
        found = await profiles()
        return found if found and found[0].get("city") == "Lyon" else None

    assert await eventually(in_lyon) == [{"name": "Ada", "city": "Lyon"}]
    assert await profiles("bob") == []  # another user's scope has no profile
    recall = await recalled(memory, "where does Ada live? city", user="ada")
    assert recall and not [text for text in recall if text.startswith(("city:", "name:"))]

    runner = InMemoryRunner(
        LlmAgent(name="helper", model=ScriptedLlm(tool_name="load_profiles"), tools=[VertexAiLoadProfilesTool(memory)]),
        app_name=APP,
    )
    chat = await runner.session_service.create_session(app_name=APP, user_id="ada")
    message = types.Content(role="user", parts=[types.Part(text="who am I?")])
    events = [e async for e in runner.run_async(user_id="ada", session_id=chat.id, new_message=message)]
    loaded = [p.function_response.response for e in events for p in e.content.parts or [] if p.function_response]
    assert loaded == [{"profiles": [{"name": "Ada", "city": "Lyon"}]}]


def test_agentplatform_generates_profiles_revises_them_and_retrieves_them_by_type(server, bank, celery_worker):
    memories, engine = bank
    contents = {"events": [{"content": {"role": "user", "parts": [{"text": "我叫李雷。我住在上海。"}]}}]}

    first = memories.generate(name=engine, scope=ADA, direct_contents_source=contents)
    moved = memories.generate(
        name=engine,
        scope=ADA,
        direct_contents_source={"events": [{"content": {"role": "user", "parts": [{"text": "我搬到了北京。"}]}}]},
    )

    created = {
        g.memory.structured_content.data.get("city", g.memory.structured_content.data.get("name")): g.action.value
        for g in first.response.generated_memories
        if g.memory.memory_type and g.memory.memory_type.value == "STRUCTURED_PROFILE"
    }
    assert created == {"李雷": "CREATED", "上海": "CREATED"}
    (city,) = [g for g in moved.response.generated_memories if g.memory.structured_content]
    assert (city.action.value, city.memory.structured_content.data, city.memory.structured_content.schema_id) == (
        "UPDATED",
        {"city": "北京"},
        "user-profile",
    )
    revisions = list(memories.revisions.list(name=city.memory.name))
    assert [r.structured_data for r in revisions] == [{"city": "上海"}, {"city": "北京"}]
    profiles = memories.retrieve_profiles(name=engine, scope=ADA).profiles
    assert {k: (v.schema_id, v.profile) for k, v in profiles.items()} == {
        "user-profile": ("user-profile", {"name": "李雷", "city": "北京"})
    }
    assert memories.retrieve_profiles(name=engine, scope={**ADA, "agent": "x"}).profiles in ({}, None)

    plain = list(memories.retrieve(name=engine, scope=ADA))
    assert plain and all(r.memory.fact and not r.memory.structured_content for r in plain)
    typed = list(memories.retrieve(name=engine, scope=ADA, config={"memory_types": ["STRUCTURED_PROFILE"]}))
    assert sorted(r.memory.structured_content.data.popitem()[1] for r in typed) == ["北京", "李雷"]
    searched = list(
        memories.retrieve(
            name=engine,
            scope=ADA,
            similarity_search_params={"search_query": "city 北京", "top_k": 10},
            config={"memory_types": ["STRUCTURED_PROFILE", "NATURAL_LANGUAGE_COLLECTION"]},
        )
    )
    assert {"structured", "fact"} <= {"structured" if r.memory.structured_content else "fact" for r in searched}
    listed = list(memories.list(name=engine, config={"filter": 'memory_type="STRUCTURED_PROFILE"'}))
    assert len(listed) == 2 and all(m.memory_type.value == "STRUCTURED_PROFILE" for m in listed)


def test_another_apps_key_cannot_read_a_profile(server, bank):
    _, engine = bank
    do_get_or_create_engine(app_name="other_app")
    _, other_key = do_create_api_key(name="other", app_name="other_app")
    other = agentplatform.Client(api_key=other_key, http_options={"base_url": server.base_url})

    with pytest.raises(ClientError) as refused:
        other.memory_banks.memories.retrieve_profiles(name=engine, scope=ADA)

    assert refused.value.code == 404


def test_a_scope_without_natural_language_memories_still_fills_its_profile(server, celery_worker):
    """Vertex's disable_natural_language_memories is "for when you only want structured memories": profiles only."""
    bank = {
        "customization_configs": [{"scope_keys": ["user_id"], "disable_natural_language_memories": True}],
        "structuredMemoryConfigs": CONFIGS,
    }
    configured = httpx.patch(
        f"{server.base_url}v1beta1/reasoningEngines/{server.engine_id}",
        headers={"x-goog-api-key": server.key},
        json={"context_spec": {"memory_bank_config": bank}},  # as memory_banks.update sends it
        timeout=30,
    )
    assert configured.status_code == 200, configured.text
    memories = agentplatform.Client(api_key=server.key, http_options={"base_url": server.base_url})
    engine = f"reasoningEngines/{server.engine_id}"
    contents = {"events": [{"content": {"role": "user", "parts": [{"text": "Je m'appelle Zoé. J'habite à Lyon."}]}}]}

    made = memories.memory_banks.memories.generate(name=engine, scope=ADA, direct_contents_source=contents)

    kinds = [g.memory.memory_type.value if g.memory.memory_type else "fact" for g in made.response.generated_memories]
    assert kinds and set(kinds) == {"STRUCTURED_PROFILE"}
    profiles = memories.memory_banks.memories.retrieve_profiles(name=engine, scope=ADA).profiles
    assert profiles["user-profile"].profile == {"name": "Zoé", "city": "Lyon"}
    assert list(memories.memory_banks.memories.retrieve(name=engine, scope=ADA)) == []
