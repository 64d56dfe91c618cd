"""The rules of code-execution sandboxes: who may create, read, run and delete one, and what each run leaves.

The rows are here (``SandboxEnvironment``, ``SandboxExecution``); the interpreters and files are the sandbox
daemon's (``sandbox_client``). A sandbox is found only within its app and engine (and, for a user's key, its
owner), so another app's sandbox is the same 404 as one that does not exist. Quotas: ``COGNIZES_SANDBOX_PER_APP``
sandboxes alive per app; the daemon bounds the executions each app runs at once.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from tools_app import sandbox_client
from tools_app.models import SandboxEnvironment, SandboxExecution, SandboxSnapshot
from tools_app.sandbox_client import SandboxUnavailable
from tools_app.sandbox_isolation import NODE_HINT

LANGUAGES = ("LANGUAGE_PYTHON", "LANGUAGE_JAVASCRIPT")
"""What this server runs: Python, and JavaScript where the sandbox host has Node.js (the daemon says)."""
DEFAULT_TTL = timedelta(days=14)
"""Vertex keeps a sandbox's state up to 14 days."""
INPUT_CAP = 100 << 20
"""Vertex's 100 MB of files per request."""


def sandboxes_per_app() -> int:
    return int(os.environ.get("COGNIZES_SANDBOX_PER_APP", "20"))


class SandboxRefused(Exception):
    """A rule said no: ``status`` is the Google status (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, FAILED_PRECONDITION)."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class OutputFile:
    name: str
    content: bytes


@dataclass(frozen=True)
class Execution:
    stdout: str
    stderr: str
    files: list[OutputFile]
    outcome: str
    duration_ms: float


def alive() -> Any:
    """The sandboxes whose time has not run out (expired ones are TERMINATED when read)."""
    return SandboxEnvironment.objects.exclude(state=SandboxEnvironment.State.TERMINATED)


def do_create_sandbox(
    *,
    app_name: str,
    engine_id: int,
    language: str,
    spec: dict[str, Any],
    display_name: str = "",
    expire_time: datetime | None = None,
    owner: str = "",
    snapshot: SandboxSnapshot | None = None,
    memory_bytes: int | None = None,
    template: int | None = None,
) -> SandboxEnvironment:
    """A new running sandbox (its interpreter starts at the first execution, from ``snapshot``'s files and
    variables if given, under ``memory_bytes`` — its template's — where tighter than the daemon's cap); refused
    without isolation."""
    if language not in LANGUAGES:
        raise SandboxRefused(
            "INVALID_ARGUMENT", f"{language} sandboxes are not offered by this server (Python and JavaScript only)."
        )
    if snapshot is not None and language != "LANGUAGE_PYTHON":
        raise SandboxRefused("INVALID_ARGUMENT", "Snapshots restore Python sandboxes only.")
    status = sandbox_client.call("ping")
    if status.get("isolation") is None:
        raise SandboxUnavailable("FAILED_PRECONDITION", status.get("message") or "no isolation tool on this host")
    if language not in status.get("languages", ["LANGUAGE_PYTHON"]):
        raise SandboxUnavailable("FAILED_PRECONDITION", NODE_HINT)
    count = alive().filter(app_name=app_name, expire_time__gt=timezone.now()).count()
    if count >= sandboxes_per_app():
        raise SandboxRefused("RESOURCE_EXHAUSTED", f"This app already has {sandboxes_per_app()} sandboxes.")
    sandbox = SandboxEnvironment.objects.create(
        app_name=app_name,
        engine_id=engine_id,
        owner=owner,
        display_name=display_name,
        language=language,
        spec=spec,
        memory_bytes=memory_bytes,
        template=template,
        expire_time=expire_time or timezone.now() + DEFAULT_TTL,
    )
    if snapshot is not None:
        try:
            sandbox_client.call("restore", sandbox=sandbox.pk, snapshot=snapshot.pk)
        except SandboxUnavailable:
            sandbox.delete()
            raise
    return sandbox


def do_snapshot(sandbox: SandboxEnvironment, *, display_name: str = "") -> SandboxSnapshot:
    """Keep the sandbox's workspace and picklable variables (its interpreter must be running or idle, not paused)."""
    if sandbox.state != SandboxEnvironment.State.RUNNING:
        raise SandboxRefused("FAILED_PRECONDITION", f"The sandbox is {sandbox.get_state_display()}, not running.")
    if sandbox.language != "LANGUAGE_PYTHON":
        raise SandboxRefused(
            "FAILED_PRECONDITION", "Snapshots keep Python sandboxes only (JavaScript values do not serialize)."
        )
    snapshot = SandboxSnapshot.objects.create(
        app_name=sandbox.app_name,
        engine_id=sandbox.engine_id,
        owner=sandbox.owner,
        display_name=display_name,
        source_sandbox=sandbox.pk,
        expire_time=timezone.now() + DEFAULT_TTL,
    )
    try:
        answer = sandbox_client.call("snapshot", timeout=600, sandbox=sandbox.pk, snapshot=snapshot.pk)
    except SandboxUnavailable:
        snapshot.delete()
        raise
    snapshot.size_bytes = int(answer.get("size_bytes", 0))
    snapshot.save(update_fields=["size_bytes"])
    return snapshot


