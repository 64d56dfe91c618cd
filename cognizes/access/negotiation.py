"""Content negotiation with the answer for what API clients send decided without parsing it.

Nearly every API request says ``Accept: */*`` (httpx, aiohttp, curl, OkHttp) or
nothing at all (the gRPC transcoder's, Google's GAPIC clients), or
``application/json``. DRF's negotiation parses the header into media types and
ranks them against each renderer on every request, a noticeable share of a Vertex
``GetSession`` (a Vertex get is two requests, so it paid it twice: docs/measured.md). For those
three values the answer is known: the first renderer (``*/*`` or no header), or
the first when it is JSON's. Anything else — ``?format=``, a format suffix, any
other header — is DRF's own negotiation, with its 406s.
"""

from __future__ import annotations

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

_ANY, _JSON = "*/*", "application/json"


class FastContentNegotiation(DefaultContentNegotiation):
    def select_renderer(  # type: ignore[override]  # DRF passes the view's list; its stubs say any Iterable
        self, request: Request, renderers: list[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        if renderers and not format_suffix and self.settings.URL_FORMAT_OVERRIDE not in request.query_params:
            accept = request.headers.get("accept", _ANY).strip()
            first = renderers[0]
            if ";" not in first.media_type and (accept == _ANY or (accept == _JSON and first.media_type == _JSON)):
                return first, first.media_type  # what DRF answers for these: the renderer's own media type
        return super().select_renderer(request, renderers, format_suffix)
