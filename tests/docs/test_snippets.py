"""Every code block of README.md and docs/ works as printed (issue 42 item 5), against one test server.

tests/docs/snippets.py says which blocks run and how; the server is one private stack for the whole module
(PostgreSQL, Redis, the web server and the gRPC server, migrated, with an API key of the demo's app ``weather``
and its tool registered), never one per block. Python blocks run in processes forked from
tests/docs/snippet_host.py; shell blocks in bash, with ``cognizes`` the project's command (run by the same host) and a
``curl`` that fails on an HTTP error.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest

from cognizes.infra.local import VAR_DIR
from tests.docs.fake_gemini import fake_gemini
from tests.docs.snippet_host import ask
from tests.docs.snippets import INCLUDED_ONLY, PYTHON, Block, documentation, for_server, shell_script
from tests.processes import ROOT, free_port
from tests.stack import Postgres, Redis, wait_for
from tools_app import sandbox_isolation

BLOCKS = documentation(ROOT)
# The README's agent is also the getting-started page's: each distinct block runs once, under its first place.
_seen: set[str] = set()
RUNNABLE = [block for block in BLOCKS if block.runs and not (block.code in _seen or _seen.add(block.code))]

HERE = Path(__file__).parent
_SHELL_PRELUDE = """
cognizes() { "$COGNIZES_PYTHON" "$COGNIZES_CLIENT" "$@"; }
curl() { command curl --silent --show-error --fail-with-body "$@"; }
"""


class Server:
    """The servers the blocks run against, the environment they get, and the snippet host that runs them.

    tests/stack.py's PostgreSQL and Redis; the rest started here so that the slow parts overlap: the host, the web and
    the gRPC server import at once, and the commands (migrate, the key, the engine) run in the host as soon as it has
    imported.
    """

    def __init__(self, root: Path, gemini: str) -> None:
        self.socket = str(root / "snippets.sock")
        self.logs = root
        self.processes: list[subprocess.Popen] = []
        self.postgres = Postgres(root / "pg")
        self.redis: Redis | None = None
        try:
            self.redis = Redis(root)
            self._start(root, gemini)
        except BaseException:
            self.close()
            raise

    def _start(self, root: Path, gemini: str) -> None:
        self.env = {
            **os.environ,
            "DATABASE_URL": self.postgres.url,
            "REDIS_URL": self.redis.url,
            "COGNIZES_VAR_DIR": str(root / "var"),
            "COGNIZES_TRACING": "0",
            "PYTHONPATH": str(ROOT),  # the checkout's code, from whichever directory a block runs in
            "COGNIZES_PYTHON": sys.executable,
            "COGNIZES_CLIENT": str(HERE / "snippet_client.py"),
            "COGNIZES_SNIPPET_HOST": self.socket,
            "GOOGLE_API_KEY": "docs-test",
            "GOOGLE_GEMINI_BASE_URL": gemini,
            "GOOGLE_API_USE_CLIENT_CERTIFICATE": "false",
            "COGNIZES_BWRAP": sandbox_isolation.bwrap_path(VAR_DIR) or "",
            "COGNIZES_SANDBOX_UID_BASE": str(
                1_900_000_000 + (os.getpid() % 1000) * 100_000
            ),  # none of another's  # the checkout's var/tools, or the system's
        }
        host = self._spawn("host", [sys.executable, str(HERE / "snippet_host.py"), self.socket], stdout=subprocess.PIPE)
        web_port, grpc_port = free_port(), free_port()
        self.base, self.grpc = f"http://127.0.0.1:{web_port}", f"127.0.0.1:{grpc_port}"
        uvicorn = ["-m", "uvicorn", "cognizes.asgi:application", "--port", str(web_port), "--lifespan", "off"]
        self._spawn("web", [sys.executable, *uvicorn])  # they import while the database is migrated; they are
        self._spawn(
            "grpc", [sys.executable, "manage.py", "serve_grpc", "--port", str(grpc_port)]
        )  # asked nothing before
        # What `cognizes run` starts beside the servers: a worker, which indexes the RAG Engine page's upload.
        celery = ["-m", "celery", "-A", "cognizes", "worker", "--pool", "solo", "--without-mingle", "--without-gossip"]
        self._spawn("worker", [sys.executable, *celery])
        # And the sandbox daemon, whose workspaces must be in a folder each sandbox's uid can pass through.
        self.sandboxes = VAR_DIR / "test-sandboxes" / f"docs-{os.getpid()}"
        self._spawn("sandbox", [sys.executable, "-m", "tools_app.sandbox_daemon", "--root", str(self.sandboxes)])
        assert host.stdout.readline().strip() == b"ready", "the snippet host did not start (host.log)"
        self.command("migrate", "--noinput")
        self.env["KEY"] = self.command("create_api_key", "weather")["stdout"].strip().splitlines()[-1]
        self.env["ENGINE_ID"] = self.command("vertex_engine", "weather")["stdout"].strip().splitlines()[-1]
        # What `make run` does first (load_demo): register the demo agent's get_weather tool in its app.
        registered = self.ask({"code": "from demo_agents.weather.tools import register\nregister()\n", "cwd": "/"})
        assert registered["status"] == 0, registered
        wait_for(lambda: httpx.get(f"{self.base}/api/schema/").status_code == 200, 120, "the web server (web.log)")
        grpc.channel_ready_future(grpc.insecure_channel(self.grpc)).result(timeout=120)

    def _spawn(self, name: str, command: list[str], **options) -> subprocess.Popen:
        options.setdefault("stdout", (self.logs / f"{name}.log").open("a"))
        process = subprocess.Popen(
            command, cwd=ROOT, env={**self.env, "DATABASE_POOL_SIZE": "4"}, start_new_session=True, **options
        )
        self.processes.append(process)
        return process

    def ask(self, request: dict) -> dict:
        return ask(self.socket, {"env": self.env, **request})

    def command(self, *argv: str) -> dict:
        done = self.ask({"argv": list(argv), "cwd": "/"})
        assert done["status"] == 0, done
        return done

    def run_python(self, code: str, cwd: Path) -> tuple[int, str]:
        answer = self.ask({"code": code, "cwd": str(cwd)})
        return answer["status"], answer["stdout"] + answer["stderr"]

    def run_shell(self, script: str, cwd: Path) -> tuple[int, str]:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", _SHELL_PRELUDE + script],
            cwd=cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return done.returncode, done.stdout + done.stderr

    def close(self) -> None:
        """Stop every process; each is stopped even if stopping another fails."""
        try:
            for process in self.processes:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGTERM)
            for process in self.processes:
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(10)
        finally:
            shutil.rmtree(getattr(self, "sandboxes", ROOT / "var" / "none"), ignore_errors=True)
            try:
                if self.redis is not None:
                    self.redis.stop()
            finally:
                self.postgres.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    with fake_gemini() as gemini:
        running = Server(tmp_path_factory.mktemp("docs"), gemini)
        try:
            yield running
        finally:
            running.close()


@pytest.mark.parametrize("block", RUNNABLE, ids=[block.where for block in RUNNABLE])
def test_the_block_runs_as_printed(block: Block, server: Server, tmp_path):
    code = for_server(block.code, base_url=server.base, grpc_target=server.grpc)
    if block.language in PYTHON:
        status, output = server.run_python(code, tmp_path)
    else:
        script = for_server(shell_script(block), base_url=server.base, grpc_target=server.grpc)
        status, output = server.run_shell(script, tmp_path)
    assert status == 0, f"{block.where} failed (exit {status}):\n{output}"


def test_go_and_java_are_only_included_from_the_client_programs_the_suite_runs():
    written = [block.where for block in BLOCKS if block.language in INCLUDED_ONLY and not _only_includes(block)]
    assert not written, f"write these as --8<-- includes of tests/clients/ (they would run nowhere): {written}"


def test_every_block_names_its_language():
    languages = {block.language for block in BLOCKS}
    assert "" not in languages, [block.where for block in BLOCKS if not block.language]  # a fence says what it holds


def _only_includes(block: Block) -> bool:
    return all(not line.strip() or line.startswith("--8<--") for line in block.code.splitlines())


def test_a_block_that_fails_is_seen_failing(server: Server, tmp_path):
    """The runner itself: an exception, a failing command or an HTTP error in a block is a failure, not a pass."""
    assert server.run_python("import json\njson.loads('{')\n", tmp_path)[0] != 0
    assert server.run_python("await __import__('asyncio').sleep(0)\nraise SystemExit(3)\n", tmp_path)[0] == 3
    assert server.run_shell("cognizes no_such_command\necho reached\n", tmp_path)[0] != 0
    status, output = server.run_shell(f"curl {server.base}/api/v1/apps/weather/tools/\necho reached\n", tmp_path)
    assert status != 0 and "reached" not in output  # 401 without a key: curl fails, and the block stops there
