"""Agent Engine's feedback entries through agentplatform 2.6's ``client.feedback_entries`` (and its feedback
contexts) on a real server: tied to sessions and events that exist, listed with filters and order, other apps'
and other users' keys refused, and gone with the session or the user (issue 47 item 4)."""

from __future__ import annotations

import asyncio

import agentplatform
import httpx
import pytest
from google.adk.events.event import Event
from google.genai import types
from google.genai.errors import ClientError

from sessions_app.adk import PostgresSessionService
from sessions_app.models import FeedbackEntry
from sessions_app.services import do_delete_session, do_erase_user
from tests.vertex.conftest import APP

pytestmark = pytest.mark.django_db(transaction=True)


def _session(user_id: str, session_id: str, *texts: str) -> list[str]:
    """A session of APP with one user event per text; the events' ids (ADK's, what feedback names)."""

    async def make() -> list[str]:
        service = PostgresSessionService()
        session = await service.create_session(app_name=APP, user_id=user_id, session_id=session_id)
        ids = []
        for text in texts:
            event = Event(
                author="user", invocation_id="i1", content=types.Content(role="user", parts=[types.Part(text=text)])
            )
            await service.append_event(session, event)
            ids.append(event.id)
        return ids

    return asyncio.run(make())


@pytest.fixture
def entries(server):
    client = agentplatform.Client(api_key=server.key, http_options={"base_url": server.base_url})
    return client.feedback_entries, f"reasoningEngines/{server.engine_id}"


def test_an_entry_is_created_read_listed_updated_given_a_context_and_deleted(entries):
    feedback, engine = entries
    first, second = _session("ada", "s1", "Quel temps fait-il à Zürich ?", "東京の天気は？")

    created = feedback.create(
        name=engine,
        feedback_type="THUMBS_DOWN",
        session_id="s1",
        event_id=first,
        config={
            "feedback_labels": ["non-factual", "неточно"],
            "feedback_text": "Réponse fausse — 答えが違う",
            "source": "ADK Web UI",
            "custom_metadata": {"model": "gemini"},
        },
    ).response
    assert created.name.startswith(f"{engine}/feedbackEntries/")
    assert (created.feedback_type.value, created.session_id, created.event_id, created.user_id) == (
        "THUMBS_DOWN",
        "s1",
        first,
        "ada",  # the session's user, when none is given
    )
    assert created.feedback_text == "Réponse fausse — 答えが違う" and created.feedback_labels == [
        "non-factual",
        "неточно",
    ]
    up = feedback.create(name=engine, feedback_type="THUMBS_UP", session_id="s1", event_id=second).response

    got = feedback.get(name=created.name)
    assert (got.custom_metadata, got.source) == ({"model": "gemini"}, "ADK Web UI")

    newest_first = [e.name for e in feedback.list(parent=engine, config={"order_by": "create_time desc"})]
    assert newest_first == [up.name, created.name]
    paged = feedback.list(parent=engine, config={"page_size": 1})
    assert [e.name for e in paged] == [created.name, up.name]  # the pager follows nextPageToken
    down = feedback.list(parent=engine, config={"filter": 'feedbackType="THUMBS_DOWN" AND feedbackLabels:"неточно"'})
    assert [e.name for e in down] == [created.name]
    assert list(feedback.list(parent=engine, config={"filter": 'session_id="other"'})) == []

    feedback.update(
        name=created.name,
        config={"update_mask": "feedback_text,feedback_labels", "feedback_text": "좋아요", "feedback_labels": []},
    )
    changed = feedback.get(name=created.name)
    assert (changed.feedback_text, changed.feedback_labels or [], changed.feedback_type.value) == (
        "좋아요",
        [],
        "THUMBS_DOWN",
    )

    contexts = feedback.feedback_contexts
    assert contexts.get(parent=created.name).context_events in (None, [])
    contexts.update(
        parent=created.name,
        context_events=[
            {
                "author": "user",
                "invocation_id": "i1",
                "content": {"role": "user", "parts": [{"text": "東京の天気は？"}]},
            }
        ],
    )
    [event] = contexts.get(parent=created.name).context_events
    assert event.content.parts[0].text == "東京の天気は？"

    feedback.delete(name=created.name)
    with pytest.raises(ClientError) as gone:
        feedback.get(name=created.name)
    assert gone.value.code == 404


