"""ADK's session contract, run against ADK's in-memory reference and our PostgreSQL service.

Every case runs on both, so a behaviour of ours that differs from ADK's shows up
as a failure on one side only.
"""

from __future__ import annotations

import pytest
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from cognizes.adk import PostgresSessionService

# The services query from their own threads, which see only committed rows.
pytestmark = pytest.mark.django_db(transaction=True)

APP = "contract_app"


@pytest.fixture(params=["in_memory", "postgres"])
def service(request):
    if request.param == "in_memory":
        return InMemorySessionService()
    return PostgresSessionService()


def text_event(text: str, *, author: str = "user", timestamp: float | None = None, **state) -> Event:
    event = Event(
        author=author,
        invocation_id="inv-1",
        content=types.Content(role="user" if author == "user" else "model", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=state),
    )
    if timestamp is not None:
        event.timestamp = timestamp
    return event


async def test_create_session_generates_an_id_and_stores_initial_state(service):
    session = await service.create_session(app_name=APP, user_id="u1", state={"a": 1, "user:b": 2, "app:c": 3})

    assert session.id
    assert session.state == {"a": 1, "user:b": 2, "app:c": 3}
    loaded = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert loaded.state == {"a": 1, "user:b": 2, "app:c": 3}
    assert loaded.events == []


async def test_generated_ids_are_unique(service):
    ids = {(await service.create_session(app_name=APP, user_id="u1")).id for _ in range(5)}
    assert len(ids) == 5


async def test_duplicate_session_id_is_rejected_and_changes_nothing(service):
    await service.create_session(app_name=APP, user_id="u1", session_id="s1", state={"a": 1})

    with pytest.raises(AlreadyExistsError):
        await service.create_session(app_name=APP, user_id="u1", session_id="s1", state={"a": 2, "user:x": 1})

    loaded = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
    assert loaded.state == {"a": 1}


async def test_the_same_session_id_may_exist_for_two_users(service):
    await service.create_session(app_name=APP, user_id="u1", session_id="s1", state={"who": "u1"})
    await service.create_session(app_name=APP, user_id="u2", session_id="s1", state={"who": "u2"})

    assert (await service.get_session(app_name=APP, user_id="u2", session_id="s1")).state == {"who": "u2"}


async def test_get_missing_session_returns_none(service):
    assert await service.get_session(app_name=APP, user_id="u1", session_id="nope") is None


async def test_another_users_session_is_not_found(service):
    await service.create_session(app_name=APP, user_id="u1", session_id="s1")
    assert await service.get_session(app_name=APP, user_id="u2", session_id="s1") is None
    assert await service.get_session(app_name="other_app", user_id="u1", session_id="s1") is None


