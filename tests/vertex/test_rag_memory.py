"""ADK's ``VertexAiRagMemoryService`` (2.13) on a Cognizes corpus: sessions in, whole events out, per app and user.

ADK writes a session as a ``.txt`` of JSON lines and, on search, reads each returned
chunk line by line, skipping any line that does not parse: a chunk that cuts a line
loses that event. The corpus here cuts at 40 tokens, so every session spans chunks.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from cognizes.vertex import VertexAiRagMemoryService
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
    events = [Event(author=author, timestamp=1_700_000_000.0 + n, content=types.Content(
        role="user" if author == "user" else "model", parts=[types.Part(text=text)]))
        for n, (author, text) in enumerate(turns)]
    return Session(id=session_id, app_name="mover", user_id=user_id, events=events)


@pytest.fixture(params=sorted(MODES))
def memory(request, server):
    corpus = services.do_create_corpus(app_name=APP, display_name="Memories", chunk_size=40, chunk_overlap=8)
    return VertexAiRagMemoryService(base_url=server.base_url, api_key=server.key, rag_corpus=str(corpus.id),
                                    similarity_top_k=10, **MODES[request.param])


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
    for query, expected in [("Where does she live now?", ALICE[2][1]), ("东京出差", ALICE[3][1]),
                            ("Где живёт брат?", ALICE[4][1]), ("Where do we meet?", ALICE[5][1])]:
        found = _texts(await memory.search_memory(app_name="mover", user_id="alice", query=query))
        assert expected in found, query  # the whole event, as said
        assert set(found) <= said  # every event read back whole: none lost to a cut, none of bob's
    found = await memory.search_memory(app_name="mover", user_id="bob", query="Where did I move?")
    assert _texts(found) == [BOB[0][1]] and found.memories[0].author == "user"
    assert _texts(await memory.search_memory(app_name="mover", user_id="carol", query="Lisbon")) == []
