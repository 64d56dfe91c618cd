"""Google's ``agentplatform`` SDK against Cognizes, for the Memory Bank methods ADK does not call.

generate from each source, retrieve with filters, purge, rollback, revisions,
patch, get/list/delete, profiles — and scopes matched exactly, as Vertex does.
"""

from __future__ import annotations

import agentplatform
import pytest
from google.genai.errors import ClientError

from memory_app.models import Memory, MemoryRevision
from tests.vertex.conftest import APP

pytestmark = pytest.mark.django_db(transaction=True)

ADA = {"app_name": APP, "user_id": "ada"}


@pytest.fixture
def bank(server):
    """The SDK's memories module, and the engine's resource name."""
    client = agentplatform.Client(api_key=server.key, http_options={"base_url": server.base_url})
    return client.memory_banks.memories, f"reasoningEngines/{server.engine_id}"


def facts(memories) -> list[str]:
    return sorted(m.fact for m in memories)


def test_create_get_list_patch_and_delete(bank):
    memories, engine = bank

    created = memories.create(
        name=engine,
        fact="Ada likes green tea.",
        scope=ADA,
        config={
            "topics": [{"managed_memory_topic": "USER_PREFERENCES"}],
            "metadata": {"source": {"string_value": "chat"}, "score": {"double_value": 0.5}},
            "memory_id": "tea",
        },
    ).response
    assert created.fact == "Ada likes green tea." and created.scope == ADA
    assert created.topics[0].managed_memory_topic.value == "USER_PREFERENCES"
    assert created.metadata["source"].string_value == "chat" and created.metadata["score"].double_value == 0.5
    assert memories.get(name=created.name).fact == "Ada likes green tea."
    assert memories.get(name=f"{engine}/memories/tea").name == created.name  # a chosen id keeps naming it
    with pytest.raises(ClientError) as taken:
        memories.create(name=engine, fact="again", scope=ADA, config={"memory_id": "tea"})
    assert taken.value.code == 409

    memories._update(name=created.name, fact="Ada likes jasmine tea.", scope=ADA, config={"update_mask": "fact"})
    assert memories.get(name=created.name).fact == "Ada likes jasmine tea."
    assert facts(memories.list(name=engine, config={"filter": 'scope.user_id="ada"'})) == ["Ada likes jasmine tea."]
    assert list(memories.list(name=engine, config={"filter": 'scope.user_id="bob"'})) == []

    memories.delete(name=created.name)
    with pytest.raises(ClientError) as gone:
        memories.get(name=created.name)
    assert gone.value.code == 404


def test_generate_from_direct_memories_consolidates_unless_told_not_to(bank):
    memories, engine = bank

    first = memories.generate(
        name=engine,
        scope=ADA,
        direct_memories_source={
            "direct_memories": [{"fact": "Ada lives in Lisbon."}, {"fact": "Ada has a cat named Miso."}]
        },
    )
    again = memories.generate(
        name=engine, scope=ADA, direct_memories_source={"direct_memories": [{"fact": "Ada lives in Lisbon."}]}
    )
    separate = memories.generate(
        name=engine,
        scope=ADA,
        direct_memories_source={"direct_memories": [{"fact": "Ada lives in Lisbon."}]},
        config={"disable_consolidation": True},
    )

    assert [g.action.value for g in first.response.generated_memories] == ["CREATED", "CREATED"]
    (merged,) = again.response.generated_memories
    assert merged.action.value == "UPDATED" and merged.previous_revision.startswith(merged.memory.name + "/revisions/")
    assert [g.action.value for g in separate.response.generated_memories] == ["CREATED"]
    assert Memory.objects.filter(text="Ada lives in Lisbon.").count() == 2


