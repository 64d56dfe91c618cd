"""Run snippets, each in a process of its own, forked from one that has already imported the heavy libraries.

Importing ADK, Django and Google's SDKs takes seconds (twenty on a loaded machine); a fresh interpreter for each
Python block and each ``cognizes`` command of a shell block would put the docs test past its time. So this process
imports them once, listens on a Unix socket, and for each request (one JSON object per connection) forks a child
that runs it in its own directory and answers ``{"status", "stdout", "stderr"}``:

- ``{"code", "cwd", "env"}``: Python code, run as ``python -m asyncio`` runs it (top-level ``await`` works);
- ``{"argv", "cwd", "env"}``: the ``cognizes`` command with those arguments (tests/docs/snippet_client.py sends these).

Each still runs in a process of its own, with nothing of the others; only the import cache is warm.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import signal
import socket
import sys
import tempfile
import traceback

SNIPPET_SECONDS = 120  # a snippet that runs longer is killed, and fails
WARM = ("cognizes.adk", "cognizes.cli", "cognizes.vertex", "google.adk.agents", "google.genai", "agentplatform", "mcp")


def run_code(code: str) -> int:
    """Run ``code`` as ``python -m asyncio`` would; its exit status."""
    compiled = compile(code, "<snippet>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(compiled, {"__name__": "__main__"})  # the docs' own code, run to test it
    if asyncio.iscoroutine(result):
        asyncio.run(result)
    return 0


def run_command(argv: list[str]) -> int:
    from cognizes.cli import main

    sys.argv = ["cognizes", *argv]
    return main(argv)


def _child(request: dict, stdout: int, stderr: int) -> None:
    signal.alarm(SNIPPET_SECONDS)
    os.environ.clear()
    os.environ.update(request["env"])  # the environment of the shell or test that sent it
    os.chdir(request["cwd"])
    devnull = os.open(os.devnull, os.O_RDONLY)
    for source, target in ((devnull, 0), (stdout, 1), (stderr, 2)):
        os.dup2(source, target)
    try:
        status = run_code(request["code"]) if "code" in request else run_command(request["argv"])
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    except BaseException:
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def answer(request: dict) -> dict:
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        pid = os.fork()
        if pid == 0:
            _child(request, stdout.fileno(), stderr.fileno())
        _, wait_status = os.waitpid(pid, 0)
        stdout.seek(0)
        stderr.seek(0)
        return {"status": os.waitstatus_to_exitcode(wait_status), "stdout": stdout.read(), "stderr": stderr.read()}


def receive(connection: socket.socket) -> dict:
    chunks = []
    while chunk := connection.recv(65536):
        chunks.append(chunk)
    return json.loads(b"".join(chunks))


def ask(path: str, request: dict, *, timeout: float = SNIPPET_SECONDS + 30) -> dict:
    """Send ``request`` to the host listening on ``path``; its answer."""
    with socket.socket(socket.AF_UNIX) as connection:
        connection.settimeout(timeout)
        connection.connect(path)
        connection.sendall(json.dumps(request).encode())
        connection.shutdown(socket.SHUT_WR)
        return receive(connection)


def serve(path: str) -> None:
    for module in WARM:
        __import__(module)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        server.listen()
        print("ready", flush=True)
        while True:
            connection, _ = server.accept()
            with connection:
                request = receive(connection)
                if request.get("stop"):
                    connection.sendall(b"{}")
                    return
                connection.sendall(json.dumps(answer(request)).encode())


if __name__ == "__main__":
    serve(sys.argv[1])
