"""HTTP to a URL a tenant chose (an external MCP server row): the address checked is the address connected to.

The MCP transports (``mcp``'s ``httpx2`` clients) resolve a host themselves, after the row's URL was checked
(``mcp_toolsets._check_network``). A name whose DNS answered a public address to the check and 127.0.0.1 to the
connection (DNS rebinding) reached the server's own network: a tenant's MCP row could call Cognizes' database,
Redis or a cloud metadata service (issue 41 J5). ``pinned_client`` gives the transports a client whose every
request resolves its host once, refuses it if any address is loopback, private, link-local or otherwise not
global (ADK's rule for OpenAPI tools, ``google.adk.tools._url_validator``, which also pins those tools' requests),
and connects to a checked address. The Host header and TLS (SNI, the certificate's name) keep the hostname, so
virtual hosts and certificate verification work as before.

``COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK`` lifts the check, as it does for OpenAPI tools; requests are pinned
all the same. A deployment whose outbound traffic goes through a proxy (``HTTPS_PROXY``) leaves resolution to
the proxy, which the client cannot pin: there the proxy's egress policy is the guard, as ADK documents.
"""

from __future__ import annotations

import asyncio
import ipaddress
from typing import Any

import httpx2
from django.conf import settings
from google.adk.tools._url_validator import _is_blocked_address, _is_blocked_hostname, _resolve_host_addresses

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class BlockedHost(httpx2.ConnectError):
    """The host is, or resolves to, an address a tenant's tool may not reach; raised before any connection."""


def checked_addresses(hostname: str, *, allow_private: bool) -> tuple[Address, ...]:
    """The addresses ``hostname`` resolves to now (an IP literal: itself), each one allowed, in resolver order.

    One lookup: the caller connects to what is returned, never to a second answer of the resolver.
    """
    if not allow_private and _is_blocked_hostname(hostname):
        raise BlockedHost(f"Blocked host: {hostname} (a local or internal name).")
    try:
        addresses = tuple(dict.fromkeys(_resolve_host_addresses(hostname)))
    except ValueError as error:  # no address
        raise httpx2.ConnectError(str(error)) from None
    if not allow_private and any(_is_blocked_address(address) for address in addresses):
        raise BlockedHost(f"Blocked host: {hostname} resolves to a loopback, private or link-local address.")
    return addresses


class PinnedTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport that connects each request to an address checked for it (``checked_addresses``)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self._inner = inner or httpx2.AsyncHTTPTransport(trust_env=False)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        hostname = url.host
        allow_private = settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK
        addresses = await asyncio.to_thread(checked_addresses, hostname, allow_private=allow_private)
        if "host" not in request.headers:  # httpx2 sets it from the URL; kept as the name, not the address
            request.headers["Host"] = url.netloc.decode("ascii")
        request.extensions = {**request.extensions, "sni_hostname": hostname}
        failed: Exception | None = None
        for address in addresses:  # the next address only if this one refused the connection
            request.url = url.copy_with(host=str(address))
            try:
                return await self._inner.handle_async_request(request)
            except (httpx2.ConnectError, httpx2.ConnectTimeout) as error:
                failed = error
            finally:
                request.url = url  # the response's request names the host, as the caller asked it
        raise failed if failed is not None else httpx2.ConnectError(f"No address for {hostname}.")

    async def aclose(self) -> None:
        await self._inner.aclose()


def pinned_client(
    headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None, auth: httpx2.Auth | None = None
) -> httpx2.AsyncClient:
    """``mcp``'s ``create_mcp_http_client`` (its signature and defaults), on a ``PinnedTransport``: what an MCP
    row's connection params take as ``httpx_client_factory``."""
    options: dict[str, Any] = {"timeout": timeout or httpx2.Timeout(30.0, read=300.0), "transport": PinnedTransport()}
    if headers is not None:
        options["headers"] = headers
    if auth is not None:
        options["auth"] = auth
    return httpx2.AsyncClient(**options)