async def test_events_come_back_in_order_with_every_field(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    call = types.Part(function_call=types.FunctionCall(id="c1", name="lookup", args={"q": "x"}))
    rich = Event(
        author="agent",
        invocation_id="inv-9",
        branch="root.child",
        content=types.Content(
            role="model",
            parts=[call, types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG\x00\xff"))],
        ),
        actions=EventActions(state_delta={"k": [1, {"n": None}]}, transfer_to_agent="child", escalate=True),
        custom_metadata={"trace": "t-1"},
        long_running_tool_ids={"c1"},
        turn_complete=True,
    )
    rich.timestamp = 1_764_480_000.123456789
    events = [text_event("first", timestamp=1_764_480_000.0), rich, text_event("third", timestamp=1_764_480_000.5)]
    for event in events:
        await service.append_event(session, event)

    loaded = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)

    assert [e.model_dump() for e in loaded.events] == [e.model_dump() for e in events]
    assert loaded.events[1].timestamp == 1_764_480_000.123456789
    assert loaded.last_update_time == events[-1].timestamp


async def test_num_recent_events_keeps_the_last_n(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    for i in range(5):
        await service.append_event(session, text_event(f"m{i}", timestamp=1000.0 + i))

    def texts(s):
        return [e.content.parts[0].text for e in s.events]

    last2 = await service.get_session(
        app_name=APP, user_id="u1", session_id=session.id, config=GetSessionConfig(num_recent_events=2)
    )
    none = await service.get_session(
        app_name=APP, user_id="u1", session_id=session.id, config=GetSessionConfig(num_recent_events=0)
    )
    assert texts(last2) == ["m3", "m4"]
    assert none.events == []
    assert none.last_update_time == 1004.0


async def test_after_timestamp_is_inclusive(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    for i in range(5):
        await service.append_event(session, text_event(f"m{i}", timestamp=1000.25 + i))

    loaded = await service.get_session(
        app_name=APP, user_id="u1", session_id=session.id, config=GetSessionConfig(after_timestamp=1002.25)
    )
    both = await service.get_session(
        app_name=APP,
        user_id="u1",
        session_id=session.id,
        config=GetSessionConfig(after_timestamp=1001.25, num_recent_events=2),
    )
    assert [e.content.parts[0].text for e in loaded.events] == ["m2", "m3", "m4"]
    assert [e.content.parts[0].text for e in both.events] == ["m3", "m4"]


async def test_list_sessions_of_a_user_has_merged_state_and_no_events(service):
    first = await service.create_session(app_name=APP, user_id="u1", state={"n": 1, "app:shared": "a"})
    await service.append_event(first, text_event("hi", **{"user:name": "Ada"}))
    await service.create_session(app_name=APP, user_id="u2", state={"n": 2})

    listed = (await service.list_sessions(app_name=APP, user_id="u1")).sessions

    assert [s.id for s in listed] == [first.id]
    assert listed[0].events == []
    assert listed[0].state == {"n": 1, "app:shared": "a", "user:name": "Ada"}


async def test_list_sessions_without_user_lists_every_user_oldest_update_first(service):
    a = await service.create_session(app_name=APP, user_id="u2", session_id="a")
    b = await service.create_session(app_name=APP, user_id="u1", session_id="b")
    c = await service.create_session(app_name=APP, user_id="u1", session_id="c")
    await service.create_session(app_name="other_app", user_id="u1", session_id="x")
    await service.append_event(c, text_event("1", timestamp=2000.0, **{"user:k": "u1"}))
    await service.append_event(a, text_event("2", timestamp=3000.0))
    await service.append_event(b, text_event("3", timestamp=4000.0))

    listed = (await service.list_sessions(app_name=APP)).sessions

    assert [(s.user_id, s.id) for s in listed] == [("u1", "c"), ("u2", "a"), ("u1", "b")]
    assert [s.state.get("user:k") for s in listed] == ["u1", None, "u1"]


async def test_list_sessions_of_unknown_app_is_empty(service):
    assert (await service.list_sessions(app_name="nobody")).sessions == []


async def test_delete_session_removes_it_and_keeps_app_and_user_state(service):
    session = await service.create_session(app_name=APP, user_id="u1", state={"app:a": 1, "user:u": 2, "s": 3})
    await service.append_event(session, text_event("hi"))

    await service.delete_session(app_name=APP, user_id="u1", session_id=session.id)

    assert await service.get_session(app_name=APP, user_id="u1", session_id=session.id) is None
    other = await service.create_session(app_name=APP, user_id="u1")
    assert other.state == {"app:a": 1, "user:u": 2}


async def test_delete_missing_session_is_a_no_op(service):
    await service.delete_session(app_name=APP, user_id="u1", session_id="nope")


async def test_partial_events_are_not_stored(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    partial = text_event("stream chunk", k=1)
    partial.partial = True

    returned = await service.append_event(session, partial)

    assert returned is partial
    loaded = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert loaded.events == [] and loaded.state == {}


async def test_temp_state_reaches_the_session_in_memory_only(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    event = text_event("hi", **{"temp:scratch": 1, "kept": 2})

    returned = await service.append_event(session, event)

    assert returned is event
    assert session.state["temp:scratch"] == 1
    assert event.actions.state_delta == {"kept": 2}
    loaded = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert loaded.state == {"kept": 2}
    assert loaded.events[0].actions.state_delta == {"kept": 2}


async def test_state_deltas_update_each_scope(service):
    s1 = await service.create_session(app_name=APP, user_id="u1", state={"x": {"deep": 1}, "y": 1})
    s2 = await service.create_session(app_name=APP, user_id="u1")
    s3 = await service.create_session(app_name=APP, user_id="u2")

    await service.append_event(s1, text_event("1", x={"other": 2}, **{"app:flag": True, "user:lang": "fr"}))
    await service.append_event(s1, text_event("2", **{"user:tz": "CET"}))

    assert s1.state == {"x": {"other": 2}, "y": 1, "app:flag": True, "user:lang": "fr", "user:tz": "CET"}
    loaded2 = await service.get_session(app_name=APP, user_id="u1", session_id=s2.id)
    loaded3 = await service.get_session(app_name=APP, user_id="u2", session_id=s3.id)
    assert loaded2.state == {"app:flag": True, "user:lang": "fr", "user:tz": "CET"}
    assert loaded3.state == {"app:flag": True}


async def test_last_update_time_is_the_events_timestamp(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    await service.append_event(session, text_event("hi", timestamp=1_764_480_123.456789))

    assert session.last_update_time == 1_764_480_123.456789
    loaded = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert loaded.last_update_time == 1_764_480_123.456789


async def test_append_to_a_deleted_session_raises_session_not_found(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    await service.delete_session(app_name=APP, user_id="u1", session_id=session.id)

    with pytest.raises(SessionNotFoundError):
        await service.append_event(session, text_event("late"))


async def test_get_user_state_returns_unprefixed_user_keys(service):
    assert await service.get_user_state(app_name=APP, user_id="u1") == {}
    session = await service.create_session(app_name=APP, user_id="u1", state={"user:name": "Ada", "app:x": 1})
    await service.append_event(session, text_event("hi", **{"user:lang": "en"}))

    assert await service.get_user_state(app_name=APP, user_id="u1") == {"name": "Ada", "lang": "en"}
    assert await service.get_user_state(app_name=APP, user_id="u2") == {}


async def test_a_reloaded_session_continues(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    await service.append_event(session, text_event("one", n=1))
    reloaded = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)

    await service.append_event(reloaded, text_event("two", n=2))

    final = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert [e.content.parts[0].text for e in final.events] == ["one", "two"]
    assert final.state == {"n": 2}


async def test_padded_session_id_reads_and_deletes(service):
    """ADK's own case: a session created as 'order-42\\n' is stored as 'order-42'; the padded id still names it."""
    await service.create_session(app_name=APP, user_id="u1", session_id="order-42\n", state={"a": 1})

    assert (await service.get_session(app_name=APP, user_id="u1", session_id="order-42\n")).id == "order-42"
    await service.delete_session(app_name=APP, user_id="u1", session_id=" order-42 ")
    assert await service.get_session(app_name=APP, user_id="u1", session_id="order-42") is None


async def test_two_gets_return_objects_a_caller_may_change_alone(service):
    """Nothing a get returns is shared: changing one session's state, events, parts or deltas leaves the
    next get (and the store) as it was."""
    session = await service.create_session(app_name=APP, user_id="u1", state={"a": 1, "user:b": 2, "app:c": 3})
    await service.append_event(session, text_event("hello", n=1))

    first = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    first.state["a"] = "changed"
    first.state["user:b"] = "changed"
    first.events[0].content.parts[0].text = "changed"
    first.events[0].content.parts.append(types.Part(text="more"))
    first.events[0].actions.state_delta["n"] = "changed"
    first.events.append(text_event("not stored"))
    second = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)

    assert second.state == {"a": 1, "user:b": 2, "app:c": 3, "n": 1}
    assert [part.text for part in second.events[0].content.parts] == ["hello"]
    assert second.events[0].actions.state_delta == {"n": 1}
    assert len(second.events) == 1
    assert second.events[0] is not first.events[0] and second.events[0].content is not first.events[0].content
