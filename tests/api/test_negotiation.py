"""cognizes.access.negotiation answers what DRF's own content negotiation answers, for every Accept a client may
send."""

from __future__ import annotations

import pytest
from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer, StaticHTMLRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from cognizes.access.negotiation import FastContentNegotiation
from cognizes.access.renderers import FastJSONRenderer
from cognizes.access.sse import EventStreamRenderer


class _ParamsJSON(JSONRenderer):
    media_type = "application/json; version=2"


RENDERERS = [
    [JSONRenderer, BrowsableAPIRenderer],
    [FastJSONRenderer, BrowsableAPIRenderer],
    [EventStreamRenderer, JSONRenderer],
    [StaticHTMLRenderer],
    [BrowsableAPIRenderer, JSONRenderer],
    [_ParamsJSON, JSONRenderer],
]
ACCEPTS = [
    None,
    "*/*",
    " */* ",
    "application/json",
    "application/json; indent=4",
    "text/html",
    "text/event-stream",
    "image/png",
    "application/*",
    "text/html, */*;q=0.1",
    "",
]
QUERIES = ["", "?format=json", "?format=api", "?format=", "?format=nope"]


def outcome(negotiation, renderers, accept, query, suffix):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get("/api/v1/x/" + query, **headers))
    try:
        renderer, media_type = negotiation.select_renderer(request, [r() for r in renderers], suffix)
    except (exceptions.NotAcceptable, Exception) as error:  # Http404 for an unknown format
        return type(error).__name__
    return type(renderer), media_type


@pytest.mark.parametrize("renderers", RENDERERS, ids=lambda rs: "+".join(r.__name__ for r in rs))
def test_every_accept_query_and_suffix_gets_drfs_answer(renderers):
    for accept in ACCEPTS:
        for query in QUERIES:
            for suffix in (None, "json", "api"):
                assert outcome(FastContentNegotiation(), renderers, accept, query, suffix) == outcome(
                    DefaultContentNegotiation(), renderers, accept, query, suffix
                ), (accept, query, suffix)
