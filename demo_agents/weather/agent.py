"""The weather assistant: Gemini when ``GOOGLE_API_KEY`` is set, the scripted offline model otherwise.

Tools: ``get_weather`` from the tool registry (app "weather", see tools.py),
ADK's ``load_memory`` over Cognizes' memory, where the user's preferred unit
lands once a conversation is consolidated, and, from the app's runner
(``runner``), ``search_knowledge`` over the travel handbook (knowledge.py).
"""

from __future__ import annotations

import os

from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.tools.load_memory_tool import load_memory_tool

from cognizes.adk import DatabaseToolset, runner_for
from demo_agents.weather.knowledge import CORPUS
from demo_agents.weather.offline_model import OfflineWeatherModel
from demo_agents.weather.tools import APP_NAME

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
HANDBOOK_INSTRUCTION = (
    "For what to pack, a city's climate in a season, or how to read a forecast, call search_knowledge "
    "and answer from the passages it returns, naming the document you took the answer from."
)


def runner() -> Runner:
    """The weather app's Runner, as COGNIZES_AGENTS serves it: ``runner_for``'s, with the travel handbook to search.

    A factory, not the agent, because ``knowledge=[…]`` belongs to the runner: the
    corpus is the weather app's. The agent is cloned, since ``runner_for`` adds the
    tool to the agent it is given, and ``root_agent`` run as another app (or by
    ``adk web``) must neither search this app's corpus nor be told to.
    """
    agent = root_agent.clone(update={"instruction": f"{root_agent.instruction} {HANDBOOK_INSTRUCTION}"})
    return runner_for(agent, app_name=APP_NAME, knowledge=[CORPUS])
