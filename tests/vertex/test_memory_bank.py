"""ADK's own ``VertexAiMemoryBankService`` against Cognizes: ingestion on a real Celery worker, recall, scope.

The memory round trip of an agent written for Vertex AI: a session kept through
the Vertex session client, handed to memory (``ingestEvents``, fire-and-forget
in ADK), consolidated by a worker, recalled by ``search_memory`` (``retrieve``)
in express and project mode — and the same memories visible to Cognizes' own
service, since they are the same rows.
"""

from __future__ import annotations

import asyncio

import pytest
from google.adk.events.event import Event
from google.adk.memory import vertex_ai_memory_bank_service
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from cognizes.adk import PostgresMemoryService
from tests.polling import eventually
from tests.vertex.conftest import APP

pytestmark = pytest.mark.django_db(transaction=True)


def said(author: str, text: str) -> Event:
    return Event(
        author=author,
        invocation_id="inv",
        content=types.Content(role="user" if author == "user" else "model", parts=[types.Part(text=text)]),
    )


async def recalled(memory, query: str, user: str = "ada") -> list[str]:
    response = await memory.search_memory(app_name=APP, user_id=user, query=query)
    return [entry.content.parts[0].text for entry in response.memories]


async def background_ingestions_succeed() -> None:
    """ADK sends ingestEvents in a task of its own and only logs a failure: make it visible."""
    tasks = list(vertex_ai_memory_bank_service._background_tasks)
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert not [r for r in results if isinstance(r, BaseException)], results


async def test_a_session_is_ingested_by_a_worker_and_recalled_only_in_its_scope(vertex, celery_worker):
    sessions, memory = vertex.sessions(), vertex.memory()
    session = await sessions.create_session(app_name=APP, user_id="ada")
    for event in (said("user", "My dog is called Biscuit."), said("user", "I prefer Fahrenheit for temperatures.")):
        await sessions.append_event(session, event)
    session = await sessions.get_session(app_name=APP, user_id="ada", session_id=session.id)

    await memory.add_session_to_memory(session)
    await background_ingestions_succeed()

    texts = await eventually(lambda: recalled(memory, "what is my dog's name?"))
    assert texts[0] == "My dog is called Biscuit."
    assert await recalled(memory, "what is my dog's name?", user="bob") == []
    native = await PostgresMemoryService().search_memory(app_name=APP, user_id="ada", query="temperature unit")
    assert "I prefer Fahrenheit for temperatures." in [m.content.parts[0].text for m in native.memories]


async def test_add_memory_is_recalled_at_once(vertex):
    memory = vertex.memory()
    entries = [MemoryEntry(content=types.Content(parts=[types.Part(text="Ada is allergic to peanuts.")]))]

    await memory.add_memory(app_name=APP, user_id="ada", memories=entries)

    assert await recalled(memory, "does Ada have allergies?") == ["Ada is allergic to peanuts."]


async def test_add_events_with_metadata_generates_on_a_worker(vertex, celery_worker):
    memory = vertex.memory()

    await memory.add_events_to_memory(
        app_name=APP,
        user_id="ada",
        events=[said("user", "I live in Lisbon.")],
        custom_metadata={"ttl": "86400s", "source": "onboarding"},
    )

    texts = await eventually(lambda: recalled(memory, "where does Ada live?"))
    assert texts == ["I live in Lisbon."]
    native = await PostgresMemoryService().search_memory(app_name=APP, user_id="ada", query="Lisbon")
    assert native.memories[0].custom_metadata == {"source": "onboarding"}


async def test_search_returns_at_most_three_memories_as_vertex_does(vertex):
    memory = vertex.memory()
    facts = ["Ada plays chess.", "Ada plays the cello.", "Ada plays tennis.", "Ada plays go.", "Ada plays poker."]
    await memory.add_memory(
        app_name=APP,
        user_id="ada",
        memories=[MemoryEntry(content=types.Content(parts=[types.Part(text=fact)])) for fact in facts],
    )

    assert len(await recalled(memory, "what does Ada play?")) == 3


async def test_a_generation_rule_holds_events_until_it_is_met(vertex, celery_worker):
    memory = vertex.memory()
    rule = {"generation_trigger_config": {"generation_rule": {"event_count": 2}}, "stream_id": "chat-7"}

    await memory.add_events_to_memory(
        app_name=APP, user_id="ada", events=[said("user", "I live in Lisbon.")], custom_metadata=rule
    )
    await background_ingestions_succeed()
    await asyncio.sleep(1.0)
    assert await recalled(memory, "where does Ada live?") == []

    await memory.add_events_to_memory(
        app_name=APP, user_id="ada", events=[said("user", "I have a cat named Miso.")], custom_metadata=rule
    )
    await background_ingestions_succeed()

    texts = await eventually(lambda: recalled(memory, "where does Ada live?"))
    assert texts[0] == "I live in Lisbon." and "I have a cat named Miso." in texts
