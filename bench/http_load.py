"""A Cognizes web server started for a benchmark, and the client threads that load it.

What ``bench/api.py``, ``bench/api_adk.py`` and ``bench/vertex.py`` share: each compares Cognizes' HTTP API with
something else (the same calls in-process, ``adk api_server``, Vertex's wire), and all start the server and time
the clients the same way, so their figures are comparable. A module of its own so that no benchmark imports another
(``bench/api.py --adk`` runs ``bench/api_adk.py``, which used to import ``bench/api.py`` back).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bench.timing import no_gc
from cognizes.infra import secret_key

ROOT = Path(__file__).resolve().parent.parent
SERVER_RATE = "1000000/min"
"""The API's throttle rate in a benchmark's server: it counts (its Redis round trips are timed) but never refuses."""
SERVER_START_TIMEOUT = 60.0
BACKGROUND_FAILURE = "background database work failed"
"""What ``cognizes.infra.db_threads`` logs when work it runs in the background raises."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def background_failures(self) -> Counter[str]:
        """Failed background work in the server's log, by the error's last line."""
        failures: Counter[str] = Counter()
        lines = self.log_path.read_text(errors="replace").splitlines()
        for number, line in enumerate(lines):
            if line.startswith(BACKGROUND_FAILURE):
                failures[error_line(lines[number + 1 :])] += 1
        return failures


def error_line(lines: list[str]) -> str:
    """The ``Type: message`` line that ends the traceback at the start of ``lines``."""
    for line in lines:
        if line and not line.startswith((" ", "Traceback", "The above exception", "During handling")):
            return line
    return "?"


def start_server(
    database_url: str,
    redis_url: str,
    conn_max_age: int,
    pool_size: int,
    workers: int,
    app: str = "cognizes.asgi:application",
    extra_env: dict[str, str] | None = None,
) -> Server:
    """A uvicorn process serving the API (or ``app``), answering once this returns."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "cognizes.settings",
        "DATABASE_URL": database_url,
        "DATABASE_CONN_MAX_AGE": str(conn_max_age),
        "DATABASE_POOL_SIZE": str(pool_size),
        "REDIS_URL": redis_url,
        "COGNIZES_API_RATE": SERVER_RATE,
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY") or secret_key.ensure(),  # as `make run` does
        **(extra_env or {}),
    }
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        app,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--http",
        "httptools",
        "--loop",
        "uvloop",
        "--lifespan",
        "off",
        "--no-access-log",
        "--log-level",
        "warning",
    ]
    log_path = Path(tempfile.mkstemp(prefix="bench_api_server_", suffix=".log")[1])
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    server = Server(process=process, base_url=f"http://127.0.0.1:{port}", log_path=log_path)
    wait_until_answering(server)
    return server


def wait_until_answering(server: Server) -> None:
    import httpx

    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"uvicorn exited with {server.process.returncode}:\n{server.log_tail()}")
        try:
            httpx.get(f"{server.base_url}/api/v1/", timeout=2.0)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    stop_server(server)
    raise RuntimeError(f"uvicorn did not answer within {SERVER_START_TIMEOUT:.0f} s:\n{server.log_tail()}")


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
    server.log_path.unlink(missing_ok=True)


class Client(Protocol):
    def call(self, index: int) -> None:
        """Request number ``index`` of this client (timed)."""

    def close(self) -> None: ...


ClientFactory = Callable[[int, int], Client]
"""(client number, requests it will make) -> a ready client."""


@dataclass(frozen=True)
class Load:
    latencies: list[float]
    seconds: float


def run_load(factory: ClientFactory, clients: int, requests: int) -> Load:
    """``requests`` split between ``clients`` threads, all released at once after their setup."""
    per_client = max(1, requests // clients)
    start_gate = threading.Barrier(clients + 1)
    latencies: list[list[float]] = [[] for _ in range(clients)]
    finished = [0.0] * clients
    errors: list[BaseException] = []

    def work(number: int) -> None:
        client = None
        try:
            client = factory(number, per_client)
            start_gate.wait()
            timings = latencies[number]
            for index in range(per_client):
                begin = time.perf_counter()
                client.call(index)
                timings.append(time.perf_counter() - begin)
            finished[number] = time.perf_counter()
        except BaseException as error:
            errors.append(error)
            start_gate.abort()
        finally:
            if client is not None:
                client.close()

    threads = [threading.Thread(target=work, args=(n,), name=f"bench-client-{n}") for n in range(clients)]
    with no_gc():
        for thread in threads:
            thread.start()
        with contextlib.suppress(threading.BrokenBarrierError):
            start_gate.wait()
        started = time.perf_counter()
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]
    return Load([t for timings in latencies for t in timings], max(finished) - started)
