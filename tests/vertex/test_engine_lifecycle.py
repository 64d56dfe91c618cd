"""Engines created, listed, updated and deleted by their clients (issue 45 item 2), with agentplatform 2.6's own
``client.runtimes``, ``client.memory_banks`` and ``client.runtimes.revisions`` against the live server.

An engine a client creates is a new app (named by the engine id) owned by the app of the key that made it: that
app's keys reach it, no other app's do (shared/memory-bank-more-wire.md §2, §4, §5).
"""

from __future__ import annotations

import re

import agentplatform
import httpx
import pytest
from google.genai.errors import ClientError
from google.oauth2.credentials import Credentials

from cognizes.access.models import OwnedApp
from memory_app.models import Memory, MemoryBankConfig
from sessions_app.models import Event, Session
from tests.vertex.conftest import APP
from vertex_app.models import Engine, RuntimeRevision

pytestmark = pytest.mark.django_db(transaction=True)

FULL_NAME = re.compile(r"^projects/[^/]+/locations/[^/]+/reasoningEngines/([0-9]+)$")


def client(server, key: str | None = None, *, project: bool = False) -> agentplatform.Client:
    """agentplatform's client: express mode (an API key), or project mode (a bearer token and a location)."""
    if project:
        return agentplatform.Client(
            project="my-project",
            location="us-central1",
            credentials=Credentials(token=key or server.key),
            http_options={"base_url": server.base_url},
        )
    return agentplatform.Client(api_key=key or server.key, http_options={"base_url": server.base_url})


def engine_id(name: str) -> int:
    return int(name.rsplit("/", 1)[1])


def raw(server, key: str | None = None) -> httpx.Client:
    return httpx.Client(base_url=server.base_url + "v1beta1/", headers={"x-goog-api-key": key or server.key})


def test_runtimes_create_with_no_arguments_makes_an_engine_of_a_new_app_owned_by_the_key_app(server):
    """ADK's sandbox executor and ``adk deploy`` call ``runtimes.create()``: an empty POST, then a GET of the operation,
    whose full name (express mode too) and response the SDK needs."""
    runtimes = client(server).runtimes

    created = runtimes.create()

    name = created.api_resource.name
    assert FULL_NAME.match(name), name
    new_id = engine_id(name)
    assert Engine.objects.get(engine_id=new_id).app_name == str(new_id)
    assert OwnedApp.objects.get(app_name=str(new_id)).owner_app == APP
    assert runtimes.get(name=name).api_resource.name == name
    assert runtimes.get(name=f"reasoningEngines/{new_id}").api_resource.display_name == str(new_id)
    # The new engine is a working Sessions + Memory Bank engine for the key that made it
    sessions = server.sessions(engine_id=new_id)
    import asyncio

    session = asyncio.run(sessions.create_session(app_name=str(new_id), user_id="ada"))
    assert Session.objects.filter(app_name=str(new_id), session_id=session.id).exists()


def test_create_with_a_memory_bank_config_applies_it_and_the_operation_reads_back_in_both_spellings(server):
    runtimes = client(server, project=True).runtimes

    created = runtimes.create(
        config={
            "display_name": "Support bot — 客服",
            "description": "Помощник",
            "labels": {"team": "support"},
            "context_spec": {
                "memory_bank_config": {
                    "customization_configs": [
                        {"memory_topics": [{"managed_memory_topic": {"managed_topic_enum": "USER_PREFERENCES"}}]}
                    ],
                    "ttl_config": {"default_ttl": "3600s"},
                }
            },
        }
    ).api_resource

    assert created.name.startswith("projects/my-project/locations/us-central1/reasoningEngines/")
    assert (created.display_name, created.description, created.labels) == (
        "Support bot — 客服",
        "Помощник",
        {"team": "support"},
    )
    assert created.context_spec.memory_bank_config.ttl_config.default_ttl == "3600s"
    config = MemoryBankConfig.objects.get(app_name=str(engine_id(created.name)))
    assert config.managed_topics == ["preference"] and config.default_ttl.total_seconds() == 3600
    with raw(server) as http:
        posted = http.post("reasoningEngines", json={"displayName": "second"}).json()
        assert re.match(r"^projects/express/locations/us-central1/reasoningEngines/[0-9]+/operations/", posted["name"])
        express = posted["name"].split("/", 4)[4]  # reasoningEngines/{id}/operations/{op}
        for path in (posted["name"], express):
            read = http.get(path)
            assert read.status_code == 200, read.text
            assert read.json()["done"] is True and read.json()["response"]["displayName"] == "second"


