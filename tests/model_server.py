"""The stand-in for a remote model (tests/memory/openai_compatible.py) as a process a test starts and stops.

Memory extraction and the knowledge reranker both ask a model ADK runs; their tests point LiteLLM at this
server, the one thing outside the machine they fake.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.processes import ROOT


class ModelServer:
    """A running stand-in: its ``/v1`` URL and the requests it was sent."""

    def __init__(self, directory: Path, answers: list[tuple[int, str]]) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        script, self.log, port_file = directory / "answers.json", directory / "requests.jsonl", directory / "port"
        for stale in (self.log, port_file):
            stale.unlink(missing_ok=True)
        script.write_text(json.dumps([{"status": status, "content": content} for status, content in answers]))
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "tests/memory/openai_compatible.py"),
                str(port_file),
                str(self.log),
                str(script),
            ]
        )
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text():
            assert self.process.poll() is None and time.monotonic() < deadline, "the model server did not start"
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{port_file.read_text()}/v1"
        os.environ.setdefault("OPENAI_API_KEY", "not-needed-by-a-local-server")

    def requests(self) -> list[dict]:
        """The bodies of the chat completions asked for, in order."""
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(10)


@contextmanager
def model_servers(directory: Path) -> Iterator:
    """``start(*answers)`` starts a stand-in answering ``(status, content)`` in turn (the last repeats); all are
    stopped on leaving."""
    started: list[ModelServer] = []

    def start(*answers: tuple[int, str]) -> ModelServer:
        server = ModelServer(directory / f"model-{len(started)}", list(answers))
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.stop()
