"""Chat with a registered agent in the terminal, seeing its tool calls and state changes live.

    python manage.py chat weather --user ada [--session s1]

Each line typed is one turn of the app's Runner (``runtime_app.agents``), so the
conversation is stored, audited and turned into memories as over HTTP. The
whole chat runs on one event loop: the Runner's services and plugins keep
per-loop resources (database futures, background audit writes) that must not
hop loops between turns, so input is read on a thread instead.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.runners import Runner
from google.genai import types
from pydantic_core import to_jsonable_python

from cognizes.infra import command
from runtime_app.agents import UnknownAgent, get_runner, registered_apps
from runtime_app.runner import settle
from sessions_app.services import SessionError, check_key

PROMPT = "you> "
QUIT = {"/quit", "/exit"}
SHORT = 200


class Command(BaseCommand):
    help = "Chat with a registered agent (COGNIZES_AGENTS) in the terminal; tool calls and state changes are shown."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("app", help="App name of a registered agent, e.g. weather.")
        parser.add_argument("--user", required=True, help="User id the session belongs to.")
        parser.add_argument("--session", help="Session id to continue or create (default: a new random id).")

    def handle(self, *args: Any, app: str, user: str, session: str | None, verbosity: int, **options: Any) -> None:
        session_id = session or uuid.uuid4().hex
        with _adk_logs(verbose=verbosity >= 2):
            try:
                check_key("user_id", user)
                check_key("session_id", session_id)
                runner = get_runner(app)
            except SessionError as error:
                raise CommandError(str(error)) from error
            except UnknownAgent as error:
                registered = ", ".join(registered_apps()) or "(none)"
                raise CommandError(f"{error} Registered apps: {registered}.") from error
            asyncio.run(self._chat(runner, user_id=user, session_id=session_id))
        self._say(f"To continue: {command.typed('chat', app, '--user', user, '--session', session_id)}")

    async def _chat(self, runner: Runner, *, user_id: str, session_id: str) -> None:
        stop_on_ctrl_c()
        try:
            await self._banner(runner, user_id=user_id, session_id=session_id)
            while True:
                line = (await _read_line(PROMPT)).strip()
                if line in QUIT:
                    break
                if line:
                    await self._turn(runner, user_id=user_id, session_id=session_id, text=line)
        except EOFError:
            self._say("")  # Ctrl-D leaves the cursor after the prompt
        except asyncio.CancelledError:  # Ctrl-C: end the chat, not the process
            self._say("")
        finally:
            await settle(runner)  # the pending audit rows; the Runner stays open (it is shared)

    async def _banner(self, runner: Runner, *, user_id: str, session_id: str) -> None:
        model = _model(runner.agent)
        self._say(f"Chat with app {runner.app_name!r}: agent {runner.agent.name}, model {_describe_model(model)}")
        if getattr(model, "offline", False):  # e.g. the demo's scripted stand-in for Gemini
            self._say("Offline model in use (set GOOGLE_API_KEY for Gemini)")
        existing = await runner.session_service.get_session(
            app_name=runner.app_name, user_id=user_id, session_id=session_id
        )
        if existing is None:
            self._say(f"Session {session_id} (new) for user {user_id}")
        else:
            count = len(existing.events)
            self._say(f"Session {session_id} for user {user_id}: continuing, {count} event{'s' * (count != 1)} so far")
        self._say("Type a message; /quit, /exit or Ctrl-D ends the chat.")

    async def _turn(self, runner: Runner, *, user_id: str, session_id: str, text: str) -> None:
        """Run one turn, printing each event as it arrives; a failed turn is reported, the chat goes on."""
        message = types.Content(role="user", parts=[types.Part(text=text)])
        try:
            async for event in runner.run_async(user_id=user_id, session_id=session_id, new_message=message):
                for line in describe(event):
                    self._say(line)
        except Exception as error:
            self._say(f"error: {type(error).__name__}: {error}")

    def _say(self, line: str) -> None:
        # Flushed per line: a pseudo-terminal reader (or a pipe) sees each event as it happens.
        self.stdout.write(line)
        self.stdout.flush()


def stop_on_ctrl_c() -> None:
    """Make Ctrl-C cancel the running task (the chat), through the event loop's signal handling.

    asyncio.run's own handler only runs once the main thread wakes up, and the
    kernel may hand SIGINT to another thread (the input or a database thread)
    while the main thread sleeps in the selector with nothing scheduled: the chat
    would hang. The loop's handler also writes to its wakeup socket, so any thread
    receiving the signal wakes the loop. (Only possible on the main thread.)
    """
    task = asyncio.current_task()
    try:
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, task.cancel)
    except (ValueError, RuntimeError, NotImplementedError):
        pass  # not the main thread (e.g. called from another program's thread): keep the default


def describe(event: Event) -> list[str]:
    """The terminal lines for one event: tool calls and results, state changes, text, errors."""
    if event.partial:
        return []  # streamed chunks; the final event repeats their text
    lines = [f"  → tool {call.name}({_args(call.args or {})})" for call in event.get_function_calls()]
    lines += [f"  ← {response.name}: {_short(_json(response.response))}" for response in event.get_function_responses()]
    lines += [f"  state: {key} = {_short(repr(value))}" for key, value in (event.actions.state_delta or {}).items()]
    if event.actions.transfer_to_agent:
        lines.append(f"  → transfer to {event.actions.transfer_to_agent}")
    text = _text(event)
    if text and event.author != "user":
        lines.append(f"{event.author}> {text}")
    if event.error_code or event.error_message:
        lines.append(f"error: {' '.join(filter(None, [event.error_code, event.error_message]))}")
    return lines


@contextmanager
def _adk_logs(*, verbose: bool) -> Iterator[None]:
    """Hide ADK's INFO logs (every runner, plugin and model call) unless ``-v 2``: noise between chat lines."""
    adk = logging.getLogger("google_adk")
    level = adk.level
    if not verbose:
        adk.setLevel(logging.WARNING)
    try:
        yield
    finally:
        adk.setLevel(level)  # call_command runs in-process: leave the logger as found