def test_generate_honours_the_metadata_merge_strategy_and_allowed_topics(bank):
    memories, engine = bank
    tagged = {"source": {"string_value": "chat"}, "lang": {"string_value": "en"}}
    memories.generate(
        name=engine,
        scope=ADA,
        config={"metadata": tagged},
        direct_memories_source={"direct_memories": [{"fact": "Ada lives in Lisbon."}]},
    )

    merged = (
        memories.generate(
            name=engine,
            scope=ADA,
            direct_memories_source={"direct_memories": [{"fact": "Ada lives in Lisbon."}]},
            config={"metadata": {"source": {"string_value": "email"}}, "metadata_merge_strategy": "MERGE"},
        )
        .response.generated_memories[0]
        .memory
    )
    apart = memories.generate(
        name=engine,
        scope=ADA,
        direct_memories_source={"direct_memories": [{"fact": "Ada lives in Lisbon."}]},
        config={"metadata": {"source": {"string_value": "form"}}, "metadata_merge_strategy": "REQUIRE_EXACT_MATCH"},
    ).response.generated_memories
    only_preferences = memories.generate(
        name=engine,
        scope=ADA,
        config={"allowed_topics": [{"managed_memory_topic": "USER_PREFERENCES"}]},
        direct_memories_source={
            "direct_memories": [
                {"fact": "Ada prefers tea.", "topics": [{"managed_memory_topic": "USER_PREFERENCES"}]},
                {"fact": "Ada's meeting is at noon.", "topics": [{"managed_memory_topic": "KEY_CONVERSATION_DETAILS"}]},
            ]
        },
    ).response.generated_memories

    assert {k: v.string_value for k, v in merged.metadata.items()} == {"source": "email", "lang": "en"}
    assert [g.action.value for g in apart] == ["CREATED"]
    assert [g.memory.fact for g in only_preferences] == ["Ada prefers tea."]


def test_generate_from_contents_without_consolidation_adds_again(bank, celery_worker):
    memories, engine = bank
    said = {"events": [{"content": {"role": "user", "parts": [{"text": "I collect stamps."}]}}]}
    memories.generate(name=engine, scope=ADA, direct_contents_source=said)

    again = memories.generate(
        name=engine, scope=ADA, direct_contents_source=said, config={"disable_consolidation": True}
    )

    assert [g.action.value for g in again.response.generated_memories] == ["CREATED"]
    assert Memory.objects.filter(text="I collect stamps.").count() == 2


def test_generate_from_contents_waits_for_the_worker(bank, celery_worker):
    memories, engine = bank

    operation = memories.generate(
        name=engine,
        scope=ADA,
        direct_contents_source={
            "events": [{"content": {"role": "user", "parts": [{"text": "My favourite colour is teal."}]}}]
        },
    )

    assert operation.done
    (generated,) = operation.response.generated_memories
    assert (generated.action.value, generated.memory.fact) == ("CREATED", "My favourite colour is teal.")


def test_generate_from_a_vertex_session_uses_its_user(server, bank, celery_worker):
    memories, engine = bank
    client = agentplatform.Client(api_key=server.key, http_options={"base_url": server.base_url})
    session = client.sessions.create(name=engine, user_id="ada", config={"session_id": "s1"}).response
    client.sessions.events.append(
        name=session.name,
        author="user",
        invocation_id="i1",
        timestamp=session.update_time,
        config={"content": {"role": "user", "parts": [{"text": "I am a nurse."}]}},
    )

    operation = memories.generate(name=engine, vertex_session_source={"session": session.name})

    assert [g.memory.fact for g in operation.response.generated_memories] == ["I am a nurse."]
    assert operation.response.generated_memories[0].memory.scope == ADA


def test_retrieve_by_similarity_and_simply_with_filters(bank):
    memories, engine = bank
    for fact, source in (("Ada plays the cello.", "chat"), ("Ada plays chess.", "form"), ("Ada hates rain.", "chat")):
        memories.create(name=engine, fact=fact, scope=ADA, config={"metadata": {"source": {"string_value": source}}})

    similar = list(
        memories.retrieve(
            name=engine, scope=ADA, similarity_search_params={"search_query": "what instrument does Ada play?"}
        )
    )
    assert similar[0].memory.fact == "Ada plays the cello."
    assert all(0 <= r.distance <= 1 for r in similar) and similar[0].distance <= similar[-1].distance
    from_chat = list(
        memories.retrieve(
            name=engine,
            scope=ADA,
            similarity_search_params={"search_query": "what does Ada play?", "top_k": 5},
            config={"filter_groups": [{"filters": [{"key": "source", "value": {"string_value": "chat"}}]}]},
        )
    )
    assert facts(r.memory for r in from_chat) == ["Ada hates rain.", "Ada plays the cello."]
    simple = list(
        memories.retrieve(
            name=engine,
            scope=ADA,
            simple_retrieval_params={"page_size": 10},
            config={"filter": 'fact="Ada plays chess."'},
        )
    )
    assert [r.memory.fact for r in simple] == ["Ada plays chess."]


