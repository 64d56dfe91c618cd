"""An external MCP server's connection goes to the address that was checked (issue 41 J5: DNS rebinding).

The resolver is ours: ``socket.getaddrinfo`` is replaced in-process, so a name can answer a public address
to the first lookup and 127.0.0.1 to the next, as a rebinding DNS server does. The listeners are real
sockets on loopback; a listener that is reached records the connection.
"""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator

import httpx2
import pytest

from tests.vertex.conftest import self_signed_certificate
from tools_app.mcp_toolsets import RegistryMcpToolset
from tools_app.models import McpServer
from tools_app.outbound import BlockedHost, pinned_client

PUBLIC = "93.184.216.34"  # a global address (example.com's, once): the guard lets it through


class Resolver:
    """``socket.getaddrinfo`` answering ``name`` with ``answers`` in turn (the last one again and again)."""

    def __init__(self, name: str, *answers: str) -> None:
        self.name, self.answers, self.lookups = name, list(answers), 0
        self.real = socket.getaddrinfo

    def __call__(self, host, port, *args, **kwargs):
        if (host.decode() if isinstance(host, bytes) else host) != self.name:  # anyio asks with IDNA bytes
            return self.real(host, port, *args, **kwargs)
        address = self.answers[min(self.lookups, len(self.answers) - 1)]
        self.lookups += 1
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port or 0))]


@pytest.fixture
def listener() -> Iterator[tuple[int, list[str]]]:
    """A loopback port that records every connection made to it (and answers nothing): (port, connections)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    reached: list[str] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, peer = server.accept()
            except OSError:
                continue
            reached.append(peer[0])
            connection.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], reached
    stop.set()
    thread.join(2)
    server.close()


@pytest.mark.django_db(transaction=True)  # the toolset's spans are stored
async def test_an_mcp_server_whose_name_rebinds_to_loopback_after_the_check_is_never_reached(
    listener, monkeypatch, settings
):
    """Before: the URL was checked (a public address), then the MCP client resolved it again (127.0.0.1)."""
    settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK = False
    port, reached = listener
    resolver = Resolver("rebind.test", PUBLIC, "127.0.0.1")
    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    toolset = RegistryMcpToolset(
        McpServer(app_name="shop", name="rebinding", url=f"http://rebind.test:{port}/mcp", timeout_seconds=2)
    )

    tools = await toolset.get_tools()

    assert tools == []
    assert reached == []
    assert resolver.lookups >= 2  # the check's lookup, and the connection's own (refused: loopback)


async def test_a_request_connects_to_the_address_its_single_lookup_checked(listener, monkeypatch, settings):
    settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK = False
    port, reached = listener
    resolver = Resolver("rebind.test", PUBLIC, "127.0.0.1")
    monkeypatch.setattr(socket, "getaddrinfo", resolver)

    async with pinned_client(timeout=httpx2.Timeout(1.0)) as client:
        with pytest.raises(httpx2.TransportError):  # the public address: not reachable from the test machine
            await client.get(f"http://rebind.test:{port}/")

    assert resolver.lookups == 1
    assert reached == []


async def test_a_name_that_resolves_to_loopback_is_refused_before_any_connection(listener, monkeypatch, settings):
    settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK = False
    port, reached = listener
    monkeypatch.setattr(socket, "getaddrinfo", Resolver("inside.test", "127.0.0.1"))

    async with pinned_client() as client:
        for url in (f"http://inside.test:{port}/", f"http://127.0.0.1:{port}/", f"http://localhost:{port}/"):
            with pytest.raises(BlockedHost):
                await client.get(url)

    assert reached == []


class _Recorder(http.server.BaseHTTPRequestHandler):
    hosts: list[str] = []

    def do_GET(self) -> None:
        type(self).hosts.append(self.headers["Host"])
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args) -> None:
        pass


async def test_an_allowed_host_is_reached_at_its_checked_address_under_its_own_name(monkeypatch, settings):
    """Pinning keeps the Host header (and TLS's server name) of the URL: virtual hosts and certificates still work."""
    settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK = True  # as the tests reach loopback servers
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    resolver = Resolver("tools.test", "127.0.0.1")
    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    try:
        async with pinned_client() as client:
            response = await client.get(f"http://tools.test:{port}/hello")
    finally:
        server.shutdown()
        server.server_close()

    assert (response.status_code, response.text) == (200, "ok")
    assert str(response.request.url) == f"http://tools.test:{port}/hello"
    assert _Recorder.hosts == [f"tools.test:{port}"]
    assert resolver.lookups == 1


async def test_tls_to_a_pinned_address_verifies_the_certificate_of_the_hostname(monkeypatch, settings, tmp_path):
    """The connection goes to the address, but TLS asks for (SNI) and verifies the URL's name."""
    import ssl

    from tools_app.outbound import PinnedTransport

    settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK = True
    cert, key = self_signed_certificate(tmp_path, "tools.test", ip=None)  # no IP
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    server.socket = served.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    monkeypatch.setattr(socket, "getaddrinfo", Resolver("tools.test", "127.0.0.1"))
    trusted = ssl.create_default_context(cafile=cert)
    try:
        async with httpx2.AsyncClient(transport=PinnedTransport(httpx2.AsyncHTTPTransport(verify=trusted))) as client:
            response = await client.get(f"https://tools.test:{port}/hello")
    finally:
        server.shutdown()
        server.server_close()

    assert (response.status_code, response.text) == (200, "ok")


@pytest.mark.django_db(transaction=True)
async def test_an_openapi_tool_whose_name_rebinds_to_loopback_is_not_reached_either(listener, monkeypatch, settings):
    """OpenAPI tools are pinned by ADK itself (``rest_api_tool._send_pinned_async``): held here, beside MCP's."""
    from cognizes.infra.db_threads import run_in_db_thread
    from tests.tools.conftest import weather_document
    from tools_app import services
    from tools_app.adk import build_tool
    from tools_app.models import Tool

    settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK = False
    monkeypatch.setenv("GOOGLE_API_USE_CLIENT_CERTIFICATE", "false")
    port, reached = listener
    await run_in_db_thread(
        services.do_import_openapi, app_name="shop", document=weather_document(f"http://rebind.test:{port}")
    )
    row = await run_in_db_thread(lambda: Tool.objects.get(app_name="shop", name="get_weather"))
    resolver = Resolver("rebind.test", PUBLIC, "127.0.0.1")
    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    tool = build_tool(row)
    tool.timeout_seconds = 1

    try:
        answer = await tool.call(args={"city": "Paris"}, tool_context=None)
    except Exception as error:  # the public address is not reachable from the test machine
        answer = {"error": str(error)}

    assert "error" in answer
    assert reached == []
    assert resolver.lookups == 1  # the check's: the connection went to the address it returned
