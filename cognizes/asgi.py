"""The ASGI application: Django, and A2A under ``/a2a/``, with request bodies read within their limits."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
django_application = get_asgi_application()

from access import api  # noqa: E402  (after Django is set up)
from access.body_limit import BodyLimit  # noqa: E402
from runtime_app import a2a  # noqa: E402
from vertex_app import errors as vertex_errors  # noqa: E402

_API_CODES = {408: "request_timeout", 413: "payload_too_large"}

a2a_application = a2a.A2aApplication()


async def surfaces(scope: dict, receive, send) -> None:
    """A2A's JSON-RPC endpoints are a2a-sdk's (Starlette); everything else is Django's."""
    if scope["type"] == "http" and scope["path"].startswith(a2a.PREFIX):
        await a2a_application(scope, receive, send)
    else:
        await django_application(scope, receive, send)


application = BodyLimit(
    surfaces,
    {
        "/api/": lambda status, message: api.error_body(_API_CODES[status], message),
        "/v1": lambda status, message: vertex_errors.body(status, message),
        a2a.PREFIX: a2a.error_body,
    },
    larger=[(r"^/api/v1/apps/[^/]+/users/[^/]+/sessions/[^/]+/artifacts/[^/]+/content/?$",
             "COGNIZES_ARTIFACT_MAX_BYTES")],  # artifact uploads
)
