"""The documentation site builds with ``mkdocs build --strict`` (issue 42 item 5) and loads nothing from another host.

Strict mode turns every warning into a failure: a link to a page or an anchor that is not there, a page left out of
the nav, an include (``--8<--``) of a file or section that is gone.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.processes import ROOT

# An asset a page loads (script, style sheet, image, font, preconnect), as opposed to a link a reader follows.
_REMOTE_ASSET = re.compile(
    r"<(?:script|img|iframe|source)\b[^>]*\bsrc=\"(?:https?:)?//|<link\b[^>]*\bhref=\"(?:https?:)?//"
)


def test_the_site_builds_in_strict_mode_and_loads_nothing_from_another_host(tmp_path):
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    pages = list(site.rglob("*.html"))
    assert len(pages) > 15, [page.relative_to(site) for page in pages]
    remote = {str(page.relative_to(site)) for page in pages if _REMOTE_ASSET.search(page.read_text())}
    assert not remote, f"pages loading assets from another host: {sorted(remote)}"
    changelog = (site / "changelog" / "index.html").read_text()
    assert "Keep a Changelog" in changelog  # CHANGELOG.md itself, included
