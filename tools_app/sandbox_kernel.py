"""The interpreter that runs inside a sandbox: a JSON-lines REPL over stdin/stdout, one ``globals()`` for its life.

This file is not imported by Cognizes: the sandbox daemon reads its source and runs it with the sandbox's own
Python (``python -I -c <source> <workspace>``) inside bubblewrap, so it uses the standard library only. Each request
line is ``{"code", "files": [{"name", "data": base64}]}``; each answer line is ``{"stdout", "stderr", "error",
"files": [{"name", "data"}]}``: the input files are written into the workspace first (here, inside the sandbox,
where a link the code planted can only point at the sandbox's own view), and the files the run created or changed
in the workspace are read back. Output goes to files in the sandbox's /tmp at the level of file descriptors, so what
a child process or a C extension prints is captured too, and the protocol's own pipe is a descriptor the code is
never given.
"""

import base64
import contextlib
import json
import os
import signal
import sys
import traceback

OUTPUT_CAP = 1 << 20
"""Bytes of stdout and of stderr kept per execution (the rest is cut, said at the end)."""
FILES_CAP = 100 << 20
"""Bytes of output files sent back per execution: Vertex's 100 MB per response."""
WORKSPACE = sys.argv[1] if len(sys.argv) > 1 else "/workspace"
SCRATCH = sys.argv[2] if len(sys.argv) > 2 else "/tmp"  # nosec B108: the sandbox's private /tmp


def main() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past RLIMIT_FSIZE a write fails (EFBIG) instead of killing us
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.chdir(WORKSPACE)
    namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        restore(namespace)
    except Exception as error:
        print(f"snapshot not restored: {error}", file=sys.stderr)
    for line in requests:
        request = json.loads(line)
        if request.get("snapshot"):
            try:
                answer = snapshot(namespace)
            except (OSError, ValueError) as error:  # past the file-size limit, a full disk: the snapshot fails alone
                answer = {"stdout": "", "stderr": f"snapshot not written: {error}\n", "error": True, "files": []}
        elif "command" in request:
            answer = bash(request)
        else:
            answer = run(request, namespace)
        data = (json.dumps(answer) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(answers, view) :]


def run(request: dict, namespace: dict) -> dict:
    """Write the files, run the code with fds 1 and 2 on capture files, and say what it printed and changed."""
    for item in request.get("files") or []:
        path = os.path.join(WORKSPACE, os.path.normpath("/" + item["name"]).lstrip("/"))
        try:
            os.makedirs(os.path.dirname(path) or WORKSPACE, exist_ok=True)
            with open(path, "wb") as out:
                out.write(base64.b64decode(item["data"]))
        except (OSError, ValueError) as failure:  # a name too long, a folder where a file is, a full disk: said
            return {
                "stdout": "",
                "stderr": f"input file {item['name']!r} not written: {failure}\n",
                "error": True,
                "files": [],
            }
    before = _files()
    out_path, err_path = os.path.join(SCRATCH, ".stdout"), os.path.join(SCRATCH, ".stderr")
    saved = os.dup(1), os.dup(2)
    for fd, path in ((1, out_path), (2, err_path)):
        capture = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(capture, fd)
        os.close(capture)
    error = False
    try:
        exec(compile(request.get("code", ""), "<code>", "exec"), namespace)  # nosec B102: this IS the sandbox
    except SystemExit as stop:
        error = stop.code not in (None, 0)
    except BaseException:
        error = True
        kind, value, tb = sys.exc_info()
        sys.stderr.write("".join(traceback.format_exception(kind, value, tb.tb_next if tb else None)))
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a full disk must not end the kernel
                stream.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
    with contextlib.suppress(OSError):
        os.chdir(WORKSPACE)  # the code may have moved elsewhere
    return {"stdout": _read(out_path), "stderr": _read(err_path), "error": error, "files": _changed(before)}


