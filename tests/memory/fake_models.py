"""Offline stand-ins for remote models used by memory tests."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field


class JsonAnsweringLlm(BaseLlm):
    """Answers every request with ``answer`` and keeps the prompts it was sent."""

    model: str = "fake-extractor"
    answer: str = "[]"
    prompts: list[str] = Field(default_factory=list)
    instructions: list[str] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.prompts.append("".join(p.text or "" for c in llm_request.contents for p in c.parts or []))
        self.instructions.append(str(llm_request.config.system_instruction or ""))
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=self.answer)]))
