"""A body is read only once its sender is known, and every early refusal reaches a plain client (issue 41 J4).

Before: an unauthenticated POST declaring 50 MB was read whole before its 401, and a 2 MiB body over the limit got
its 413 and an immediate close, which Python's http.client read in 9 tries of 40 (the rest: broken pipe or reset).
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from urllib.parse import urlsplit

import pytest
from django.test import override_settings

from cognizes.access.services import do_create_api_key
from knowledge_app import services
from knowledge_app.models import Document

pytestmark = pytest.mark.django_db(transaction=True)

TRIES = 40
BODY = b"x" * (2 * 1024 * 1024)
FIFTY_MB = 50 * 1024 * 1024


def _plain_post(base: str, path: str, headers: dict[str, str]) -> int | str:
    """What http.client reads for a 2 MiB POST: the status, or the error it met instead."""
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request("POST", path, body=BODY, headers={"Content-Type": "application/json", **headers})
        response = connection.getresponse()
        response.read()
        return response.status
    except OSError as error:
        return type(error).__name__
    finally:
        connection.close()


@override_settings(COGNIZES_API_MAX_BODY_BYTES=64 * 1024)
def test_every_early_refusal_reaches_a_plain_client(asgi_server):
    _, key = do_create_api_key(name="t", app_name="shop")
    path = "/api/v1/apps/shop/users/ada/sessions/"
    too_large = [_plain_post(asgi_server, path, {"Authorization": f"Bearer {key}"}) for _ in range(TRIES)]
    assert too_large == [413] * TRIES
    no_key = [_plain_post(asgi_server, path, {}) for _ in range(TRIES)]
    assert no_key == [401] * TRIES


def _answer_to_head_alone(base: str, head: str) -> tuple[int, dict, float]:
    """Send only a request's head (it declares 50 MB, none of which is sent): the status and body, and how long."""
    url = urlsplit(base)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        started = time.monotonic()
        sock.sendall(head.encode())
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            data = sock.recv(65536)
            if not data:
                break
            answer += data
    head_part, _, body = answer.partition(b"\r\n\r\n")
    return int(head_part.split(b" ", 2)[1]), json.loads(body), time.monotonic() - started


def _head(path: str, **headers: str) -> str:
    lines = [
        f"POST {path} HTTP/1.1",
        "Host: 127.0.0.1",
        f"Content-Length: {FIFTY_MB}",
        *(f"{name.replace('_', '-')}: {value}" for name, value in headers.items()),
    ]
    return "\r\n".join(lines) + "\r\n\r\n"


@pytest.mark.parametrize(
    "credentials",
    [
        {},
        {"Authorization": "Bearer cgz_00000000_wrong"},
        {"x_goog_api_key": "cgz_00000000_wrong"},
        {"Cookie": "sessionid=forged"},
    ],
    ids=["none", "wrong-bearer", "wrong-google-key", "forged-session"],
)
def test_a_body_without_a_valid_key_is_refused_before_a_byte_of_it_is_read(asgi_server, credentials):
    services.do_create_corpus(app_name="shop", display_name="Handbook")
    for path in (
        "/api/v1/apps/shop/corpora/1/documents/",
        "/api/v1/apps/shop/users/ada/sessions/s/artifacts/a.txt/content/",
        "/v1beta1/projects/p/locations/l/ragCorpora",
    ):
        status, body, took = _answer_to_head_alone(asgi_server, _head(path, **credentials))
        assert status == 401 and took < 5, (path, body)
        assert "key" in json.dumps(body).lower()


def test_an_upload_url_with_a_bad_token_is_refused_before_its_bytes(asgi_server):
    status, body, took = _answer_to_head_alone(
        asgi_server,
        _head(
            "/upload/v1beta1/ragCorpora/1/ragFiles:upload?upload_id=made.up:token",
            X_Goog_Upload_Command="upload, finalize",
            X_Goog_Upload_Offset="0",
        ),
    )
    assert status == 403 and "not valid" in body["error"]["message"] and took < 5
    assert not Document.objects.exists()
