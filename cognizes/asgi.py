"""The ASGI application: Django, and A2A under ``/a2a/``, with request bodies read within their limits."""

import os
from collections.abc import Awaitable, Callable
from typing import Any

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponseBase


class OneHopASGIHandler(ASGIHandler):
    """Django's ASGI handler, running the middleware chain and the view in one thread hop per request.

    Django's async path calls each sync-capable middleware's hooks through
    ``sync_to_async``, two hops per middleware (sixteen per request here), and
    the views are sync (DRF) in the end anyway. Here the chain runs as under
    WSGI, on the request's thread, entered once; responses, streams included,
    are still sent from the event loop.
    """

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
django.setup(set_prefix=False)
django_application = OneHopASGIHandler()

from access.body_limit import BodyLimit  # noqa: E402  (after Django is set up)
from cognizes.error_pages import SURFACES  # noqa: E402
from runtime_app import a2a  # noqa: E402

a2a_application = a2a.A2aApplication()


async def surfaces(scope: dict[str, Any], receive: Callable[[], Awaitable[Any]],
                   send: Callable[[Any], Awaitable[None]]) -> None:
    """A2A's JSON-RPC endpoints are a2a-sdk's (Starlette); everything else is Django's."""
    if scope["type"] == "http" and scope["path"].startswith(a2a.PREFIX):
        await a2a_application(scope, receive, send)
    else:
        await django_application(scope, receive, send)


application = BodyLimit(
    surfaces,
    SURFACES,
    larger=[(r"^/api/v1/apps/[^/]+/users/[^/]+/sessions/[^/]+/artifacts/[^/]+/content/?$",
             "COGNIZES_ARTIFACT_MAX_BYTES")],  # artifact uploads
)