def test_scopes_match_exactly_never_by_prefix(bank):
    memories, engine = bank
    memories.create(name=engine, fact="Plain Ada fact.", scope=ADA)
    memories.create(name=engine, fact="Ada fact for the travel agent.", scope={**ADA, "agent": "travel"})

    def retrieved(scope):
        return facts(
            r.memory
            for r in memories.retrieve(
                name=engine, scope=scope, similarity_search_params={"search_query": "Ada fact", "top_k": 10}
            )
        )

    assert retrieved(ADA) == ["Plain Ada fact."]
    assert retrieved({"user_id": "ada", "agent": "travel"}) == ["Ada fact for the travel agent."]
    assert retrieved({"user_id": "ada", "agent": "billing"}) == []
    with pytest.raises(ClientError) as other_app:
        retrieved({"app_name": "another_app", "user_id": "ada"})
    assert other_app.value.code == 400


def test_purge_counts_first_and_deletes_only_when_forced(bank):
    memories, engine = bank
    for fact in ("Ada one.", "Ada two."):
        memories.create(name=engine, fact=fact, scope=ADA)
    memories.create(name=engine, fact="Bob one.", scope={"user_id": "bob"})

    dry = memories.purge(name=engine, filter='scope.user_id="ada"', config={"wait_for_completion": False})
    assert dry.response.purge_count == 2 and Memory.objects.count() == 3
    forced = memories.purge(
        name=engine, filter='scope.user_id="ada"', force=True, config={"wait_for_completion": False}
    )
    assert forced.response.purge_count == 2
    assert list(Memory.objects.values_list("text", flat=True)) == ["Bob one."]


def test_rollback_and_revisions(bank):
    memories, engine = bank
    created = memories.create(name=engine, fact="Ada is 30.", scope=ADA).response
    memories._update(name=created.name, fact="Ada is 31.", scope=ADA, config={"update_mask": "fact"})

    revisions = list(memories.revisions.list(name=created.name))
    assert [r.fact for r in revisions] == ["Ada is 30.", "Ada is 31."]
    first_id = revisions[0].name.rsplit("/", 1)[1]
    assert memories.revisions.get(name=revisions[0].name).fact == "Ada is 30."

    memories.rollback(name=created.name, target_revision_id=first_id)

    assert memories.get(name=created.name).fact == "Ada is 30."
    assert MemoryRevision.objects.filter(memory_id=created.name.rsplit("/", 1)[1]).count() == 3
    with pytest.raises(ClientError) as unknown:
        memories.rollback(name=created.name, target_revision_id="999999")
    assert unknown.value.code == 400


def test_revisions_carry_the_labels_and_ttl_of_their_request(bank):
    memories, engine = bank
    created = memories.create(name=engine, fact="Ada is 30.", scope=ADA, config={"revision_ttl": "3600s"}).response
    memories.generate(
        name=engine,
        scope=ADA,
        direct_memories_source={"direct_memories": [{"fact": "Ada is 30."}]},
        config={"revision_labels": {"source": "birthday"}},
    )

    revisions = list(memories.revisions.list(name=created.name))
    assert [r.labels for r in revisions] in ([{}, {"source": "birthday"}], [None, {"source": "birthday"}])
    assert revisions[0].expire_time is not None and revisions[1].expire_time is None
    labelled = list(memories.revisions.list(name=created.name, config={"filter": 'labels.source="birthday"'}))
    assert [r.name for r in labelled] == [revisions[1].name]


def test_retrieve_profiles_answers_an_empty_set(bank):
    memories, engine = bank
    assert memories.retrieve_profiles(name=engine, scope=ADA).profiles in ({}, None)
