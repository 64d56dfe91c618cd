"""The sandbox daemon: the one process per host that owns the sandboxes' interpreters.

Cognizes' web server runs several worker processes, and a sandbox's variables live in one interpreter, so the
interpreters cannot belong to a web worker: they belong to this daemon (``python -m tools_app.sandbox_daemon``,
started by ``cognizes run``), and every worker forwards to it over a Unix socket only the server's user can open
(``tools_app.sandbox_client``). A request is one JSON line, its answer one JSON line. The daemon never touches the
database: the web side keeps the rows and asks the daemon to run, stop or wipe sandbox N.

Each sandbox has a folder under the daemon's root: ``workspaces/N`` (the sandbox's /workspace, kept across
interpreter restarts) and ``scratch/N`` (its /tmp, emptied at each start). The interpreter starts at the first
execution, is killed with its whole process group when an execution passes the wall clock, and is evicted after
``COGNIZES_SANDBOX_IDLE_SECONDS`` idle (``status`` then says ``evicted``, which the API reports as Vertex does, as
terminated).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import select
import shutil
import signal
import socketserver
import stat
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tools_app import sandbox_isolation as isolation

KERNELS = {
    isolation.PYTHON: Path(__file__).with_name("sandbox_kernel.py").read_text(),
    isolation.JAVASCRIPT: Path(__file__).with_name("sandbox_kernel.js").read_text(),
}
"""Each language's REPL, speaking the same JSON lines."""
ANSWER_CAP = 160 << 20
"""The longest answer line read from an interpreter: 100 MB of files in base64 plus the captured output."""
REQUEST_CAP = 160 << 20
EXECUTIONS_PER_APP = int(os.environ.get("COGNIZES_SANDBOX_EXECUTIONS_PER_APP", "4"))
"""Executions of one app's sandboxes that run at once; more get RESOURCE_EXHAUSTED."""


