"""The house stays tidy: ruff's lint and format and mypy's types hold over the tree, as pre-commit checks them.

The tools are the venv's own, pinned in pyproject.toml's dev group, and read their settings from pyproject.toml,
so this test, ``pre-commit run`` and an editor agree. A failure prints what the tool printed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

# Type-checking imports cognizes.settings (django-stubs reads the models from it): with these set, no embedded
# PostgreSQL or Redis is started for it and no key is looked for (cognizes.infra.local, cognizes.infra.secret_key).
MYPY_ENVIRONMENT = {
    "DATABASE_URL": "postgres://mypy@127.0.0.1:1/mypy",
    "REDIS_URL": "redis://127.0.0.1:1/0",
    "DJANGO_SECRET_KEY": "mypy: no key is used",
}


def _run(*command: str, environment: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / command[0]), *command[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(environment or {})},
    )


def test_ruff_finds_nothing_to_fix():
    lint = _run("ruff", "check", "--no-cache", ".")
    assert lint.returncode == 0, lint.stdout[-6000:] + lint.stderr[-2000:]


def test_the_code_is_formatted_as_ruff_formats_it():
    formatted = _run("ruff", "format", "--check", "--no-cache", ".")
    assert formatted.returncode == 0, formatted.stdout[-6000:] + formatted.stderr[-2000:]


NOQA = re.compile(r"#\s*noqa\b(?P<rest>.*)")
EXPLAINED = re.compile(r":\s*[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*\s+\S")  # its rules, then why


def test_every_noqa_names_its_rule_and_says_why():
    """A silenced rule is a decision a reader should see the reason for, beside it (ruff's PGH004 checks the
    rule is named; the reason is this test's)."""
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    unexplained = [
        f"{path}:{number}: {line.strip()}"
        for path in tracked.stdout.split()
        if (ROOT / path).exists()
        for number, line in enumerate((ROOT / path).read_text().splitlines(), 1)
        if (match := NOQA.search(line)) and not EXPLAINED.match(match["rest"])
    ]
    assert unexplained == []


MYPY_TEST = "tests/test_tidy.py::test_mypy_finds_no_type_errors"


def start_mypy() -> subprocess.Popen:
    """mypy over the package, started now and read later. Cold (no .mypy_cache, as in CI) it takes a core for over
    a minute; the suite's other tests leave the second core mostly idle, so tests/conftest.py starts it as soon as
    the tests are collected and the test only collects its verdict."""
    descriptor, log = tempfile.mkstemp(prefix="mypy-", suffix=".txt")  # a file, not a pipe: nobody reads it yet
    with os.fdopen(descriptor, "w") as output:
        typing = subprocess.Popen(
            [str(BIN / "mypy")],
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, **MYPY_ENVIRONMENT},
        )
    typing.log = Path(log)  # type: ignore[attr-defined]  # read by the test once mypy is done
    return typing


def test_mypy_finds_no_type_errors(request):
    typing = getattr(request.config, "mypy_run", None) or start_mypy()
    typing.wait(timeout=900)
    printed = typing.log.read_text()
    typing.log.unlink()
    assert typing.returncode == 0, printed[-8000:]
