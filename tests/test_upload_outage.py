"""Redis down while a RAG Engine upload's bytes arrive (issue 41 K): a 503 with Retry-After, not a 500; the bytes
are kept, and the client's retry finishes the upload with one file, not two.

Against a private stack (tests/stack.py), whose Redis is killed with SIGKILL and restarted on the same socket.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest

from tests.knowledge.test_api import HANDBOOK
from tests.stack import Stack

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    stack = Stack(tmp_path_factory.mktemp("stack"))
    yield stack
    stack.close()


def test_with_redis_down_an_uploads_bytes_get_a_503_and_its_retry_finishes_it(stack):
    with stack.client() as api:
        corpus = api.post("/api/v1/apps/weather/corpora/", json={"display_name": "Handbook"}).json()["id"]
        started = api.post(f"/upload/v1beta1/ragCorpora/{corpus}/ragFiles:upload", json={"ragFile": {}}, headers={
            "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
            "X-Goog-Upload-Header-Content-Type": "text/markdown", "X-Goog-Upload-File-Name": "handbook.md"})
        url = urlsplit(started.headers["X-Goog-Upload-URL"])
        upload = f"{url.path}?{url.query}"
        bytes_headers = {"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "0"}
        keyless = httpx.Client(base_url=stack.base, timeout=30)  # the URL is the capability: no key with the bytes
        stack.redis.kill()
        try:
            refused = keyless.post(upload, content=HANDBOOK.encode(), headers=bytes_headers)
            assert refused.status_code == 503 and refused.headers["Retry-After"] == "5", refused.text
            assert "Redis" in refused.json()["error"]["message"]
            kept = api.get(f"/api/v1/apps/weather/corpora/{corpus}/documents/").json()
            assert [d["source_uri"] for d in kept["results"]] == ["handbook.md"]  # the bytes that arrived are kept
        finally:
            stack.redis.start()
        retried = keyless.post(upload, content=HANDBOOK.encode(), headers=bytes_headers)
        assert retried.status_code == 200 and retried.headers["X-Goog-Upload-Status"] == "final", retried.text
        files = api.get(f"/v1beta1/ragCorpora/{corpus}/ragFiles").json()["ragFiles"]
        assert [f["name"] for f in files] == [retried.json()["ragFile"]["name"]]
        again = keyless.post(upload, content=b"Other bytes.", headers=bytes_headers)
        assert again.status_code == 403  # spent once it finished
