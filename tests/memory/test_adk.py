"""PostgresMemoryService as ADK sees it: every method, a real Celery worker, and ADK's memory tools."""

from __future__ import annotations

import time

import pytest
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.tools.load_memory_tool import load_memory_tool
from google.adk.tools.preload_memory_tool import PreloadMemoryTool
from google.genai import types

from cognizes.adk import PostgresMemoryService, PostgresSessionService
from memory_app.models import ConsolidationJob, JobStatus, Memory
from tests.fake_llm import ScriptedLlm

pytestmark = pytest.mark.django_db(transaction=True)

APP = "mem_adk"


def turn(author: str, text: str, **metadata) -> Event:
    return Event(
        author=author,
        invocation_id="inv",
        content=types.Content(role="user" if author == "user" else "model", parts=[types.Part(text=text)]),
        custom_metadata=metadata or None,
    )


async def conversation(sessions: PostgresSessionService, *texts: str, user: str = "ada"):
    session = await sessions.create_session(app_name=APP, user_id=user)
    for text in texts:
        await sessions.append_event(session, turn("user", text))
    return session


async def found(memory: PostgresMemoryService, query: str, user: str = "ada") -> list[str]:
    response = await memory.search_memory(app_name=APP, user_id=user, query=query)
    return [entry.content.parts[0].text for entry in response.memories]


async def test_add_session_inline_then_search_returns_memory_entries():
    sessions, memory = PostgresSessionService(), PostgresMemoryService(consolidate_inline=True)
    session = await conversation(sessions, "I prefer Fahrenheit for temperatures.", "My dog is called Biscuit.")

    await memory.add_session_to_memory(session)

    response = await memory.search_memory(app_name=APP, user_id="ada", query="what is my dog's name?")
    top = response.memories[0]
    assert top.content.parts[0].text == "My dog is called Biscuit."
    assert top.author == "user" and top.id and top.timestamp.startswith(str(time.gmtime().tm_year))


async def test_adding_a_session_again_ingests_only_new_events():
    sessions, memory = PostgresSessionService(), PostgresMemoryService(consolidate_inline=True)
    session = await conversation(sessions, "I live in Porto.")
    await memory.add_session_to_memory(session)
    await sessions.append_event(session, turn("user", "I work as a pilot."))

    await memory.add_session_to_memory(session)
    await memory.add_session_to_memory(session)

    assert await Memory.objects.acount() == 2
    jobs = [j async for j in ConsolidationJob.objects.order_by("id")]
    assert [(j.status, j.memories_created) for j in jobs] == [("done", 1), ("done", 1), ("done", 0)]
    assert jobs[-1].watermark == jobs[-2].watermark > jobs[0].watermark


async def test_custom_metadata_comes_back_and_a_merged_memory_keeps_every_source():
    memory = PostgresMemoryService(consolidate_inline=True)
    await memory.add_events_to_memory(
        app_name=APP, user_id="ada", events=[turn("user", "I am vegetarian.")], custom_metadata={"source": "chat"}
    )
    await memory.add_memory(
        app_name=APP,
        user_id="ada",
        memories=[
            MemoryEntry(
                content=types.Content(parts=[types.Part(text="I am vegetarian")]), custom_metadata={"source": "crm"}
            )
        ],
    )

    [entry] = (await memory.search_memory(app_name=APP, user_id="ada", query="diet")).memories
    assert entry.custom_metadata == {"source": ["chat", "crm"]}


async def test_delete_memory_by_id_and_for_a_whole_user():
    memory = PostgresMemoryService(consolidate_inline=True)
    for user in ("ada", "bob"):
        await memory.add_events_to_memory(
            app_name=APP, user_id=user, events=[turn("user", "I like jazz."), turn("user", "I play chess.")]
        )
    [jazz, *_] = (await memory.search_memory(app_name=APP, user_id="ada", query="jazz")).memories

    await memory.delete_memory(app_name=APP, user_id="bob", memory_id=jazz.id)  # not bob's: nothing happens
    await memory.delete_memory(app_name=APP, user_id="ada", memory_id=jazz.id)
    assert await found(memory, "music jazz") == ["I play chess."]

    await memory.delete_memory(app_name=APP, user_id="ada")
    assert await found(memory, "chess") == []
    assert len(await found(memory, "chess", user="bob")) == 2


