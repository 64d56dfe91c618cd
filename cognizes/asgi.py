"""The ASGI application: Django, A2A under ``/a2a/`` and MCP under ``/mcp/``, with request bodies read within their
limits."""

import os
from collections.abc import Awaitable, Callable
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
django.setup(set_prefix=False)

from cognizes.infra import secret_key  # noqa: E402  (after django.setup())

secret_key.require("The web server")

from cognizes.infra.asgi_handler import OneHopASGIHandler  # noqa: E402  (after django.setup())

django_application = OneHopASGIHandler()

from cognizes.access import early_auth  # noqa: E402  (after django.setup())
from cognizes.access.body_limit import BodyLimit  # noqa: E402  (after django.setup())
from cognizes.error_pages import SURFACES  # noqa: E402  (after django.setup())
from runtime_app import a2a, mcp  # noqa: E402  (after django.setup())
from vertex_app import upload_grants  # noqa: E402  (after django.setup())

a2a_application = a2a.A2aApplication()
mcp_application = mcp.McpApplication()


async def surfaces(
    scope: dict[str, Any], receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
) -> None:
    """A2A's JSON-RPC endpoints are a2a-sdk's (Starlette), MCP's the mcp SDK's; everything else is Django's."""
    if scope["type"] == "http" and scope["path"].startswith(a2a.PREFIX):
        await a2a_application(scope, receive, send)
    elif scope["type"] == "http" and scope["path"].startswith(mcp.PREFIX):
        await mcp_application(scope, receive, send)
    else:
        await django_application(scope, receive, send)


async def sender_first(scope: dict[str, Any]) -> tuple[int, str] | None:
    """Whether a body may be read (issue 41 J4): an upload URL's bytes need its signed token, all else a key."""
    token = upload_grants.token_in(scope)
    if token is not None:
        return upload_grants.token_refusal(token)
    return await early_auth.refusal(scope)


application = BodyLimit(
    surfaces,
    SURFACES,
    larger=[
        (
            r"^/api/v1/apps/[^/]+/users/[^/]+/sessions/[^/]+/artifacts/[^/]+/content/?$",
            "COGNIZES_ARTIFACT_MAX_BYTES",
        ),  # artifact uploads
        (r"^/api/v1/apps/[^/]+/corpora/[^/]+/documents/?$", "COGNIZES_KNOWLEDGE_MAX_BYTES"),  # documents
        (upload_grants.UPLOAD_PATH.pattern, "COGNIZES_KNOWLEDGE_MAX_BYTES"),  # and RAG Engine's
        (r"^/v1(?:beta1)?/.*/sandboxEnvironments/[0-9]+/?:execute$", "COGNIZES_SANDBOX_MAX_BODY_BYTES"),  # files in
    ],
    authenticate=sender_first,
)
