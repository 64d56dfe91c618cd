"""An offline stand-in for a remote LLM that calls whichever registry tool the user names."""

from __future__ import annotations

import json
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from tests.fake_llm import OfflineLlm


class ToolCallingLlm(OfflineLlm):
    """``"<tool> {json args}"`` calls that tool if the agent offers it; a tool's result is echoed back.

    Answers "I have no tool <name>." when the tool is not offered, like a real
    model that only sees the declarations it was given.
    """

    model: str = "tool-calling-offline"

    def show(self, result: Any) -> str:
        return json.dumps(result, sort_keys=True)

    def reply(self, text: str, llm_request: LlmRequest) -> types.Part:
        name, _, args = text.partition(" ")
        if name in llm_request.tools_dict:
            return types.Part(function_call=types.FunctionCall(name=name, args=json.loads(args or "{}")))
        return types.Part(text=f"I have no tool {name}.")
