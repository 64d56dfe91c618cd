"""Load the demo: the weather agent's registry tool, its travel handbook, and three real conversations with it.

The conversations go through the same Runner the API and ``chat`` use (offline
scripted model unless GOOGLE_API_KEY is set): in "demo-1" alice states her
preferred unit, which is consolidated into memory; in "demo-2" the agent looks
it up and calls the weather tool with it; in "demo-3" it answers what to pack
from the handbook (``search_knowledge``). A fresh admin then has sessions,
events, state, memories, tool executions, traces and an indexed corpus to browse.
"""

import asyncio
from collections.abc import Callable

from django.core.management.base import BaseCommand
from google.genai import types

from cognizes.infra.db_threads import run_in_db_thread
from demo_agents.weather import offline_model
from demo_agents.weather.agent import OFFLINE
from demo_agents.weather.knowledge import CORPUS, add_handbook
from demo_agents.weather.tools import APP_NAME, register
from knowledge_app.ingestion import do_ingest
from memory_app.consolidation import run_job
from memory_app.models import ConsolidationJob, JobStatus
from runtime_app.agents import get_runner
from runtime_app.runner import settle
from sessions_app import services

USER = "alice"
CONVERSATIONS = [
    ("demo-1", "I prefer Fahrenheit."),
    ("demo-2", "What's the weather in Paris?"),
    ("demo-3", "What should I pack for Paris in November?"),
]


async def _converse(conversations: list[tuple[str, str]], write: Callable[[str], None]) -> None:
    runner = get_runner(APP_NAME)
    for session_id, text in conversations:
        write(f"  {USER}> {text}")
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
            for call in event.get_function_calls():
                write(f"    → {call.name}({call.args})")
            if event.content and event.content.parts and event.content.parts[0].text:
                write(f"  {event.author}> {event.content.parts[0].text}")
        # Consolidate now rather than wait for the worker, so demo-2 can recall demo-1.
        queued = await run_in_db_thread(
            lambda session_id=session_id: list(
                ConsolidationJob.objects.filter(
                    app_name=APP_NAME, user_id=USER, session_id=session_id, status=JobStatus.QUEUED
                ).values_list("pk", flat=True)
            )
        )
        for job_id in queued:
            await run_in_db_thread(run_job, job_id)
    await settle(runner)


class Command(BaseCommand):
    help = "Register the weather agent's tool, index its travel handbook and hold three demo conversations (once)."

    def handle(self, *args, **options) -> None:
        if register():
            self.stdout.write(f"Registered the {APP_NAME} app's get_weather tool.")
        self._index_handbook()
        # Each conversation once: an install that has the first ones still gets a newer one.
        conversations = [
            (session_id, text)
            for session_id, text in CONVERSATIONS
            if not services.get_session(app_name=APP_NAME, user_id=USER, session_id=session_id, num_recent_events=0)
        ]
        if not conversations:
            self.stdout.write("Demo conversations already loaded.")
            return
        model = (
            f"the offline scripted model ({offline_model.NAME}; set GOOGLE_API_KEY for Gemini)" if OFFLINE else "Gemini"
        )
        self.stdout.write(f"Demo conversations with the {APP_NAME} agent on {model}:")
        try:
            asyncio.run(_converse(conversations, self.stdout.write))
        except Exception as error:  # e.g. a Gemini key without network: the product still starts
            self.stderr.write(self.style.WARNING(f"The demo conversation failed: {type(error).__name__}: {error}"))
            return
        loaded = ", ".join(session_id for session_id, _ in conversations)
        self.stdout.write(self.style.SUCCESS(f"Loaded demo sessions {APP_NAME}/{USER}/{loaded}."))

    def _index_handbook(self) -> None:
        """Index the handbook here, not on a worker (none runs yet under ``make run``), before demo-3 searches it."""
        indexed = [f"{document.display_name} ({do_ingest(document.id)})" for document in add_handbook()]
        if indexed:
            self.stdout.write(f"Indexed the {APP_NAME} app's {CORPUS.lower()}: {', '.join(indexed)}.")
