"""A stand-in for a remote model: an OpenAI-compatible chat completions server, as a process of its own.

``python tests/memory/openai_compatible.py PORT_FILE LOG ANSWERS``: serves
``POST /v1/chat/completions`` on a free port (written to PORT_FILE), appends each
request body to LOG (JSON lines) and answers with the next of ANSWERS (a JSON
list of ``{"status": int, "content": str}``; the last one repeats). This is the
only thing the model-extraction tests fake: what lies outside the machine.
"""

from __future__ import annotations

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PORT_FILE, LOG, ANSWERS = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(Path(sys.argv[3]).read_text())
served = 0


class Completions(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        global served
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        with LOG.open("a") as log:
            log.write(json.dumps(body) + "\n")
        answer = ANSWERS[min(served, len(ANSWERS) - 1)]
        served += 1
        if answer["status"] != 200:
            self._send(answer["status"], {"error": {"message": answer["content"], "type": "server_error"}})
            return
        self._send(
            200,
            {
                "id": f"chatcmpl-{served}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "local"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": answer["content"]},
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # quiet
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Completions)
PORT_FILE.write_text(str(server.server_address[1]))
server.serve_forever()
