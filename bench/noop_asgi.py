"""An ASGI app that answers every request at once, as Cognizes answers a 404: bench/api.py's ceiling.

Served by the same uvicorn, with the same flags and the same client, it measures what
the server, the client and the loopback cost with no application at all.
"""

BODY = b'{"error": {"code": "not_found", "message": "Not found.", "details": null}}'
HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]


async def app(scope, receive, send) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 404, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})
