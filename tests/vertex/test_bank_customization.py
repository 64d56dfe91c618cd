"""Memory Bank customization by scope, through Google's agentplatform 2.6 and ADK (shared/memory-bank-more-wire.md §3).

An engine's ``customizationConfigs[]`` pick, per generation, the config whose scope keys the
request's scope all has (the most keys wins, else the default); the bank-wide fields
(``disableMemoryRevisions``, ``generationConfig``, ``similaritySearchConfig``, ``ttlConfig``) are
kept, echoed as sent, and honoured where Cognizes can.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import agentplatform
import httpx
import pytest
from asgiref.sync import sync_to_async
from google.adk.events.event import Event
from google.adk.memory import vertex_ai_memory_bank_service
from google.genai import types
from google.genai.errors import ClientError

from memory_app.models import Memory, MemoryBankConfig, MemoryRevision
from tests.model_server import model_servers
from tests.polling import eventually, wait_for
from tests.vertex.conftest import APP

pytestmark = pytest.mark.django_db(transaction=True)

ADA = {"app_name": APP, "user_id": "ada"}
GEMINI = "projects/proj/locations/us-central1/publishers/google/models/gemini-2.5-flash"
EMBEDDER = "projects/proj/locations/us-central1/publishers/google/models/text-embedding-005"
# As agentplatform sends it (§2.2): customization items snake_case, the rest camelCase.
CONTEXT_SPEC = {
    "memory_bank_config": {
        "customization_configs": [
            {
                "memory_topics": [
                    {"custom_memory_topic": {"label": "pets", "description": "the user's animals"}},
                ],
            },
            {
                "scope_keys": ["user_id"],
                "memory_topics": [{"managed_memory_topic": {"managed_topic_enum": "USER_PREFERENCES"}}],
                "generate_memories_examples": [
                    {
                        "conversation_source": {
                            "events": [{"content": {"role": "user", "parts": [{"text": "I like tea"}]}}]
                        },
                        "generated_memories": [
                            {"fact": "The user likes tea.", "topics": [{"managed_memory_topic": "USER_PREFERENCES"}]}
                        ],
                    }
                ],
                "enable_third_person_memories": True,
                "consolidation_config": {"revisions_per_candidate_count": 3},
            },
            {
                "scope_keys": ["user_id", "team"],
                "memory_topics": [{"custom_memory_topic": {"label": "jargon", "description": "the team's words"}}],
                "disable_natural_language_memories": True,
            },
        ],
        "generation_config": {
            "model": GEMINI,
            "generation_trigger_config": {"generation_rule": {"event_count": 2, "idle_duration": "3600s"}},
        },
        "similarity_search_config": {"embedding_model": EMBEDDER},
        "ttl_config": {
            "granular_ttl_config": {"create_ttl": "3600s", "generate_created_ttl": "86400s"},
            "memory_revision_default_ttl": "31536000s",
        },
    }
}


@pytest.fixture
def sdk(server):
    return agentplatform.Client(api_key=server.key, http_options={"base_url": server.base_url})


def patch_engine(server, body: dict, params: dict | None = None) -> httpx.Response:
    with httpx.Client(headers={"x-goog-api-key": server.key}) as http:
        return http.patch(f"{server.base_url}v1beta1/reasoningEngines/{server.engine_id}", params=params, json=body)


@pytest.fixture
def engine(server):
    """The engine, configured with the request ``runtimes.update(name, config={"context_spec": …})`` sends (§2.3).

    Sent by hand: the SDK then reads the engine from the finished operation, which the engines branch
    (issue 45 item 2) gives its ``response``.
    """
    body = {"contextSpec": {"memoryBankConfig": CONTEXT_SPEC["memory_bank_config"]}}
    assert patch_engine(server, body, {"updateMask": "context_spec"}).status_code == 200
    return f"reasoningEngines/{server.engine_id}"


def said(*texts: str) -> dict:
    return {"events": [{"content": {"role": "user", "parts": [{"text": text}]}} for text in texts]}


def generated(sdk, engine: str, scope: dict, *texts: str) -> list[str]:
    operation = sdk.memory_banks.memories.generate(name=engine, scope=scope, direct_contents_source=said(*texts))
    return [g.memory.fact for g in operation.response.generated_memories or []]


def test_the_config_reads_back_as_sent(sdk, engine):
    bank = sdk.runtimes.get(name=engine).api_resource.context_spec.memory_bank_config
    sent = agentplatform.types.ReasoningEngineContextSpecMemoryBankConfig.model_validate(
        CONTEXT_SPEC["memory_bank_config"]
    )

    assert bank.model_dump(exclude_none=True) == sent.model_dump(exclude_none=True)
    assert bank.customization_configs[1].consolidation_config.revisions_per_candidate_count == 3
    assert bank.generation_config.generation_trigger_config.generation_rule.idle_duration == "3600s"
    assert bank.similarity_search_config.embedding_model == EMBEDDER
    config = MemoryBankConfig.objects.get(app_name=APP)
    assert [c["scope_keys"] for c in config.scoped_customizations] == [["user_id"], ["user_id", "team"]]
    assert config.custom_topics == [{"label": "pets", "description": "the user's animals"}]


def test_memory_banks_update_replaces_the_customizations(server, sdk, engine):
    # What memory_banks.update(name, managed_semantic_memory_config=…) sends (§2.4): snake top level, no mask.
    config = {"customizationConfigs": [{"scope_keys": ["user_id"], "disable_natural_language_memories": True}]}
    assert patch_engine(server, {"context_spec": {"memory_bank_config": config}, "displayName": "bank"}).is_success

    bank = sdk.runtimes.get(name=engine).api_resource.context_spec.memory_bank_config
    assert [c.model_dump(exclude_none=True) for c in bank.customization_configs] == [
        {"scope_keys": ["user_id"], "disable_natural_language_memories": True}
    ]
    assert bank.ttl_config.granular_ttl_config.create_ttl == "3600s"  # not named by the update: kept


def test_the_scope_picks_the_config_and_the_default_applies_otherwise(sdk, engine, celery_worker):
    # {app_name, user_id} (ADK's scope) has user_id: third person, as its config says.
    assert generated(sdk, engine, ADA, "I like green tea.") == ["The user likes green tea."]
    assert generated(sdk, engine, {"user_id": "ada", "lang": "zh"}, "我喜欢喝绿茶。") == ["用户喜欢喝绿茶。"]
    # No user_id: the default config, first person as said.
    assert generated(sdk, engine, {"agent": "helper"}, "I like black tea.") == ["I like black tea."]
    # {user_id, team}: the most specific config, which turns natural-language memories off.
    assert generated(sdk, engine, {"user_id": "ada", "team": "ops"}, "I like oolong.") == []
    assert not Memory.objects.filter(extra_scope={"team": "ops"}).exists()
    # ttlConfig by memory type: a generated memory lives generate_created_ttl (a day), a created one create_ttl.
    tea = Memory.objects.get(text="The user likes green tea.")
    assert timedelta(hours=23) < tea.expires_at - tea.created_at <= timedelta(days=1)
    created = sdk.memory_banks.memories.create(name=engine, fact="Ada has a cat.", scope=ADA).response
    assert created.expire_time - created.create_time <= timedelta(hours=1)


def test_a_model_extracts_with_the_topics_of_the_scope(sdk, engine, celery_worker, settings, tmp_path):
    with model_servers(tmp_path) as start:
        model = start((200, json.dumps([{"text": "The user likes tea.", "kind": "preference"}])))
        settings.COGNIZES_MEMORY_MODEL, settings.COGNIZES_MEMORY_MODEL_API_BASE = "openai/local-model", model.url
        generated(sdk, engine, ADA, "I like tea.")
        generated(sdk, engine, {"agent": "helper"}, "My dog is Biscuit.")
        first, second = (
            json.dumps([m for m in request["messages"] if m["role"] in ("system", "developer")])
            for request in model.requests()
        )

    assert "preference: the user's preferences" in first and "pets" not in first
    assert "The user likes tea." in first and "third person" in first  # its example, its wording
    assert "pets: the user's animals" in second and "jargon" not in second and "first person" in second


async def test_add_session_to_memory_uses_the_config_of_adks_scope(server, engine, celery_worker):
    sessions, memory = server.sessions(), server.memory()
    session = await sessions.create_session(app_name=APP, user_id="ada")
    for text in ("I have a cat.", "I live in Porto."):  # two events: the bank's generation rule (eventCount 2)
        content = types.Content(role="user", parts=[types.Part(text=text)])
        await sessions.append_event(session, Event(author="user", invocation_id="i", content=content))

    await memory.add_session_to_memory(await sessions.get_session(app_name=APP, user_id="ada", session_id=session.id))
    await asyncio.gather(*vertex_ai_memory_bank_service._background_tasks)

    texts = await eventually(sync_to_async(lambda: sorted(Memory.objects.values_list("text", flat=True))))
    assert texts == [
        "The user has a cat.",
        "The user lives in Porto.",
    ]  # ADK's scope {app_name, user_id} has user_id: third person


def test_the_banks_trigger_is_the_ingest_default(sdk, engine, celery_worker):
    for text in ("I live in Porto.", "I work as a baker."):
        assert not Memory.objects.exists()
        sdk.memory_banks.ingest_events(name=engine, scope=ADA, stream_id="chat", direct_contents_source=said(text))

    wait_for(lambda: Memory.objects.count() == 2, 60, "the stream's two events generated from")
    texts = sorted(Memory.objects.values_list("text", flat=True))
    assert texts == ["The user lives in Porto.", "The user works as a baker."]  # at two events: the rule's count


def test_disabled_revisions_keep_none_and_rollback_says_why(server, sdk, engine, celery_worker):
    assert patch_engine(server, {"contextSpec": {"memoryBankConfig": {"disableMemoryRevisions": True}}}).is_success
    memories = sdk.memory_banks.memories
    created = memories.create(name=engine, fact="Ada is 30.", scope=ADA).response
    memories._update(name=created.name, fact="Ada is 31.", scope=ADA, config={"update_mask": "fact"})

    assert generated(sdk, engine, {"agent": "helper"}, "I like tea.") == ["I like tea."]  # still reported
    assert not MemoryRevision.objects.exists()
    assert list(memories.revisions.list(name=created.name)) == []
    with pytest.raises(ClientError) as refused:
        memories.rollback(name=created.name, target_revision_id="1")
    assert refused.value.code == 400 and "disableMemoryRevisions" in refused.value.message
    bank = sdk.runtimes.get(name=engine).api_resource.context_spec.memory_bank_config
    assert bank.disable_memory_revisions is True and len(bank.customization_configs) == 3


def test_a_request_may_turn_its_revisions_off(sdk, server):
    memories, engine = sdk.memory_banks.memories, f"reasoningEngines/{server.engine_id}"

    kept = memories.create(name=engine, fact="Ada is 30.", scope=ADA).response
    unrecorded = memories.create(
        name=engine, fact="Ada likes figs.", scope=ADA, config={"disable_memory_revisions": True}
    ).response

    assert len(list(memories.revisions.list(name=kept.name))) == 1
    assert list(memories.revisions.list(name=unrecorded.name)) == []


def _entries(n: int) -> list[dict]:
    return [{"scopeKeys": [f"k{i}"]} for i in range(n)]


@pytest.mark.parametrize(
    "bank",
    [
        {"customizationConfigs": [{}, {"scope_keys": []}]},
        {"customizationConfigs": [{"scope_keys": ["user_id"]}, {"scopeKeys": ["user_id"]}]},
        {"customizationConfigs": [{"scope_keys": ["a", "b"]}, {"scope_keys": ["b", "a"]}]},
        {"customizationConfigs": _entries(22)},
        {"customizationConfigs": [{"scope_keys": ["a", "b", "c", "d", "e", "f"]}]},
        {"customizationConfigs": [{"scope_keys": "user_id"}]},
        {"customizationConfigs": [{"scope_keys": ["x" * 200]}]},
        {"customizationConfigs": [{"memory_topics": [{"managed_memory_topic": {"managed_topic_enum": "GOSSIP"}}]}]},
        {"customizationConfigs": [{"memory_topics": [{"managed_memory_topic": {"managed_topic_enum": 99}}]}]},
        {"customizationConfigs": [{"memory_topics": [{}]}]},
        {"customizationConfigs": [{"memory_topics": [{"custom_memory_topic": {"description": "no label"}}]}]},
        {"customizationConfigs": [{"memory_topics": [{"custom_memory_topic": {"label": "x" * 65}}]}]},
        {"customizationConfigs": [{"enable_third_person_memories": "yes"}]},
        {"customizationConfigs": [{"consolidation_config": {"revisions_per_candidate_count": 999}}]},
        {"customizationConfigs": [{"consolidation_config": {"revisions_per_candidate_count": "many"}}]},
        {
            "customizationConfigs": [
                {
                    "generate_memories_examples": [
                        {"generated_memories": [{"topics": [{"managed_memory_topic": "NOPE"}]}]}
                    ]
                }
            ]
        },
        {
            "customizationConfigs": [
                {"generate_memories_examples": [{"conversation_source": {"events": [{"content": "hi"}]}}]}
            ]
        },
        {"customizationConfigs": [{"colour": "red"}]},
        {"customizationConfigs": [{"generate_memories_examples": [{"generated_memories": [{"fact": "x" * 10_001}]}]}]},
        {"customizationConfigs": {"scope_keys": ["user_id"]}},
        {"generationConfig": {"model": 42}},
        {"generationConfig": {"model": "m" * 600}},
        {"generationConfig": {"model": "gemini\x00"}},
        {"generationConfig": {"generation_trigger_config": {"generation_rule": {"event_count": -1}}}},
        {"generationConfig": {"generation_trigger_config": {"generation_rule": {"idle_duration": "soon"}}}},
        {"generationConfig": {"generation_trigger_config": {"generation_rule": {"overlap_event_count": 2}}}},
        {"similaritySearchConfig": {"embedding_model": ["a"]}},
        {"similaritySearchConfig": {"embeddingModel": "e", "embedding_model": "e"}},
        {"disableMemoryRevisions": 1},
    ],
)
def test_a_hostile_config_gets_400_and_changes_nothing(server, bank):
    response = patch_engine(server, {"contextSpec": {"memoryBankConfig": bank}})

    assert response.status_code == 400, response.text
    assert not MemoryBankConfig.objects.filter(app_name=APP).exists()