class Refused(Exception):
    """An answer ``{"error": status, "message"}`` instead of a result."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


class Interpreter:
    """One sandbox's interpreter process, started when first needed."""

    def __init__(self, daemon: Daemon, number: int) -> None:
        self.daemon = daemon
        self.number = number
        self.lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None
        self.last_used = time.monotonic()
        self.restore_from: Path | None = None
        """A snapshot the next start puts in the scratch folder (the kernel restores it)."""
        self.memory_bytes: int | None = None
        """Its template's memory limit: the next start uses it where lower than the daemon's (never higher)."""
        self.language = isolation.PYTHON
        """The sandbox's language, as the web side says with each execution (its row's)."""
        self.answers: int | None = None
        """Where a JavaScript interpreter answers (a Python one answers on its stdout)."""

    @property
    def workspace(self) -> Path:
        return self.daemon.root / "workspaces" / str(self.number)

    @property
    def scratch(self) -> Path:
        return self.daemon.root / "scratch" / str(self.number)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> subprocess.Popen[bytes]:
        uid = isolation.sandbox_uid(self.number)
        for folder in (self.workspace, self.scratch):
            folder.mkdir(parents=True, exist_ok=True)
            folder.chmod(0o700)
            if uid is not None:
                os.chown(folder, uid, uid)
        for leftover in self.scratch.iterdir():
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)
        if self.restore_from is not None:  # the folder was just emptied and nothing runs in it: a plain copy is safe
            restored = self.scratch / ".restore.tar"
            shutil.copyfile(self.restore_from, restored)
            if uid is not None:
                os.chown(restored, uid, uid)
            self.restore_from = None
        read_end = None
        if self.daemon.bwrap is not None:
            read_end, write_end = os.pipe()
            os.write(write_end, self.daemon.seccomp)
            os.close(write_end)
        base = self.daemon.limits
        if self.memory_bytes is not None and self.memory_bytes < base.memory_bytes:
            base = dataclasses.replace(base, memory_bytes=self.memory_bytes)  # its template's: never looser
        limits = base.for_language(self.language)
        # Node cannot move its descriptors as the Python kernel does: it answers on a pipe of its own, and its fds 1
        # and 2 are capture files in its /tmp from the start, so a child process it starts is captured too.
        answers = os.pipe() if self.language == isolation.JAVASCRIPT else ()
        try:
            line = isolation.command(
                self.daemon.bwrap,
                kernel=KERNELS[self.language],
                workspace=self.workspace,
                scratch=self.scratch,
                seccomp_fd=read_end,
                language=self.language,
                limits=base,
                answers_fd=answers[1] if answers else None,
            )
        except isolation.Unconfined as missing:
            for fd in (read_end, *answers):
                if fd is not None:
                    os.close(fd)
            raise Refused("FAILED_PRECONDITION", str(missing)) from missing
        log = open(self.daemon.root / "logs" / f"{self.number}.log", "wb")  # noqa: SIM115 (the child keeps it)
        outputs: list[int] = []
        if answers:
            for name in (".stdout", ".stderr"):  # just emptied, nothing runs in it yet: no link to follow
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW
                outputs.append(os.open(self.scratch / name, flags, 0o600))
                if uid is not None:
                    os.fchown(outputs[-1], uid, uid)
        try:
            self.process = subprocess.Popen(
                line,
                stdin=subprocess.PIPE,
                stdout=outputs[0] if answers else subprocess.PIPE,
                stderr=outputs[1] if answers else log,
                pass_fds=tuple(fd for fd in (read_end, answers[1] if answers else None) if fd is not None),
                start_new_session=True,
                cwd=self.workspace,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                preexec_fn=lambda: isolation.confine(limits, uid),
            )
        finally:
            log.close()
            for fd in (read_end, answers[1] if answers else None, *outputs):
                if fd is not None:
                    os.close(fd)
        self.answers = answers[0] if answers else None
        return self.process

    def kill(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        answers, self.answers = self.answers, None
        if answers is not None:
            with contextlib.suppress(OSError):
                os.close(answers)

    def signal(self, number: int) -> None:
        """SIGSTOP (pause: no CPU, memory and variables kept) or SIGCONT (resume) to the whole sandbox."""
        if self.alive() and self.process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, number)

    def execute(self, code: str, files: list[dict[str, str]], timeout: float, **extra: Any) -> dict[str, Any]:
        """Run ``code`` in the interpreter (started if needed); its output, changed files and outcome."""
        started = time.monotonic()
        if not self.lock.acquire(timeout=timeout):
            raise Refused("ABORTED", "another execution of this sandbox is still running")
        try:
            restarted = not self.alive()
            # Started from the daemon's one spawning thread: --die-with-parent kills the sandbox when the *thread*
            # that started it ends, and the thread serving this request ends with it.
            process = self.process if not restarted else self.daemon.spawner.submit(self.start).result()
            assert process is not None and process.stdin is not None
            answers = self.answers if self.answers is not None else process.stdout.fileno() if process.stdout else -1
            try:
                process.stdin.write((json.dumps({"code": code, "files": files, **extra}) + "\n").encode())
                process.stdin.flush()
                line = _read_line(answers, deadline=started + timeout)
            except (BrokenPipeError, OSError):
                line = None
            duration_ms = (time.monotonic() - started) * 1000
            if line == b"":  # the deadline passed
                self.kill()
                return _ended(f"the execution passed its {timeout:g} s wall clock and was killed", duration_ms, True)
            answer = _parse(line)
            if answer is None:
                status = self._ending()
                return _ended(f"the interpreter ended ({status})", duration_ms, False)
            answer["outcome"] = "OUTCOME_FAILED" if answer.pop("error", False) else "OUTCOME_OK"
            answer["duration_ms"] = duration_ms
            answer["restarted"] = restarted
            return answer
        finally:
            self.last_used = time.monotonic()
            self.lock.release()

    def _ending(self) -> str:
        process = self.process
        self.kill()
        code = process.returncode if process is not None else None
        if code is not None and code < 0:
            return f"killed by signal {-code}: a limit was reached"
        return f"exit status {code}"


def _read_line(fd: int, *, deadline: float) -> bytes | None:
    """One line from ``fd`` before ``deadline``: b"" if the deadline passed, None if the pipe closed or overflowed."""
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b""
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return b""
        data = os.read(fd, 1 << 20)
        if not data:
            return None
        chunks.append(data)
        size += len(data)
        if data.endswith(b"\n"):
            return b"".join(chunks)
        if size > ANSWER_CAP:
            return None


def _parse(line: bytes | None) -> dict[str, Any] | None:
    if not line:
        return None
    try:
        answer = json.loads(line)
    except ValueError:
        return None
    if not isinstance(answer, dict):
        return None
    return {
        "stdout": str(answer.get("stdout", "")),
        "stderr": str(answer.get("stderr", "")),
        "error": bool(answer.get("error")),
        "files": [
            {"name": str(item.get("name", "")), "data": str(item.get("data", ""))}
            for item in answer.get("files") or []
            if isinstance(item, dict)
        ],
    }


def _ended(message: str, duration_ms: float, deadline: bool) -> dict[str, Any]:
    return {
        "stdout": "",
        "stderr": message + "; its variables are lost, the files in /workspace are kept\n",
        "files": [],
        "outcome": "OUTCOME_DEADLINE_EXCEEDED" if deadline else "OUTCOME_FAILED",
        "duration_ms": duration_ms,
        "restarted": False,
    }


