"""Vertex AI's gRPC surface: SessionService, MemoryBankService and Operations on a port of their own.

ADK for Go speaks only gRPC (``session/vertexai`` builds an aiplatform gRPC
client), and uvicorn speaks no HTTP/2, so this is a separate server
(``manage.py serve_grpc``, started by ``make run`` on ``COGNIZES_GRPC_PORT``).
Each call is transcoded (vertex_app.transcoding) to the REST request Google maps
it to and handed to Django's own WSGI handler in this process: the same views,
middleware, keys, scopes, throttling and outage handling as REST, no socket
in between. Keys come as per-call metadata, ``x-goog-api-key`` or
``authorization: Bearer``. HTTP errors become Google's status codes; a method
not served is UNIMPLEMENTED, bytes that are not the request message
INVALID_ARGUMENT, a message past ``COGNIZES_API_MAX_BODY_BYTES``
RESOURCE_EXHAUSTED. With ``COGNIZES_GRPC_TLS_CERT`` and ``COGNIZES_GRPC_TLS_KEY``
(PEM files) it serves TLS, as Google's endpoints do, so clients may send keys
with ``option.WithAPIKey``.
"""

from __future__ import annotations

import io
import json
import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from django.conf import settings
from django.core.wsgi import get_wsgi_application
from google.protobuf.message import DecodeError, Message
from rest_framework.response import Response

from cognizes.access.renderers import DATA_ONLY
from vertex_app import transcoding
from vertex_app.errors import STATUS

logger = logging.getLogger(__name__)

PORT = int(os.environ.get("COGNIZES_GRPC_PORT", "50051"))
THREADS = int(os.environ.get("COGNIZES_GRPC_THREADS", "16"))
"""Calls served at once (each holds a thread, and a database connection, while it runs)."""
WAIT_LIMIT_SECONDS = 60.0
WAIT_INTERVAL_SECONDS = 0.2
FORWARDED_METADATA = ("x-goog-api-key", "authorization", "user-agent", "x-goog-api-client")
"""What of a call's metadata reaches the REST request, as headers: the key and who calls."""

HTTP_CODES = {
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    404: grpc.StatusCode.NOT_FOUND,
    405: grpc.StatusCode.UNIMPLEMENTED,
    408: grpc.StatusCode.DEADLINE_EXCEEDED,
    409: grpc.StatusCode.ALREADY_EXISTS,
    413: grpc.StatusCode.RESOURCE_EXHAUSTED,
    429: grpc.StatusCode.RESOURCE_EXHAUSTED,
    503: grpc.StatusCode.UNAVAILABLE,
}
"""HTTP statuses whose gRPC code is not the ``status`` name of Google's error body (or that carry none)."""


class Transcoder(grpc.GenericRpcHandler):
    """Serves every method ``transcoding.RULES`` names through the Django application ``app``."""

    def __init__(self, app: Callable[..., Any], *, secure: bool) -> None:
        self.app = app
        self.scheme = "https" if secure else "http"
        self.host = next((h.lstrip(".") for h in settings.ALLOWED_HOSTS if h not in ("*", "")), "localhost")

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        rule = transcoding.rule_for(handler_call_details.method)
        if rule is None:
            return None  # grpc answers UNIMPLEMENTED
        serve = self.wait if rule is transcoding.WAIT_OPERATION else self.unary
        # Raw bytes in and out: a request that does not parse is the caller's INVALID_ARGUMENT, not INTERNAL.
        return grpc.unary_unary_rpc_method_handler(lambda data, context: serve(rule, data, context))

    def unary(self, rule: transcoding.Rule, data: bytes, context: grpc.ServicerContext) -> bytes:
        request = _parse(rule, data, context)
        return self.call(rule, request, context).SerializeToString()

    def wait(self, rule: transcoding.Rule, data: bytes, context: grpc.ServicerContext) -> bytes:
        """``WaitOperation``: the operation once done, or as it is when its timeout (at most a minute) is up."""
        request = _parse(rule, data, context)
        limit = request.timeout.ToTimedelta().total_seconds() if request.HasField("timeout") else WAIT_LIMIT_SECONDS
        remaining = context.time_remaining()
        deadline = time.monotonic() + min(limit, WAIT_LIMIT_SECONDS, remaining if remaining is not None else limit)
        get = transcoding.RULES[transcoding.OPERATIONS]["GetOperation"]
        while True:
            operation = self.call(get, request, context)
            if operation.done or time.monotonic() + WAIT_INTERVAL_SECONDS > deadline or not context.is_active():
                return operation.SerializeToString()
            time.sleep(WAIT_INTERVAL_SECONDS)

    def call(self, rule: transcoding.Rule, request: Message, context: grpc.ServicerContext) -> Message:
        """The REST call ``rule`` makes of ``request``, through Django; its error as a gRPC status."""
        try:
            http = transcoding.http_call(rule, request)
        except transcoding.BadRequest as error:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        status, body, data = self.dispatch(http, context)
        if status >= 400:
            code, message = _status(status, body)
            context.abort(code, message)
        try:
            return transcoding.response_message(rule, body, data)
        except Exception:  # a response the proto cannot hold is this server's fault
            logger.exception("The REST response of %s did not fit %s", http.path, rule.response.DESCRIPTOR.full_name)
            context.abort(grpc.StatusCode.INTERNAL, "The response could not be written as a protocol buffer.")

    def dispatch(self, http: transcoding.HttpCall, context: grpc.ServicerContext) -> tuple[int, bytes, Any]:
        """Run the REST request through the WSGI application: (status, body, the data a DRF view answered
        (rendered as that body, or, when its renderer honours ``DATA_ONLY``, left unwritten), or None)."""
        environ = {
            "REQUEST_METHOD": http.verb,
            "PATH_INFO": http.path,
            "QUERY_STRING": http.query,
            "SCRIPT_NAME": "",
            "SERVER_NAME": self.host,
            "SERVER_PORT": str(PORT),
            "HTTP_HOST": self.host,
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": _peer_address(context.peer()),
            "wsgi.input": io.BytesIO(http.body),
            "wsgi.url_scheme": self.scheme,
            "wsgi.errors": io.StringIO(),
            "wsgi.version": (1, 0),
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            DATA_ONLY: True,  # the message is built from the view's data: views that can leave it unwritten do
        }
        if http.body:
            environ.update(CONTENT_TYPE="application/json", CONTENT_LENGTH=str(len(http.body)))
        for key, value in context.invocation_metadata():
            if key in FORWARDED_METADATA and isinstance(value, str):
                environ["HTTP_" + key.upper().replace("-", "_")] = value
        started: list[str] = []
        chunks = self.app(environ, lambda status, headers, exc_info=None: started.append(status))
        try:
            body = b"".join(chunks)
        finally:
            if hasattr(chunks, "close"):
                chunks.close()  # Django's request_finished: the thread's database connection is tidied
        return int(started[0].split(" ", 1)[0]), body, chunks.data if isinstance(chunks, Response) else None


