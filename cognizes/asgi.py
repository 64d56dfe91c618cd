"""The ASGI application: Django, with the API surfaces' request bodies read within their limits."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
django_application = get_asgi_application()

from access import api  # noqa: E402  (after Django is set up)
from access.body_limit import BodyLimit  # noqa: E402
from vertex_app import errors as vertex_errors  # noqa: E402

_API_CODES = {408: "request_timeout", 413: "payload_too_large"}

application = BodyLimit(
    django_application,
    {
        "/api/": lambda status, message: api.error_body(_API_CODES[status], message),
        "/v1": lambda status, message: vertex_errors.body(status, message),
    },
    larger=[(r"^/api/v1/apps/[^/]+/users/[^/]+/sessions/[^/]+/artifacts/[^/]+/content/?$",
             "COGNIZES_ARTIFACT_MAX_BYTES")],  # artifact uploads
)