def snapshot(namespace: dict) -> dict:
    """Write the workspace and the variables that pickle (modules by name) to the scratch folder's .snapshot.tar."""
    import io
    import pickle
    import tarfile
    import types

    kept, skipped, modules = {}, [], {}
    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        if isinstance(value, types.ModuleType):
            modules[name] = value.__name__
            continue
        try:
            kept[name] = pickle.dumps(value)
        except Exception:
            skipped.append(name)
    state = pickle.dumps({"variables": kept, "modules": modules})
    with tarfile.open(os.path.join(SCRATCH, ".snapshot.tar"), "w") as tar:
        info = tarfile.TarInfo("state.pickle")
        info.size = len(state)
        tar.addfile(info, io.BytesIO(state))
        tar.add(WORKSPACE, arcname="workspace")
    note = f"snapshot: {len(kept)} variables and {len(modules)} modules kept"
    return {
        "stdout": note + (f"; not picklable: {', '.join(sorted(skipped))}" if skipped else ""),
        "stderr": "",
        "error": False,
        "files": [],
    }


def restore(namespace: dict) -> None:
    """At start: a snapshot the daemon put in the scratch folder (.restore.tar) becomes the workspace and variables."""
    import importlib
    import pickle
    import tarfile

    path = os.path.join(SCRATCH, ".restore.tar")
    if not os.path.isfile(path):
        return
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            if member.name.startswith("workspace/") and ".." not in member.name.split("/"):
                member.name = member.name[len("workspace/") :]
                tar.extract(member, WORKSPACE, set_attrs=False)
        state_file = tar.extractfile("state.pickle")
        state = pickle.loads(state_file.read()) if state_file else {}  # nosec B301: this sandbox's own snapshot
    os.remove(path)
    for name, module in state.get("modules", {}).items():
        with contextlib.suppress(ImportError):
            namespace[name] = importlib.import_module(module)
    for name, data in state.get("variables", {}).items():
        with contextlib.suppress(Exception):
            namespace[name] = pickle.loads(data)  # nosec B301


def bash(request: dict) -> dict:
    """``execute_bash``: the command in bash (its own process group, killed with it at its timeout)."""
    import subprocess
    import time

    started = time.monotonic()
    cwd = os.path.join(WORKSPACE, request.get("cwd") or ".")
    try:
        done = subprocess.run(
            ["/bin/bash", "-c", request["command"]],
            cwd=cwd,
            capture_output=True,
            timeout=request.get("command_timeout"),
            start_new_session=True,
        )
        out, err, code = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as expired:
        out, err, code = expired.stdout or b"", (expired.stderr or b"") + b"\n[timed out]\n", -9
    except OSError as error:
        out, err, code = b"", str(error).encode(), 127
    text = {
        "stdout": out[:OUTPUT_CAP].decode("utf-8", "replace"),
        "stderr": err[:OUTPUT_CAP].decode("utf-8", "replace"),
        "returncode": code,
        "duration_ms": int((time.monotonic() - started) * 1000),
    }
    return {"stdout": json.dumps(text), "stderr": "", "error": code != 0, "files": []}


def _read(path: str) -> str:
    with open(path, "rb") as captured:
        data = captured.read(OUTPUT_CAP + 1)
    text = data[:OUTPUT_CAP].decode("utf-8", "replace")
    return text + ("\n[output cut at 1 MiB]\n" if len(data) > OUTPUT_CAP else "")


def _files() -> dict:
    """Regular files under the workspace (links not followed) → what says they changed."""
    found = {}
    for folder, _, names in os.walk(WORKSPACE):
        for name in names:
            path = os.path.join(folder, name)
            try:
                stat = os.lstat(path)
            except OSError:
                continue
            if os.path.isfile(path) and not os.path.islink(path):
                found[path] = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    return found


def _changed(before: dict) -> list:
    out, budget = [], FILES_CAP
    for path, signature in sorted(_files().items()):
        if before.get(path) == signature or signature[1] > budget:
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as changed:
                data = changed.read(budget + 1)
        except OSError:
            continue
        if len(data) > budget:
            continue
        budget -= len(data)
        out.append({"name": os.path.relpath(path, WORKSPACE), "data": base64.b64encode(data).decode()})
    return out


if __name__ == "__main__":
    main()
