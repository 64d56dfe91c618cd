"""The code blocks of README.md and docs/: which run, and how (issue 42 item 5: "a snippet that fails fails the suite").

A block's fence language alone decides (docs/contributing.md shows the same table to writers):

- ``python``: run in a process of its own, as ``python -m asyncio`` runs what it is given (top-level ``await`` works);
- ``bash``, ``sh``, ``shell``, ``console``: run by ``bash -euo pipefail`` (``console``: its ``$ `` lines only);
- ``go``, ``java``: never written out in the docs, only included (``--8<--``) from the client programs in
  tests/clients/, which the suite builds and runs against a server: those tests are these snippets' tests;
- any other (``text``, ``ini``, ``toml``, ``yaml``, ``json``, …): shown, never run. That is how a page marks an output
  sample, a configuration file or a command that serves until stopped.

The docs address the server as ``http://127.0.0.1:8000`` (gRPC ``127.0.0.1:50051``); ``for_server`` puts the test
server's address in its place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PYTHON = frozenset({"python", "py"})
SHELL = frozenset({"bash", "sh", "shell", "console"})
INCLUDED_ONLY = frozenset({"go", "java"})
DOCS_URL, DOCS_GRPC = "http://127.0.0.1:8000", "127.0.0.1:50051"

_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is (path relative to the repository, first line of code), its language, its code."""

    path: str
    line: int
    language: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.language in PYTHON | SHELL


def blocks_of(path: Path, root: Path) -> list[Block]:
    """Every fenced block of the markdown file ``path``, in order."""
    found: list[Block] = []
    lines = path.read_text().splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, info = opening["fence"], opening["info"].strip()
        end = next((i for i in range(index + 1, len(lines)) if lines[i].strip() == fence), len(lines))
        language = re.split(r"[\s{]", info, maxsplit=1)[0].lower() if info else ""
        code = "\n".join(lines[index + 1 : end]) + "\n"
        found.append(Block(str(path.relative_to(root)), index + 2, language, code))
        index = end + 1
    return found


def documentation(root: Path) -> list[Block]:
    """The blocks of README.md and of every page under docs/, page by page."""
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return [block for page in pages for block in blocks_of(page, root)]


def shell_script(block: Block) -> str:
    """The commands of a shell block (a ``console`` block's ``$ `` lines, without the prompt)."""
    if block.language != "console":
        return block.code
    return "".join(line[2:] + "\n" for line in block.code.splitlines() if line.startswith("$ "))


def for_server(code: str, *, base_url: str, grpc_target: str) -> str:
    """``code`` addressing the test server instead of the docs' ``127.0.0.1:8000`` and ``127.0.0.1:50051``."""
    return code.replace(DOCS_URL, base_url).replace(DOCS_GRPC, grpc_target)
