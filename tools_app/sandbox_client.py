"""The web side of the sandbox daemon: one JSON line to its Unix socket, one JSON line back.

The socket is ``COGNIZES_SANDBOX_SOCKET``, else ``sandbox.sock`` in the data folder, where ``cognizes run`` starts
the daemon (read at each call, so a test can start its own).
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

from cognizes.infra.local import VAR_DIR

ANSWER_CAP = 200 << 20


class SandboxUnavailable(Exception):
    """The daemon is not running, or refused: ``status`` is the Google status to answer with."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


def socket_path() -> Path:
    return Path(os.environ.get("COGNIZES_SANDBOX_SOCKET") or VAR_DIR / "sandbox.sock")


def call(op: str, *, timeout: float = 30.0, **fields: Any) -> dict[str, Any]:
    """Send ``op`` to the daemon and return its answer (SandboxUnavailable for a refusal or no daemon)."""
    path = socket_path()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(timeout)
            connection.connect(str(path))
            connection.sendall((json.dumps({"op": op, **fields}) + "\n").encode())
            with connection.makefile("rb") as answers:
                line = answers.readline(ANSWER_CAP)
    except OSError as error:
        raise SandboxUnavailable(
            "UNAVAILABLE",
            f"the sandbox daemon is not answering at {path} ({error.strerror or error}): `cognizes run` starts it, "
            "or run `python -m tools_app.sandbox_daemon`",
        ) from error
    try:
        answer = json.loads(line)
    except ValueError as error:
        raise SandboxUnavailable("UNAVAILABLE", "the sandbox daemon gave no answer") from error
    if "error" in answer:
        raise SandboxUnavailable(answer["error"], answer.get("message") or answer["error"])
    return answer
