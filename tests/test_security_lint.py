"""Static checks a security reviewer runs first: bandit over the product's code, pip-audit over what it installs.

bandit finds the shapes of known mistakes (``shell=True``, ``pickle.loads``, ``yaml.load``, an unchecked
``urlopen``, weak hashes, binding every interface) before a user does; what it skips is listed, with the
reason, in ``.bandit.yml``. pip-audit compares the installed versions with the advisories PyPI publishes:
where this machine cannot reach that service, the test skips and says so instead of passing blind.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.test_floors import PACKAGES, ROOT

BIN = Path(sys.executable).parent


def test_bandit_finds_nothing_of_medium_severity_or_more():
    scan = subprocess.run(
        [
            BIN / "bandit",
            "--quiet",
            "--configfile",
            ROOT / ".bandit.yml",
            "--severity-level",
            "medium",
            "--confidence-level",
            "medium",
            "--exclude",
            "*/migrations/*",
            "--recursive",
            *PACKAGES,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert scan.returncode == 0, scan.stdout[-6000:] + scan.stderr[-2000:]


ADVISORIES = f"https://pypi.org/pypi/pip/{version('pip')}/json"
"""What pip-audit's default service asks for each package: PyPI's JSON of one release, with its advisories (a
mirror may serve a project's JSON but not a release's)."""


def test_no_installed_dependency_has_a_known_vulnerability():
    try:  # one request says whether the service is there, instead of pip-audit's one per package (10 s) to learn it
        urllib.request.urlopen(ADVISORIES, timeout=10).close()  # nosec B310: a constant https URL
    except (urllib.error.URLError, OSError) as error:
        pytest.skip(f"PyPI's advisories ({ADVISORIES}) cannot be reached from this machine ({error}): nothing audited")
    audit = subprocess.run(
        [BIN / "pip-audit", "--local", "--format", "json", "--progress-spinner", "off"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if not audit.stdout.strip():
        pytest.skip(f"pip-audit could not run: {audit.stderr.strip()[-500:]}")
    dependencies = json.loads(audit.stdout)["dependencies"]
    audited = [dependency for dependency in dependencies if "skip_reason" not in dependency]
    if not audited:
        reason = dependencies[0]["skip_reason"] if dependencies else "no dependency listed"
        pytest.skip(f"no advisory service reachable from this machine, nothing audited ({reason})")

    vulnerable = {
        f"{dependency['name']} {dependency['version']}": [vuln["id"] for vuln in dependency["vulns"]]
        for dependency in audited
        if dependency["vulns"]
    }
    assert vulnerable == {}, "upgrade these (pip-audit's advisories): " + json.dumps(vulnerable)
