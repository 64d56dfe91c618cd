"""Offline stand-ins for a remote LLM: the one thing outside the machine that tests fake."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class OfflineLlm(BaseLlm):
    """A tool's result is answered with "Done: <result>"; a user's text by ``reply``."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        responses = [part.function_response for part in last.parts or [] if part.function_response]
        if responses:
            part = types.Part(text=f"Done: {self.show(responses[0].response)}")
        else:
            part = self.reply(" ".join(part.text for part in last.parts or [] if part.text), llm_request)
        yield LlmResponse(content=types.Content(role="model", parts=[part]))

    def show(self, result: Any) -> str:
        return str(result)

    def reply(self, text: str, llm_request: LlmRequest) -> types.Part:
        raise NotImplementedError


class ScriptedLlm(OfflineLlm):
    """Calls ``tool_name`` with the user's text as ``argument``, then replies with what the tool said."""

    model: str = "scripted-offline"
    tool_name: str = "remember_city"
    argument: str = "city"

    def reply(self, text: str, llm_request: LlmRequest) -> types.Part:
        return types.Part(function_call=types.FunctionCall(name=self.tool_name, args={self.argument: text}))
