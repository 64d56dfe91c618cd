"""Where an import may read: files under ``COGNIZES_KNOWLEDGE_IMPORT_ROOT``, and nowhere else.

A self-hosted server reaches no Cloud Storage, so a bucket is a directory under the root:
``gs://BUCKET/path`` is ``ROOT/BUCKET/path`` (a bucket copied there by ``gsutil rsync`` or
mounted by gcsfuse imports with the URIs the code already has). ``file:///abs/path`` is taken
when it lies under the root. Every path is resolved (links, ``..``) before it is checked, so
no spelling reaches outside; a link under a directory that points outside is refused too.
A directory is imported with the files under it, hidden ones (``.git``, ``.DS_Store``) left
out and linked directories not followed (a loop would never end). Messages name the URI and
paths under the root, never the root's own place on the server's disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from django.conf import settings

from knowledge_app.services import KnowledgeError

SETTING = "COGNIZES_KNOWLEDGE_IMPORT_ROOT"
_WILDCARDS = set("*?[")


class ImportsNotConfigured(KnowledgeError):
    """The server has no import root: imports stay off until an operator names a directory."""


@dataclass(frozen=True)
class Source:
    """A URI asked for and the file or directory it is, resolved and under the root."""

    uri: str
    path: Path
    name: str
    """Its name as asked for (before links were followed)."""


@dataclass(frozen=True)
class SourceFile:
    """A file to import, with the URI it is known by (its document's source); ``problem``: why it is not taken."""

    uri: str
    path: Path
    name: str
    problem: str = ""


def import_root() -> Path:
    """The import root, resolved; refused, naming the setting, when it is unset or not a directory."""
    configured = settings.COGNIZES_KNOWLEDGE_IMPORT_ROOT
    if not configured:
        raise ImportsNotConfigured(
            f"Imports are off on this server: set {SETTING} to a directory (gs://BUCKET/path is then "
            f"ROOT/BUCKET/path, file:///path is taken under it), or upload each file (ragFiles:upload).")
    root = Path(configured).resolve()
    if not root.is_dir():
        raise ImportsNotConfigured(f"{SETTING} is not a directory on this server: imports are off until it is.")
    return root


def check_source(uri: str, root: Path) -> Source:
    """What ``uri`` names under the root; KnowledgeError saying why for any other URI."""
    if not isinstance(uri, str) or not uri.strip():
        raise KnowledgeError("Each URI to import is a non-empty string.")
    uri = uri.strip()
    asked = _local_path(uri, root)
    path = asked.resolve()
    if not path.is_relative_to(root):
        raise KnowledgeError(f"{uri} is outside the import root ({SETTING}): imports read only from under it.")
    shown = _shown(path, root)
    if not path.exists():
        hint = "; wildcards are not taken, name the directory instead" if _WILDCARDS & set(uri) else ""
        raise KnowledgeError(f"{uri} ({shown} under the import root) does not exist{hint}.")
    if not (path.is_file() or path.is_dir()):
        raise KnowledgeError(f"{uri} ({shown} under the import root) is neither a file nor a directory.")
    return Source(uri=uri.rstrip("/") if path.is_dir() else uri, path=path, name=asked.name)


def files_of(source: Source, root: Path) -> Iterator[SourceFile]:
    """The files ``source`` stands for, in name order: itself, or those under it (hidden ones left out)."""
    if not source.path.is_dir():
        yield SourceFile(uri=source.uri, path=source.path, name=source.name)
        return
    for directory, subdirectories, filenames in os.walk(source.path):
        subdirectories[:] = sorted(name for name in subdirectories if not name.startswith("."))
        for filename in sorted(name for name in filenames if not name.startswith(".")):
            found = Path(directory, filename)
            relative = found.relative_to(source.path).as_posix()
            uri = f"{source.uri}/{quote(relative) if source.uri.startswith('file:') else relative}"
            yield _checked(uri, found, root)


def _checked(uri: str, found: Path, root: Path) -> SourceFile:
    resolved = found.resolve()
    if not resolved.is_relative_to(root):
        return SourceFile(uri, resolved, found.name, "a link to outside the import root")
    if not resolved.is_file():
        return SourceFile(uri, resolved, found.name, "not a regular file")  # a FIFO would block the worker
    return SourceFile(uri, resolved, found.name)


def _local_path(uri: str, root: Path) -> Path:
    if uri.startswith("gs://"):
        bucket, _, name = uri.removeprefix("gs://").partition("/")
        if not bucket:
            raise KnowledgeError(f"{uri} names no bucket: gs://BUCKET/path.")
        return root.joinpath(bucket, *name.split("/"))  # split: a name starting with / cannot restart at /
    if uri.startswith("file:"):
        parts = urlsplit(uri)
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise KnowledgeError(f"{uri} is not a file URI of this server: file:///absolute/path.")
        return Path(unquote(parts.path))
    raise KnowledgeError(
        f"{uri}: imports take gs://BUCKET/path (a directory BUCKET under the import root, {SETTING}) "
        "or file:///absolute/path under it.")


def _shown(path: Path, root: Path) -> str:
    relative = path.relative_to(root).as_posix()
    return "the root itself" if relative == "." else relative
