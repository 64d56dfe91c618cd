"""API paths are served with or without their trailing slash.

Django's ``APPEND_SLASH`` answers a path missing its slash with an empty 301,
which API clients do not follow for a POST (curl does not follow at all): a
``POST /api/v1/…/sessions`` looked like a success with no body. Under ``/api/``
a path that names a route once its slash is added is served as that route.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

API_PREFIX = "/api/"


class ApiTrailingSlashMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if path.startswith(API_PREFIX) and not path.endswith("/"):
            try:
                resolve(path + "/")
            except Resolver404:
                pass  # unknown either way: the JSON 404
            else:
                request.path_info, request.path = path + "/", request.path + "/"
        return self.get_response(request)
