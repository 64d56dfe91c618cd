"""Models by name: building an ADK model (``BaseLlm``) and asking it one prompt, for the stores that think.

Memory extraction (``memory_app.extraction``) and the knowledge reranker
(``knowledge_app.rerank``) both send one prompt to a model a setting or a
caller names and read the text back; neither may import the other, so it lives
here, on the ground floor. A name is Gemini's (``gemini-2.5-flash``, through ADK's
``LLMRegistry``) or LiteLLM's ``provider/model`` (``openai/…``, ``anthropic/…``,
``ollama_chat/…``); with an ``api_base`` it is always LiteLLM's, talking to that
server (an OpenAI-compatible vLLM, Ollama or LM Studio: ``openai/<model>``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from typing import Any


def model_named(name: str, *, api_base: str = "", timeout: float = 60.0) -> Any:
    """The ADK model ``name`` names; with ``api_base``, LiteLLM's at that server, within ``timeout`` seconds a
    call and without retries of its own (the callers retry, then fall back: each knows how)."""
    if api_base:
        # LiteLLM fetches its model price list from GitHub when imported: a self-hosted server has no business
        # calling out for it, and offline its retries held the first call for seconds. Its bundled copy serves.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        from google.adk.models.lite_llm import LiteLlm

        return LiteLlm(model=name, api_base=api_base, timeout=timeout, num_retries=0, max_retries=0)
    from google.adk.models.registry import LLMRegistry

    return LLMRegistry.new_llm(name)


async def ask_async(model: Any, prompt: str, *, system_instruction: str = "") -> str:
    """The text of ``model``'s answer to ``prompt`` (one user turn, temperature 0), without its thoughts."""
    from google.adk.models.llm_request import LlmRequest
    from google.genai import types

    request = LlmRequest(
        model=getattr(model, "model", None),
        contents=[types.Content(role="user", parts=[types.Part(text=prompt)])],
        config=types.GenerateContentConfig(system_instruction=system_instruction or None, temperature=0),
    )
    texts: list[str] = []
    async for response in model.generate_content_async(request, stream=False):
        if response.content and response.content.parts:
            texts.extend(p.text for p in response.content.parts if p.text and not p.thought)
    return "".join(texts)


def ask(model: Any, prompt: str, *, system_instruction: str = "") -> str:
    """``ask_async`` from synchronous code: a worker's job, a request's view, or a database thread an agent's
    tool runs on. A thread with an event loop running cannot ``asyncio.run``: the call then gets a thread of
    its own."""

    def call() -> str:
        return asyncio.run(ask_async(model, prompt, system_instruction=system_instruction))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return call()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result()
