"""Events read back from storage are the very objects ADK's own ``Event.model_validate_json`` builds.

``sessions_app.stored_events`` rebuilds them faster by leaving out steps that, for stored JSON, hand
their input back; what a user would notice if it went wrong is an event that reads back different
(a field missing from ``model_fields_set``, bytes decoded otherwise, a convenience key not moved, a
nested object of another class) or a bad row accepted. Each case compares every object in the tree
(class, fields, fields set, extra and private state) with ADK's result for the same stored text.
"""

from __future__ import annotations

import json

import pydantic
import pytest
from django.db import connection
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types

from cognizes.adk import PostgresSessionService
from sessions_app import stored_events
from sessions_app.stored_events import events_from_json, model_state

APP = "stored_events_app"


def adk_events(texts: list[str]) -> list[Event]:
    return [Event.model_validate_json(text) for text in texts]


def assert_same(texts: list[str]) -> None:
    ours, adks = events_from_json(texts), adk_events(texts)
    assert [model_state(e) for e in ours] == [model_state(e) for e in adks]
    assert all(type(e) is Event for e in ours)


def stored(event: Event) -> str:
    return json.dumps(event.model_dump(mode="json", exclude_none=True), ensure_ascii=False)


def test_the_fast_validator_is_on_with_the_pinned_pydantic_genai_and_adk():
    # Off, every read would silently go the slow way: bench/sessions.py would show it, this says why.
    assert stored_events._fast_validate() is not None


def test_events_of_every_kind_read_back_as_adk_builds_them():
    assert_same(stored_events._sample_texts())


def test_rarer_fields_read_back_as_adk_builds_them():
    events = [
        Event(
            author="agent",
            invocation_id="i",
            actions=EventActions(
                requested_tool_confirmations={"c1": ToolConfirmation(hint="ok?", payload={"x": 1})},
                compaction=EventCompaction(
                    start_timestamp=1.0,
                    end_timestamp=2.0,
                    compacted_content=types.Content(
                        role="model", parts=[types.Part(text="s", thought_signature=b"\x01\x02")]
                    ),
                ),
                end_of_agent=True,
                agent_state={"step": 2},
            ),
        ),
        Event(
            author="agent",
            invocation_id="i",
            citation_metadata=types.CitationMetadata(
                citations=[types.Citation(uri="https://e.x", start_index=1, end_index=4)]
            ),
        ),
        Event(
            author="agent",
            invocation_id="i",
            output={"any": ["thing", 1, 2.5]},
            isolation_scope="c1",
            partial=False,
            finish_reason=types.FinishReason.STOP,
            avg_logprobs=-0.5,
            input_transcription=types.Transcription(text="hola", finished=True),
        ),
    ]
    assert_same([stored(e) for e in events])


def test_jsonb_text_as_postgresql_returns_it_reads_back_as_adk_builds_it(db):
    texts = stored_events._sample_texts()
    with connection.cursor() as cursor:
        cursor.execute("SELECT t::jsonb::text FROM unnest(%s::text[]) AS t", [texts])
        from_jsonb = [text for (text,) in cursor.fetchall()]
    assert from_jsonb != texts  # jsonb reorders keys and respaces: the form reads really take
    assert_same(from_jsonb)


def test_a_part_given_null_fields_keeps_adks_fields_set():
    # Part.__init__ leaves null arguments out of the fields set; plain validation would not.
    text = json.dumps(
        {
            "author": "u",
            "invocation_id": "i",
            "id": "e1",
            "timestamp": 1.0,
            "content": {"role": "user", "parts": [{"text": "hi", "inline_data": None}]},
        }
    )
    assert_same([text])
    assert events_from_json([text])[0].content.parts[0].model_fields_set == {"text"}


def test_convenience_keys_are_moved_as_adk_moves_them():
    text = json.dumps(
        {
            "author": "u",
            "invocation_id": "i",
            "id": "e1",
            "timestamp": 1.0,
            "message": "hi",
            "state": {"k": 1},
            "node_path": "a/b",
        }
    )
    assert_same([text])
    event = events_from_json([text])[0]
    assert (event.content.parts[0].text, event.actions.state_delta, event.node_info.path) == ("hi", {"k": 1}, "a/b")


def test_a_bad_row_is_refused_with_adks_error():
    bad = [
        json.dumps({"author": "u", "timestamp": "not a time"}),
        "{not json",
        json.dumps({"author": "u", "content": {"role": "user", "parts": [{"no_such_field": 1}]}}),
    ]
    for text in bad:
        with pytest.raises(pydantic.ValidationError) as ours:
            events_from_json([text])
        with pytest.raises(pydantic.ValidationError) as adks:
            Event.model_validate_json(text)
        assert ours.value.errors() == adks.value.errors()


def test_events_without_ids_get_fresh_ones_as_adk_gives_them():
    text = json.dumps({"author": "u", "invocation_id": "i", "timestamp": 1.0})
    first, second = events_from_json([text, text])
    assert first.id and second.id and first.id != second.id  # model_post_init ran


@pytest.mark.django_db(transaction=True)
async def test_a_session_read_through_the_service_holds_adks_events():
    service = PostgresSessionService()
    session = await service.create_session(app_name=APP, user_id="u")
    for text in stored_events._sample_texts():
        await service.append_event(session, Event.model_validate_json(text))

    loaded = await service.get_session(app_name=APP, user_id="u", session_id=session.id)

    rows = await _stored_texts(session.id)
    assert [model_state(e) for e in loaded.events] == [model_state(e) for e in adk_events(rows)]


async def _stored_texts(session_id: str) -> list[str]:
    from cognizes.infra.db_threads import run_in_db_thread

    def read() -> list[str]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT e.data::text FROM events e JOIN sessions s ON s.id = e.session_id "
                "WHERE s.app_name = %s AND s.session_id = %s ORDER BY e.version",
                [APP, session_id],
            )
            return [text for (text,) in cursor.fetchall()]

    return await run_in_db_thread(read)
