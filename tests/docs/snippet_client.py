"""``cognizes`` in the docs' shell blocks: the command, run by the snippet host (tests/docs/snippet_host.py).

Started as a script, it imports nothing heavy: it sends its arguments, directory and environment to the host named by
``COGNIZES_SNIPPET_HOST``, writes what the command wrote, and exits with its status.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from snippet_host import ask

if __name__ == "__main__":
    answer = ask(
        os.environ["COGNIZES_SNIPPET_HOST"], {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
    )
    sys.stdout.write(answer["stdout"])
    sys.stderr.write(answer["stderr"])
    sys.exit(answer["status"])
