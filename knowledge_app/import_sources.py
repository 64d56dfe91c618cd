"""Where an import may read: the app's own folder under ``COGNIZES_KNOWLEDGE_IMPORT_ROOT``, and nowhere else.

A self-hosted server reaches no Cloud Storage, so a bucket is a directory, and buckets belong to
apps (issue 41 B: one root shared by every app let any app's key import another's bucket):
``gs://BUCKET/path`` of app ``A`` is ``ROOT/A/BUCKET/path`` (a bucket copied there by ``gsutil
rsync`` or mounted by gcsfuse imports with the URIs the code already has), and ``file:///abs/path``
is taken only when it spells a path in ``ROOT/A``. Another app's bucket or path is not found, as a
path that does not exist is: a key learns nothing of what it may not read.

Files are never opened by name from the root (issue 41 C: a link planted between listing and
reading escaped it). Every path is walked one component at a time from a descriptor of the app's
folder, each opened relative to its parent's descriptor with ``O_NOFOLLOW``, and the bytes are read
from the descriptor so opened: a link anywhere on the way is refused, whenever it was planted. A
directory is imported with the files under it, hidden ones (``.git``, ``.DS_Store``) left out.
Messages name the URI and paths in the app's folder, never the root's place on the server's disk.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote, unquote, urlsplit

from django.conf import settings

from knowledge_app.services import KnowledgeError

SETTING = "COGNIZES_KNOWLEDGE_IMPORT_ROOT"
_WILDCARDS = set("*?[")
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: opening a FIFO would block
LINK = "a link (links are not followed)"


class ImportsNotConfigured(KnowledgeError):
    """The server has no import root (or none for this app): imports stay off until an operator makes one."""


class SourceNotFound(KnowledgeError):
    """Nothing by that name in the app's folder: a path that does not exist, or another app's (said alike)."""


@dataclass(frozen=True)
class Folder:
    """An app's import folder, ``ROOT/<app>``: the only directory its imports read."""

    app_name: str
    root: Path
    """The root, resolved (the operator's: it may itself be reached through a link)."""
    spellings: tuple[PurePosixPath, ...]
    """The folder as a ``file://`` URI may spell it: under the root as configured and as resolved."""


@dataclass(frozen=True)
class Source:
    """A URI asked for and the file or directory it is in the app's folder."""

    uri: str
    parts: tuple[str, ...]
    """Its path in the app's folder, one name per component (no links, no ``..``)."""
    is_dir: bool

    @property
    def name(self) -> str:
        return self.parts[-1] if self.parts else ""


@dataclass(frozen=True)
class SourceFile:
    """A file to import, with the URI it is known by (its document's source); ``problem``: why it is not taken."""

    uri: str
    parts: tuple[str, ...]
    name: str
    problem: str = ""


def import_folder(app_name: str) -> Folder:
    """The app's import folder; refused, naming the setting, while the root is unset or not a directory."""
    configured = settings.COGNIZES_KNOWLEDGE_IMPORT_ROOT
    if not configured:
        raise ImportsNotConfigured(
            f"Imports are off on this server: set {SETTING} to a directory (an app's gs://BUCKET/path is then "
            f"ROOT/<app>/BUCKET/path, file:///path is taken under ROOT/<app>), or upload each file (ragFiles:upload)."
        )
    root = Path(configured).resolve()
    if not root.is_dir():
        raise ImportsNotConfigured(f"{SETTING} is not a directory on this server: imports are off until it is.")
    if app_name in ("", ".", "..") or app_name.startswith(".") or "/" in app_name or "\x00" in app_name:
        raise ImportsNotConfigured(
            f"The app {app_name!r} cannot have an import folder (its name is not a folder's "
            "name): upload each file (ragFiles:upload)."
        )
    spellings = {PurePosixPath(os.path.abspath(configured), app_name), PurePosixPath(root, app_name)}
    return Folder(app_name=app_name, root=root, spellings=tuple(sorted(spellings)))


def check_source(uri: str, folder: Folder) -> Source:
    """What ``uri`` names in the app's folder; SourceNotFound if nothing there, KnowledgeError saying why else."""
    if not isinstance(uri, str) or not uri.strip():
        raise KnowledgeError("Each URI to import is a non-empty string.")
    try:
        uri.encode()
    except UnicodeEncodeError:  # a lone surrogate (JSON's "\ud800"): no path has it, and no reply may echo it
        raise KnowledgeError("A URI to import is text without lone surrogates (\\ud800-\\udfff).") from None
    uri = uri.strip()
    parts = _parts(uri, folder)
    try:
        with _opened(folder, parts) as fd:
            mode = os.fstat(fd).st_mode
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            hint = "; wildcards are not taken, name the directory instead" if _WILDCARDS & set(uri) else ""
            raise SourceNotFound(f"{uri} does not exist in this app's import folder{hint}.") from None
        raise KnowledgeError(f"{uri}: {why(error)}.") from None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise KnowledgeError(f"{uri} is neither a file nor a directory.")
    is_dir = stat.S_ISDIR(mode)
    return Source(uri=uri.rstrip("/") if is_dir else uri, parts=parts, is_dir=is_dir)


