"""Point-in-time memory: a memory holds from when it happened until a newer one supersedes it, and search can ask
what held at any moment (``as_of``). Nothing is deleted; no other user's memories ever come back."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_app import services
from memory_app.models import Memory
from memory_app.search import search_memories
from memory_app.services import Candidate
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

APP = "mem_app"
MAY_2023 = datetime(2023, 5, 10, tzinfo=UTC)
MARCH_2024 = datetime(2024, 3, 1, tzinfo=UTC)
QUERY = "where does the user live"


def remember(text: str, *, user: str = "ada", **fields) -> services.Outcome:
    return services.do_remember(app_name=APP, user_id=user, candidates=[Candidate(text=text, **fields)], cause="test")


def found(as_of: datetime | None = None, user: str = "ada") -> list[str]:
    return [h.text for h in search_memories(app_name=APP, user_id=user, query=QUERY, reinforce=False, as_of=as_of)]


@pytest.fixture
def moved():
    """Ada lived in Lisbon from May 2023 and moved to Berlin in March 2024; Bob lives in Oslo since 2020."""
    lisbon = remember("The user lives in Lisbon.", event_time=MAY_2023).created[0]
    berlin = remember("The user lives in Berlin.", event_time=MARCH_2024, supersedes=(str(lisbon),)).created[0]
    remember("The user lives in Oslo.", user="bob", event_time=datetime(2020, 1, 1, tzinfo=UTC))
    return lisbon, berlin


def test_a_superseded_memory_is_closed_not_deleted_and_holds_until_its_successor(moved):
    lisbon, berlin = (Memory.objects.get(id=i) for i in moved)
    assert (lisbon.valid_from, lisbon.valid_until) == (MAY_2023, MARCH_2024)
    assert (berlin.valid_from, berlin.valid_until) == (MARCH_2024, None)


def test_as_of_returns_what_held_then(moved):
    assert found() == ["The user lives in Berlin."]
    assert found(datetime(2023, 12, 24, tzinfo=UTC)) == ["The user lives in Lisbon."]
    assert found(datetime(2024, 6, 1, tzinfo=UTC)) == ["The user lives in Berlin."]
    assert found(datetime(2022, 1, 1, tzinfo=UTC)) == []  # nothing was known to hold yet


def test_as_of_never_returns_another_users_memories(moved):
    for as_of in (None, datetime(2021, 1, 1, tzinfo=UTC), datetime(2023, 12, 24, tzinfo=UTC)):
        assert "The user lives in Oslo." not in found(as_of)
    assert found(datetime(2021, 1, 1, tzinfo=UTC), user="bob") == ["The user lives in Oslo."]


def test_a_restored_memory_holds_again_and_a_forgotten_one_never_comes_back(moved):
    lisbon, berlin = moved
    services.do_restore(memory_id=lisbon, app_name=APP, user_id="ada", cause="test")
    assert Memory.objects.get(id=lisbon).valid_until is None
    services.do_forget(memory_id=berlin, app_name=APP, user_id="ada", cause="test")
    assert found(datetime(2024, 6, 1, tzinfo=UTC)) == ["The user lives in Lisbon."]


def test_the_api_searches_as_of_a_time_and_refuses_a_malformed_one(moved):
    api = client_for(APP)
    url = f"/api/v1/apps/{APP}/users/ada/memories/search/"
    response = api.post(url, {"query": QUERY, "as_of": "2023-12-24T00:00:00Z"}, format="json")
    assert response.status_code == 200, response.content
    assert [hit["text"] for hit in response.json()] == ["The user lives in Lisbon."]
    refused = api.post(url, {"query": QUERY, "as_of": "last May"}, format="json")
    assert refused.status_code == 400 and "as_of" in refused.json()["error"]["details"]


def test_the_admin_lists_and_searches_what_held_at_a_moment(admin_client, moved):
    url = "/admin/memory_app/memory/"
    scope = {"app_name__exact": APP, "user_id__exact": "ada"}

    def rows(**params) -> list[str]:
        response = admin_client.get(url, {**scope, **params})
        assert response.status_code == 200
        return [m.text for m in response.context["cl"].result_list]

    assert rows(as_of="2023-06-01") == ["The user lives in Lisbon."]
    assert rows(as_of="2024-06-01T12:00:00Z") == ["The user lives in Berlin."]
    assert rows(as_of="2023-06-01", q=QUERY) == ["The user lives in Lisbon."]
    assert rows(q=QUERY) == ["The user lives in Berlin."]
    assert admin_client.get(url, {**scope, "as_of": "not a time"}).url.endswith("?e=1")


def test_the_admin_and_search_agree_on_what_held_at_each_boundary():
    """The as_of rule is written twice, as SQL (search) and as a queryset (admin, Vertex list): at the very moments
    a memory starts, stops and expires, and for every status, both must hold the same memories."""
    t = [datetime(2024, month, 1, tzinfo=UTC) for month in range(1, 7)]
    lives = {
        "The user lives in Porto.": {"valid_from": t[0], "valid_until": t[2], "status": "superseded"},
        "The user lives in Rome.": {"valid_from": t[2], "valid_until": None, "expires_at": t[4], "status": "active"},
        "The user lives in Kyiv.": {"valid_from": t[1], "valid_until": None, "status": "active"},
        "The user lives in Nice.": {"valid_from": t[0], "valid_until": None, "status": "forgotten"},
        "The user lives in Riga.": {"valid_from": t[3], "valid_until": t[5], "status": "superseded"},
    }
    for text, fields in lives.items():
        Memory.objects.filter(id=remember(text).created[0]).update(**fields)
    remember("The user lives in Oslo.", user="bob")

    for moment in [*t, *(m.replace(second=1) for m in t)]:
        admin = set(Memory.objects.held_at(moment).filter(app_name=APP, user_id="ada").values_list("text", flat=True))
        assert set(found(moment)) == admin, moment
    assert set(found(t[3])) == {"The user lives in Rome.", "The user lives in Kyiv.", "The user lives in Riga."}
