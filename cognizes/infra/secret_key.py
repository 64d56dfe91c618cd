"""The installation's secret key: generated once, kept private in the data folder, never a literal in the code.

Django signs with ``SECRET_KEY`` (sessions, CSRF, and RAG Engine's upload URLs, issue 41 E): a key shipped in the
repository let anyone forge them. ``DJANGO_SECRET_KEY`` wins; else ``cognizes run`` (``make run``) generates one
per installation into ``COGNIZES_VAR_DIR/secret_key`` (mode 0600, reused on the next start), which every later
process of that installation (the ``cognizes`` command, an agent script, a second web server) reads too. The
servers refuse to start with neither (``require``); commands that sign nothing (``migrate``, ``create_api_key``) run
without one.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from cognizes.infra import local

FILE_NAME = "secret_key"
VARIABLE = "DJANGO_SECRET_KEY"


def configured() -> str:
    """The key settings use: ``DJANGO_SECRET_KEY``, else the stored one, else (under pytest only) a fresh one.

    Under pytest (which sets ``PYTEST_VERSION`` before Django's settings load) the key is also put in the environment,
    so every server, worker and ``manage.py`` a test starts signs with it (CI sets no key, and a test's stack keeps
    its data in a folder of its own, with no stored key).
    """
    key = os.environ.get(VARIABLE) or stored()
    if "PYTEST_VERSION" in os.environ:
        key = key or secrets.token_urlsafe(50)
        os.environ[VARIABLE] = key
    return key


def path(var_dir: Path | None = None) -> Path:
    return (var_dir or local.VAR_DIR) / FILE_NAME


def stored(var_dir: Path | None = None) -> str:
    """The key kept in the data folder, or "" when there is none; a file others may read is refused, as ssh does."""
    where = path(var_dir)
    try:
        mode = where.stat().st_mode
    except FileNotFoundError:
        return ""
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ImproperlyConfigured(f"{where} is readable by other users: run `chmod 600 {where}`, or set {VARIABLE}.")
    return where.read_text().strip()


def ensure(var_dir: Path | None = None) -> str:
    """The installation's key: the stored one, else a new one written with mode 0600 (two starts at once agree)."""
    key = stored(var_dir)
    if key:
        return key
    where = path(var_dir)
    where.parent.mkdir(parents=True, exist_ok=True)
    draft = where.with_name(f".{FILE_NAME}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never readable by others, not even briefly
    with os.fdopen(fd, "w") as file:
        file.write(secrets.token_urlsafe(50) + "\n")
    try:
        os.link(draft, where)  # whole or not at all: a process starting alongside never reads half a key
    except FileExistsError:
        pass  # another process wrote it first: theirs is the key
    finally:
        draft.unlink()
    return stored(var_dir)


def require(server: str) -> None:
    """Refuse to start ``server`` without a key: signing with an empty or public one makes every signature forgeable."""
    from django.conf import settings

    try:
        key = settings.SECRET_KEY
    except ImproperlyConfigured:  # Django's own words for an empty key, which do not say where one comes from
        key = ""
    if not key:
        raise ImproperlyConfigured(
            f'{server} needs a secret key: set {VARIABLE} (e.g. `python -c "import secrets; '
            f'print(secrets.token_urlsafe(50))"`), or start Cognizes once with `cognizes run`, which generates '
            f"one into {path()}."
        )