def files_of(source: Source, folder: Folder) -> Iterator[SourceFile]:
    """The files ``source`` stands for: itself, or those under it (each directory's files in name order, then its
    subdirectories'; hidden ones left out, links listed as refused)."""
    if not source.is_dir:
        yield SourceFile(uri=source.uri, parts=source.parts, name=source.name)
        return
    try:
        with _opened(folder, source.parts) as fd:
            yield from _listed(fd, source, ())
    except OSError as error:  # gone or swapped for a link since it was checked
        yield SourceFile(source.uri, source.parts, source.name, why(error))


def read_file(folder: Folder, file: SourceFile, limit: int) -> bytes:
    """At most ``limit`` bytes of the file, read from a descriptor opened without following any link.

    OSError (a link, gone, not a regular file) says why through ``why``.
    """
    with _opened(folder, file.parts) as fd:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.set_blocking(fd, True)
        chunks, left = [], limit
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)


def why(error: OSError) -> str:
    """What to tell of an OSError met reading an import: never a path on the server's disk."""
    if error.errno == errno.ELOOP:
        return LINK
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        return "no longer exists"
    if error.errno == errno.EINVAL:
        return "not a regular file"
    return f"could not be read ({error.strerror or 'error'})"


def _listed(fd: int, source: Source, relative: tuple[str, ...]) -> Iterator[SourceFile]:
    with os.scandir(fd) as scanned:
        entries = sorted((entry for entry in scanned if not entry.name.startswith(".")), key=lambda e: e.name)
    directories = []
    for entry in entries:
        names = (*relative, entry.name)
        uri = _uri(source, names)
        if entry.is_symlink():
            yield SourceFile(uri, (*source.parts, *names), entry.name, LINK)
        elif entry.is_dir(follow_symlinks=False):
            directories.append(entry.name)
        elif entry.is_file(follow_symlinks=False):
            yield SourceFile(uri, (*source.parts, *names), entry.name)
        else:  # a FIFO would block the worker, a device would never end
            yield SourceFile(uri, (*source.parts, *names), entry.name, "not a regular file")
    for name in directories:
        try:
            inner = os.open(name, _DIRECTORY, dir_fd=fd)
        except OSError as error:
            yield SourceFile(_uri(source, (*relative, name)), (*source.parts, *relative, name), name, why(error))
            continue
        try:
            yield from _listed(inner, source, (*relative, name))
        finally:
            os.close(inner)


def _uri(source: Source, names: tuple[str, ...]) -> str:
    """The URI of a file found under ``source``: its names appended (quoted in a file URI, as a path is there)."""
    quoted = source.uri.startswith("file:")
    return source.uri + "".join(f"/{quote(name) if quoted else name}" for name in names)


@contextmanager
def _opened(folder: Folder, parts: tuple[str, ...]) -> Iterator[int]:
    """A descriptor of ``parts`` in the app's folder, each component opened relative to the one before it,
    none followed if it is a link (ELOOP), the last opened as a file or directory, whichever it is."""
    fd = os.open(folder.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        names = (folder.app_name, *parts)
        for index, name in enumerate(names):
            try:
                inner = os.open(name, _FILE if parts and index == len(names) - 1 else _DIRECTORY, dir_fd=fd)
            except NotADirectoryError:  # O_DIRECTORY | O_NOFOLLOW on a link: ENOTDIR, said as the link it is
                if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise OSError(errno.ELOOP, "a link") from None
                raise
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _parts(uri: str, folder: Folder) -> tuple[str, ...]:
    """The URI's path in the app's folder, component by component; refused for a URI that names none of it."""
    if uri.startswith("gs://"):
        bucket, _, name = uri.removeprefix("gs://").partition("/")
        if not bucket:
            raise KnowledgeError(f"{uri} names no bucket: gs://BUCKET/path.")
        return _components(uri, [bucket, *name.split("/")])
    if uri.startswith("file:"):
        parts = urlsplit(uri)
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise KnowledgeError(f"{uri} is not a file URI of this server: file:///absolute/path.")
        asked = PurePosixPath(unquote(parts.path))
        components = _components(uri, list(asked.parts[1:]))
        for spelling in folder.spellings:
            if asked.is_relative_to(spelling):
                return components[len(spelling.parts) - 1 :]
        raise SourceNotFound(
            f"{uri} does not exist in this app's import folder (file:// paths are taken only in the app's own folder)."
        )
    raise KnowledgeError(
        f"{uri}: imports take gs://BUCKET/path (a directory BUCKET in this app's import folder) "
        "or file:///absolute/path in that folder."
    )


def _components(uri: str, names: list[str]) -> tuple[str, ...]:
    if ".." in names:
        raise KnowledgeError(f"{uri}: '..' is not taken in an import's path: name the file or directory itself.")
    if any("\x00" in name for name in names):
        raise KnowledgeError(f"{uri}: a path may not contain NUL.")
    return tuple(name for name in names if name not in ("", "."))
