"""The sessions admin: staff only, conversations readable, state edits versioned."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from google.adk.errors._stale_session_error import StaleSessionError

from cognizes.adk import PostgresSessionService
from sessions_app import services
from sessions_app.models import AppState, Session, UserState
from tests.sessions.test_contract import text_event

pytestmark = pytest.mark.django_db(transaction=True)

APP = "admin_app"


@pytest.fixture
def conversation():
    """A session with three events and app/user state, written through the ADK service."""
    service = PostgresSessionService()

    async def build():
        session = await service.create_session(
            app_name=APP, user_id="ada", session_id="s1", state={"topic": "weather", "app:unit": "C"}
        )
        await service.append_event(session, text_event("What's the weather in Paris?"))
        await service.append_event(
            session, text_event("Sunny, 21°C.", author="weather_agent", **{"user:city": "Paris"})
        )
        await service.append_event(session, text_event("Thanks!"))
        return session

    return async_to_sync(build)()


def change_url(session_id: str = "s1") -> str:
    pk = Session.objects.get(app_name=APP, user_id="ada", session_id=session_id).pk
    return f"/admin/sessions_app/session/{pk}/change/"


def post_state(client, state, *, loaded_version: int, **attributes):
    session = Session.objects.get(app_name=APP, user_id="ada", session_id="s1")
    count = session.events.count()
    return client.post(
        change_url(),
        {
            "state": state if isinstance(state, str) else json.dumps(state),
            "loaded_version": loaded_version,
            "display_name": "",
            "labels": "{}",
            "expire_time_0": "",
            "expire_time_1": "",
            **attributes,
            "events-TOTAL_FORMS": count,
            "events-INITIAL_FORMS": count,
            "events-MIN_NUM_FORMS": 0,
            "events-MAX_NUM_FORMS": 1000,
        },
    )


def test_admin_is_for_staff_only(client, conversation):
    assert client.get("/admin/sessions_app/session/").status_code == 302
    get_user_model().objects.create_user("visitor", password="pw-123456-x")
    client.login(username="visitor", password="pw-123456-x")
    response = client.get("/admin/sessions_app/session/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_session_list_shows_app_user_and_event_count(admin_client, conversation):
    response = admin_client.get("/admin/sessions_app/session/")

    assert response.status_code == 200
    row = response.context["cl"].result_list[0]
    assert (row.app_name, row.user_id, row.session_id, row.event_count) == (APP, "ada", "s1", 3)
    assert admin_client.get("/admin/sessions_app/session/?q=ada").context["cl"].result_count == 1
    assert admin_client.get("/admin/sessions_app/session/?q=nobody").context["cl"].result_count == 0


def test_session_page_shows_events_in_order_read_only(admin_client, conversation):
    response = admin_client.get(change_url())

    html = response.content.decode()
    assert response.status_code == 200
    positions = [html.index(text) for text in ("What&#x27;s the weather in Paris?", "Sunny, 21°C.", "Thanks!")]
    assert positions == sorted(positions)
    assert "weather_agent" in html
    assert 'name="events-0-author"' not in html  # events cannot be edited


def test_editing_session_state_bumps_the_version_and_makes_agent_copies_stale(admin_client, conversation):
    version = Session.objects.get(session_id="s1").version

    response = post_state(admin_client, {"topic": "travel", "budget": 300}, loaded_version=version)

    assert response.status_code == 302
    session = Session.objects.get(session_id="s1")
    assert session.state == {"topic": "travel", "budget": 300}
    assert session.version == version + 1
    with pytest.raises(StaleSessionError):
        async_to_sync(PostgresSessionService().append_event)(conversation, text_event("too late"))


def test_name_labels_and_expiry_are_edited_without_a_new_version(admin_client, conversation):
    session = Session.objects.get(session_id="s1")

    response = post_state(
        admin_client,
        session.state,
        loaded_version=session.version,
        display_name="Paris trip",
        labels='{"team": "travel"}',
        expire_time_0="2999-01-01",
        expire_time_1="12:00:00",
    )

    assert response.status_code == 302
    edited = Session.objects.get(session_id="s1")
    assert (edited.display_name, edited.labels, edited.expire_time.year) == ("Paris trip", {"team": "travel"}, 2999)
    assert edited.version == session.version  # an agent holding the session is not made stale
    post_state(
        admin_client,
        session.state,
        loaded_version=session.version,
        expire_time_0="2001-01-01",
        expire_time_1="00:00:00",
    )
    assert not Session.objects.live().filter(session_id="s1").exists()  # expired: gone at once, as if deleted


def test_an_edit_from_a_stale_page_is_refused(admin_client, conversation):
    loaded = Session.objects.get(session_id="s1").version
    services.do_replace_session_state(
        app_name=APP, user_id="ada", session_id="s1", state={"topic": "changed elsewhere"}, expected_version=loaded
    )

    response = post_state(admin_client, {"topic": "mine"}, loaded_version=loaded)

    assert response.status_code == 200
    assert "changed elsewhere since you opened the page" in response.content.decode()
    assert Session.objects.get(session_id="s1").state == {"topic": "changed elsewhere"}


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ("{not json", "Enter a valid JSON"),
        ("[1, 2]", "State must be a JSON object"),
        ('{"user:city": "Oslo"}', "Keys with a scope prefix"),
    ],
    ids=["malformed", "not-an-object", "prefixed-key"],
)
def test_invalid_state_is_refused_and_changes_nothing(admin_client, conversation, state, message):
    before = Session.objects.get(session_id="s1")

    response = post_state(admin_client, state, loaded_version=before.version)

    assert response.status_code == 200
    assert message in response.content.decode()
    after = Session.objects.get(session_id="s1")
    assert (after.state, after.version) == (before.state, before.version)


def test_user_state_is_editable_and_seen_by_the_agent(admin_client, conversation):
    user_state = UserState.objects.get(app_name=APP, user_id="ada")

    response = admin_client.post(
        f"/admin/sessions_app/userstate/{user_state.pk}/change/",
        {"state": json.dumps({"city": "Oslo", "unit": "F"}), "loaded_version": user_state.version},
    )

    assert response.status_code == 302
    reloaded = async_to_sync(PostgresSessionService().get_session)(app_name=APP, user_id="ada", session_id="s1")
    assert reloaded.state["user:city"] == "Oslo" and reloaded.state["user:unit"] == "F"


def test_app_state_can_be_added_for_a_new_app(admin_client):
    response = admin_client.post(
        "/admin/sessions_app/appstate/add/", {"app_name": "new_app", "state": '{"greeting": "hi"}', "loaded_version": 0}
    )

    assert response.status_code == 302
    assert AppState.objects.get(app_name="new_app").state == {"greeting": "hi"}
    assert services.get_app_state(app_name="new_app") == ({"greeting": "hi"}, 1)
