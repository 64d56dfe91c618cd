"""A scripted stand-in for Gemini, so the demo works on a machine with no API key and no network.

It plays the loop a real model would: asked about the weather, it first looks
in long-term memory for the user's preferred unit (``load_memory``), then calls
the registry's ``get_weather`` with it, then answers from the tool's report.
Asked what to pack (or about a climate), it searches the travel handbook with
the question (``search_knowledge``) and quotes the best passage, naming its
document. Told a preference, it acknowledges it (memory consolidation keeps it). A unit is read in any
language CLDR names it in (``unit_names``), in what the user says and in what memory holds.
Every answer says the offline model wrote it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from typing import Any, ClassVar

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import BaseModel

from demo_agents.weather.unit_names import unit_named

NAME = "cognizes-offline-weather"
MARK = "[offline model]"
MEMORY_QUERY = "preferred temperature unit celsius or fahrenheit"
_CITY = re.compile(r"\b(?:weather|temperature|forecast)\b.*?\b(?:in|for|at)\s+([A-Za-z][A-Za-z .'-]*)", re.I)
_HANDBOOK = re.compile(r"\b(?:pack|packing|bring|wear|climate|handbook)\b", re.I)
SEARCH = "search_knowledge"


class OfflineWeatherModel(BaseLlm):
    model: str = NAME
    offline: ClassVar[bool] = True
    """Front ends (``chat``) say that answers come from a script, not a model."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse(content=types.Content(role="model", parts=[self._next_part(llm_request)]))

    def _next_part(self, llm_request: LlmRequest) -> types.Part:
        contents = llm_request.contents
        last = contents[-1] if contents else types.Content(role="user", parts=[])
        responses = [part.function_response for part in last.parts or [] if part.function_response]
        if responses:
            return self._after_tool(responses[-1], _last_user_text(contents))
        text = _text(last)
        if _HANDBOOK.search(text):
            if SEARCH in llm_request.tools_dict:  # only the weather app's runner gives it (agent.runner)
                return _call(SEARCH, query=text)
            return _say("I have no travel handbook to search here: ask me about the weather instead.")
        city = _CITY.search(text)
        if city:
            return _call("load_memory", query=MEMORY_QUERY)
        unit = unit_named(text)  # in any language: "温度は華氏で教えてください" too
        if unit:
            return _say(f"Got it: from now on I'll give temperatures in {unit.capitalize()}.")
        return _say(
            'I can tell you the weather: ask "What\'s the weather in Paris?" or "What should I pack for '
            'Paris in November?", or tell me whether you prefer Celsius or Fahrenheit.'
        )

    def _after_tool(self, response: types.FunctionResponse, question: str) -> types.Part:
        result: dict[str, Any] = response.response or {}
        city_match = _CITY.search(question)
        city = city_match.group(1).strip(" .?!") if city_match else ""
        if response.name == "load_memory":
            remembered = _remembered_unit(result)
            return _call("get_weather", city=city, unit=remembered or "celsius")
        if response.name == "get_weather" and result.get("status") == "success":
            return _say(f"It's {result['temperature']}{result['unit']} and {result['conditions']} in {result['city']}.")
        if response.name == SEARCH and "passages" in result:
            return _quote(result["passages"])
        return _say(f"Sorry, that did not work: {result.get('error_message') or result.get('error') or result}")


def _quote(passages: list[dict[str, Any]]) -> types.Part:
    """The best passage, word for word (on one line) and where it is from: a script cannot summarise it."""
    if not passages:
        return _say("The travel handbook has nothing on that.")
    best = passages[0]
    source = ", ".join(filter(None, [best.get("document"), best.get("heading")]))
    return _say(f'The travel handbook ({source}) says: "{" ".join(best["text"].split())}"')


def _remembered_unit(load_memory_result: dict[str, Any]) -> str | None:
    """The unit named by the latest memory that names one (the best-ranked, among those said at once).

    The latest, not the best-ranked: a preference changed in another language ("I prefer Fahrenheit.",
    then "温度は摂氏で教えてください") supersedes nothing in memory, since no frame is shared to align, and
    the old one may rank first for an English query.
    """
    result = _plain(load_memory_result)
    result = result.get("result", result)  # ADK wraps a tool's non-dict return value
    named: list[tuple[datetime, int, str]] = []
    for rank, memory in enumerate(result.get("memories") or []):
        parts = ((memory or {}).get("content") or {}).get("parts") or []
        unit = next((found for part in parts if (found := unit_named(part.get("text") or ""))), None)
        if unit:
            named.append((_when(memory.get("timestamp")), -rank, unit))
    return max(named)[2] if named else None


def _when(timestamp: Any) -> datetime:
    """A memory's time (ISO 8601), or the earliest time for one without it."""
    try:
        when = datetime.fromisoformat(str(timestamp))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _plain(value: Any) -> Any:
    """JSON-like data from a tool response (pydantic objects in a live run, dicts once stored)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _text(content: types.Content) -> str:
    return " ".join(part.text for part in content.parts or [] if part.text and not part.thought)


def _last_user_text(contents: list[types.Content]) -> str:
    for content in reversed(contents):
        if content.role == "user" and (text := _text(content)):
            return text
    return ""


def _call(name: str, **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args))


def _say(text: str) -> types.Part:
    return types.Part(text=f"{MARK} {text}")