def get_snapshot(*, app_name: str, engine_id: int, number: int, owner: str | None) -> SandboxSnapshot | None:
    rows = list_snapshots(app_name=app_name, engine_id=engine_id, owner=owner)
    return rows.filter(pk=number).first()


def list_snapshots(*, app_name: str, engine_id: int, owner: str | None) -> Any:
    rows = SandboxSnapshot.objects.filter(app_name=app_name, engine_id=engine_id)
    return rows if owner is None else rows.filter(owner=owner)


def do_delete_snapshot(snapshot: SandboxSnapshot) -> None:
    number = snapshot.pk
    snapshot.delete()
    with contextlib.suppress(SandboxUnavailable):
        sandbox_client.call("delete_snapshot", sandbox=0, snapshot=number)


def get_sandbox(*, app_name: str, engine_id: int, number: int, owner: str | None) -> SandboxEnvironment | None:
    """The sandbox, with its state brought up to date (expired, or its interpreter evicted → TERMINATED)."""
    rows = SandboxEnvironment.objects.filter(app_name=app_name, engine_id=engine_id, pk=number)
    if owner is not None:
        rows = rows.filter(owner=owner)
    sandbox = rows.first()
    if sandbox is None or sandbox.state == SandboxEnvironment.State.TERMINATED:
        return sandbox
    ended = sandbox.expire_time is not None and sandbox.expire_time <= timezone.now()
    if not ended:
        try:
            ended = sandbox_client.call("status", sandbox=sandbox.pk)["state"] == "evicted"
        except SandboxUnavailable:
            ended = False  # the daemon is down: the state it would report is unknown, the row's stands
    if ended:
        _terminate(sandbox)
    return sandbox


def list_sandboxes(*, app_name: str, engine_id: int, owner: str | None) -> Any:
    rows = SandboxEnvironment.objects.filter(app_name=app_name, engine_id=engine_id)
    return rows if owner is None else rows.filter(owner=owner)


def _terminate(sandbox: SandboxEnvironment) -> None:
    sandbox.state = SandboxEnvironment.State.TERMINATED
    sandbox.save(update_fields=["state", "updated_at"])
    with contextlib.suppress(SandboxUnavailable):
        sandbox_client.call("stop", sandbox=sandbox.pk)


def do_delete_sandbox(sandbox: SandboxEnvironment) -> None:
    """The row goes (its executions stay, as audit rows), then the interpreter and the files."""
    number = sandbox.pk
    sandbox.delete()
    # If the daemon is down, the folder stays until the same number is deleted again (numbers are never reused).
    with contextlib.suppress(SandboxUnavailable):
        sandbox_client.call("delete", sandbox=number)


