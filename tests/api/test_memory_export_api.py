"""GET /api/v1/apps/{app}/memories/export/ (issue 45 item 5): the app's memories as ``cognizes export`` writes them,
streamed; a key of one user gets that user's only, and no key reaches another app's."""

from __future__ import annotations

import io
import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.db import connection

from cognizes.access.services import do_create_api_key
from memory_app.models import Memory
from memory_app.services import Candidate, do_remember
from memory_app.services.transfer import do_import_memories
from tests.api.conftest import client_for
from tests.polling import wait_for

# The export is read by a thread of its own (its own connection): the rows must be committed, not in a test's
# transaction.
pytestmark = pytest.mark.django_db(transaction=True)

SAID = {
    "ada": ["我对花生过敏。", "毎朝コーヒーを飲みます。", "La crème brûlée à Noël."],
    "bob": ["Боб играет на гитаре."],
}


@pytest.fixture
def memories() -> None:
    for user, texts in SAID.items():
        do_remember(app_name="shop", user_id=user, candidates=[Candidate(text=t) for t in texts], cause="test")
    do_remember(app_name="crm", user_id="ada", candidates=[Candidate(text="A secret of crm.")], cause="test")


def _body(response) -> bytes:
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("application/x-ndjson")
    return b"".join(response.streaming_content)


def test_an_app_key_streams_every_memory_of_its_app_which_imports_elsewhere_as_they_were(memories, asgi_server):
    """Through the ASGI server, which reads a stream's chunks on any of its threads: many chunks of ~64 KB."""
    many = [f"第{i}条：Заметка номер {i}, café nº {i}." for i in range(60)]
    do_remember(app_name="shop", user_id="cy", candidates=[Candidate(text=t) for t in many], cause="test")
    _, key = do_create_api_key(name="t", app_name="shop")

    def export() -> bytes:
        with httpx.stream(
            "GET", f"{asgi_server}/api/v1/apps/shop/memories/export/", headers={"Authorization": f"Bearer {key}"}
        ) as response:
            assert response.status_code == 200 and response.headers["content-type"].startswith("application/x-ndjson")
            return b"".join(response.iter_raw())

    with ThreadPoolExecutor(4) as pool:  # at once: the server's threads take turns reading their chunks
        bodies = list(pool.map(lambda _: export(), range(4)))
    body = bodies[0]
    assert all(other.split(b"\n")[1:] == body.split(b"\n")[1:] for other in bodies)

    lines = body.decode("utf-8").splitlines()
    assert json.loads(lines[0])["app"] == "shop" and len(lines) == 1 + 64
    report = do_import_memories(io.BytesIO(body), app_name="shop_copy")
    assert report.created == 64
    assert sorted(Memory.objects.filter(app_name="shop_copy").values_list("user_id", "text")) == sorted(
        Memory.objects.filter(app_name="shop").values_list("user_id", "text")
    )
    # The export's transaction ended on the connection it began on (the server's threads take turns reading).
    wait_for(lambda: not _idle_in_transaction(), 5, "no connection left in a transaction")


def _idle_in_transaction() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND state LIKE 'idle in transaction%'"
        )
        return cursor.fetchall()


def test_a_users_key_exports_its_own_memories_and_no_one_elses(memories):
    ada = client_for("shop", user_id="ada")

    body = _body(ada.get("/api/v1/apps/shop/memories/export/"))

    texts = [json.loads(line)["text"] for line in body.decode("utf-8").splitlines()[1:]]
    assert sorted(texts) == sorted(SAID["ada"])
    assert ada.get("/api/v1/apps/shop/memories/export/", {"user": "bob"}).status_code == 403
    assert client_for("shop").get("/api/v1/apps/crm/memories/export/").status_code == 404  # as every other app path
