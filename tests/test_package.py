"""Cognizes as a user gets it (issue 42): a wheel built from this checkout, installed into a fresh virtualenv and
used from empty folders — ``cognizes --version``, ``cognizes run`` (what ``make run`` runs), an agent script written
elsewhere that finds the database ``cognizes run`` started, and Ctrl-C leaving nothing running.

The fresh virtualenv sees the shared one's packages (its dependencies) through a ``.pth`` line, not its ``.pth``
files: the checkout, which the shared virtualenv installs editable, stays invisible, and nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import stat
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import threading
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import grpc
import psutil
import pytest
from google.cloud.aiplatform_v1beta1.services.session_service import SessionServiceClient
from google.cloud.aiplatform_v1beta1.services.session_service.transports import SessionServiceGrpcTransport

from tests.processes import ROOT, database_env, database_url, free_port

VERSION = re.findall(r'^__version__ = "([^"]+)"$', (ROOT / "cognizes" / "__init__.py").read_text(), re.M)[0]
WHEEL_PACKAGES = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"][
    "packages"
]
# What the environment of the person running the tests says about Cognizes: a user's shell says none of it.
_NOT_A_USERS = ("DATABASE_", "REDIS_", "COGNIZES_", "DJANGO_", "CELERY_", "PYTEST_", "PYTHON", "VIRTUAL_ENV")


def _build_wheel(source: Path, out: Path) -> Path:
    """``pip wheel`` with the installed backend (hatchling, in the dev group): offline, ~3 s."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--wheel-dir",
            str(out),
            str(source),
        ],
        check=True,
        timeout=120,
    )
    [wheel] = out.glob("cognizes-*.whl")
    return wheel


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    return _build_wheel(ROOT, tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv with the wheel installed (and its ``cognizes`` script), the shared one's packages beside."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    [site] = venv.glob("lib/python3*/site-packages")
    shared = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site / "shared_dependencies.pth").write_text("".join(f"{path}\n" for path in shared))
    subprocess.run(
        [
            venv / "bin" / "python",
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--ignore-installed",
            str(wheel),
        ],
        check=True,
        timeout=120,
    )
    return venv


def _user_env(**settings: str | Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(_NOT_A_USERS)}
    return {**env, **{key: str(value) for key, value in settings.items()}}


# --- the wheel and the sdist ---------------------------------------------------------------------------------------