async def test_a_session_of_another_session_service_is_ingested_from_its_events():
    from google.adk.sessions import InMemorySessionService

    other = InMemorySessionService()
    session = await other.create_session(app_name=APP, user_id="ada")
    await other.append_event(session, turn("user", "My sister lives in Oslo."))

    await PostgresMemoryService(consolidate_inline=True).add_session_to_memory(session)

    assert await found(PostgresMemoryService(), "where does my sister live") == ["My sister lives in Oslo."]


async def test_add_session_queues_a_job_that_a_celery_worker_consolidates(celery_worker):
    sessions, memory = PostgresSessionService(), PostgresMemoryService()
    session = await conversation(sessions, "My favourite city is Kyoto.")

    await memory.add_session_to_memory(session)

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = await ConsolidationJob.objects.aget()
        if job.status in (JobStatus.DONE, JobStatus.FAILED):
            break
        time.sleep(0.2)
    assert (job.status, job.attempts, job.memories_created) == ("done", 1, 1)
    assert await found(memory, "favourite city") == ["My favourite city is Kyoto."]


async def test_load_memory_tool_finds_a_memory_in_an_agent_run():
    memory = PostgresMemoryService(consolidate_inline=True)
    await memory.add_events_to_memory(app_name=APP, user_id="ada", events=[turn("user", "My locker code is 7781.")])
    agent = LlmAgent(
        name="assistant", model=ScriptedLlm(tool_name="load_memory", argument="query"), tools=[load_memory_tool]
    )
    runner = Runner(agent=agent, app_name=APP, session_service=PostgresSessionService(), memory_service=memory)
    session = await runner.session_service.create_session(app_name=APP, user_id="ada")

    events = [
        e
        async for e in runner.run_async(
            user_id="ada",
            session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(text="locker code")]),
        )
    ]

    assert "My locker code is 7781." in events[-1].content.parts[0].text


async def test_preload_memory_tool_puts_memories_into_the_model_request():
    memory = PostgresMemoryService(consolidate_inline=True)
    await memory.add_events_to_memory(app_name=APP, user_id="ada", events=[turn("user", "I am allergic to shellfish.")])
    seen: list[str] = []

    class RequestRecorder(ScriptedLlm):
        async def generate_content_async(self, llm_request, stream=False):
            seen.append(" ".join(p.text or "" for c in llm_request.contents for p in c.parts or []))
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))

    agent = LlmAgent(name="assistant", model=RequestRecorder(), tools=[PreloadMemoryTool()])
    runner = Runner(agent=agent, app_name=APP, session_service=PostgresSessionService(), memory_service=memory)
    session = await runner.session_service.create_session(app_name=APP, user_id="ada")

    async for _ in runner.run_async(
        user_id="ada",
        session_id=session.id,
        new_message=types.Content(role="user", parts=[types.Part(text="any shellfish allergy?")]),
    ):
        pass

    assert "I am allergic to shellfish." in seen[0]


SAID_IN_EVERY_LANGUAGE = [
    ("私の名前は太郎です", "太郎"),
    ("我喜欢机器学习", "机器学习"),
    ("제 이름은 민수입니다", "민수입니다"),
    ("Меня зовут Алексей", "Алексей"),
    ("私はPythonでADKを使っています", "Python"),
    ("Meet at the Café", "café"),
    ("اسمي ليلى وأعيش في القاهرة", "القاهرة"),
]


async def test_a_session_in_any_language_is_remembered_and_found_first_by_its_words():
    """Cases taught by ADK's own memory tests (written anew): a session said in one language is kept through
    add_session_to_memory without a model and found by a word of it, among sessions in the others."""
    sessions, memory = PostgresSessionService(), PostgresMemoryService(consolidate_inline=True)
    for text, _ in SAID_IN_EVERY_LANGUAGE:
        await memory.add_session_to_memory(await conversation(sessions, text, user="polyglot"))
    for text, word in SAID_IN_EVERY_LANGUAGE:
        found = await memory.search_memory(app_name=APP, user_id="polyglot", query=word)
        assert found.memories[0].content.parts[0].text == text, word
