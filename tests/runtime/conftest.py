"""The demo weather app, registered as ``make run`` registers it (tool row, COGNIZES_AGENTS default)."""

from __future__ import annotations

import pytest

from demo_agents.weather.tools import register
from runtime_app.agents import forget_runners


@pytest.fixture
def weather_app(transactional_db):
    """The weather agent's registry tool, and fresh Runners (one per test's event loop)."""
    register()
    forget_runners()
    yield "weather"
    forget_runners()