def _parse(rule: transcoding.Rule, data: bytes, context: grpc.ServicerContext) -> Message:
    try:
        return rule.request.FromString(data)
    except DecodeError:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"The request is not a {rule.request.DESCRIPTOR.full_name}.")


def _status(http_status: int, body: bytes) -> tuple[grpc.StatusCode, str]:
    """Google's status code and message of a REST error."""
    try:
        error = json.loads(body)["error"]
        name, message = str(error.get("status", "")), str(error.get("message", ""))
    except (ValueError, KeyError, TypeError, AttributeError):
        name, message = STATUS.get(http_status, ""), body.decode("utf-8", "replace")[:500]
    code = HTTP_CODES.get(http_status) or getattr(grpc.StatusCode, name, None) or grpc.StatusCode.INTERNAL
    if http_status == 409 and name == "ABORTED":
        code = grpc.StatusCode.ABORTED
    return code, message or f"HTTP {http_status}"


def _peer_address(peer: str) -> str:
    """``ipv4:127.0.0.1:5678`` / ``ipv6:[::1]:5678`` → the address alone."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv6":
        return rest.rsplit(":", 1)[0].strip("[]")
    return rest.rsplit(":", 1)[0] if kind == "ipv4" else "127.0.0.1"


def credentials() -> grpc.ServerCredentials | None:
    """TLS credentials from ``COGNIZES_GRPC_TLS_CERT`` / ``COGNIZES_GRPC_TLS_KEY``, or None (plaintext)."""
    cert, key = os.environ.get("COGNIZES_GRPC_TLS_CERT"), os.environ.get("COGNIZES_GRPC_TLS_KEY")
    if not cert and not key:
        return None
    if not (cert and key):
        raise SystemExit("Set both COGNIZES_GRPC_TLS_CERT and COGNIZES_GRPC_TLS_KEY, or neither.")
    with open(key, "rb") as key_file, open(cert, "rb") as cert_file:
        return grpc.ssl_server_credentials([(key_file.read(), cert_file.read())])


def build(
    *, host: str = "127.0.0.1", port: int = PORT, tls: grpc.ServerCredentials | None = None
) -> tuple[grpc.Server, int]:
    """A server on ``host:port`` (0: any free port), not yet started, and the port it got (0: none)."""
    limit = settings.COGNIZES_API_MAX_BODY_BYTES
    server = grpc.server(
        ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="grpc"),
        handlers=[Transcoder(get_wsgi_application(), secure=tls is not None)],
        # No SO_REUSEPORT (grpc's default): a second server on a taken port fails instead of sharing it.
        options=[("grpc.max_receive_message_length", limit), ("grpc.so_reuseport", 0)],
        maximum_concurrent_rpcs=THREADS * 8,
    )
    address = f"{host}:{port}"
    try:
        bound = server.add_secure_port(address, tls) if tls else server.add_insecure_port(address)
    except RuntimeError:  # grpcio raises where it once returned 0
        bound = 0
    return server, bound
