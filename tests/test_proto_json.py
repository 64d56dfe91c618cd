"""cognizes.infra.proto_json reads proto3 JSON into a message exactly as json_format does, or leaves it to json_format.

The gRPC surface answers with what it reads (issue 29 goal 2: a 50-event ListEvents spent more in
json_format than in its view), so a difference would reach ADK for Go as a different message.
"""

from __future__ import annotations

import datetime
import math

import pytest
from google.cloud.aiplatform_v1beta1.types import memory_bank, memory_bank_service, session, session_service
from google.longrunning import operations_pb2
from google.protobuf import json_format

from cognizes.infra.proto_json import merge_fast, parse_dict

SessionEvent, ListEvents = session.SessionEvent.pb(), session_service.ListEventsResponse.pb()
Session, Memory = session.Session.pb(), memory_bank.Memory.pb()
Retrieve = memory_bank_service.RetrieveMemoriesResponse.pb()

RAW = {
    "id": "e1",
    "author": "agent",
    "invocationId": "inv-1",
    "timestamp": 1796247711.9833088,
    "content": {
        "role": "model",
        "parts": [
            {"text": "héllo 你好 привет こんにちは"},
            {
                "functionCall": {
                    "name": "get_weather",
                    "args": {"city_name": "Lyon", "deep": {"x_y": [1, 2.5, None, True, "二", [], {}]}},
                }
            },
        ],
    },
    "actions": {"stateDelta": {"user:snake_key": {"inner_key": 1}, "a_b": None, "big": 2**60}, "artifactDelta": {}},
    "longRunningToolIds": ["b", "a"],
}
EVENT = {
    "name": "reasoningEngines/1/sessions/s/events/e1",
    "author": "agent",
    "invocationId": "inv-1",
    "timestamp": "2026-12-02T21:41:51.983309Z",
    "rawEvent": RAW,
    "content": RAW["content"],
    "actions": {"stateDelta": RAW["actions"]["stateDelta"], "transferAgent": "other", "escalate": True},
    "eventMetadata": {
        "partial": False,
        "turnComplete": True,
        "branch": "root.sub",
        "customMetadata": {"k": [1]},
        "longRunningToolIds": ["a", "b"],
    },
    "errorCode": "SAFETY",
    "errorMessage": "blocked",
}
SAME = [
    (ListEvents, {"sessionEvents": [EVENT, {**EVENT, "name": "x", "rawEvent": {}}], "nextPageToken": "51"}),
    (ListEvents, {"session_events": [{"raw_event": {"a": {"b": [{"c": None}]}}}]}),  # proto names too
    (ListEvents, {"sessionEvents": [], "someFieldOfANewerServer": {"x": 1}}),  # unknown fields are ignored
    (
        Session,
        {
            "name": "n",
            "userId": "ada",
            "sessionState": {"a": 1, "nested": {"x": [1, "二", None, True]}},
            "labels": {"team": "x", "équipe": "é"},
            "displayName": "first",
            "createTime": "2026-12-02T21:41:51Z",
            "updateTime": "2026-12-02T21:41:51.5+02:00",
            "expireTime": "1970-01-01T00:00:00.123456789Z",
        },
    ),
    (Session, {"updateTime": "2026-12-02T21:41:51.123-00:30", "sessionState": {}}),
    (
        Retrieve,
        {
            "retrievedMemories": [
                {"memory": {"name": "m", "fact": "Ada reads", "scope": {"user_id": "ada"}}, "distance": 0.25}
            ]
        },
    ),
]


@pytest.mark.parametrize("message, data", SAME, ids=[f"{m.DESCRIPTOR.name}-{i}" for i, (m, _) in enumerate(SAME)])
def test_a_message_read_by_the_shortcut_is_the_one_json_format_reads(message, data):
    expected = json_format.ParseDict(data, message(), ignore_unknown_fields=True)

    read = message()
    assert merge_fast(data, read)  # the shortcut took it, json_format was not asked
    assert read == expected
    assert read.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)


LEFT_TO_JSON_FORMAT = [
    (
        operations_pb2.Operation,
        {"name": "op", "done": True, "response": {"@type": "type.googleapis.com/google.protobuf.Empty"}},
    ),  # Any
    (Memory, {"name": "m", "ttl": "3.5s"}),  # Duration
    (SessionEvent, {"timestamp": "2026-12-02 21:41:51Z"}),  # a time json_format may read its own way
    (SessionEvent, {"rawEvent": {"n": 1}, "raw_event": {"n": 2}}),  # both spellings of one field
]


@pytest.mark.parametrize("message, data", LEFT_TO_JSON_FORMAT, ids=range(len(LEFT_TO_JSON_FORMAT)))
def test_what_the_shortcut_does_not_read_is_json_formats_answer_or_error(message, data):
    try:
        expected: object = json_format.ParseDict(data, message(), ignore_unknown_fields=True)
    except json_format.ParseError as error:
        expected = error

    read = message()
    assert not merge_fast(data, read)
    assert read == message()  # left empty
    if isinstance(expected, Exception):
        with pytest.raises(json_format.ParseError, match=str(expected)[:40].replace("(", r"\(").replace("[", r"\[")):
            parse_dict(data, message())
    else:
        assert parse_dict(data, message()) == expected


@pytest.mark.parametrize("value", [math.nan, math.inf, datetime.datetime(2026, 1, 1), (1, 2), b"bytes"])
def test_a_value_that_is_not_json_is_refused_not_converted(value):
    read = ListEvents()
    assert not merge_fast({"sessionEvents": [{"rawEvent": {"x": value}}]}, read)
    assert read == ListEvents()


def test_a_frozen_value_read_again_is_the_same_message_for_each_type_it_is_read_into():
    """``FrozenJson`` keeps the wire bytes of the first reading per message type and merges them after."""
    from cognizes.infra.frozen_json import FrozenJson

    event = FrozenJson(EVENT)
    expected = json_format.ParseDict(EVENT, SessionEvent(), ignore_unknown_fields=True)
    for _ in range(2):
        page = ListEvents()
        assert merge_fast({"sessionEvents": [event, event], "nextPageToken": "2"}, page)
        assert list(page.session_events) == [expected, expected] and page.next_page_token == "2"
    as_session = Session()  # the same dict as another message: read for that message, not from SessionEvent's bytes
    assert merge_fast(event, as_session)
    assert as_session == json_format.ParseDict(EVENT, Session(), ignore_unknown_fields=True)


def test_a_frozen_value_the_shortcut_refuses_is_still_json_formats_to_read():
    from cognizes.infra.frozen_json import FrozenJson

    bad = FrozenJson({"rawEvent": {"x": math.nan}})
    for _ in range(2):
        read = ListEvents()
        assert not merge_fast({"sessionEvents": [bad]}, read)
        assert read == ListEvents()
