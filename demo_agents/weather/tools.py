"""The weather tool, served from the tool registry (a "python" row; see ``register``).

Reports are made up, as in ADK's tutorial: this machine has no weather service
to call, and a demo must answer the same way every time.
"""

from __future__ import annotations

import hashlib
from typing import Any

from google.adk.tools.tool_context import ToolContext

APP_NAME = "weather"
TOOL_PATH = "demo_agents.weather.tools.get_weather"
_KNOWN = {"new york": (25, "sunny"), "london": (15, "cloudy"), "tokyo": (18, "light rain"), "paris": (18, "clear")}
_CONDITIONS = ["sunny", "cloudy", "clear", "light rain", "windy", "foggy"]


def get_weather(city: str, unit: str, tool_context: ToolContext) -> dict[str, Any]:
    """Current weather in a city.

    Args:
        city: The city, e.g. "Paris".
        unit: "celsius" or "fahrenheit", the user's preferred temperature unit.
    """
    name = " ".join(city.split()).strip(" .?!")
    if not name:
        return {"status": "error", "error_message": "Which city?"}
    unit = unit.strip().lower()
    if unit not in ("celsius", "fahrenheit"):
        return {"status": "error", "error_message": f"Unknown unit {unit!r}: use celsius or fahrenheit."}
    celsius, conditions = _KNOWN.get(name.lower()) or _made_up(name.lower())
    temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32)
    tool_context.state["last_city"] = name
    return {
        "status": "success",
        "city": name.title(),
        "temperature": temperature,
        "unit": "°C" if unit == "celsius" else "°F",
        "conditions": conditions,
    }


def _made_up(city: str) -> tuple[int, str]:
    digest = hashlib.sha256(city.encode()).digest()
    return 5 + digest[0] % 25, _CONDITIONS[digest[1] % len(_CONDITIONS)]


def register() -> bool:
    """Put ``get_weather`` in the weather app's tool registry unless it is there; True if added."""
    from tools_app.services import ToolExists, do_create_tool

    try:
        do_create_tool(
            app_name=APP_NAME,
            actor="demo",
            name="get_weather",
            kind="python",
            callable_path=TOOL_PATH,
            description="Current weather in a city, in the unit the user prefers (celsius or fahrenheit).",
        )
    except ToolExists:
        return False
    return True