class Daemon:
    """The interpreters of this host, by sandbox number."""

    def __init__(self, root: Path, var_dir: Path) -> None:
        self.root = root
        self.limits = isolation.Limits.from_environment()
        self.idle_seconds = float(os.environ.get("COGNIZES_SANDBOX_IDLE_SECONDS", "1800"))
        self.bwrap = isolation.bwrap_path(var_dir)
        self.unsafe = self.bwrap is None and isolation.unsafe_local()
        self.seccomp = isolation.seccomp_filter() if self.bwrap else b""
        self.interpreters: dict[int, Interpreter] = {}
        self.evicted: set[int] = set()
        self.running: dict[str, int] = {}
        self.lock = threading.Lock()
        self.spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-spawner")
        for folder in ("workspaces", "scratch", "logs", "snapshots"):
            (root / folder).mkdir(parents=True, exist_ok=True)
            (root / folder).chmod(0o711)  # sandbox uids pass through to their own folder, and list none
        root.chmod(0o711)

        self.problem = self._unreachable_root()

    def _unreachable_root(self) -> str | None:
        """As root, sandboxes run as uids of their own, which must pass through every folder above their workspaces
        (``/root`` is its owner's alone): said at once, rather than as bwrap's failure at the first execution."""
        if os.geteuid() != 0 or self.bwrap is None:
            return None
        for folder in [self.root.resolve(), *self.root.resolve().parents]:
            if not folder.stat().st_mode & 0o001:
                return (
                    f"the sandboxes' folder {self.root} is under {folder}, which other users cannot pass through: "
                    "give the daemon --root (or COGNIZES_VAR_DIR) outside it, e.g. /var/lib/cognizes"
                )
        return None

    def isolation(self) -> str | None:
        if self.problem:
            return None
        return "bubblewrap" if self.bwrap else ("unsafe-local" if self.unsafe else None)

    def refusal(self) -> str:
        return self.problem or isolation.INSTALL_HINT

    def interpreter(self, number: int) -> Interpreter:
        with self.lock:
            self.evicted.discard(number)
            return self.interpreters.setdefault(number, Interpreter(self, number))

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "delete_snapshot":
            (self.root / "snapshots" / f"{int(request['snapshot'])}.tar").unlink(missing_ok=True)
            return {}
        if op == "ping":
            return {
                "isolation": self.isolation(),
                "message": None if self.isolation() else self.refusal(),
                "languages": isolation.languages(),
            }
        number = int(request["sandbox"])
        if op == "execute":
            return self.execute(number, request)
        if op == "stop":
            self.interpreter(number).kill()
            return {}
        if op in ("pause", "resume"):
            self.interpreter(number).signal(signal.SIGSTOP if op == "pause" else signal.SIGCONT)
            return {}
        if op == "delete":
            with self.lock:
                found = self.interpreters.pop(number, None)
                self.evicted.discard(number)
            if found is not None:
                found.kill()
            for folder in ("workspaces", "scratch"):
                shutil.rmtree(self.root / folder / str(number), ignore_errors=True)
            (self.root / "logs" / f"{number}.log").unlink(missing_ok=True)
            return {}
        if op == "snapshot":
            return self.snapshot(number, int(request["snapshot"]))
        if op == "restore":
            kept = self.root / "snapshots" / f"{int(request['snapshot'])}.tar"
            if not kept.is_file():
                raise Refused("NOT_FOUND", "the snapshot's files are gone")
            target = self.interpreter(number)
            target.kill()
            target.restore_from = kept
            return {}
        if op == "status":
            with self.lock:
                found = self.interpreters.get(number)
                evicted = number in self.evicted
            state = "running" if found is not None and found.alive() else ("evicted" if evicted else "idle")
            return {"state": state}
        raise Refused("INVALID_ARGUMENT", f"unknown op {op!r}")

    def snapshot(self, number: int, snapshot: int) -> dict[str, Any]:
        """The sandbox's workspace and picklable variables, written by its kernel, kept as ``snapshots/N.tar``."""
        if self.isolation() is None:
            raise Refused("FAILED_PRECONDITION", self.refusal())
        interpreter = self.interpreter(number)
        answer = interpreter.execute("", [], self.limits.wall_seconds, snapshot=True)
        if answer["outcome"] != "OUTCOME_OK":
            raise Refused("FAILED_PRECONDITION", f"the snapshot failed: {answer['stderr'].strip()}")
        # The scratch folder is the sandbox's: open without following a link it may have planted, regular files only.
        try:
            fd = os.open(interpreter.scratch / ".snapshot.tar", os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as error:
            raise Refused("FAILED_PRECONDITION", "the sandbox wrote no snapshot") from error
        target = self.root / "snapshots" / f"{snapshot}.tar"
        with os.fdopen(fd, "rb") as source:
            if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
                raise Refused("FAILED_PRECONDITION", "the sandbox wrote no snapshot")
            with open(target, "wb") as out:
                shutil.copyfileobj(source, out)
        return {"size_bytes": target.stat().st_size, "message": answer["stdout"]}

    def execute(self, number: int, request: dict[str, Any]) -> dict[str, Any]:
        if self.isolation() is None:
            raise Refused("FAILED_PRECONDITION", self.refusal())
        app = str(request.get("app", ""))
        with self.lock:
            if self.running.get(app, 0) >= EXECUTIONS_PER_APP:
                raise Refused("RESOURCE_EXHAUSTED", f"{EXECUTIONS_PER_APP} executions of this app are running")
            self.running[app] = self.running.get(app, 0) + 1
        try:
            timeout = min(float(request.get("timeout") or self.limits.wall_seconds), self.limits.wall_seconds)
            extra = {}
            if request.get("command") is not None:  # execute_bash: the kernel runs it in bash
                extra = {
                    "command": str(request["command"]),
                    "cwd": request.get("cwd"),
                    "command_timeout": timeout - 0.5,
                }
            interpreter = self.interpreter(number)
            if isinstance(request.get("memory_bytes"), int):
                interpreter.memory_bytes = request["memory_bytes"]
            language = str(request.get("language") or isolation.PYTHON)
            if language not in KERNELS:
                raise Refused("INVALID_ARGUMENT", f"no interpreter for {language}")
            if language != interpreter.language:  # set once, at the sandbox's first execution here
                interpreter.kill()
                interpreter.language = language
            return interpreter.execute(str(request.get("code", "")), request.get("files") or [], timeout, **extra)
        finally:
            with self.lock:
                self.running[app] -= 1

    def evict_idle(self) -> None:
        """Stop interpreters idle past ``idle_seconds`` (their files stay; ``status`` says ``evicted``)."""
        now = time.monotonic()
        with self.lock:
            idle = [i for i in self.interpreters.values() if i.alive() and now - i.last_used > self.idle_seconds]
        for interpreter in idle:
            if interpreter.lock.acquire(blocking=False):
                try:
                    interpreter.kill()
                    with self.lock:
                        self.evicted.add(interpreter.number)
                finally:
                    interpreter.lock.release()

    def stop_all(self) -> None:
        for interpreter in list(self.interpreters.values()):
            interpreter.kill()


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        line = self.rfile.readline(REQUEST_CAP)
        try:
            request = json.loads(line)
            answer = self.server.daemon.handle(request)
        except Refused as refused:
            answer = {"error": refused.status, "message": str(refused)}
        except (ValueError, KeyError, TypeError) as error:
            answer = {"error": "INVALID_ARGUMENT", "message": f"bad request: {error}"}
        self.wfile.write((json.dumps(answer) + "\n").encode())


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    daemon: Daemon


def make_server(socket_path: Path, root: Path, var_dir: Path) -> _Server:
    """The daemon on its socket, which only this user can open (the web server's user)."""
    daemon = Daemon(root, var_dir)
    socket_path.parent.mkdir(parents=True, exist_ok=True)
    socket_path.unlink(missing_ok=True)
    old_mask = os.umask(0o177)
    try:
        server = _Server(str(socket_path), _Handler)
    finally:
        os.umask(old_mask)
    server.daemon = daemon
    return server


def serve(socket_path: Path, root: Path, var_dir: Path) -> None:
    """Serve until SIGTERM/SIGINT, evicting idle interpreters."""
    server = make_server(socket_path, root, var_dir)
    daemon = server.daemon

    def reap() -> None:
        while True:
            time.sleep(min(30.0, max(daemon.idle_seconds / 4, 0.5)))
            daemon.evict_idle()

    threading.Thread(target=reap, daemon=True).start()
    if daemon.isolation() is None:
        print(f"sandbox daemon: sandboxes are refused: {daemon.refusal()}", flush=True)
    elif daemon.unsafe:
        print(f"sandbox daemon: WARNING {isolation.UNSAFE_LOCAL}=1: code runs UNCONFINED on this host", flush=True)
    try:
        server.serve_forever()
    finally:
        daemon.stop_all()
        server.server_close()
        socket_path.unlink(missing_ok=True)


def main() -> None:
    from cognizes.infra.local import VAR_DIR

    parser = argparse.ArgumentParser(prog="python -m tools_app.sandbox_daemon", description=__doc__)
    parser.add_argument("--socket", type=Path, default=None, help="the Unix socket (COGNIZES_SANDBOX_SOCKET)")
    parser.add_argument("--root", type=Path, default=VAR_DIR / "sandboxes", help="where the workspaces are kept")
    arguments = parser.parse_args()
    socket_path = arguments.socket or Path(os.environ.get("COGNIZES_SANDBOX_SOCKET") or VAR_DIR / "sandbox.sock")

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    with contextlib.suppress(KeyboardInterrupt):
        serve(socket_path, arguments.root, VAR_DIR)


if __name__ == "__main__":
    main()
