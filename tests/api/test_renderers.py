"""cognizes.access.renderers.FastJSONRenderer writes what DRF's JSONRenderer writes, for data of JSON's own types.

The Vertex sessions views answer through it (issue 29 goal 2: writing a 50-event ListEvents took as long as
reading it from PostgreSQL); a client must not see a difference.
"""

from __future__ import annotations

import json

import pytest
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer

from cognizes.access.renderers import FastJSONRenderer

DATA = [
    {
        "sessionEvents": [
            {
                "name": "reasoningEngines/1/sessions/s/events/e",
                "rawEvent": {
                    "content": {"parts": [{"text": 'héllo 你好 привет こんにちは 안녕 "quoted" \\ \n\t'}]},
                    "actions": {
                        "stateDelta": {
                            "n": 1,
                            "f": 2.5,
                            "neg": -0.0,
                            "big": 2**70,
                            "tiny": 1e-7,
                            "none": None,
                            "yes": True,
                            "list": [1, "二", None, [], {}],
                        }
                    },
                    "timestamp": 1796247711.9833088,
                },
            }
        ],
        "nextPageToken": "51",
    },
    {"text": "a\u2028line and a\u2029paragraph"},  # escaped as DRF escapes them (a JavaScript-safe subset)
    [],
    "just text",
]


@pytest.mark.parametrize("data", DATA, ids=range(len(DATA)))
def test_the_json_is_drfs(data):
    fast, drf = FastJSONRenderer().render(data), JSONRenderer().render(data)

    assert json.loads(fast) == json.loads(drf)
    assert json.loads(fast.decode("utf-8")) == data
    assert b"\xe2\x80\xa8" not in fast and b"\xe2\x80\xa9" not in fast
    assert "你好".encode() in fast or "你好" not in json.dumps(data, ensure_ascii=False)  # UTF-8, not \u escapes


def test_text_the_json_module_would_write_the_same_is_the_same_bytes():
    data = {"a": "é 日本", "b": [1, None, True], "c": {"d": "\u2028"}}
    assert FastJSONRenderer().render(data) == JSONRenderer().render(data)


def test_nan_is_refused_as_drf_refuses_it_and_text_naming_it_is_kept():
    with pytest.raises(ValueError):
        JSONRenderer().render({"x": float("nan")})
    with pytest.raises(ValueError):
        FastJSONRenderer().render({"x": float("nan")})
    assert json.loads(FastJSONRenderer().render({"x": "NaN and Infinity"})) == {"x": "NaN and Infinity"}


def test_what_pydantic_core_does_not_know_goes_through_drfs_encoder():
    assert json.loads(FastJSONRenderer().render({"message": gettext_lazy("Not found.")})) == {"message": "Not found."}


def test_an_indent_asked_for_is_drfs_output():
    media = "application/json; indent=2"
    assert FastJSONRenderer().render({"a": [1]}, media) == JSONRenderer().render({"a": [1]}, media)


class _Request:
    def __init__(self, meta: dict) -> None:
        self.META = meta


class _Response:
    def __init__(self, status_code: int) -> None:
        self.status_code = status_code


def test_a_caller_reading_the_data_gets_no_bytes_for_a_success_and_every_error_written():
    """The gRPC transcoder marks its requests DATA_ONLY: it builds the message from the view's data."""
    from cognizes.access.renderers import DATA_ONLY

    data = DATA[0]
    for status in (200, 201):
        context = {"request": _Request({DATA_ONLY: True}), "response": _Response(status)}
        assert FastJSONRenderer().render(data, renderer_context=context) == b""
    for status in (400, 404, 429, 503):
        context = {"request": _Request({DATA_ONLY: True}), "response": _Response(status)}
        assert json.loads(FastJSONRenderer().render(data, renderer_context=context)) == data
    # an HTTP header cannot set it: Django's headers are HTTP_* keys
    context = {"request": _Request({"HTTP_COGNIZES_DATA_ONLY": "1"}), "response": _Response(200)}
    assert json.loads(FastJSONRenderer().render(data, renderer_context=context)) == data


def test_an_unwritten_answer_the_shortcut_refuses_is_written_and_read_as_json():
    """When the data holds what cognizes.infra.proto_json leaves to json_format (here a datetime), the transcoder writes
    the JSON the view would have written and reads that."""
    import datetime

    from vertex_app import transcoding

    rule = transcoding.RULES[transcoding.SESSIONS]["ListEvents"]
    moment = datetime.datetime(2026, 12, 3, 1, 2, 3, tzinfo=datetime.UTC)
    data = {"sessionEvents": [{"name": "n", "rawEvent": {"at": moment, "text": "你好"}}], "nextPageToken": "7"}

    message = transcoding.response_message(rule, b"", data)

    assert message.next_page_token == "7"
    assert dict(message.session_events[0].raw_event) == {"at": "2026-12-03T01:02:03Z", "text": "你好"}


def test_a_page_of_frozen_values_is_the_same_bytes_as_the_page_written_whole():
    """vertex_app.event_cache hands out FrozenJson events: their kept text is spliced into the page."""
    from cognizes.infra.frozen_json import FrozenJson

    event = DATA[0]["sessionEvents"][0]
    separators = {"text": "a\u2028line and a\u2029paragraph 日本"}
    for data in (
        {"sessionEvents": [event, separators, event], "nextPageToken": "51"},
        {"sessionEvents": [event], "other": [event, 1], "empty": []},
    ):
        frozen = {
            key: [FrozenJson(item) if isinstance(item, dict) and key == "sessionEvents" else item for item in value]
            if isinstance(value, list)
            else value
            for key, value in data.items()
        }
        for _ in range(2):  # written, then from the kept text
            assert FastJSONRenderer().render(frozen) == FastJSONRenderer().render(data)
            assert json.loads(FastJSONRenderer().render(frozen)) == data


def test_a_frozen_value_holding_nan_is_refused_as_drf_refuses_it():
    import math

    from cognizes.infra.frozen_json import FrozenJson

    with pytest.raises(ValueError):
        FastJSONRenderer().render({"sessionEvents": [FrozenJson({"x": math.nan})]})
