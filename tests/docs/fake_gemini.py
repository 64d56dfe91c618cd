"""A stand-in for Gemini's API on loopback: the docs' agents name ``gemini-2.5-flash``, and the network is outside.

google-genai sends to ``GOOGLE_GEMINI_BASE_URL`` when it is set; every ``generateContent`` gets one short text answer
(``streamGenerateContent`` the same, as one Server-Sent Event).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = "Noted."


class _Gemini(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        answer = {
            "candidates": [{"content": {"role": "model", "parts": [{"text": ANSWER}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        }
        streamed = ":streamGenerateContent" in self.path
        body = (f"data: {json.dumps(answer)}\r\n\r\n" if streamed else json.dumps(answer)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if streamed else "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def fake_gemini() -> Iterator[str]:
    """Serve the stand-in on a loopback port; its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Gemini)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