def test_list_answers_the_key_app_engine_and_those_it_made_and_nothing_of_another_app(server):
    runtimes = client(server).runtimes
    made = [runtimes.create(config={"display_name": f"bot {i}"}).api_resource.name for i in range(3)]
    other_key = server.key_for(app_name="other_app")
    client(server, other_key).runtimes.create(config={"display_name": "theirs"})

    listed = [engine_id(r.api_resource.name) for r in runtimes.list(config={"page_size": 2})]
    assert listed == [server.engine_id, *map(engine_id, made)]
    assert [r.api_resource.display_name for r in runtimes.list(config={"filter": 'display_name="bot 1"'})] == ["bot 1"]
    assert len(list(client(server).memory_banks.list())) == 4  # every engine is listed as a bank
    assert [r.api_resource.display_name for r in client(server, other_key).runtimes.list()] == ["theirs"]


def test_runtimes_update_with_a_mask_and_memory_banks_update_without_one(server):
    platform = client(server)
    name = platform.runtimes.create(config={"display_name": "first", "description": "kept"}).api_resource.name

    updated = platform.runtimes.update(
        name=name,
        config={
            "display_name": "renamed",
            "context_spec": {"memory_bank_config": {"ttl_config": {"default_ttl": "7200s"}}},
        },
    ).api_resource

    assert (updated.display_name, updated.description) == ("renamed", "kept")
    assert updated.context_spec.memory_bank_config.ttl_config.default_ttl == "7200s"
    bank = platform.memory_banks.update(
        name=name,
        managed_semantic_memory_config={
            "unstructured_memory_configs": [
                {"memory_topics": [{"custom_memory_topic": {"label": "pets", "description": "animals"}}]}
            ]
        },
        config={"display_name": "bank two"},
    )
    read = platform.memory_banks.get(name=bank.name)
    assert read.display_name == "bank two" and read.description == "kept"
    topics = read.managed_semantic_memory_config.unstructured_memory_configs[0].memory_topics
    assert topics[0].custom_memory_topic.label == "pets"


def test_memory_banks_create_get_list_and_delete(server):
    banks = client(server, project=True).memory_banks

    bank = banks.create(
        managed_semantic_memory_config={
            "unstructured_memory_configs": [
                {"memory_topics": [{"managed_memory_topic": {"managed_topic_enum": "USER_PERSONAL_INFO"}}]}
            ]
        },
        config={"display_name": "bank", "description": "d"},
    )

    got = banks.get(name=bank.name)
    assert (got.display_name, got.description) == ("bank", "d")
    assert bank.name in [b.name.replace("projects/my-project/locations/us-central1/", "") for b in banks.list()] or (
        engine_id(bank.name) in [engine_id(b.name) for b in banks.list()]
    )
    assert banks.delete(name=bank.name).done
    with pytest.raises(ClientError) as gone:
        banks.get(name=bank.name)
    assert gone.value.code == 404


def test_delete_refuses_an_engine_with_sessions_or_memories_unless_forced_and_then_erases_them(server):
    import asyncio

    platform = client(server)
    name = platform.runtimes.create().api_resource.name
    new_id = engine_id(name)
    app = str(new_id)
    asyncio.run(server.sessions(engine_id=new_id).create_session(app_name=app, user_id="ada"))
    platform.memory_banks.memories.create(name=name, fact="Ada likes tea.", scope={"app_name": app, "user_id": "bob"})

    with pytest.raises(ClientError) as refused:
        platform.runtimes.delete(name=name)
    assert (refused.value.code, refused.value.status) == (400, "FAILED_PRECONDITION")
    assert Session.objects.filter(app_name=app).count() == 1 and Memory.objects.filter(app_name=app).count() == 1

    deleted = platform.runtimes.delete(name=name, force=True)

    assert deleted.done and deleted.name.startswith(name + "/operations/")
    assert not Session.objects.filter(app_name=app).exists()
    assert not Event.objects.filter(session__app_name=app).exists()
    assert not Memory.objects.filter(app_name=app).exists() and not Engine.objects.filter(engine_id=new_id).exists()
    assert not OwnedApp.objects.filter(app_name=app).exists() and not RuntimeRevision.objects.exists()
    with pytest.raises(ClientError) as gone:
        platform.runtimes.get(name=name)
    assert gone.value.code == 404


def test_an_operator_made_engine_is_not_deleted_through_vertex_even_with_force(server):
    with pytest.raises(ClientError) as refused:
        client(server).runtimes.delete(name=f"reasoningEngines/{server.engine_id}", force=True)
    assert refused.value.status == "FAILED_PRECONDITION" and "cognizes vertex_engine" in refused.value.message
    assert Engine.objects.filter(engine_id=server.engine_id).exists()