def test_the_wheel_holds_every_apps_code_and_data_and_nothing_else(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    dist_info = f"cognizes-{VERSION}.dist-info"
    on_disk = {
        path.relative_to(ROOT).as_posix()
        for package in WHEEL_PACKAGES
        for path in (ROOT / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert on_disk - names == set(), "files of the packages missing from the wheel"
    # Spelled out, as the data Django finds beside the code: migrations, templates, static files.
    assert {
        "sessions_app/migrations/0001_initial.py",
        "cognizes/access/migrations/0001_initial.py",
        "cognizes/templates/admin/overview.html",
        "tracing_app/templates/tracing_app/waterfall.html",
        "sessions_app/static/sessions_app/live_events.js",
    } <= names
    assert {name.split("/")[0] for name in names} == {*WHEEL_PACKAGES, dist_info}  # no infra/, access/, tests/, …
    metadata = zipfile.ZipFile(wheel).read(f"{dist_info}/METADATA").decode()
    assert f"\nVersion: {VERSION}\n" in metadata
    assert "\nLicense-Expression: Apache-2.0\n" in metadata and "\nLicense-File: LICENSE\n" in metadata
    assert f"{dist_info}/licenses/LICENSE" in names
    assert "cognizes = cognizes.cli:main" in zipfile.ZipFile(wheel).read(f"{dist_info}/entry_points.txt").decode()


def test_the_sdist_builds_the_same_wheel(wheel, tmp_path):
    subprocess.run(
        [sys.executable, "-c", f"from hatchling.build import build_sdist; build_sdist({str(tmp_path)!r})"],
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    [sdist] = tmp_path.glob("cognizes-*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
        archive.extractall(tmp_path / "src", filter="data")
    assert {"LICENSE", "pyproject.toml", "PKG-INFO", "README.md", "CHANGELOG.md"} <= members
    assert not {name for name in members if name.split("/")[0] in {"var", ".git", ".venv", "site"}}
    rebuilt = _build_wheel(tmp_path / "src" / sdist.name.removesuffix(".tar.gz"), tmp_path / "dist")
    assert set(zipfile.ZipFile(rebuilt).namelist()) == set(zipfile.ZipFile(wheel).namelist())


# --- the command -----------------------------------------------------------------------------------------------------


def test_the_installed_command_reports_the_version_from_an_empty_folder(venv, tmp_path):
    version = subprocess.run(
        [venv / "bin" / "cognizes", "--version"], cwd=tmp_path, env=_user_env(), capture_output=True, text=True
    )
    assert (version.returncode, version.stdout) == (0, f"cognizes {VERSION}\n")
    where = subprocess.run(
        [
            venv / "bin" / "python",
            "-c",
            "import cognizes, sessions_app; print(cognizes.__file__, sessions_app.__file__)",
        ],
        cwd=tmp_path,
        env=_user_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert all(Path(path).is_relative_to(venv) for path in where.stdout.split()), where.stdout


def _cognizes(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The checkout's ``cognizes`` (``python -m cognizes``), as ``make run`` and the docs call it."""
    return subprocess.run(
        [sys.executable, "-m", "cognizes", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_help_lists_run_and_says_how_to_list_the_management_commands():
    for asked in (["--help"], ["-h"], []):
        done = _cognizes(*asked)
        assert done.returncode == 0, asked
        assert re.search(r"^  run +start PostgreSQL", done.stdout, re.M), asked
        assert re.search(r"^  help +list every other command", done.stdout, re.M), asked
    run_help = _cognizes("run", "--help")
    assert run_help.returncode == 0 and "COGNIZES_VAR_DIR" in run_help.stdout


def test_an_unknown_command_is_refused_in_djangos_words_without_a_traceback():
    done = _cognizes("no_such_command", env=database_env())  # the test servers: no embedded ones started for this
    assert done.returncode == 1
    assert done.stderr == "Unknown command: 'no_such_command'\nType 'cognizes help' for usage.\n"
    typo = _cognizes("run", "--port", "9000")
    assert typo.returncode == 2 and "unrecognized arguments: --port 9000" in typo.stderr
    assert "Traceback" not in typo.stderr


def test_a_command_on_a_database_never_migrated_says_to_migrate_without_a_traceback():
    """Before: ``cognizes create_api_key`` on a new database printed a ProgrammingError traceback ("relation
    api_keys does not exist")."""
    import psycopg
    from django.conf import settings

    db = settings.DATABASES["default"]
    name = f"unmigrated_{os.getpid()}"
    with psycopg.connect(database_url({**db, "NAME": "postgres"}), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            done = _cognizes(
                "create_api_key", "weather", env={**database_env(), "DATABASE_URL": database_url({**db, "NAME": name})}
            )
        finally:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')

    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "is not set up" in done.stderr and "run `cognizes migrate`" in done.stderr


# --- cognizes run and an agent outside the checkout ------------------------------------------------------------------

AGENT = '''\
"""An agent's script in a folder of its own: only the installed package, no settings of its own."""
import asyncio
import os
from pathlib import Path

from django.conf import settings
from google.adk.events.event import Event
from google.genai import types

from cognizes.adk import PostgresArtifactService, PostgresMemoryService, PostgresSessionService


async def main() -> None:
    sessions = PostgresSessionService()
    session = await sessions.create_session(app_name="my_app", user_id="alice", session_id="outside")
    said = types.Content(role="user", parts=[types.Part(text="Written from outside the checkout")])
    await sessions.append_event(session, Event(author="user", invocation_id="i-1", content=said))
    note = types.Part.from_bytes(data=b"an artifact from outside", mime_type="text/plain")
    await PostgresArtifactService().save_artifact(
        app_name="my_app", user_id="alice", session_id="outside", filename="note.txt", artifact=note
    )
    PostgresMemoryService()
    # The installation's key, which `cognizes run` wrote: what the server signs and encrypts with.
    assert settings.SECRET_KEY == (Path(os.environ["COGNIZES_VAR_DIR"]) / "secret_key").read_text().strip()


asyncio.run(main())
'''


def _get(url: str, key: str = "") -> bytes:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def _lines(stream) -> queue.Queue[str]:
    """The lines of ``stream`` as they come (the launcher's output, read while it runs)."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _wait_for_line(lines: queue.Queue[str], seen: list[str], text: str, launcher: subprocess.Popen) -> None:
    deadline = time.monotonic() + 150
    while not any(text in line for line in seen):
        assert time.monotonic() < deadline, f"no {text!r} within 150 s:\n{''.join(seen)}"
        assert launcher.poll() is None or not lines.empty(), f"cognizes run exited:\n{''.join(seen)}"
        with contextlib.suppress(queue.Empty):
            seen.append(lines.get(timeout=0.5))


def _processes_of(folder: Path) -> list[psutil.Process]:
    """The processes whose command line names ``folder`` (PostgreSQL and Redis name their data folder)."""
    return [p for p in psutil.process_iter(["cmdline"]) if str(folder) in " ".join(p.info["cmdline"] or [])]


def _alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those of ``processes`` still running after up to 15 s (zombies, exited but not yet reaped, do not count)."""
    _, alive = psutil.wait_procs(processes, timeout=15)
    running = []
    for process in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            if process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
    return running


@pytest.mark.timeout(300)
def test_cognizes_run_from_an_empty_folder_serves_an_agent_written_elsewhere_and_ctrl_c_stops_everything(
    venv, tmp_path
):
    data, here, elsewhere = tmp_path / "data", tmp_path / "run", tmp_path / "agent"
    here.mkdir()
    elsewhere.mkdir()
    (elsewhere / "agent.py").write_text(AGENT)
    env = _user_env(COGNIZES_VAR_DIR=data)
    temporary = set(Path(tempfile.gettempdir()).glob("tmp*/redis.config"))

    # Before any `cognizes run`: the agent cannot work, and says what to do, in one message.
    early = subprocess.run(
        [venv / "bin" / "python", "agent.py"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=180
    )
    assert early.returncode == 1, early.stderr
    assert "Traceback" not in early.stderr and "start `cognizes run` there once" in early.stderr
    assert _alive(_processes_of(data)) == [], "the servers the agent started outlived it"

    port, grpc_port = free_port(), free_port()
    run_env = {
        **env,
        "PORT": str(port),
        "COGNIZES_GRPC_PORT": str(grpc_port),
        "COGNIZES_ADMIN_PASSWORD": "outside-pw",
        "COGNIZES_WEB_WORKERS": "1",  # one web process to start, not one per core: uvicorn's supervisor is not ours
    }
    launcher = subprocess.Popen(
        [venv / "bin" / "cognizes", "run"],
        cwd=here,
        env=run_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines, seen = _lines(launcher.stdout), []
    try:
        _wait_for_line(lines, seen, "Cognizes is running at", launcher)
        stored = data / "secret_key"
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600 and len(stored.read_text().strip()) >= 50

        # The agent, and a key and an engine id from the installed command: together (each loads Django and ADK).
        def start(command: list[str | Path], cwd: Path) -> subprocess.Popen[str]:
            return subprocess.Popen(
                command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )

        agent = start([venv / "bin" / "python", "agent.py"], elsewhere)
        # (--skip-checks: cognizes run's migrate ran Django's checks, whose URL imports cost each command ~4 s of CPU)
        key_made = start([venv / "bin" / "cognizes", "create_api_key", "my_app", "--skip-checks"], here)
        engine_made = start([venv / "bin" / "cognizes", "vertex_engine", "my_app", "--skip-checks"], here)
        agent_said, key_said, engine_said = (p.communicate(timeout=180) for p in (agent, key_made, engine_made))
        assert (agent.returncode, key_made.returncode, engine_made.returncode) == (0, 0, 0), (agent_said, key_said)
        key, engine = key_said[0].splitlines()[-1], engine_said[0].splitlines()[-1]

        # What the agent wrote, read back through the running server.
        base = f"http://127.0.0.1:{port}"
        session = json.loads(_get(f"{base}/api/v1/apps/my_app/users/alice/sessions/outside/", key))
        assert [event["content"]["parts"][0]["text"] for event in session["events"]] == [
            "Written from outside the checkout"
        ]
        note = _get(f"{base}/api/v1/apps/my_app/users/alice/sessions/outside/artifacts/note.txt/content/", key)
        assert note == b"an artifact from outside"
        # The same session over Vertex AI's gRPC surface, as ADK for Go reads it.
        channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
        grpc.channel_ready_future(channel).result(timeout=60)
        client = SessionServiceClient(transport=SessionServiceGrpcTransport(channel=channel))
        name = f"reasoningEngines/{engine}/sessions/outside"
        assert client.get_session(name=name, metadata=[("x-goog-api-key", key)]).user_id == "alice"
        # The API reference and the admin's scripts, served from the installed package as a browser loads them.
        docs = _get(f"{base}/api/docs/").decode()
        assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', docs)
        assert len(assets) >= 2 and all(_get(base + asset) for asset in assets)
        assert b"EventSource" in _get(f"{base}/static/sessions_app/live_events.js")
        assert b"openapi" in _get(f"{base}/api/schema/?format=json")

        time.sleep(3)  # let the worker and beat finish starting
        started = psutil.Process(launcher.pid).children(recursive=True)
        servers = _processes_of(tmp_path)
        assert len(started) >= 4 and servers, "expected web, gRPC, worker, beat, PostgreSQL and Redis"

        launcher.send_signal(signal.SIGINT)
        launcher.wait(timeout=60)
    finally:
        if launcher.poll() is None:
            launcher.kill()
    time.sleep(0.2)  # the reader's last lines
    while not lines.empty():
        seen.append(lines.get())
    output = "".join(seen)

    assert launcher.returncode == 0, output
    assert f"Data: {data}  (COGNIZES_VAR_DIR)" in output
    summary = output.index(f"Cognizes is running at http://127.0.0.1:{port}/")
    assert f"admin     http://127.0.0.1:{port}/admin/   Admin login (shown once): admin / outside-pw" in output
    assert "create_api_key my_app" in output[summary:]
    assert "celery@" not in output and "Uvicorn running" not in output  # no banners burying the summary
    after = output[summary:].splitlines()
    if os.geteuid() == 0:  # Celery's warning to root (this container's tests), whenever its worker starts: not ours
        after = [line for line in after if "superuser privileges" not in line and "_warn_or_raise_security" not in line]
    assert [line for line in after if "warn" in line.lower() or "experimental" in line.lower()] == []
    assert _alive(started + servers) == []
    assert _alive(_processes_of(tmp_path)) == []
    # Everything went to the data folder: nothing in the folders the command and the agent were started from.
    assert [path.name for path in here.iterdir()] == []
    assert [path.name for path in elsewhere.iterdir()] == ["agent.py"]
    # Redis's socket and files were under the data folder, not in a new /tmp folder left behind.
    assert set(Path(tempfile.gettempdir()).glob("tmp*/redis.config")) == temporary
