"""``runner_for`` and the agent registry: the think, act, observe, remember loop in one process."""

from __future__ import annotations

import pytest
from django.test import override_settings
from google.adk.agents import LlmAgent
from google.adk.apps.app import EventsCompactionConfig
from google.adk.runners import Runner
from google.genai import types

from cognizes.adk import DatabaseToolset, runner_for
from cognizes.infra.db_threads import run_in_db_thread
from demo_agents.weather.agent import root_agent
from memory_app.consolidation import run_job, run_when_due
from memory_app.models import ConsolidationJob, JobStatus, Memory
from runtime_app.agents import UnknownAgent, forget_runners, get_runner
from runtime_app.runner import settle
from tests.fake_llm import ScriptedLlm
from tests.polling import eventually
from tools_app.models import ToolExecution

pytestmark = pytest.mark.django_db(transaction=True)


async def say(runner: Runner, session_id: str, text: str, user_id: str = "ada") -> list:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [e async for e in runner.run_async(user_id=user_id, session_id=session_id, new_message=message)]


def calls(events: list) -> list[tuple[str, dict]]:
    return [(c.name, c.args) for e in events for c in e.get_function_calls()]


def final_text(events: list) -> str:
    return events[-1].content.parts[0].text


async def jobs(**filters) -> list[ConsolidationJob]:
    return await run_in_db_thread(lambda: list(ConsolidationJob.objects.filter(**filters).order_by("id")))


async def test_a_preference_told_in_one_session_is_used_in_the_next(weather_app):
    runner = get_runner(weather_app)

    told = await say(runner, "s1", "I prefer Fahrenheit.")  # no such session yet: created
    assert "Fahrenheit" in final_text(told) and final_text(told).startswith("[offline model]")
    [job] = await jobs(session_id="s1")  # memory ingestion after the turn, for a worker
    assert job.status == JobStatus.QUEUED
    await run_in_db_thread(run_job, job.pk)

    asked = await say(runner, "s2", "What's the weather in Paris?")

    assert calls(asked) == [
        ("load_memory", {"query": "preferred temperature unit celsius or fahrenheit"}),
        ("get_weather", {"city": "Paris", "unit": "fahrenheit"}),
    ]
    assert final_text(asked) == "[offline model] It's 64°F and clear in Paris."
    session = await runner.session_service.get_session(app_name="weather", user_id="ada", session_id="s2")
    assert session.state["last_city"] == "Paris"  # the tool's state change, stored
    await settle(runner)  # the audit rows are written in the background
    audited = await run_in_db_thread(
        lambda: list(ToolExecution.objects.filter(session_id="s2").values_list("tool_name", "tool_version", "status"))
    )
    assert sorted(audited) == [("get_weather", 1, "succeeded"), ("load_memory", None, "succeeded")]


async def test_a_changed_preference_is_what_the_next_session_uses(weather_app):
    """Before: "Actually I prefer Celsius now." was stored beside "I prefer Fahrenheit." (and the agent's
    replies with them), both active, and the next session still answered in °F."""
    runner = get_runner(weather_app)
    for session_id, text in (("s1", "I prefer Fahrenheit."), ("s2", "Actually I prefer Celsius now.")):
        await say(runner, session_id, text)
        [job] = await jobs(session_id=session_id)
        await run_in_db_thread(run_job, job.pk)

    asked = await say(runner, "s3", "What's the weather in Paris?")

    assert calls(asked)[-1] == ("get_weather", {"city": "Paris", "unit": "celsius"})
    memories = await run_in_db_thread(lambda: dict(Memory.objects.values_list("text", "status")))
    assert memories == {"I prefer Fahrenheit.": "superseded", "Actually I prefer Celsius now.": "active"}


async def test_without_a_remembered_preference_the_default_unit_is_used(weather_app):
    asked = await say(get_runner(weather_app), "s1", "What's the weather in London?", user_id="bob")
    assert calls(asked)[-1] == ("get_weather", {"city": "London", "unit": "celsius"})
    assert final_text(asked).endswith("It's 15°C and cloudy in London.")


