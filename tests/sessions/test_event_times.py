"""Event times are compared at one precision, microseconds, whichever way they came in (issue 43 item 11).

An event's time is a float of epoch seconds; Vertex's wire (RFC 3339, protobuf Timestamp) and Python's
``datetime`` carry microseconds. ``after_timestamp`` set to an event's own time must find that event whether the
caller holds its exact float or the microsecond time a Vertex client reads back. The times below are not a whole
number of microseconds and round *up* (``…0.1234567`` → ``…0.123457``), so the exact float lies below its
microsecond time: a filter at the microsecond then misses an event stored as the float, every time.
"""

from __future__ import annotations

import datetime

import pytest
from google.adk.events.event import Event
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from cognizes.adk import PostgresSessionService

pytestmark = pytest.mark.django_db(transaction=True)

EXACT = 1767225600.1234567
"""An event time that is not a whole number of microseconds; it rounds up to ….123457."""
AS_MICROSECONDS = datetime.datetime.fromtimestamp(EXACT, tz=datetime.UTC).timestamp()


def event(text: str, timestamp: float) -> Event:
    made = Event(author="user", invocation_id="i", content=types.Content(role="user", parts=[types.Part(text=text)]))
    made.timestamp = timestamp
    return made


def test_the_boundary_times_round_up():
    assert AS_MICROSECONDS > EXACT  # otherwise the tests below could not fail on a float compared with a microsecond


@pytest.mark.parametrize("after", [EXACT, AS_MICROSECONDS], ids=["exact_float", "microseconds"])
async def test_after_timestamp_at_an_events_own_time_keeps_that_event(after):
    service = PostgresSessionService()
    session = await service.create_session(app_name="times", user_id="u")
    await service.append_event(session, event("before", EXACT - 1))
    await service.append_event(session, event("boundary", EXACT))
    await service.append_event(session, event("after", EXACT + 1))

    loaded = await service.get_session(
        app_name="times", user_id="u", session_id=session.id, config=GetSessionConfig(after_timestamp=after)
    )

    assert [e.content.parts[0].text for e in loaded.events] == ["boundary", "after"]
    assert loaded.events[0].timestamp == EXACT  # the event itself keeps the time it was given


@pytest.mark.parametrize(
    ("value", "status"),
    [("nan", 400), ("inf", 400), ("-inf", 400), ("1e400", 400), ("²", 400), ("1e300", 200), ("-1e300", 200)],
)
def test_a_hostile_after_timestamp_is_a_400_or_an_answer_never_a_500(value, status):
    """The filter now goes through ``to_microseconds``' arithmetic: what no float holds is refused before it, and a
    time past any event (or before every one) is a plain answer."""
    from tests.api.conftest import client_for

    api = client_for("times")
    assert api.post("/api/v1/apps/times/users/ada/sessions/", {"id": "s1"}, format="json").status_code == 201
    appended = api.post(
        "/api/v1/apps/times/users/ada/sessions/s1/events/",
        {"event": event("hello", EXACT).model_dump(mode="json", by_alias=True), "expected_version": 1},
        format="json",
    )
    assert appended.status_code == 201, appended.content

    answer = api.get("/api/v1/apps/times/users/ada/sessions/s1/", {"after_timestamp": value})

    assert answer.status_code == status, answer.content
    if status == 200:
        assert len(answer.json()["events"]) == (1 if value.startswith("-") else 0)
