"""Bodies over the limit or too slow are refused while they arrive, over a real ASGI server and raw sockets.

Before: a chunked body over the limit answered 400 after being read whole, and a
client that declared more bytes than it sent held the request until it gave up.
"""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import urlsplit

import pytest
from django.test import override_settings

from cognizes.access.services import do_create_api_key
from sessions_app.models import Session

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 64 * 1024


def _exchange(base: str, head: str, chunks: list[bytes] = (), *, pause: float = 0) -> tuple[int, dict, float]:
    """Send a request's head and body chunks on a raw socket; the status, JSON body and seconds to the answer."""
    url = urlsplit(base)
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        started = time.monotonic()
        sock.sendall(head.encode())
        try:
            for chunk in chunks:
                sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):  # refused before the rest was sent
            pass
        time.sleep(pause)
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _length(answer):
            data = sock.recv(65536)
            if not data:
                break
            answer += data
        took = time.monotonic() - started
    status = int(answer.split(b" ", 2)[1])
    return status, json.loads(answer.split(b"\r\n\r\n", 1)[1] or b"null"), took


def _length(answer: bytes) -> int:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 1 << 30


def _head(method: str, path: str, key: str, **headers: str) -> str:
    lines = [
        f"{method} {path} HTTP/1.1",
        "Host: 127.0.0.1",
        f"Authorization: Bearer {key}",
        "Content-Type: application/json",
        *(f"{k.replace('_', '-')}: {v}" for k, v in headers.items()),
    ]
    return "\r\n".join(lines) + "\r\n\r\n"


def _chunked(data: bytes, size: int = 8192) -> list[bytes]:
    return [b"%x\r\n%s\r\n" % (len(data[i : i + size]), data[i : i + size]) for i in range(0, len(data), size)] + [
        b"0\r\n\r\n"
    ]


@override_settings(COGNIZES_API_MAX_BODY_BYTES=LIMIT, COGNIZES_API_BODY_TIMEOUT_SECONDS=2)
def test_a_chunked_body_over_the_limit_is_a_413_like_a_sized_one(asgi_server):
    _, key = do_create_api_key(name="t", app_name="shop")
    path = "/api/v1/apps/shop/users/ada/sessions/"
    big = json.dumps({"id": "big", "state": {"blob": "x" * (LIMIT * 4)}}).encode()

    chunked = _exchange(asgi_server, _head("POST", path, key, Transfer_Encoding="chunked"), _chunked(big))
    sized = _exchange(asgi_server, _head("POST", path, key, Content_Length=str(len(big))), [big])
    assert (
        chunked[:2]
        == sized[:2]
        == (
            413,
            {
                "error": {
                    "code": "payload_too_large",
                    "message": f"The request body is larger than {LIMIT} bytes.",
                    "details": None,
                }
            },
        )
    )
    small = json.dumps({"id": "small"}).encode()
    assert _exchange(asgi_server, _head("POST", path, key, Transfer_Encoding="chunked"), _chunked(small))[0] == 201
    assert list(Session.objects.values_list("session_id", flat=True)) == ["small"]


@override_settings(COGNIZES_API_MAX_BODY_BYTES=LIMIT, COGNIZES_API_BODY_TIMEOUT_SECONDS=2)
def test_a_body_that_never_arrives_is_a_408_within_the_timeout(asgi_server):
    _, key = do_create_api_key(name="t", app_name="shop")
    path = "/api/v1/apps/shop/users/ada/sessions/"
    status, body, took = _exchange(asgi_server, _head("POST", path, key, Content_Length="1000"), [b'{"id": "s'])
    assert (status, body["error"]["code"]) == (408, "request_timeout") and took < 5
    vertex = _exchange(asgi_server, _head("POST", "/v1beta1/reasoningEngines/1/sessions", key, Content_Length="1000"))
    assert vertex[:2] == (
        408,
        {
            "error": {
                "code": 408,
                "message": "The request body did not arrive within 2 s.",
                "status": "DEADLINE_EXCEEDED",
            }
        },
    )
    assert not Session.objects.exists()
