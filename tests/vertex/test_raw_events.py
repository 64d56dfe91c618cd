"""``rawEvent`` made from a stored event by renaming it is what ADK's own dump by alias gives
(vertex_app.raw_events)."""

from __future__ import annotations

import json

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.genai import types

from vertex_app.raw_events import raw_event

EVENTS = [
    Event(
        author="user",
        invocation_id="i1",
        content=types.Content(role="user", parts=[types.Part(text="héllo 你好 привет")]),
        actions=EventActions(state_delta={"user:snake_key": {"inner_key": 1}, "a_b": None}),
    ),
    Event(
        author="agent",
        invocation_id="i2",
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id="c1", name="get_weather", args={"city_name": "Lyon", "deep": {"x_y": [1]}}
                    )
                ),
                types.Part(text="thinking", thought=True, thought_signature=b"\x00\x01sig"),
            ],
        ),
        long_running_tool_ids={"b", "a"},
        branch="root.sub",
        custom_metadata={"my_key": {"k_k": 1}},
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=3,
            candidates_token_count=4,
            prompt_tokens_details=[types.ModalityTokenCount(modality="TEXT", token_count=3)],
        ),
        grounding_metadata=types.GroundingMetadata(
            web_search_queries=["q"],
            grounding_chunks=[types.GroundingChunk(web=types.GroundingChunkWeb(uri="u", title="t"))],
        ),
    ),
    Event(
        author="agent",
        invocation_id="i3",
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(id="c1", name="get_weather", response={"temp_c": 3})
                ),
                types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG\x00\xff")),
                types.Part(file_data=types.FileData(file_uri="gs://x", mime_type="text/plain")),
            ],
        ),
        actions=EventActions(
            artifact_delta={"file_a": 2},
            transfer_to_agent="other_agent",
            escalate=True,
            skip_summarization=True,
            compaction=EventCompaction(
                start_timestamp=1.0,
                end_timestamp=2.0,
                compacted_content=types.Content(role="model", parts=[types.Part(text="summary")]),
            ),
        ),
    ),
    Event(
        author="agent",
        invocation_id="i4",
        error_code="SAFETY",
        error_message="blocked",
        turn_complete=True,
        interrupted=False,
        partial=False,
        input_transcription=types.Transcription(text="hi", finished=True),
    ),
]


@pytest.mark.parametrize("event", EVENTS, ids=[e.invocation_id for e in EVENTS])
def test_a_stored_event_renamed_is_adks_dump_by_alias_and_free_form_keys_keep_their_names(event):
    stored = json.loads(json.dumps(event.model_dump(mode="json", exclude_none=True)))
    renamed = raw_event(stored)
    assert renamed == event.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert renamed == Event.model_validate_json(json.dumps(stored)).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    assert stored == json.loads(json.dumps(event.model_dump(mode="json", exclude_none=True)))  # left as it was


def test_a_field_this_adk_does_not_know_is_kept_not_dropped():
    stored = {**EVENTS[0].model_dump(mode="json", exclude_none=True), "future_field": {"some_key": 1}}
    assert raw_event(stored)["future_field"] == {"some_key": 1}
