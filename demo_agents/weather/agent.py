"""The weather assistant: Gemini when ``GOOGLE_API_KEY`` is set, the scripted offline model otherwise.

Tools: ``get_weather`` from the tool registry (app "weather", see tools.py) and
ADK's ``load_memory`` over Cognizes' memory, where the user's preferred unit
lands once a conversation is consolidated.
"""

from __future__ import annotations

import os

from google.adk.agents import LlmAgent
from google.adk.tools.load_memory_tool import load_memory_tool

from cognizes.adk import DatabaseToolset
from demo_agents.weather.offline_model import OfflineWeatherModel

GEMINI_MODEL = os.environ.get("COGNIZES_DEMO_MODEL", "gemini-2.5-flash")
OFFLINE = not (os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI"))

root_agent = LlmAgent(
    name="weather_assistant",
    model=OfflineWeatherModel() if OFFLINE else GEMINI_MODEL,
    description="Tells the weather in a city, in the unit the user prefers.",
    instruction=(
        "You are a friendly weather assistant. Before answering a weather question, call load_memory "
        "to find the user's preferred temperature unit (celsius or fahrenheit; celsius if none is known), "
        "then call get_weather with the city and that unit, and answer in one sentence. "
        "When the user tells you a preference, acknowledge it briefly."
    ),
    tools=[DatabaseToolset(), load_memory_tool],
)
