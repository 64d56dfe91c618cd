"""Fetch bubblewrap without root: Debian bookworm's pinned package, checked by its sha256, unpacked into var/tools.

``python -m tools_app.sandbox_bwrap`` (run by ``make run`` and ``make test``) does nothing when a system ``bwrap``
is on PATH or the fetched one is there already. The ``.deb`` is an ``ar`` archive holding ``data.tar.xz``: both
are read with the standard library, so neither ``dpkg-deb`` nor root is needed, and only the checked bytes are
unpacked. bwrap needs unprivileged user namespaces (``user.max_user_namespaces`` > 0), which every current
distribution kernel allows.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import sys
import tarfile
import urllib.request
from pathlib import Path

URL = "https://deb.debian.org/debian/pool/main/b/bubblewrap/bubblewrap_0.8.0-2+deb12u1_amd64.deb"
SHA256 = "3cc9134a3286ad01a323dcd924ba123eb634cefaeec82d774257e06308aeaadb"
"""As Debian's bookworm Packages index lists it (``apt-cache show bubblewrap``, 0.8.0-2+deb12u1)."""


def members(archive: bytes) -> dict[str, bytes]:
    """The members of an ``ar`` archive (what a .deb is)."""
    if not archive.startswith(b"!<arch>\n"):
        raise ValueError("not an ar archive")
    found, offset = {}, 8
    while offset + 60 <= len(archive):
        header = archive[offset : offset + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        found[name] = archive[offset + 60 : offset + 60 + size]
        offset += 60 + size + (size % 2)
    return found


def install(var_dir: Path) -> Path | None:
    """Unpack bwrap into ``var_dir/tools`` unless one is already available; the path to it (None: system's)."""
    if shutil.which("bwrap"):
        return None
    target = var_dir / "tools" / "usr" / "bin" / "bwrap"
    if target.is_file():
        return target
    if os.uname().machine != "x86_64":
        raise SystemExit(f"no pinned bubblewrap for {os.uname().machine}: install your distribution's bubblewrap")
    with urllib.request.urlopen(URL, timeout=60) as response:  # nosec B310: a pinned https URL, checked below
        package = response.read()
    digest = hashlib.sha256(package).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"{URL} has sha256 {digest}, not the pinned {SHA256}: not installed")
    data = next(body for name, body in members(package).items() if name.startswith("data.tar"))
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        binary = tar.extractfile("./usr/bin/bwrap")
        if binary is None:
            raise SystemExit("the package has no usr/bin/bwrap")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        partial.write_bytes(binary.read())
        partial.chmod(0o755)
        partial.replace(target)
    return target


def main() -> None:
    from cognizes.infra.local import VAR_DIR

    path = install(VAR_DIR)
    print(f"bubblewrap: {path or shutil.which('bwrap')}", file=sys.stderr)


if __name__ == "__main__":
    main()
