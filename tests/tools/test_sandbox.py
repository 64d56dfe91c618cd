"""Code an agent runs with an ADK code executor is recorded next to its session."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.artifacts import InMemoryArtifactService
from google.adk.code_executors.unsafe_local_code_executor import UnsafeLocalCodeExecutor
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.genai import types

from cognizes.adk import AuditPlugin, PostgresSessionService
from cognizes.infra.db_threads import run_in_db_thread
from tools_app.models import SandboxExecution

pytestmark = pytest.mark.django_db(transaction=True)


class CodeWritingLlm(BaseLlm):
    """Answers the first turn with a Python code block, then with plain text."""

    model: str = "fake-coder"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        asked_before = any(content.role == "model" for content in llm_request.contents)
        text = "The answer is above." if asked_before else "```python\nprint(6 * 7)\n```"
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


async def test_a_code_execution_is_recorded_with_code_output_and_session():
    audit = AuditPlugin()
    agent = LlmAgent(name="coder", model=CodeWritingLlm(), code_executor=UnsafeLocalCodeExecutor())
    sessions = PostgresSessionService()
    runner = Runner(
        app=App(name="lab", root_agent=agent, plugins=[audit]),
        session_service=sessions,
        artifact_service=InMemoryArtifactService(),  # the code executor keeps its files there
    )
    session = await sessions.create_session(app_name="lab", user_id="ada")

    async for _ in runner.run_async(
        user_id="ada", session_id=session.id, new_message=types.Content(role="user", parts=[types.Part(text="6*7?")])
    ):
        pass
    await audit.flush()

    [run] = await run_in_db_thread(lambda: list(SandboxExecution.objects.all()))
    assert (run.app_name, run.user_id, run.session_id) == ("lab", "ada", session.id)
    assert "print(6 * 7)" in run.code and run.language.lower() == "python"
    assert run.stdout.strip() == "42" and run.exit_status == "OUTCOME_OK"
