"""``reasoningEngines/{id}``: the engine and its Memory Bank config, the same config the admin and native API edit."""

from __future__ import annotations

import time
from datetime import timedelta

import agentplatform
import httpx
import pytest
from google.genai.errors import ClientError

from memory_app.models import MemoryBankConfig
from tests.vertex.conftest import APP

pytestmark = pytest.mark.django_db(transaction=True)


class EngineClient(httpx.Client):
    """Requests to the engine resource itself (httpx would add a slash to a base URL)."""

    def __init__(self, server, key: str | None = None) -> None:
        super().__init__(headers={"x-goog-api-key": key or server.key})
        self.url = f"{server.base_url}v1beta1/reasoningEngines/{server.engine_id}"

    def patch(self, **kwargs):
        return super().patch(self.url, **kwargs)

    def get(self, **kwargs):
        return super().get(self.url, **kwargs)


BANK = {
    "customizationConfigs": [
        {
            "memoryTopics": [
                {"managedMemoryTopic": {"managedTopicEnum": "USER_PREFERENCES"}},
                {"customMemoryTopic": {"label": "pets", "description": "the user's animals"}},
            ],
            "generateMemoriesExamples": [
                {
                    "conversationSource": {
                        "events": [{"content": {"role": "user", "parts": [{"text": "My cat is Miso."}]}}]
                    },
                    "generatedMemories": [
                        {"fact": "The user has a cat called Miso.", "topics": [{"customMemoryTopicLabel": "pets"}]}
                    ],
                }
            ],
        }
    ],
    "ttlConfig": {
        "defaultTtl": "86400s",
        "memoryRevisionDefaultTtl": "604800s",
        "granularTtlConfig": {"createTtl": "3600s"},
    },
}


def test_patching_the_engine_sets_the_apps_memory_bank_config(server):
    with EngineClient(server) as http:
        patched = http.patch(
            params={"updateMask": "context_spec.memory_bank_config"}, json={"contextSpec": {"memoryBankConfig": BANK}}
        )
        engine = http.get().json()

    assert patched.status_code == 200 and patched.json()["done"] is True
    config = MemoryBankConfig.objects.get(app_name=APP)
    assert config.managed_topics == ["preference"]
    assert config.custom_topics == [{"label": "pets", "description": "the user's animals"}]
    assert config.examples == [
        {
            "conversation": [{"role": "user", "text": "My cat is Miso."}],
            "memories": [{"fact": "The user has a cat called Miso.", "topic": "pets"}],
        }
    ]
    assert (config.default_ttl, config.create_ttl) == (timedelta(days=1), timedelta(hours=1))
    assert config.revision_ttl == timedelta(days=7)
    assert engine["name"] == f"reasoningEngines/{server.engine_id}" and engine["displayName"] == APP
    assert engine["contextSpec"]["memoryBankConfig"] == BANK


def test_the_agentplatform_sdk_reads_the_engine(server):
    with EngineClient(server) as http:
        http.patch(json={"contextSpec": {"memoryBankConfig": BANK}})
    sdk = agentplatform.Client(api_key=server.key, http_options={"base_url": server.base_url})

    runtime = sdk.runtimes.get(name=f"reasoningEngines/{server.engine_id}")

    bank = runtime.api_resource.context_spec.memory_bank_config
    assert bank.ttl_config.default_ttl == "86400s"
    assert bank.customization_configs[0].memory_topics[1].custom_memory_topic.label == "pets"


def test_custom_topics_of_the_config_label_memories(server):
    with EngineClient(server) as http:
        http.patch(json={"contextSpec": {"memoryBankConfig": BANK}})
    memories = agentplatform.Client(
        api_key=server.key, http_options={"base_url": server.base_url}
    ).memory_banks.memories
    engine = f"reasoningEngines/{server.engine_id}"

    created = memories.create(
        name=engine,
        fact="Ada's dog is Biscuit.",
        scope={"user_id": "ada"},
        config={"topics": [{"custom_memory_topic_label": "pets"}]},
    ).response

    assert created.topics[0].custom_memory_topic_label == "pets"
    assert created.expire_time is not None  # createTtl of the config
    with pytest.raises(ClientError) as unknown:
        memories.create(
            name=engine,
            fact="x y",
            scope={"user_id": "ada"},
            config={"topics": [{"custom_memory_topic_label": "gossip"}]},
        )
    assert unknown.value.code == 400


@pytest.mark.parametrize(
    "bank",
    [
        {"customizationConfigs": [{"memoryTopics": [{"managedMemoryTopic": {"managedTopicEnum": "GOSSIP"}}]}]},
        {"customizationConfigs": [{"scopeKeys": ["user_id"]}, {"scopeKeys": ["user_id"]}]},
        {"customizationConfigs": [{}, {}]},
        {"ttlConfig": {"defaultTtl": "a while"}},
        {"disableMemoryRevisions": "yes"},
        {"surprise": 1},
    ],
)
def test_an_unusable_config_gets_400_and_changes_nothing(server, bank):
    with EngineClient(server) as http:
        response = http.patch(json={"contextSpec": {"memoryBankConfig": bank}})

    assert response.status_code == 400, response.text
    assert not MemoryBankConfig.objects.filter(app_name=APP).exists()


def test_keys_that_may_not_change_the_engine_are_refused(server):
    for key, status, words in (
        (
            server.key_for(read_only=True),
            403,
            f"read-only, and this call changes data: it needs a read-write key (`cognizes create_api_key {APP}`",
        ),
        (server.key_for(user_id="ada"), 403, f"needs a key of the whole app (`cognizes create_api_key {APP}`)"),
        (server.key_for(app_name="other_app"), 404, "Not found."),
    ):
        with EngineClient(server, key) as http:
            response = http.patch(json={"contextSpec": {"memoryBankConfig": BANK}})
        assert response.status_code == status, response.text
        assert words in response.json()["error"]["message"]  # the kind the path needs, and how (issue 43 item 2)
    assert not MemoryBankConfig.objects.filter(app_name=APP).exists()


def test_a_remembered_engine_deleted_by_any_writer_is_gone_at_once(server):
    """Each server process remembers which app an engine id names (vertex_app.services.engines); a delete that
    bypasses the application (plain SQL, as another host or the admin would) is obeyed all the same."""
    from django.db import connection

    with EngineClient(server) as client:
        assert client.get().status_code == 200
        assert client.get().status_code == 200  # answered from what the server remembers
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM vertex_engines WHERE engine_id = %s", [server.engine_id])
        deadline = time.monotonic() + 1.0
        while (status := client.get().status_code) != 404 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert status == 404
