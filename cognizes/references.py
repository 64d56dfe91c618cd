"""The Vertex AI and A2A references as JSON, each with links to the other two references.

The documents are built by the apps that serve the surfaces (vertex_app.reference,
runtime_app.a2a_reference); only the project knows all three pages, so the links are added here.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_safe

from runtime_app import a2a_reference
from vertex_app import reference as vertex_reference

PAGES = {"swagger-ui": "the native API", "swagger-ui-vertex": "Vertex AI Agent Engine", "swagger-ui-a2a": "A2A"}


def _linked(build: Callable[[], dict[str, Any]], page: str) -> Callable[[], dict[str, Any]]:
    @cache
    def document() -> dict[str, Any]:
        out = copy.deepcopy(build())
        links = ", ".join(f"[{title}]({reverse(name)})" for name, title in PAGES.items() if name != page)
        out["info"]["description"] += f"\n\nThe other references: {links}."
        return out

    return document


vertex_document = _linked(vertex_reference.document, "swagger-ui-vertex")
a2a_document = _linked(a2a_reference.document, "swagger-ui-a2a")


@require_safe
def vertex_schema(request: HttpRequest) -> JsonResponse:
    """The Vertex AI Agent Engine surface's OpenAPI document (built once per process)."""
    return JsonResponse(vertex_document())


@require_safe
def a2a_schema(request: HttpRequest) -> JsonResponse:
    """The A2A surface's OpenAPI document (built once per process)."""
    return JsonResponse(a2a_document())
