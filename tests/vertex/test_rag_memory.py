"""ADK's ``VertexAiRagMemoryService`` (2.13) on a Cognizes corpus: sessions in, whole events out, per app and user.

ADK writes a session as a ``.txt`` of JSON lines and, on search, reads each returned
chunk line by line, skipping any line that does not parse: a chunk that cuts a line
loses that event. The corpus here cuts at 40 tokens, so every session spans chunks.
"""

from __future__ import annotations

import agentplatform
import httpx
import pytest
from asgiref.sync import sync_to_async
from google.adk.events import Event
from google.adk.memory import VertexAiRagMemoryService as AdksVertexAiRagMemoryService
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions import Session
from google.genai import types

from cognizes.vertex import VertexAiRagMemoryService, pointed_at
from knowledge_app import services
from knowledge_app.models import Document, DocumentStatus
from tests.polling import eventually
from tests.vertex.conftest import APP, MODES

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = [
    ("user", "Hi! I am planning the move. It is a lot of boxes, honestly. The cat hates it."),
    ("helper", "Moving is hard. Tell me what you need and I will keep it in mind for later."),
    ("user", "I moved to Lisbon in March. The flat is near the river. I walk to work along it every morning."),
    ("user", "我下个月去东京出差。会议在星期二。我住在新宿的酒店。"),
    ("user", "Меня зовут Алиса. Я работаю инженером. Мой брат живёт в Казани."),
    ("user", "Meet me at the Café Brasileira. Bring the map. It's on Rua Garrett, in Chiado."),
]
BOB = [("user", "I moved to Porto last year. I love the bridges there.")]


def _session(session_id: str, user_id: str, turns: list[tuple[str, str]]) -> Session:
    events = [
        Event(
            author=author,
            timestamp=1_700_000_000.0 + n,
            content=types.Content(role="user" if author == "user" else "model", parts=[types.Part(text=text)]),
        )
        for n, (author, text) in enumerate(turns)
    ]
    return Session(id=session_id, app_name="mover", user_id=user_id, events=events)


@pytest.fixture(params=sorted(MODES))
def memory(request, server):
    corpus = services.do_create_corpus(app_name=APP, display_name="Memories", chunk_size=40, chunk_overlap=8)
    return VertexAiRagMemoryService(
        base_url=server.base_url,
        api_key=server.key,
        rag_corpus=str(corpus.id),
        similarity_top_k=10,
        **MODES[request.param],
    )


def _texts(found) -> list[str]:
    return [part.text for entry in found.memories for part in entry.content.parts]


async def test_sessions_added_are_found_whole_in_every_language_and_only_for_their_user(memory, celery_worker):
    await memory.add_session_to_memory(_session("s1", "alice", ALICE))
    await memory.add_session_to_memory(_session("s2", "bob", BOB))

    def indexed() -> bool:
        return Document.objects.filter(status=DocumentStatus.ACTIVE).count() == 2

    assert await eventually(sync_to_async(indexed), timeout=120)
    assert await sync_to_async(lambda: Document.objects.order_by("id").first().chunk_count)() > 2  # cut in chunks

    said = {text for _, text in ALICE}
    for query, expected in [
        ("Where does she live now?", ALICE[2][1]),
        ("东京出差", ALICE[3][1]),
        ("Где живёт брат?", ALICE[4][1]),
        ("Where do we meet?", ALICE[5][1]),
    ]:
        found = _texts(await memory.search_memory(app_name="mover", user_id="alice", query=query))
        assert expected in found, query  # the whole event, as said
        assert set(found) <= said  # every event read back whole: none lost to a cut, none of bob's
    found = await memory.search_memory(app_name="mover", user_id="bob", query="Where did I move?")
    assert _texts(found) == [BOB[0][1]] and found.memories[0].author == "user"
    assert _texts(await memory.search_memory(app_name="mover", user_id="carol", query="Lisbon")) == []


