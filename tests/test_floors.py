"""The floors of DESIGN.md hold: no module imports one above it (``.importlinter``'s contracts), and no module
of an app outgrows what a reader takes in at once.

An upward import is how a house turns into a knot: a domain app that imports the
runtime cannot be used without it, and import circles break at start-up in
whichever order a process happens to load them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_module_imports_a_floor_above_its_own():
    lint = subprocess.run(
        [Path(sys.executable).parent / "lint-imports", "--config", ROOT / ".importlinter", "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert lint.returncode == 0, lint.stdout[-3000:] + lint.stderr[-2000:]
    assert "0 broken" in lint.stdout


PACKAGES = (
    "sessions_app",
    "memory_app",
    "knowledge_app",
    "tools_app",
    "tracing_app",
    "artifacts_app",
    "vertex_app",
    "runtime_app",
    "cognizes",
    "demo_agents",
)
MAX_MODULE_LINES = 600
"""STYLE.md rule 9: past ~500 lines a module becomes a package by domain (as sessions_app/services did)."""


def test_no_module_of_an_app_passes_600_lines():
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines())
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
    }
    assert {path: lines for path, lines in sizes.items() if lines > MAX_MODULE_LINES} == {}
