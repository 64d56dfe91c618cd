"""The floors of DESIGN.md hold: no module imports one above it (``.importlinter``'s contracts), and no module
of an app outgrows what a reader takes in at once.

An upward import is how a house turns into a knot: a domain app that imports the
runtime cannot be used without it, and import circles break at start-up in
whichever order a process happens to load them.
"""

from __future__ import annotations

import json
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


def _bench_imports() -> dict[str, set[str]]:
    """Each benchmark module and the benchmark modules it imports, anywhere in it (a function-level import too).

    Read from the source: ``bench`` is no package (its scripts put the checkout on the path), so a graph built by
    importing it would also hold any other checkout's ``bench`` on the path. Parsed in a Python of its own:
    CPython 3.11's ``ast.parse`` keeps its depth count for the whole interpreter, so a parse on another of this
    process's threads meanwhile (3.11's tracebacks parse source lines to draw their carets) can make it raise
    "AST constructor recursion depth mismatch", as it did once in CI.
    """
    graph = subprocess.run(
        [sys.executable, "-c", _BENCH_IMPORTS, str(ROOT / "bench")], capture_output=True, text=True, check=True
    )
    return {name: set(used) for name, used in json.loads(graph.stdout).items()}


_BENCH_IMPORTS = """
import ast, json, pathlib, sys

bench = pathlib.Path(sys.argv[1])
modules = {path.stem for path in bench.glob("*.py")}
imports = {}
for name in modules:
    tree = ast.parse((bench / f"{name}.py").read_text())
    named = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    named |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    imports[name] = sorted({module.removeprefix("bench.") for module in named if module.startswith("bench.")} & modules)
print(json.dumps(imports))
"""


def test_no_benchmark_imports_one_that_imports_it_back():
    """A circle between two scripts (bench/api.py ⇄ bench/api_adk.py did) runs whichever is loaded second half-built;
    what two benchmarks share lives in a module both import (``bench/http_load.py``)."""
    imports = _bench_imports()

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            module = todo.pop()
            if module == goal:
                return True
            if module not in seen:
                seen.add(module)
                todo.extend(imports.get(module, ()))
        return False

    circles = sorted((name, used) for name, used_ in imports.items() for used in used_ if reaches(used, name))
    assert circles == []
