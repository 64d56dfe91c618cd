"""``manage.py chat``: a terminal chat with a registered agent, driven through a pseudo-terminal.

A real terminal, not a pipe: ``input()`` and the output flushing behave as for a
person at the keyboard, and Ctrl-D / Ctrl-C arrive as the terminal sends them.
"""

from __future__ import annotations

import codecs
import io
import os
import pty
import re
import select
import signal
import sys
import time

import pytest
from django.core.management import CommandError, call_command
from google.adk.events.event import Event
from google.genai import types

from cognizes.infra import command
from demo_agents.weather.offline_model import OfflineWeatherModel
from runtime_app.management.commands.chat import describe
from sessions_app import services
from sessions_app.adk import split_delta, to_new_event
from tests.processes import ROOT, database_env

pytestmark = pytest.mark.django_db(transaction=True)

PROMPT = "you> "
STARTUP_SECONDS = 90  # Django and ADK imports in a fresh process


class Terminal:
    """``manage.py ARGS`` on a pseudo-terminal; reads fail the test after a timeout instead of hanging."""

    def __init__(self, *args: str) -> None:
        env = database_env()
        for key in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):  # the scripted offline model answers
            env.pop(key, None)
        argv = [sys.executable, "manage.py", *args]
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: become the command at once (this process has threads)
            try:
                os.chdir(ROOT)
                os.execve(sys.executable, argv, env)
            finally:
                os._exit(127)
        self.output = ""
        self._seen = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.status: int | None = None

    def read_until(self, marker: str, timeout: float = 60) -> str:
        """The output since the last call, up to and including ``marker``."""
        deadline = time.monotonic() + timeout
        while (end := self.output.find(marker, self._seen)) < 0:
            if not self._read(deadline):
                pytest.fail(f"no {marker!r} in the chat's output:\n{self.output}")
        end += len(marker)
        text, self._seen = self.output[self._seen : end], end
        return text

    def type(self, data: str) -> None:
        os.write(self.fd, data.encode())

    def wait(self, timeout: float = 60) -> tuple[int, str]:
        """Read to the end of the output; the exit status and the output since the last read."""
        deadline = time.monotonic() + timeout
        while self._read(deadline):
            pass
        while (status := os.waitpid(self.pid, os.WNOHANG))[0] == 0:
            if time.monotonic() > deadline:
                pytest.fail(f"the chat did not exit:\n{self.output}")
            time.sleep(0.05)
        self.status = os.waitstatus_to_exitcode(status[1])
        return self.status, self.output[self._seen :]

    def close(self) -> None:
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)

    def _read(self, deadline: float) -> bool:
        """Append what the child wrote; False at its end. Fails the test at ``deadline``."""
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([self.fd], [], [], remaining)[0]:
            pytest.fail(f"the chat went quiet:\n{self.output}")
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed its side of the terminal
            chunk = b""
        # The terminal writes "\r\n" for each "\n".
        self.output += self._decoder.decode(chunk, final=not chunk).replace("\r\n", "\n")
        return bool(chunk)


@pytest.fixture
def terminal():
    opened: list[Terminal] = []

    def open_terminal(*args: str) -> Terminal:
        opened.append(Terminal(*args))
        return opened[-1]

    yield open_terminal
    for each in opened:
        each.close()


def test_a_chat_turn_shows_tool_calls_state_changes_and_the_answer(weather_app, terminal):
    chat = terminal("chat", "weather", "--user", "ada", "--session", "c1")

    banner = chat.read_until(PROMPT, timeout=STARTUP_SECONDS)
    chat.type("What's the weather in London?\n")
    turn = chat.read_until(PROMPT)
    chat.type("\x04")  # Ctrl-D
    status, ending = chat.wait()

    assert "agent weather_assistant, model cognizes-offline-weather" in banner
    assert "Offline model in use (set GOOGLE_API_KEY for Gemini)" in banner
    assert "Session c1 (new) for user ada" in banner
    assert "  → tool load_memory(query='preferred temperature unit celsius or fahrenheit')" in turn
    assert "  ← load_memory: " in turn
    assert "  → tool get_weather(city='London', unit='celsius')" in turn
    assert '  ← get_weather: {"status": "success", "city": "London", "temperature": 15' in turn
    assert "  state: last_city = 'London'" in turn
    assert "weather_assistant> [offline model] It's 15°C and cloudy in London." in turn
    assert turn.index("→ tool load_memory") < turn.index("→ tool get_weather") < turn.index("state: last_city")
    assert status == 0, chat.output
    assert f"To continue: {command.typed('chat', 'weather', '--user', 'ada', '--session', 'c1')}" in ending
    stored = services.get_session(app_name="weather", user_id="ada", session_id="c1")
    assert stored is not None and stored.state["last_city"] == "London"
    assert len(stored.events_json) == 6  # the question, two calls, two results, the answer