async def _two_sessions_indexed(alices, bobs) -> Document:
    """alice's session added by ``alices`` service, bob's by ``bobs``; alice's file, once both are indexed."""
    await alices.add_session_to_memory(_session("s1", "alice", ALICE))
    await bobs.add_session_to_memory(_session("s2", "bob", BOB))

    def indexed() -> bool:
        return Document.objects.filter(status=DocumentStatus.ACTIVE).count() == 2

    assert await eventually(sync_to_async(indexed), timeout=120)
    return await sync_to_async(lambda: Document.objects.defer("content").get(user_id="alice"))()


async def _bob_sees_nothing_of_alices(server, corpus_id: int, alices: Document, bob_key: str) -> None:
    """bob's key, by any client, asks for alice's file by name and searches the whole corpus: nothing of hers."""
    name = f"ragCorpora/{corpus_id}"
    bob, app = {"x-goog-api-key": bob_key}, {"x-goog-api-key": server.key}
    async with httpx.AsyncClient(base_url=server.base_url + "v1beta1/") as http:

        async def retrieve(headers, **resource) -> list[str]:
            answer = await http.post(
                server.base_url + "v1beta1/:retrieveContexts",
                headers=headers,
                json={
                    "vertexRagStore": {"rag_resources": [{"rag_corpus": name, **resource}]},
                    "query": {"text": "Lisbon river Tokyo Kazan Porto bridges", "similarity_top_k": 50},
                },
            )
            assert answer.status_code == 200, answer.text
            return [c["sourceDisplayName"] for c in answer.json().get("contexts", {}).get("contexts", [])]

        listed = {f["displayName"] for f in (await http.get(f"{name}/ragFiles", headers=bob)).json()["ragFiles"]}
        assert len(listed) == 1 and alices.display_name not in listed  # bob's own file only
        assert (await http.get(f"{name}/ragFiles/{alices.id}", headers=bob)).status_code == 404
        assert (await http.delete(f"{name}/ragFiles/{alices.id}", headers=bob)).status_code == 404
        assert await retrieve(bob, rag_file_ids=[str(alices.id)]) == []
        assert set(await retrieve(bob)) == listed
        assert alices.display_name in await retrieve(app)  # the app's key sees every user's
        assert len((await http.get(f"{name}/ragFiles", headers=app)).json()["ragFiles"]) == 2

    native = f"{server.base_url}api/v1/apps/{APP}/corpora/{corpus_id}/"
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {bob_key}"}) as http:
        assert alices.id not in {d["id"] for d in (await http.get(native + "documents/")).json()["results"]}
        assert (await http.get(native + f"documents/{alices.id}/")).status_code == 404
        assert (await http.get(native + f"documents/{alices.id}/chunks/")).status_code == 404
        assert (await http.delete(native + f"documents/{alices.id}/")).status_code == 404
        hits = (await http.post(native + "search/", json={"query": "Lisbon river", "top_k": 50})).json()
        assert alices.id not in {hit["document_id"] for hit in hits}
        # alice's bytes uploaded by bob: a new document of bob's, not an answer naming (or changing) hers
        content = await sync_to_async(lambda: bytes(Document.objects.get(id=alices.id).content))()
        copied = await http.post(
            native + "documents/?filename=copy.txt", content=content, headers={"Content-Type": "text/plain"}
        )
    assert copied.status_code == 201 and copied.json()["id"] != alices.id and copied.json()["user_id"] == "bob"
    assert await sync_to_async(Document.objects.filter(id=alices.id, user_id=alices.user_id).exists)()


async def test_sessions_added_with_the_apps_key_are_their_users_files_other_users_keys_get_none(
    memory, server, celery_worker
):
    """Issue 41 H as reported: ADK's service, run with the app's key, keeps every user's sessions in one corpus and
    filters by user only in the client; bob's own key, asking the server directly, gets nothing of alice's."""
    alices = await _two_sessions_indexed(memory, memory)
    assert alices.display_name.startswith("adk-memory-v1.")
    bob_key = await sync_to_async(server.key_for)(user_id="bob")
    await _bob_sees_nothing_of_alices(server, alices.corpus_id, alices, bob_key)