def do_pause(sandbox: SandboxEnvironment, *, paused: bool) -> SandboxEnvironment:
    """Pause (the interpreter stopped, its memory kept: no CPU) or resume a sandbox; a terminated one stays so."""
    wanted = SandboxEnvironment.State.PAUSED if paused else SandboxEnvironment.State.RUNNING
    if sandbox.state == SandboxEnvironment.State.TERMINATED:
        raise SandboxRefused("FAILED_PRECONDITION", "The sandbox is terminated: create another.")
    sandbox_client.call("pause" if paused else "resume", sandbox=sandbox.pk)
    if sandbox.state != wanted:
        sandbox.state = wanted
        sandbox.save(update_fields=["state", "updated_at"])
    return sandbox


def do_execute(
    sandbox: SandboxEnvironment,
    *,
    code: str,
    files: list[tuple[str, bytes]],
    user_id: str = "",
    session_id: str = "",
    command: str | None = None,
    cwd: str | None = None,
) -> Execution:
    """Run ``code`` with ``files`` in the sandbox (or, with ``command``, that bash command: ``execute_bash``); one
    ``SandboxExecution`` row records it."""
    if sandbox.state != SandboxEnvironment.State.RUNNING:
        raise SandboxRefused("FAILED_PRECONDITION", f"The sandbox is {sandbox.get_state_display()}, not running.")
    if sum(len(content) for _, content in files) + len(code.encode()) > INPUT_CAP:
        raise SandboxRefused("INVALID_ARGUMENT", "The code and files exceed 100 MB.")
    started = timezone.now()
    answer = sandbox_client.call(
        "execute",
        timeout=600,
        sandbox=sandbox.pk,
        app=sandbox.app_name,
        language=sandbox.language,
        code=code,
        memory_bytes=sandbox.memory_bytes,
        files=[{"name": name, "data": base64.b64encode(content).decode()} for name, content in files],
        **({"command": command, "cwd": cwd} if command is not None else {}),
    )
    result = Execution(
        stdout=answer["stdout"],
        stderr=answer["stderr"],
        files=[OutputFile(item["name"], _decoded(item["data"])) for item in answer["files"]],
        outcome=answer["outcome"],
        duration_ms=float(answer["duration_ms"]),
    )
    SandboxExecution.objects.create(
        sandbox=sandbox,
        app_name=sandbox.app_name,
        user_id=user_id or sandbox.owner,
        session_id=session_id,
        code=_storable(code if command is None else command),
        language=sandbox.language if command is None else "bash",
        stdout=_storable(result.stdout),
        stderr=_storable(result.stderr),
        exit_status=result.outcome,
        started_at=started,
        duration_ms=result.duration_ms,
    )
    return result


def _storable(text: str) -> str:
    """Text PostgreSQL can keep: it refuses NUL characters, which code and its output may hold (/proc/*/environ)."""
    return text.replace("\x00", "\ufffd")


def _decoded(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return b""


def erase_owner(*, app_name: str, user_id: str | None) -> tuple[int, dict[str, int]]:
    """A user's sandboxes and snapshots (``user_id`` None: every one of the app's, its engine deleted): their rows
    (as a ``QuerySet.delete()`` result) and, at the daemon, interpreters and files."""
    owned = {"app_name": app_name} if user_id is None else {"app_name": app_name, "owner": user_id}
    rows = SandboxEnvironment.objects.filter(**owned)
    numbers = list(rows.values_list("pk", flat=True))
    deleted = rows.delete()
    for number in numbers:
        with contextlib.suppress(SandboxUnavailable):
            sandbox_client.call("delete", sandbox=number)
    snapshots = SandboxSnapshot.objects.filter(**owned)
    kept = list(snapshots.values_list("pk", flat=True))
    count, kinds = snapshots.delete()
    for number in kept:
        with contextlib.suppress(SandboxUnavailable):
            sandbox_client.call("delete_snapshot", sandbox=0, snapshot=number)
    return deleted[0] + count, {**deleted[1], **kinds}