async def test_session_end_ingestion_waits_for_the_session_to_go_quiet(weather_app):
    runner = runner_for(root_agent, app_name="weather", memory="session_end", session_idle_seconds=3600)

    await say(runner, "s1", "I prefer Fahrenheit.")
    [first] = await jobs(session_id="s1")
    await say(runner, "s1", "Really, Fahrenheit.")
    [job] = await jobs(session_id="s1")  # the same job, pushed back

    assert (job.pk, job.status) == (first.pk, JobStatus.SCHEDULED) and job.not_before > first.not_before
    await run_in_db_thread(run_when_due, job.pk)  # not due: sent again for later
    [still] = await jobs(session_id="s1")
    assert still.status == JobStatus.SCHEDULED and await run_in_db_thread(Memory.objects.count) == 0

    await run_in_db_thread(
        lambda: ConsolidationJob.objects.filter(pk=job.pk).update(not_before=first.created_at)  # an hour later
    )
    await run_in_db_thread(run_when_due, job.pk)
    [done] = await jobs(session_id="s1")
    assert done.status == JobStatus.DONE and done.memories_created >= 1
    await say(runner, "s1", "Thanks!")  # a new turn after the end schedules a new job
    assert [j.status for j in await jobs(session_id="s1")] == [JobStatus.DONE, JobStatus.SCHEDULED]


async def test_a_due_job_that_failed_runs_again_on_retry(weather_app):
    runner = runner_for(root_agent, app_name="weather", memory="session_end", session_idle_seconds=0)
    await say(runner, "s1", "I prefer Fahrenheit.")
    [job] = await jobs(session_id="s1")
    # As if the worker lost the database mid-job: the task retries with the job no longer "scheduled".
    await run_in_db_thread(lambda: ConsolidationJob.objects.filter(pk=job.pk).update(status=JobStatus.FAILED))

    await run_in_db_thread(run_when_due, job.pk)
    [done] = await jobs(session_id="s1")
    assert done.status == JobStatus.DONE and done.memories_created >= 1


async def test_a_schedule_for_a_quiet_session_reaches_the_worker(weather_app, celery_worker):
    runner = runner_for(root_agent, app_name="weather", memory="session_end", session_idle_seconds=0.5)
    await say(runner, "s1", "I prefer Fahrenheit.")

    async def finished() -> ConsolidationJob | None:
        [job] = await jobs(session_id="s1")
        return job if job.status in (JobStatus.DONE, JobStatus.FAILED) else None

    job = await eventually(finished)
    assert job is not None and job.status == JobStatus.DONE and job.memories_created >= 1


async def test_runner_for_wires_services_plugins_and_options(weather_app):
    agent = LlmAgent(name="plain", model=ScriptedLlm())
    compaction = EventsCompactionConfig(compaction_interval=5, overlap_size=1)

    runner = runner_for(agent, app_name="plain_app", compaction=compaction, memory="off")

    assert type(runner.session_service).__name__ == "PostgresSessionService"
    assert type(runner.memory_service).__name__ == "PostgresMemoryService"
    assert runner.app.events_compaction_config is compaction and runner.auto_create_session
    assert [p.name for p in runner.app.plugins] == ["cognizes_audit"]
    assert sum(isinstance(t, DatabaseToolset) for t in agent.tools) == 1
    runner_for(agent, app_name="plain_app")
    assert sum(isinstance(t, DatabaseToolset) for t in agent.tools) == 1  # not added twice
    with pytest.raises(ValueError, match="memory ingestion"):
        runner_for(agent, app_name="plain_app", memory="sometimes")


def make_other_runner() -> Runner:
    return runner_for(LlmAgent(name="other", model=ScriptedLlm()), app_name="other")


def test_only_registered_apps_have_runners(weather_app):
    with pytest.raises(UnknownAgent, match="No agent is registered for app 'nope'"):
        get_runner("nope")
    with override_settings(COGNIZES_AGENTS={"mismatch": "tests.runtime.test_runner.make_other_runner"}):
        forget_runners()
        with pytest.raises(ValueError, match="for app 'other'"):
            get_runner("mismatch")
    with override_settings(COGNIZES_AGENTS={"other": "tests.runtime.test_runner.make_other_runner"}):
        forget_runners()
        assert get_runner("other") is get_runner("other")