def test_a_session_or_event_that_does_not_exist_and_hostile_input_are_refused_clearly(entries, server):
    feedback, engine = entries
    [event_id] = _session("ada", "s1", "hello")
    cases = [
        ({"session_id": "nope", "event_id": event_id}, 404),
        ({"session_id": "s1", "event_id": "nope"}, 400),
        ({"session_id": "s1", "event_id": event_id, "feedback_type": "FEEDBACK_TYPE_UNSPECIFIED"}, 400),
    ]
    for fields, code in cases:
        with pytest.raises(ClientError) as refused:
            feedback.create(name=engine, **{"feedback_type": "THUMBS_UP", **fields})
        assert refused.value.code == code, fields

    headers = {"x-goog-api-key": server.key}
    url = f"{server.base_url}v1beta1/{engine}/feedbackEntries"
    hostile = [
        (
            "post",
            url,
            {"json": {"sessionId": "s1", "eventId": event_id, "feedbackType": "THUMBS_UP", "feedbackLabels": "x"}},
        ),
        ("post", url, {"json": {"sessionId": ["s1"], "eventId": event_id, "feedbackType": "THUMBS_UP"}}),
        (
            "post",
            url,
            {"json": {"sessionId": "s1", "eventId": event_id, "feedbackType": "THUMBS_UP", "feedbackText": 5}},
        ),
        ("get", url, {"params": {"filter": 'feedbackType="A" OR userId="b"'}}),
        ("get", url, {"params": {"filter": 'create_time>"yesterday"'}}),
        ("get", url, {"params": {"filter": 'bogus="1"'}}),
        ("get", url, {"params": {"orderBy": "feedback_text; drop table"}}),
        ("get", url, {"params": {"pageToken": "-1"}}),
        ("get", url + "/99999999999999999999999", {}),
    ]
    for method, target, kwargs in hostile:
        response = getattr(httpx, method)(target, headers=headers, timeout=30, **kwargs)
        assert response.status_code in (400, 404), (target, kwargs, response.text)
        assert response.json()["error"]["status"] in ("INVALID_ARGUMENT", "NOT_FOUND")


def test_other_apps_and_other_users_keys_get_404(entries, server):
    feedback, engine = entries
    [event_id] = _session("ada", "s1", "hello")
    name = feedback.create(name=engine, feedback_type="THUMBS_UP", session_id="s1", event_id=event_id).response.name

    for key, sees_the_engine in (
        (server.key_for(app_name="another_app"), False),
        (server.key_for(user_id="bob"), True),
    ):
        other = agentplatform.Client(api_key=key, http_options={"base_url": server.base_url}).feedback_entries
        with pytest.raises(ClientError) as hidden:
            other.get(name=name)
        assert hidden.value.code == 404
        if sees_the_engine:
            assert list(other.list(parent=engine)) == []  # bob's key: none of ada's feedback
        else:
            with pytest.raises(ClientError) as no_engine:
                list(other.list(parent=engine))
            assert no_engine.value.code == 404
        with pytest.raises(ClientError) as refused:
            other.create(name=engine, feedback_type="THUMBS_UP", session_id="s1", event_id=event_id)
        assert refused.value.code == 404
    ada = agentplatform.Client(api_key=server.key_for(user_id="ada"), http_options={"base_url": server.base_url})
    assert [e.name for e in ada.feedback_entries.list(parent=engine)] == [name]


def test_feedback_goes_with_its_session_and_with_its_user(entries):
    feedback, engine = entries
    [one] = _session("ada", "s1", "hello")
    [two] = _session("ada", "s2", "again")
    [three] = _session("bob", "s3", "bob's")
    feedback.create(name=engine, feedback_type="THUMBS_UP", session_id="s1", event_id=one)
    feedback.create(name=engine, feedback_type="THUMBS_UP", session_id="s2", event_id=two)
    feedback.create(name=engine, feedback_type="THUMBS_UP", session_id="s3", event_id=three, config={"user_id": "ada"})

    do_delete_session(app_name=APP, user_id="ada", session_id="s1")
    assert FeedbackEntry.objects.filter(app_name=APP).count() == 2
    do_erase_user(app_name=APP, user_id="ada")
    assert FeedbackEntry.objects.filter(app_name=APP).count() == 0  # s2's with its session, s3's as ada gave it


def test_the_sessions_admin_page_shows_its_feedback_inert(entries, admin_user):
    from django.test import Client

    feedback, engine = entries
    [event_id] = _session("ada", "s1", "Wie ist das Wetter in Köln?")
    feedback.create(
        name=engine,
        feedback_type="THUMBS_DOWN",
        session_id="s1",
        event_id=event_id,
        config={"feedback_text": "<script>alert(1)</script> falsch", "feedback_labels": ["non-factual"]},
    )
    staff = Client()
    staff.force_login(admin_user)
    page = staff.get(f"/admin/sessions_app/session/{FeedbackEntry.objects.get().session_id}/change/").content.decode()

    assert "👎" in page and "non-factual" in page and event_id in page and "user: Wie ist das Wetter in Köln?" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; falsch" in page
