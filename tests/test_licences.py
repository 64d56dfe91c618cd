"""Every package a Cognizes installation pulls in may ship beside an Apache-2.0 project (issue 42).

The packages are the closure of pyproject's ``[project].dependencies`` over the installed distributions' own
requirements (markers and extras evaluated as pip did), not the dev group: tests and linters never ship. Their
licences are what pip-licenses reads from each one's metadata (the SPDX expression, else the classifiers, else the
``License`` field). Permissive licences pass, and MPL-2.0 (weak copyleft on its own files, which we use unmodified);
anything else — GPL, AGPL, SSPL, an unknown or unreadable licence — fails with the package's name, unless a person
read the package's licence and wrote down below why it is fine.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.processes import ROOT

# JSON, each licence as metadata and classifiers give it, including the packages pip-licenses hides as its own.
PIP_LICENSES = ("--from", "mixed", "--format", "json", "--with-system", "--packages")
# One licence, as pip-licenses spells it (SPDX identifiers, classifiers' names).
PERMISSIVE = re.compile(
    r"MIT(-0|-CMU)?( License)?"
    r"|(The )?Unlicense"
    r"|ISC( License)?( \(ISCL\))?"
    r"|0BSD|BSD|BSD License|BSD-[234]-Clause|[234]-Clause BSD License|BSD [234]-Clause"
    r"|Apache-2\.0|Apache 2\.0|Apache Software License|Apache License,? Version 2\.0"
    r"|PSF-2\.0|Python-2\.0|Python Software Foundation License"
    r"|MPL-2\.0|Mozilla Public License 2\.0 \(MPL 2\.0\)"
    r"|ZPL-2\.1|Zope Public License"
    r"|HPND|Historical Permission Notice and Disclaimer \(HPND\)"
    r"|Zlib|CC0-1\.0|CNRI-Python|PostgreSQL( License)?"
)

# Read by a person, the licence named and where it was found; the reason the metadata is not enough.
CHECKED = {
    # The metadata's License field holds the whole licence text, which no name matches:
    # tiktoken-0.14.0.dist-info/licenses/LICENSE is the MIT licence ("MIT License, Copyright (c) 2022 OpenAI").
    "tiktoken": "MIT",
    # LGPL-3.0-only (their LICENSE.txt; python-crontab: LGPLv3, its COPYING): the LGPL lets any program, under any
    # licence, use the library unmodified through its interface (LGPL-3.0 §4, "Combined Works"); Cognizes imports
    # them, installed by pip as packages of their own, and neither modifies nor copies them into its wheel.
    # psycopg is PostgreSQL's Python driver (Django's own for PostgreSQL); python-crontab comes with
    # django-celery-beat. A new LGPL dependency still fails until it is read and added here.
    "psycopg": "LGPL-3.0-only, used unmodified as a library",
    "psycopg-binary": "LGPL-3.0-only, used unmodified as a library",
    "psycopg-pool": "LGPL-3.0-only, used unmodified as a library",
    "python-crontab": "LGPL-3.0, used unmodified as a library",
    # Its metadata says "BSD-3-Clause, Apache-2.0, dependency licenses": pypdfium2 itself is Apache-2.0 or BSD-3-Clause
    # (pypdfium2-5.15.2.dist-info/licenses/LICENSES/), and the PDFium it bundles and PDFium's own dependencies are
    # permissive (licenses/BUILD_LICENSES/: PDFium BSD-3-Clause, FreeType under its FTL, libjpeg-turbo IJG and BSD,
    # libpng, zlib, lcms2 MIT, OpenJPEG BSD-2-Clause, libtiff, abseil Apache-2.0, ICU the Unicode licence).
    "pypdfium2": "Apache-2.0 OR BSD-3-Clause; bundled PDFium and its dependencies permissive",
}


def runtime_packages() -> set[str]:
    """The installed distributions that ``pip install cognizes`` brings: its dependencies and theirs, recursively."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    wanted = [Requirement(line) for line in declared]
    extras_of: dict[str, set[str]] = {}
    while wanted:
        requirement = wanted.pop()
        name = canonicalize_name(requirement.name)
        if name in extras_of and set(requirement.extras) <= extras_of[name]:
            continue
        extras = extras_of[name] = extras_of.get(name, set()) | set(requirement.extras)
        for line in importlib.metadata.distribution(name).requires or []:
            needed = Requirement(line)
            if needed.marker is None or any(needed.marker.evaluate({"extra": extra}) for extra in extras | {""}):
                wanted.append(needed)
    return set(extras_of)


def allowed(expression: str) -> bool:
    """Whether a licence expression lets us ship: one alternative of an OR whose every AND'd licence is permissive.

    pip-licenses joins several classifiers with "; ", read as AND. Parentheses are not parsed: they fail, for a
    person to read.
    """
    return any(
        all(PERMISSIVE.fullmatch(term.strip()) for term in re.split(r" AND |; ", alternative))
        for alternative in expression.split(" OR ")
    )


def test_every_runtime_dependency_has_a_licence_an_apache_project_may_ship_with():
    packages = runtime_packages()
    assert {"django", "google-adk", "psycopg", "celery"} <= packages  # the closure is the real one
    listed = subprocess.run(
        [
            sys.executable,
            "-m",
            "piplicenses",
            "--from",
            "mixed",
            "--format",
            "json",
            "--with-system",
            "--packages",
            *sorted(packages),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    licences = {canonicalize_name(package["Name"]): package["License"] for package in json.loads(listed.stdout)}
    assert set(licences) == packages, "pip-licenses did not list every package"
    refused = {name: licence for name, licence in licences.items() if not allowed(licence) and name not in CHECKED}
    assert refused == {}, "licences an Apache-2.0 project may not ship with (or unreadable ones: read and list them)"
    assert set(CHECKED) <= packages, "a package checked by hand is no longer a dependency: drop it from CHECKED"


def test_the_licence_check_refuses_copyleft_and_unknown_licences():
    """The rule itself, on the spellings pip-licenses gives (a check that passes everything would pass above too)."""
    for fine in ("MIT", "BSD-3-Clause", "Apache Software License; BSD License", "Apache-2.0 OR BSD-3-Clause"):
        assert allowed(fine), fine
    for refused in ("GPL-3.0-only", "GNU Affero General Public License v3", "LGPLv3", "SSPL-1.0", "UNKNOWN", ""):
        assert not allowed(refused), refused
    assert not allowed("MIT AND GPL-2.0-or-later") and allowed("MIT OR GPL-2.0-or-later")
