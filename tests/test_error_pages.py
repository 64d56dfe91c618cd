"""Requests no view handles still answer in their surface's error shape.

Django answers a Host outside ALLOWED_HOSTS, an unrouted path and a crash with
its own handlers; those gave the Vertex surface HTML pages and the API an HTML
400 (schemathesis sent ``Host: <``). The admin keeps Django's pages.
"""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.views import APIView

pytestmark = pytest.mark.django_db

API = "/api/v1/apps/shop/users/ada/sessions/"
VERTEX = "/v1beta1/reasoningEngines/1/sessions"


def api_shape(response) -> str:
    assert response["Content-Type"] == "application/json"
    assert set(response.json()["error"]) == {"code", "message", "details"}
    return response.json()["error"]["code"]


def google_shape(response) -> str:
    assert response["Content-Type"] == "application/json"
    assert set(response.json()["error"]) == {"code", "message", "status"}
    return response.json()["error"]["status"]


@pytest.mark.parametrize("host", ["<", "evil.example", "a b"])
def test_a_host_the_server_does_not_serve_gets_a_400_in_each_surfaces_shape(host):
    client = Client()

    api = client.get(API, HTTP_HOST=host)
    vertex = client.get(VERTEX, HTTP_HOST=host)
    admin = client.get("/admin/", HTTP_HOST=host)

    assert (api.status_code, api_shape(api)) == (400, "bad_request")
    assert (vertex.status_code, google_shape(vertex)) == (400, "INVALID_ARGUMENT")
    assert admin.status_code == 400 and admin["Content-Type"].startswith("text/html")


def test_an_unrouted_api_path_gets_a_json_404():
    response = Client().get("/api/v1/nothing-here/")

    assert (response.status_code, api_shape(response)) == (404, "not_found")


def test_a_crash_in_a_view_gets_a_500_in_each_surfaces_shape(monkeypatch):
    def crash(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(APIView, "dispatch", crash)
    client = Client(raise_request_exception=False)

    api = client.get(API)
    vertex = client.get(VERTEX)

    assert (api.status_code, api_shape(api)) == (500, "error")
    assert (vertex.status_code, google_shape(vertex)) == (500, "INTERNAL")
