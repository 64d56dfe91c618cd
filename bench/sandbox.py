"""Benchmark: a sandbox's first result and a warm execution, against running the same code in a local python process.

What is measured, and why (issue 46, item 5)
--------------------------------------------
A sandbox keeps one interpreter alive under bubblewrap so that an execution costs a round trip, not a process
start. This measures the sandbox daemon (tools_app.sandbox_daemon, started here on a folder of its own) through its
socket, as the web workers reach it; the HTTP request and the execution's row add the Vertex surface's usual few
milliseconds on top, which bench/vertex.py measures for other routes.

* **local process**: ``python3 -c "print(1)"`` started and waited for (what a stateless executor pays per run);
* **create → first result**: a new sandbox's first ``execute`` of ``print(1)`` (bwrap, namespaces, seccomp, the
  interpreter's start and the REPL's first answer);
* **warm execute**: the next ``execute`` of ``print(1)`` in the same sandbox;
* **in-process exec**: ``exec(compile("print(1)"))`` with stdout to a buffer (the code's own time).

Medians of ``--runs`` each; the ratios are of the same run.

    .venv/bin/python bench/sandbox.py [--runs 20]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs

    from cognizes.infra.local import VAR_DIR
    from tools_app import sandbox_client, sandbox_isolation

    root = VAR_DIR / "bench-sandboxes" / str(os.getpid())
    socket_path = root.parent / f"{os.getpid()}.sock"
    os.environ["COGNIZES_SANDBOX_SOCKET"] = str(socket_path)
    daemon = subprocess.Popen(
        [sys.executable, "-m", "tools_app.sandbox_daemon", "--socket", str(socket_path), "--root", str(root)],
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                isolation = sandbox_client.call("ping")["isolation"]
                break
            except sandbox_client.SandboxUnavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        if isolation is None:
            raise SystemExit(sandbox_isolation.INSTALL_HINT)

        local, cold, warm, inline = [], [], [], []
        python = sandbox_isolation.interpreter()
        for number in range(1, runs + 1):
            started = time.perf_counter()
            subprocess.run([python, "-I", "-c", "print(1)"], check=True, capture_output=True)
            local.append(time.perf_counter() - started)

            started = time.perf_counter()
            answer = sandbox_client.call("execute", sandbox=number, app="bench", code="print(1)")
            cold.append(time.perf_counter() - started)
            assert answer["stdout"] == "1\n", answer

            started = time.perf_counter()
            sandbox_client.call("execute", sandbox=number, app="bench", code="print(1)")
            warm.append(time.perf_counter() - started)
            sandbox_client.call("delete", sandbox=number)

            started = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile("print(1)", "<bench>", "exec"), {})
            inline.append(time.perf_counter() - started)
    finally:
        daemon.terminate()
        daemon.wait(30)
        shutil.rmtree(root, ignore_errors=True)

    print(f"isolation: {isolation}; {runs} runs each, medians")
    print(f"  local python process        {median_ms(local):8.2f} ms")
    print(f"  create -> first result      {median_ms(cold):8.2f} ms   {median_ms(cold) / median_ms(local):5.2f}x local")
    print(f"  warm execute                {median_ms(warm):8.2f} ms   {median_ms(warm) / median_ms(local):5.2f}x local")
    print(f"  in-process exec (the code)  {median_ms(inline):8.3f} ms")


if __name__ == "__main__":
    main()
