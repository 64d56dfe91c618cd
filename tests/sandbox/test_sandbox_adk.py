"""An ADK agent whose model writes code, run by ``cognizes.vertex.AgentEngineSandboxCodeExecutor`` in Cognizes'
sandboxes: ADK's executor with one import changed (issue 46 item 2)."""

from __future__ import annotations

import warnings

import pytest
from asgiref.sync import sync_to_async
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.genai import types

from cognizes.access.ownership import get_owner
from cognizes.vertex import AgentEngineSandboxCodeExecutor
from tests.fake_llm import OfflineLlm
from tests.sandbox.conftest import Box
from tools_app.models import SandboxEnvironment, SandboxExecution

pytestmark = pytest.mark.django_db(transaction=True)


class CodeWritingLlm(OfflineLlm):
    """Answers a request with the code it names (in a python block); a code result with "Result: <it>"."""

    model: str = "code-writing-offline"

    async def generate_content_async(self, llm_request, stream: bool = False):
        from google.adk.models.llm_response import LlmResponse

        last = llm_request.contents[-1]
        results = [part.code_execution_result.output for part in last.parts or [] if part.code_execution_result]
        texts = [part.text for part in last.parts or [] if part.text]
        if results or any("tool_output" in text for text in texts):
            part = types.Part(text=f"Result: {(results or texts)[0]}")
        else:
            part = types.Part(text=f"```python\n{' '.join(texts)}\n```")
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def _speaker(box: Box, executor: AgentEngineSandboxCodeExecutor):
    """``say(code)``: one turn of an ADK agent whose model writes ``code``, answered with what the agent said."""
    agent = LlmAgent(name="analyst", model=CodeWritingLlm(), code_executor=executor)
    runner = InMemoryRunner(agent=agent, app_name=box.app)
    session = None

    async def say(code: str) -> list[str]:
        nonlocal session
        session = session or await runner.session_service.create_session(app_name=box.app, user_id="ana")
        message = types.Content(role="user", parts=[types.Part(text=code)])
        texts = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            async for event in runner.run_async(user_id="ana", session_id=session.id, new_message=message):
                texts += [part.text for part in (event.content.parts if event.content else []) if part.text]
        return texts

    return say


async def test_an_adk_agent_runs_its_code_in_a_cognizes_sandbox_that_keeps_state_across_turns(box: Box):
    executor = AgentEngineSandboxCodeExecutor(
        agent_engine_resource_name=box.engine, base_url=box.base_url, api_key=box.key
    )
    say = _speaker(box, executor)

    await say("total = sum(range(10)); print('somme', total)")
    second = await say("print('doublé', total * 2)")
    assert any("doublé 90" in text for text in second)
    sandbox, outputs = await sync_to_async(_rows)()  # one sandbox for the session, reused by the second turn
    assert sandbox.display_name == "default_sandbox" and sandbox.state == "STATE_RUNNING"
    assert outputs == ["somme 45\n", "doublé 90\n"]


async def test_without_an_engine_adks_executor_creates_one_of_the_keys_app_and_runs_code_there(box: Box):
    """ADK's case 2: no engine named, so the executor calls ``runtimes.create()`` (an empty body) first."""
    executor = AgentEngineSandboxCodeExecutor(base_url=box.base_url, api_key=box.key)

    answer = await _speaker(box, executor)("print('créé', 6 * 7)")

    assert any("créé 42" in text for text in answer)
    created = executor.agent_engine_resource_name
    assert created and created != box.engine and created.startswith("projects/")
    sandbox = await sync_to_async(SandboxEnvironment.objects.get)()
    assert str(sandbox.engine_id) == created.rsplit("/", 1)[-1]
    assert await sync_to_async(get_owner)(sandbox.app_name) == box.app  # the new engine's app is the key's app's


def _rows() -> tuple[SandboxEnvironment, list[str]]:
    return SandboxEnvironment.objects.get(), [e.stdout for e in SandboxExecution.objects.order_by("id")]


def test_an_engine_deleted_with_force_takes_its_sandboxes_and_their_runs(box: Box):
    client = box.client()
    engine = client.runtimes.create().api_resource.name
    sandbox = client.sandboxes.create(
        name=engine, spec={"code_execution_environment": {}}, config={"display_name": "to go"}
    ).response.name
    assert "ok" in box.run(sandbox, "print('ok')")[0]

    client.runtimes.delete(name=engine, force=True)

    engine_id = int(engine.rsplit("/", 1)[-1])
    assert not SandboxEnvironment.objects.filter(engine_id=engine_id).exists()
    assert not SandboxExecution.objects.filter(app_name=str(engine_id)).exists()
