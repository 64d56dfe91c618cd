"""How a person types the ``cognizes`` command on this machine, for the hints Cognizes prints.

A hint must work when pasted: ``cognizes`` when the PATH finds this Python's script (an activated venv, a
``pip install --user``), else the script's full path (a checkout's ``.venv/bin/cognizes`` run by ``make``), else
``python -m cognizes`` (a Python without the script).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def typed(*args: str) -> str:
    """The command line that runs ``cognizes ARGS`` here, as a person would type it."""
    script = Path(sys.executable).with_name("cognizes")
    if shutil.which("cognizes") == str(script):
        command = "cognizes"
    elif script.exists():
        command = str(script)
    else:
        command = f"{sys.executable} -m cognizes"
    return " ".join([command, *args])
