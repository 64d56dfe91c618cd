"""Any model ADK runs extracts memories: LiteLLM's, here against an OpenAI-compatible server process.

The server (tests/memory/openai_compatible.py) stands in for the remote model, the
one thing outside the machine; LiteLLM, ADK's ``LiteLlm`` and the consolidation
job are real. A model that answers nonsense or fails is asked again, then the
offline extractor takes the job: never a stuck job, never lost memories.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory_app import consolidation
from memory_app.models import ConsolidationJob, JobStatus, Memory, MemoryBankConfig
from tests.memory.sessions import TEXTS, session_with_events
from tests.model_server import model_servers
from tests.processes import ROOT

pytestmark = pytest.mark.django_db(transaction=True)

APP = "model_app"
MEMORIES = [
    {"text": "Ada lives in Lisbon.", "kind": "personal_info", "importance": 0.9, "supersedes": []},
    {"text": "Ada plays the cello.", "kind": "hobbies", "importance": 0.6, "supersedes": []},
]


@pytest.fixture
def model_server(tmp_path, settings):
    """Start the stand-in with a script of answers; settings point the extractor at it. Yields the request log."""
    with model_servers(tmp_path) as start_server:

        def start(*answers: tuple[int, str]) -> Path:
            server = start_server(*answers)
            settings.COGNIZES_MEMORY_MODEL = "openai/local-model"
            settings.COGNIZES_MEMORY_MODEL_API_BASE = server.url
            settings.COGNIZES_MEMORY_MODEL_TIMEOUT_SECONDS = 10
            return server.log

        yield start


def run_a_job() -> ConsolidationJob:
    session_with_events(APP)
    job = consolidation.do_enqueue_session(app_name=APP, user_id="ada", session_id="s1", run_inline=True)
    return ConsolidationJob.objects.get(pk=job.pk)


def requests(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_a_litellm_model_extracts_with_the_apps_topics_and_examples(model_server):
    MemoryBankConfig.objects.create(
        app_name=APP,
        custom_topics=[{"label": "hobbies", "description": "what the user does for fun"}],
        examples=[
            {
                "conversation": [{"role": "user", "text": "I sail on weekends."}],
                "memories": [{"fact": "The user sails on weekends.", "topic": "hobbies"}],
            }
        ],
    )
    log = model_server((200, "Here you go:\n```json\n" + json.dumps(MEMORIES) + "\n```"))

    job = run_a_job()

    assert job.status == JobStatus.DONE
    assert sorted(Memory.objects.values_list("text", "topic")) == [
        ("Ada lives in Lisbon.", ""),
        ("Ada plays the cello.", "hobbies"),
    ]
    [sent] = requests(log)
    system = next(m["content"] for m in sent["messages"] if m["role"] in ("system", "developer"))
    system = system if isinstance(system, str) else " ".join(part.get("text", "") for part in system)
    assert sent["model"] == "local-model"
    assert "hobbies: what the user does for fun" in system and "I sail on weekends." in system
    assert all(text in json.dumps(sent["messages"]) for text in TEXTS)


@pytest.mark.parametrize(
    "answers",
    [
        [(200, "I'm sorry, I can't help with that.")],
        [(200, '[{"text": "broken'), (200, "not json either"), (200, "{}")],
        [(500, "the model server is overloaded")],
    ],
    ids=["refused", "malformed", "server error"],
)
def test_a_model_that_fails_is_asked_again_then_the_offline_extractor_takes_the_job(model_server, answers):
    log = model_server(*answers)

    job = run_a_job()

    assert job.status == JobStatus.DONE and job.lease_until is None
    assert sorted(Memory.objects.values_list("text", flat=True)) == sorted(TEXTS)  # what the person said, kept
    assert len(requests(log)) == 3


def test_a_model_that_recovers_on_the_second_attempt_is_used(model_server):
    log = model_server((200, "Sure! Let me think."), (200, json.dumps(MEMORIES[:1])))
    run_a_job()
    assert list(Memory.objects.values_list("text", flat=True)) == ["Ada lives in Lisbon."]
    assert len(requests(log)) == 2


def test_the_environment_variable_chooses_the_model():
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from memory_app.extraction import get_extractor; "
            "e = get_extractor(); print(type(e).__name__, type(e.model).__name__, e.model.model)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "cognizes.settings",
            "COGNIZES_MEMORY_MODEL": "openai/my-model",
            "COGNIZES_MEMORY_MODEL_API_BASE": "http://127.0.0.1:9/v1",
        },
    )
    assert done.stdout.split() == ["LlmExtractor", "LiteLlm", "openai/my-model"]


@pytest.mark.parametrize(("count", "shown"), [(None, False), (3, True)], ids=["latest only", "three revisions"])
def test_a_consolidating_model_sees_as_many_revisions_as_configured(model_server, count, shown):
    from memory_app import services

    MemoryBankConfig.objects.create(app_name=APP, revisions_per_candidate=count)
    outcome = services.do_remember(
        app_name=APP, user_id="ada", candidates=[services.Candidate(text="Ada lives in Porto.")], cause="test"
    )
    services.do_edit_memory(
        memory_id=outcome.created[0], app_name=APP, user_id="ada", cause="test", text="Ada lives in Lisbon."
    )
    log = model_server((200, "[]"))

    run_a_job()

    [sent] = requests(log)
    assert "Ada lives in Lisbon." in json.dumps(sent["messages"])
    assert ("(earlier: Ada lives in Porto.)" in json.dumps(sent["messages"])) is shown