def test_another_app_key_reaches_none_of_the_created_engine(server):
    name = client(server).runtimes.create(config={"display_name": "mine"}).api_resource.name
    stranger = client(server, server.key_for(app_name="other_app"))

    for call in (
        lambda: stranger.runtimes.get(name=name),
        lambda: stranger.runtimes.update(name=name, config={"display_name": "stolen"}),
        lambda: stranger.runtimes.delete(name=name, force=True),
        lambda: list(stranger.runtimes.revisions.list(name=name)),
    ):
        with pytest.raises(ClientError) as hidden:
            call()
        assert hidden.value.code == 404
    assert Engine.objects.get(engine_id=engine_id(name)).display_name == "mine"


def test_keys_of_one_user_or_read_only_cannot_create_and_keep_their_limits_in_the_created_app(server):
    name = client(server).runtimes.create().api_resource.name
    app = str(engine_id(name))
    for key in (server.key_for(user_id="ada"), server.key_for(read_only=True)):
        with pytest.raises(ClientError) as refused:
            client(server, key).runtimes.create()
        assert refused.value.code == 403 and "create_api_key" in refused.value.message
    reader = client(server, server.key_for(read_only=True)).runtimes
    assert reader.get(name=name).api_resource.name == name
    with pytest.raises(ClientError) as read_only:
        reader.update(name=name, config={"display_name": "x"})
    assert read_only.value.code == 403
    ada = client(server, server.key_for(user_id="ada")).memory_banks.memories
    with pytest.raises(ClientError) as other_user:
        ada.create(name=name, fact="Bob likes tea.", scope={"app_name": app, "user_id": "bob"})
    assert other_user.value.code == 404
    assert Engine.objects.count() == 2


def test_an_app_made_by_a_client_makes_no_apps_itself(server):
    name = client(server).runtimes.create().api_resource.name
    owned_key = server.key_for(app_name=str(engine_id(name)))

    with pytest.raises(ClientError) as refused:
        client(server, owned_key).runtimes.create()

    assert refused.value.status == "FAILED_PRECONDITION" and Engine.objects.count() == 2


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "reasoningEngines", {"displayName": "x" * 129}),
        ("post", "reasoningEngines", {"displayName": 5}),
        ("post", "reasoningEngines", '{"displayName": "a\\ud800b"}'),
        ("post", "reasoningEngines", {"labels": {"Team": "x"}}),
        ("post", "reasoningEngines", {"labels": {"team": 1}}),
        ("post", "reasoningEngines", {"spec": []}),
        ("post", "reasoningEngines", {"unknownField": 1}),
        ("post", "reasoningEngines", [1]),
        ("post", "reasoningEngines?pageSize=0", {"contextSpec": {"memoryBankConfig": {"disableMemoryRevisions": 1}}}),
        ("get", "reasoningEngines?filter=display_name%3E%22a%22", None),
        ("get", "reasoningEngines?filter=owner%3D%22a%22", None),
        ("patch", "{engine}?updateMask=display_name,secret", {"displayName": "y"}),
        ("patch", "{engine}?updateMask=spec..x", {"displayName": "y"}),
        ("delete", "{engine}", {"force": "yes"}),
        ("delete", "{engine}?force=2", None),
        ("delete", "{engine}", {"force": True, "cascade": True}),
        ("get", "{engine}/runtimeRevisions/%C2%B2", None),
    ],
)
def test_hostile_input_is_a_4xx_in_google_shape_and_changes_nothing(server, method, path, body):
    name = client(server).runtimes.create(config={"display_name": "before"}).api_resource.name
    engine = "reasoningEngines/" + name.rsplit("/", 1)[1]
    content = body if isinstance(body, str) else None
    with raw(server) as http:
        answer = http.request(
            method,
            path.format(engine=engine),
            content=content,
            json=None if content is not None or body is None else body,
            headers={"content-type": "application/json"},
        )
    assert 400 <= answer.status_code < 500, answer.text
    assert answer.json()["error"]["status"] in ("INVALID_ARGUMENT", "NOT_FOUND", "FAILED_PRECONDITION")
    assert Engine.objects.count() == 2 and Engine.objects.get(engine_id=engine_id(name)).display_name == "before"


def test_runtime_revisions_one_per_deployed_configuration(server):
    platform = client(server)
    name = platform.runtimes.create(config={"display_name": "v1"}).api_resource.name
    platform.runtimes.update(name=name, config={"display_name": "v2"})
    platform.runtimes.update(name=name, config={"display_name": "v2"})  # the same configuration: no new revision
    platform.runtimes.update(
        name=name,
        config={
            "class_methods": [{"name": "query", "api_mode": "", "parameters": {"type": "object"}}],
            "container_spec": {"image_uri": "example.com/agent:1"},
        },
    )

    revisions = list(platform.runtimes.revisions.list(name=name))

    assert [r.api_resource.state.value for r in revisions] == ["ACTIVE", "ARCHIVED", "ARCHIVED"]
    current, _, first = (r.api_resource.name for r in revisions)
    assert platform.runtimes.revisions.get(name=current).api_resource.spec.container_spec.image_uri == (
        "example.com/agent:1"
    )
    assert platform.runtimes.get(name=name).api_resource.spec.class_methods[0]["name"] == "query"
    with pytest.raises(ClientError) as refused:
        platform.runtimes.revisions.delete(name=current)
    assert refused.value.status == "FAILED_PRECONDITION"
    assert platform.runtimes.revisions.delete(name=first).done
    assert len(list(platform.runtimes.revisions.list(name=name))) == 2