def _model(agent: Any) -> BaseLlm | None:
    """The agent's resolved model (an LlmAgent's own, inherited or default), None for other agents."""
    try:
        return agent.canonical_model
    except (AttributeError, ValueError):
        return None


def _describe_model(model: BaseLlm | None) -> str:
    """The model's name, and its class when it is not one of ADK's (a custom or scripted model)."""
    if model is None:
        return "-"
    if type(model).__module__.startswith("google.adk."):
        return model.model
    return f"{model.model} ({type(model).__name__})"


def _text(event: Event) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    return "".join(part.text for part in parts if part.text and not part.thought).strip()


def _args(args: dict[str, Any]) -> str:
    return _short(", ".join(f"{key}={value!r}" for key, value in args.items()))


def _json(value: Any) -> str:
    # load_memory answers with pydantic objects in a live run; their unset fields are noise here.
    return json.dumps(_without_nulls(to_jsonable_python(value, fallback=str)), ensure_ascii=False)


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _short(text: str, limit: int = SHORT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def _read_line(prompt: str) -> str:
    """``input(prompt)`` without blocking the event loop.

    A daemon thread per line rather than ``asyncio.to_thread``: after Ctrl-C the
    thread stays blocked in ``input()``, and the default executor's threads are
    joined at exit (the process would hang until Enter is pressed).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def settle(result: str | None, error: BaseException | None) -> None:
        if future.done():  # the chat was cancelled meanwhile
            return
        if error is None:
            future.set_result(result or "")
        else:
            future.set_exception(error)

    def read() -> None:
        line: str | None = None
        error: BaseException | None = None
        try:
            line = input(prompt)
        except BaseException as raised:  # EOFError on Ctrl-D, reported to the loop
            error = raised
        try:
            loop.call_soon_threadsafe(settle, line, error)
        except RuntimeError:
            pass  # the loop is closed: the chat ended while this line was being typed

    threading.Thread(target=read, name="chat-input", daemon=True).start()
    return await future
