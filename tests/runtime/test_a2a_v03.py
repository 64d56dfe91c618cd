"""A2A 0.3 clients (a2a-sdk 0.3.x, still shipped by many frameworks) read the card and talk to the agent.

Before: the card had only 1.0's ``supportedInterfaces``; a2a-sdk 0.3 refuses a card without a
top-level ``url`` and ``protocolVersion``. The client is tests/clients/a2a03/client.py, run in a
virtualenv of its own (made once under var/, from PyPI); without PyPI it skips and says so.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cognizes.access.services import do_create_api_key
from cognizes.infra import local
from tests.processes import ROOT

pytestmark = pytest.mark.django_db(transaction=True)

CLIENT = ROOT / "tests" / "clients" / "a2a03"


def _client_python() -> Path:
    """The 0.3 client's virtualenv (made again when its requirements change)."""
    venv = local.VAR_DIR / "clients" / "a2a-0.3"
    requirements = (CLIENT / "requirements.txt").read_text()
    stamp = venv / "requirements.txt"
    if not stamp.exists() or stamp.read_text() != requirements:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=120)
        installed = subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "-r", str(CLIENT / "requirements.txt")],
            capture_output=True,
            text=True,
            timeout=240,
        )
        if installed.returncode != 0:
            pytest.skip(f"could not install a2a-sdk 0.3 from PyPI for the 0.3 client: {installed.stderr[-300:]}")
        stamp.write_text(requirements)
    return venv / "bin" / "python"


def test_an_a2a_0_3_client_reads_the_card_sends_streams_and_gets_its_task(weather_app, asgi_server):
    python = _client_python()
    _, key = do_create_api_key(name="a2a-0.3", app_name="weather")

    done = subprocess.run(
        [str(python), str(CLIENT / "client.py"), f"{asgi_server}/a2a/weather/", key, "ada"],
        capture_output=True,
        text=True,
        timeout=180,
    )

    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert output.count("ok: ") == 6, output
    assert "ok: skills Weather assistant, Get weather, Load memory, Search knowledge" in output