async def test_each_user_adds_sessions_with_a_key_of_their_own_and_other_users_keys_get_none(server, celery_worker):
    """With a key per user, ADK's service uploads each user's sessions (a key of one user may upload: the file is
    its user's) and finds them; the other user's key gets nothing of them."""
    corpus = await sync_to_async(services.do_create_corpus)(
        app_name=APP, display_name="Memories", chunk_size=40, chunk_overlap=8
    )
    keys = {user: await sync_to_async(server.key_for)(user_id=user) for user in ("alice", "bob")}
    memories = {
        user: VertexAiRagMemoryService(
            base_url=server.base_url, api_key=key, rag_corpus=str(corpus.id), similarity_top_k=10
        )
        for user, key in keys.items()
    }
    alices = await _two_sessions_indexed(memories["alice"], memories["bob"])
    found = _texts(await memories["alice"].search_memory(app_name="mover", user_id="alice", query="Where do I live?"))
    assert ALICE[2][1] in found
    await _bob_sees_nothing_of_alices(server, corpus.id, alices, keys["bob"])


KENJI = [
    ("user", "来月、大阪の実家に帰ります。母の誕生日は七月十日です。"),
    ("helper", "お母様の誕生日、おめでとうございます。"),
    ("user", "저는 서울에서 요리사로 일하고 있어요. 제일 좋아하는 음식은 김치찌개예요."),
    ("user", "Мой любимый город — Санкт-Петербург, особенно белые ночи."),
    ("user", "J'ai réservé une table à la Brasserie Lipp, à Saint-Germain-des-Prés, pour jeudi."),
    ("user", "我的护照号码在抽屉里，明天要去大使馆办签证。"),
]


@pytest.mark.parametrize("mode", sorted(MODES))
async def test_adks_own_service_reaches_cognizes_inside_pointed_at_and_google_outside(server, mode, celery_worker):
    """ADK's class itself, unchanged: each user's key in ``pointed_at``; each finds their own sessions whole, in
    every language, as ADK's ``MemoryEntry``; the other user's key, asking the server without ADK's filter, gets
    none of them."""
    corpus = await sync_to_async(services.do_create_corpus)(
        app_name=APP, display_name="Memories", chunk_size=40, chunk_overlap=8
    )
    prefix = "projects/my-project/locations/us-central1/" if mode == "project" else ""
    keys = {user: await sync_to_async(server.key_for)(user_id=user) for user in ("kenji", "bob")}
    memory = AdksVertexAiRagMemoryService(rag_corpus=f"{prefix}ragCorpora/{corpus.id}", similarity_top_k=10)

    with pointed_at(server.base_url, api_key=keys["kenji"], **MODES[mode]):
        await memory.add_session_to_memory(_session("k1", "kenji", KENJI))
    with pointed_at(server.base_url, api_key=keys["bob"], **MODES[mode]):
        await memory.add_session_to_memory(_session("b1", "bob", BOB))

    def indexed() -> bool:
        return Document.objects.filter(status=DocumentStatus.ACTIVE).count() == 2

    assert await eventually(sync_to_async(indexed), timeout=120)
    assert await sync_to_async(lambda: Document.objects.get(user_id="kenji").chunk_count)() > 2  # cut in chunks
    said = {text for _, text in KENJI}
    with pointed_at(server.base_url, api_key=keys["kenji"], **MODES[mode]):
        for query, expected in [
            ("母の誕生日はいつ？", KENJI[0][1]),
            ("좋아하는 음식", KENJI[2][1]),
            ("белые ночи", KENJI[3][1]),
            ("Brasserie Lipp jeudi", KENJI[4][1]),
            ("护照在哪里", KENJI[5][1]),
        ]:
            found = await memory.search_memory(app_name="mover", user_id="kenji", query=query)
            assert all(isinstance(entry, MemoryEntry) for entry in found.memories)
            assert expected in _texts(found), query  # the whole event, as said
            assert set(_texts(found)) <= said  # none cut, none of bob's
        helper = [e for e in found.memories if e.author == "helper"]
        assert all(e.content.parts[0].text == KENJI[1][1] for e in helper)
    outside = agentplatform.Client(api_key="not-a-cognizes-key")  # another task's client, outside the block: Google's
    assert "googleapis.com" in outside._api_client._http_options.base_url

    kenjis = await sync_to_async(lambda: Document.objects.defer("content").get(user_id="kenji"))()
    await _bob_sees_nothing_of_alices(server, corpus.id, kenjis, keys["bob"])
