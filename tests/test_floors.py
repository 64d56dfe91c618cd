"""The floors of DESIGN.md hold: no module imports one above it (``.importlinter``'s contracts).

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
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )

    assert lint.returncode == 0, lint.stdout[-3000:] + lint.stderr[-2000:]
    assert "0 broken" in lint.stdout
