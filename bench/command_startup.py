"""How long a management command that serves nothing takes to answer, and which imports cost most (issue 43).

    .venv/bin/python bench/command_startup.py [--runs 5] [-- COMMAND ARGS…]

Runs ``python -m cognizes create_api_key bench-startup`` (or the command given) ``--runs`` times in fresh
processes and prints the median wall time, as a ratio to the baseline measured in the same run: Django's own
``django-admin --version`` (Python started and Django imported, nothing of Cognizes), then the ten top-level
imports of one run with the most cumulative time (``-X importtime``). Aim: under 3 s on an idle machine.

Measured for issue 43 on a shared 2-core machine under load (load average 5): wall 20-24 s before, 8-10 s after
(3 interleaved runs each); imports 3,990 modules and 10.4 s before, 1,597 modules and 2.2 s after (sum of
``-X importtime``'s self times). On the idle machine, with no `cognizes run` up (the command starts and stops the
embedded PostgreSQL and Redis itself): 5.3 s, of which ~4 s was redis-py retrying the SHUTDOWN that stops Redis;
1.9 s once it was sent once. With `cognizes run` up: 1.7 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("command", nargs="*", default=["create_api_key", "bench-startup"])
    args = parser.parse_args()
    python = [sys.executable, "-m", "cognizes", *args.command]
    baseline = [sys.executable, "-m", "django", "--version"]
    command, django = _median(python, args.runs), _median(baseline, args.runs)
    print(f"{' '.join(args.command)}: median {command:.2f} s over {args.runs} runs")
    print(f"django-admin --version (baseline): median {django:.2f} s; the command takes {command / django:.1f}x")
    traced = subprocess.run([sys.executable, "-X", "importtime", *python[1:]], cwd=ROOT, capture_output=True, text=True)
    top = []
    for line in traced.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[1].strip().isdigit() and not fields[2].startswith("  "):
            top.append((int(fields[1]), fields[2].strip()))
    for micros, module in sorted(top, reverse=True)[:10]:
        print(f"{micros / 1e6:7.2f} s  {module}")


def _median(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


if __name__ == "__main__":
    main()
