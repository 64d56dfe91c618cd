"""``after_timestamp`` at an event's own time finds that event over Vertex's REST and gRPC (issue 43 item 11).

ADK's ``VertexAiSessionService`` sends the event's exact float inside ``rawEvent`` and its time as RFC 3339
(microseconds); it filters with ``timestamp>="<microseconds>"``. Google's GAPIC client sends a protobuf Timestamp
(nanoseconds). The server keeps one precision, microseconds, for the time it stores and the time it filters by.
The times round *up* to the microsecond (see tests/sessions/test_event_times.py), so the old code failed every run.
"""

from __future__ import annotations

import datetime

import pytest
from google.adk.sessions.base_session_service import GetSessionConfig
from google.cloud.aiplatform_v1beta1.types import Session, SessionEvent
from google.protobuf import struct_pb2, timestamp_pb2

from tests.sessions.test_event_times import AS_MICROSECONDS, EXACT, event

pytestmark = pytest.mark.django_db(transaction=True)


async def test_adks_vertex_client_keeps_the_event_at_the_boundary(vertex):
    service = vertex.sessions()
    session = await service.create_session(app_name="vertex_shop", user_id="u")
    for text, moment in (("before", EXACT - 1), ("boundary", EXACT), ("after", EXACT + 1)):
        await service.append_event(session, event(text, moment))
    read_back = (await service.get_session(app_name="vertex_shop", user_id="u", session_id=session.id)).events[1]

    kept = {}
    for name, after in (("exact", EXACT), ("as read back", read_back.timestamp)):
        loaded = await service.get_session(
            app_name="vertex_shop", user_id="u", session_id=session.id, config=GetSessionConfig(after_timestamp=after)
        )
        kept[name] = [e.content.parts[0].text for e in loaded.events]

    assert kept == {"exact": ["boundary", "after"], "as read back": ["boundary", "after"]}


def _listed(client, grpc_server, name: str, since: str) -> list[str]:
    found = client.list_events(
        request={"parent": name, "filter": f'timestamp>="{since}"'}, metadata=grpc_server.metadata()
    )
    return [e.content.parts[0].text for e in found]


def test_gapic_over_grpc_keeps_the_event_at_the_boundary(grpc_server):
    client, meta = grpc_server.sessions(), grpc_server.metadata()
    created = client.create_session(
        request={"parent": grpc_server.engine, "session": Session(user_id="u"), "session_id": "t1"}, metadata=meta
    ).result()
    seconds = int(EXACT)
    sent = (
        # ADK's way: the microsecond time, and the exact float in rawEvent
        ("with raw event", datetime.datetime.fromtimestamp(EXACT, tz=datetime.UTC), {"timestamp": EXACT}),
        # a Go or GAPIC client's way: a Timestamp to the nanosecond (…0.1234567 s)
        ("nanoseconds", timestamp_pb2.Timestamp(seconds=seconds, nanos=123456700), None),
    )
    for text, moment, raw in sent:
        message = SessionEvent(
            author="user", invocation_id="i", timestamp=moment, content={"role": "user", "parts": [{"text": text}]}
        )
        if raw is not None:
            message.raw_event = struct_pb2.Struct()
            message.raw_event.update({**raw, "author": "user", "content": {"role": "user", "parts": [{"text": text}]}})
        client.append_event(name=created.name, event=message, metadata=meta)
    listed = list(client.list_events(parent=created.name, metadata=meta))

    as_listed = {e.content.parts[0].text: e.timestamp.rfc3339() for e in listed}
    at_microsecond = datetime.datetime.fromtimestamp(AS_MICROSECONDS, tz=datetime.UTC).isoformat()

    assert set(as_listed.values()) == {"2026-01-01T00:00:00.123457Z"}  # one time, to the microsecond, for both
    assert _listed(client, grpc_server, created.name, at_microsecond) == ["with raw event", "nanoseconds"]
    assert _listed(client, grpc_server, created.name, "2026-01-01T00:00:00.1234567Z") == [
        "with raw event",
        "nanoseconds",
    ]
    assert _listed(client, grpc_server, created.name, "2026-01-01T00:00:00.123458Z") == []
