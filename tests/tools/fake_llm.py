"""An offline stand-in for a remote LLM that calls whichever registry tool the user names."""

from __future__ import annotations

import json
from typing import AsyncGenerator

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class ToolCallingLlm(BaseLlm):
    """``"<tool> {json args}"`` calls that tool if the agent offers it; a tool's result is echoed back.

    Answers "I have no tool <name>." when the tool is not offered, like a real
    model that only sees the declarations it was given.
    """

    model: str = "tool-calling-offline"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        responses = [part.function_response for part in last.parts or [] if part.function_response]
        if responses:
            part = types.Part(text=f"Done: {json.dumps(responses[0].response, sort_keys=True)}")
        else:
            text = " ".join(part.text for part in last.parts or [] if part.text)
            name, _, args = text.partition(" ")
            if name in llm_request.tools_dict:
                part = types.Part(function_call=types.FunctionCall(name=name, args=json.loads(args or "{}")))
            else:
                part = types.Part(text=f"I have no tool {name}.")
        yield LlmResponse(content=types.Content(role="model", parts=[part]))
