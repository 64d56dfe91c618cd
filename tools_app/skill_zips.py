"""A skill's zip, checked before it is stored: a zip a tenant sends is hostile.

What is refused (``SkillZipError``, a 400 on every surface): more than ``MAX_ZIP_BYTES`` (Google's registry takes
500 KB), not a zip, encrypted entries, more than ``MAX_ENTRIES`` entries (ADK's loader's own limit), more than
``MAX_EXPANDED_BYTES`` once expanded (counted while reading, not trusted from the headers: a zip bomb stops
there), an entry that expands more than ``MAX_RATIO`` times, absolute paths, ``..``, backslashes, drive letters,
NUL, duplicate paths, and symbolic links (which ADK would write out as files pointing anywhere). ``SKILL.md`` must
be at the root with YAML front matter that ADK's own ``Frontmatter`` accepts, so every skill stored here loads in
ADK's ``GCPSkillRegistry``.
"""

from __future__ import annotations

import hashlib
import io
import json
import stat
import zipfile
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

MAX_ZIP_BYTES = 512 * 1024
MAX_ENTRIES = 2000
MAX_EXPANDED_BYTES = 8 * 1024 * 1024
MAX_RATIO = 200
_CHUNK = 64 * 1024


class SkillZipError(ValueError):
    """The zip is not one Cognizes stores as a skill; the message says why."""


class _WithoutAliases(yaml.SafeLoader):
    """YAML without aliases: a few nested ones name billions of nodes once written out as JSON (a YAML bomb)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise SkillZipError("SKILL.md's front matter may not use YAML aliases (*name).")
        return super().compose_node(parent, index)


@dataclass(frozen=True)
class CheckedZip:
    zipped: bytes
    sha256: str
    frontmatter: dict[str, Any]
    files: list[str]


def check_skill_zip(zipped: bytes) -> CheckedZip:
    """``zipped`` checked whole (every entry read, within the limits), with its SKILL.md front matter."""
    if not zipped:
        raise SkillZipError("The skill's zip is empty.")
    if len(zipped) > MAX_ZIP_BYTES:
        raise SkillZipError(f"A skill's zip is at most {MAX_ZIP_BYTES // 1024} KB.")
    try:
        archive = zipfile.ZipFile(io.BytesIO(zipped))
    except (zipfile.BadZipFile, ValueError, OSError) as error:
        raise SkillZipError(f"Not a zip file: {error}.") from None
    with archive:
        entries = archive.infolist()
        if len(entries) > MAX_ENTRIES:
            raise SkillZipError(f"A skill's zip has at most {MAX_ENTRIES} entries.")
        seen: set[str] = set()
        expanded = 0
        skill_md = b""
        for entry in entries:
            name = _checked_name(entry)
            if name in seen:
                raise SkillZipError(f"The path {name!r} is in the zip twice.")
            seen.add(name)
            if entry.is_dir():
                continue
            data = _read(archive, entry, budget=MAX_EXPANDED_BYTES - expanded)
            expanded += len(data)
            if name in ("SKILL.md", "skill.md"):
                skill_md = data
    if not skill_md:
        raise SkillZipError("The zip has no SKILL.md at its root.")
    return CheckedZip(
        zipped=zipped,
        sha256=hashlib.sha256(zipped).hexdigest(),
        frontmatter=_frontmatter(skill_md),
        files=sorted(name for name in seen if not name.endswith("/")),
    )


def _checked_name(entry: zipfile.ZipInfo) -> str:
    name = entry.filename
    if entry.flag_bits & 0x1:
        raise SkillZipError(f"{name!r} is encrypted.")
    if stat.S_ISLNK(entry.external_attr >> 16):
        raise SkillZipError(f"{name!r} is a symbolic link; a skill holds files only.")
    parts = name.rstrip("/").split("/")
    if (
        not name
        or "\x00" in name
        or "\\" in name
        or name.startswith("/")
        or (len(name) > 1 and name[1] == ":")
        or any(part in ("", ".", "..") for part in parts)
        or len(name) > 1024
    ):
        raise SkillZipError(f"The path {name!r} is not a plain relative path inside the skill.")
    return name


def _read(archive: zipfile.ZipFile, entry: zipfile.ZipInfo, *, budget: int) -> bytes:
    """The entry's bytes, read a chunk at a time: past ``budget`` or ``MAX_RATIO`` times its packed size, refused."""
    limit = min(budget, max(entry.compress_size, 1) * MAX_RATIO)
    out = bytearray()
    try:
        with archive.open(entry) as stream:
            while chunk := stream.read(_CHUNK):
                out += chunk
                if len(out) > limit:
                    raise SkillZipError(
                        f"{entry.filename!r} expands past the limits ({MAX_EXPANDED_BYTES // (1024 * 1024)} MiB in "
                        f"all, {MAX_RATIO} times its packed size): refused as a zip bomb."
                    )
    except (zipfile.BadZipFile, NotImplementedError, EOFError, OSError, RuntimeError) as error:
        raise SkillZipError(f"{entry.filename!r} cannot be read: {error}.") from None
    return bytes(out)


def _frontmatter(skill_md: bytes) -> dict[str, Any]:
    """SKILL.md's front matter, checked by ADK's ``Frontmatter`` (what ADK's loader requires)."""
    try:
        text = skill_md.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillZipError("SKILL.md is not UTF-8 text.") from None
    parts = text.split("---", 2)
    if not text.startswith("---") or len(parts) < 3:
        raise SkillZipError("SKILL.md starts with YAML front matter between --- lines.")
    try:
        # A SafeLoader (no Python objects), without aliases.
        parsed = yaml.load(parts[1], Loader=_WithoutAliases)  # nosec B506
    except yaml.YAMLError as error:
        raise SkillZipError(f"SKILL.md's front matter is not YAML: {error}") from None
    if not isinstance(parsed, dict):
        raise SkillZipError("SKILL.md's front matter is a YAML mapping (name, description, …).")
    from google.adk.skills.models import Frontmatter  # only when a zip is checked: loading Django loads no ADK

    try:
        Frontmatter.model_validate(parsed)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise SkillZipError(f"SKILL.md's front matter: {where}: {first['msg']}") from None
    # As JSON can hold it (YAML's dates become text), for the revision's row.
    return json.loads(json.dumps({str(key): value for key, value in parsed.items()}, default=str))