def test_a_given_session_is_continued_and_ctrl_c_ends_the_chat(weather_app, terminal):
    created = services.do_create_session(
        app_name="weather", user_id="ada", session_id="c2", delta=split_delta({}), now=time.time()
    )
    hello = Event(author="user", invocation_id="i1", content=types.Content(role="user", parts=[types.Part(text="Hi")]))
    services.do_append_event(
        app_name="weather",
        user_id="ada",
        session_id="c2",
        expected_version=created.version,
        event=to_new_event(hello),
    )
    chat = terminal("chat", "weather", "--user", "ada", "--session", "c2")

    banner = chat.read_until(PROMPT, timeout=STARTUP_SECONDS)
    chat.type("\n")  # an empty line is no turn
    chat.read_until(PROMPT)
    chat.type("\x03")  # Ctrl-C
    status, ending = chat.wait()

    assert "Session c2 for user ada: continuing, 1 event so far" in banner
    assert status == 0, chat.output
    assert "Traceback" not in chat.output
    assert "chat weather --user ada --session c2" in ending
    assert len(services.get_session(app_name="weather", user_id="ada", session_id="c2").events_json) == 1


def test_an_unknown_app_is_an_error_naming_the_registered_ones(weather_app):
    with pytest.raises(CommandError, match=r"No agent is registered for app 'nope'.*Registered apps: weather"):
        call_command("chat", "nope", "--user", "ada")


def test_a_failed_turn_is_reported_and_the_chat_goes_on_until_quit(weather_app, monkeypatch):
    lines = iter(["What's the weather in Tokyo?", "What's the weather in Tokyo?", "/quit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    answer = OfflineWeatherModel.generate_content_async
    failures = iter([RuntimeError("model unreachable")])

    async def flaky(self, llm_request, stream=False):
        if (failure := next(failures, None)) is not None:
            raise failure
        async for response in answer(self, llm_request, stream):
            yield response

    monkeypatch.setattr(OfflineWeatherModel, "generate_content_async", flaky)
    out = io.StringIO()

    call_command("chat", "weather", "--user", "bob", stdout=out)

    shown = out.getvalue()
    assert "error: RuntimeError: model unreachable" in shown
    assert shown.index("model unreachable") < shown.index("It's 18°C and light rain in Tokyo.")
    [hint] = re.findall(r"cognizes chat weather --user bob --session ([0-9a-f]{32})$", shown, re.M)
    assert services.get_session(app_name="weather", user_id="bob", session_id=hint) is not None


def test_describe_skips_partial_chunks_and_thoughts_and_shortens_tool_results():
    def event(*parts: types.Part, **fields) -> Event:
        return Event(author="helper", content=types.Content(role="model", parts=list(parts)), **fields)

    big = types.Part(function_response=types.FunctionResponse(name="search", response={"text": "x" * 500}))
    [line] = describe(event(big))
    assert line.startswith('  ← search: {"text": "xxx') and line.endswith("…") and len(line) < 220

    assert describe(event(types.Part(text="Hel"), partial=True)) == []
    assert describe(event(types.Part(text="thinking…", thought=True), types.Part(text="Hello"))) == ["helper> Hello"]
    assert describe(event(error_code="SAFETY", error_message="blocked")) == ["error: SAFETY blocked"]


def test_a_memory_result_is_shown_without_its_unset_fields():
    from google.adk.memory.memory_entry import MemoryEntry

    memory = MemoryEntry(content=types.Content(role="user", parts=[types.Part(text="I prefer Fahrenheit.")]))
    result = types.Part(function_response=types.FunctionResponse(name="load_memory", response={"memories": [memory]}))
    [line] = describe(Event(author="helper", content=types.Content(role="model", parts=[result])))
    assert "null" not in line and "I prefer Fahrenheit." in line
