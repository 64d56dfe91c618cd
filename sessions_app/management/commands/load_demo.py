"""Load a small demo conversation so a fresh admin has something to browse."""

import asyncio

from django.core.management.base import BaseCommand
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types

from sessions_app import services
from sessions_app.adk import PostgresSessionService

APP, USER, SESSION = "weather_assistant", "alice", "demo-1"


def _text(author: str, text: str, **state) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        invocation_id="demo-invocation-1",
        content=types.Content(role=role, parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=state),
    )


async def _load() -> bool:
    service = PostgresSessionService()
    session = await service.create_session(
        app_name=APP, user_id=USER, session_id=SESSION, state={"app:default_unit": "celsius"}
    )
    await service.append_event(session, _text("user", "What's the weather in Paris? I prefer Fahrenheit."))
    call = types.Part(function_call=types.FunctionCall(id="call-1", name="get_weather", args={"city": "Paris"}))
    await service.append_event(
        session,
        Event(author="weather_agent", invocation_id="demo-invocation-1",
              content=types.Content(role="model", parts=[call])),
    )
    response = types.Part(
        function_response=types.FunctionResponse(
            id="call-1", name="get_weather", response={"city": "Paris", "temperature_c": 18, "sky": "clear"}
        )
    )
    await service.append_event(
        session,
        Event(author="weather_agent", invocation_id="demo-invocation-1",
              content=types.Content(role="user", parts=[response])),
    )
    await service.append_event(
        session,
        _text("weather_agent", "It's 64°F and clear in Paris.", **{"user:preferred_unit": "fahrenheit", "last_city": "Paris"}),
    )
    return True


class Command(BaseCommand):
    help = "Create a demo session (weather_assistant / alice / demo-1) unless it exists."

    def handle(self, *args, **options) -> None:
        if services.get_session(app_name=APP, user_id=USER, session_id=SESSION, num_recent_events=0):
            self.stdout.write("Demo data already loaded.")
            return
        asyncio.run(_load())
        from memory_app.consolidation import do_enqueue_session

        job = do_enqueue_session(app_name=APP, user_id=USER, session_id=SESSION, run_inline=True)
        self.stdout.write(
            self.style.SUCCESS(
                f"Loaded demo session {APP}/{USER}/{SESSION} and {job.memories_created} memories from it."
            )
        )
