"""Issue 43 item 8: a management command that does not serve answers in a moment, because loading Django
does not load what only serving needs.

Before: ``django.setup()`` imported ADK (the admin overview asked ``runtime_app.agents`` at import), google.genai,
a2a, jsonschema and ADK's OpenAPI parser (the tools admin), and ``create_api_key`` then imported every surface
(the URL check), about 11 s of imports for a command that writes one row. These tests check what is
imported, a behaviour, not a time (bench/command_startup.py measures the time).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import database_url

ROOT = Path(__file__).resolve().parent.parent
SERVING_ONLY = ["google.adk", "google.genai", "google.cloud.aiplatform_v1beta1", "a2a", "mcp", "jsonschema"]
"""Libraries only serving agents and surfaces needs: none is imported by loading Django."""


PARSING_ONLY = ["pypdfium2", "pypdf", "docx", "pptx", "openpyxl", "lxml", "rapidocr_onnxruntime", "onnxruntime", "cv2"]
"""Libraries only a worker parsing documents needs (issue 44): the web process checks an upload's signature by
``knowledge_app.parsing.FORMATS`` without loading any (OCR's alone are ~400 MB)."""


def _loaded_after(code: str, watched: list[str] = SERVING_ONLY) -> set[str]:
    """The top modules of ``watched`` imported in a fresh Python after ``code``, with the tests' settings."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {watched!r} if m in sys.modules]))"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "cognizes.settings")}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_loading_django_imports_nothing_only_serving_needs():
    assert _loaded_after("import django; django.setup()") == set()


def test_serving_the_api_and_checking_an_upload_import_no_document_parser():
    code = (
        "import django; django.setup(); import cognizes.urls\n"
        "from knowledge_app.services import check_content\n"
        "for name in ('a.pdf', 'a.docx', 'a.pptx', 'a.xlsx', 'a.epub', 'a.md'):\n"
        "    try: check_content(b'%PDF-1.7 x', filename=name, mime_type='')\n"
        "    except Exception: pass"
    )
    assert _loaded_after(code, PARSING_ONLY) == set()


@pytest.mark.django_db(transaction=True)
def test_creating_an_api_key_imports_nothing_only_serving_needs():
    """As a user runs it (``python -m cognizes create_api_key``), system checks and all, on the test database."""
    from cognizes.access.models import ApiKey

    assert _loaded_after(_command("create_api_key", "lazy")) == set()
    assert ApiKey.objects.filter(app_name="lazy").count() == 1


@pytest.mark.django_db(transaction=True)
def test_migrating_imports_nothing_only_serving_needs():
    """``cognizes migrate`` with nothing to apply (what `cognizes run` and each deployment run first)."""
    assert _loaded_after(_command("migrate", "--noinput")) == set()


def _command(*argv: str) -> str:
    """Code running ``python -m cognizes ARGV`` on the test database."""
    from django.conf import settings

    url = database_url(settings.DATABASES["default"])
    return f"import os\nos.environ['DATABASE_URL'] = {url!r}\nfrom cognizes.cli import main\nmain({list(argv)!r})"