def test_the_admin_shows_who_made_an_engine_and_its_name_as_inert_text(server, admin_client):
    name = client(server).runtimes.create(config={"display_name": "<script>alert(1)</script> 助手"}).api_resource.name

    listing = admin_client.get("/admin/vertex_app/engine/").content.decode()
    page = admin_client.get(f"/admin/vertex_app/engine/{Engine.objects.get(engine_id=engine_id(name)).pk}/change/")

    assert APP in listing and "&lt;script&gt;alert(1)&lt;/script&gt; 助手" in listing and "<script>alert" not in listing
    assert page.status_code == 200 and APP in page.content.decode()


def test_the_older_vertexai_sdk_creates_and_deletes_the_same_way(server):
    """The Memory Bank quickstart's ``vertexai.Client(...).agent_engines.create(config=…)``."""
    import vertexai

    agent_engines = vertexai.Client(
        project="my-project",
        location="us-central1",
        credentials=Credentials(token=server.key),
        http_options={"base_url": server.base_url},
    ).agent_engines

    created = agent_engines.create(config={"display_name": "quickstart"}).api_resource

    assert FULL_NAME.match(created.name) and created.display_name == "quickstart"
    agent_engines.delete(name=created.name, force=True)
    assert not Engine.objects.filter(engine_id=engine_id(created.name)).exists()


def test_runtimes_update_of_an_operator_made_engine_reads_the_engine_from_the_operation(server):
    """The operation the SDK polls after a PATCH carried no ``response``: ``runtimes.update`` failed reading it."""
    platform = client(server, project=True)
    name = f"projects/my-project/locations/us-central1/reasoningEngines/{server.engine_id}"

    updated = platform.runtimes.update(name=name, config={"description": "Sessions and memory of the shop"})

    assert (updated.api_resource.name, updated.api_resource.description) == (name, "Sessions and memory of the shop")
    assert platform.memory_banks.update(name=name, config={"display_name": "shop"}).name == name
    assert platform.runtimes.get(name=name).api_resource.display_name == "shop"


def test_list_filters_by_labels_whatever_the_label_is_called(server):
    runtimes = client(server).runtimes
    runtimes.create(config={"display_name": "a", "labels": {"contains": "x", "team": "support"}})
    runtimes.create(config={"display_name": "b", "labels": {"team": "sales"}})

    def listed(text: str) -> list[str]:
        return [r.api_resource.display_name for r in runtimes.list(config={"filter": text})]

    assert listed('labels.contains="x"') == ["a"]
    assert listed('labels.team!="support" AND display_name!="vertex_shop"') == ["b"]


def test_the_async_client_creates_lists_updates_and_deletes_the_same_way(server):
    """``client.aio``: memory banks have every method; runtimes (in 2.6) delete and revisions."""
    import asyncio

    aio = client(server).aio

    async def scenario() -> tuple[str, list[str], list[str]]:
        bank = await aio.memory_banks.create(config={"display_name": "async"})
        await aio.memory_banks.update(name=bank.name, config={"display_name": "async 2"})
        listed = [b.display_name async for b in await aio.memory_banks.list()]
        revisions = [r.api_resource.state.value async for r in aio.runtimes.revisions.list(name=bank.name)]
        await aio.runtimes.delete(name=bank.name, force=True)
        return bank.name, listed, revisions

    name, listed, revisions = asyncio.run(scenario())

    assert FULL_NAME.match(name) and listed == [APP, "async 2"] and revisions == ["ACTIVE", "ARCHIVED"]
    assert not Engine.objects.filter(engine_id=engine_id(name)).exists()


def test_the_key_app_reaches_the_created_app_on_the_native_api_too_and_a_stranger_does_not(server):
    app = str(engine_id(client(server).runtimes.create().api_resource.name))
    stranger = server.key_for(app_name="other_app")

    def sessions(key: str) -> int:
        path = f"{server.base_url}api/v1/apps/{app}/users/ada/sessions/"
        return httpx.post(path, json={}, headers={"Authorization": f"Bearer {key}"}).status_code

    assert sessions(server.key) == 201
    assert sessions(stranger) == 404
    assert Session.objects.filter(app_name=app).count() == 1
