"""Running a small ADK agent and waiting for its spans to be stored."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from django.db import connections
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService
from google.genai import types

from tests.fake_llm import ScriptedLlm
from tracing_app.setup import configure_tracing

APP = "weather_app"


class MeteredLlm(ScriptedLlm):
    """ScriptedLlm that reports token usage, as a real model does: 10 tokens in, 5 out per call."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        async for response in super().generate_content_async(llm_request, stream):
            response.usage_metadata = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=10, candidates_token_count=5, total_token_count=15
            )
            yield response


def remember_city(city: str) -> dict:
    """Remember the city the user asks about."""
    if city == "Atlantis":
        raise RuntimeError("no such city")
    return {"city": city}


def make_runner(service: BaseSessionService) -> Runner:
    agent = LlmAgent(name="weather_agent", model=MeteredLlm(), tools=[remember_city])
    return Runner(agent=agent, app_name=APP, session_service=service)


async def ask(runner: Runner, *, user_id: str, session_id: str, text: str) -> list:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [event async for event in runner.run_async(user_id=user_id, session_id=session_id, new_message=message)]


async def flush() -> None:
    """Wait until every finished span has gone through the exporters.

    ``force_flush`` exports in the calling thread; a thread of its own (with its
    own connection, closed after) behaves like the processor's worker thread.
    """
    await asyncio.to_thread(_flush_in_thread)


def _flush_in_thread() -> None:
    try:
        assert configure_tracing().force_flush(30_000)
    finally:
        connections.close_all()
