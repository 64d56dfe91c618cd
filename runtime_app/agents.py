"""The agents this deployment serves, from ``COGNIZES_AGENTS`` ("app=dotted.path" pairs).

The HTTP run endpoints and ``manage.py chat`` find agents here by app name;
only paths listed in settings are ever imported, never one from a request.
One Runner per app per process, built on first use.
"""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string
from google.adk.agents.base_agent import BaseAgent
from google.adk.runners import Runner

from runtime_app.runner import runner_for

_lock = threading.Lock()
_runners: dict[str, Runner] = {}


class UnknownAgent(LookupError):
    """No agent is registered under this app name."""


def registered_apps() -> list[str]:
    return sorted(settings.COGNIZES_AGENTS)


def get_runner(app_name: str) -> Runner:
    """The Runner serving ``app_name`` (``UnknownAgent`` if none is registered)."""
    path = settings.COGNIZES_AGENTS.get(app_name)
    if path is None:
        raise UnknownAgent(f"No agent is registered for app {app_name!r} (COGNIZES_AGENTS).")
    with _lock:
        if app_name not in _runners:
            _runners[app_name] = _build(app_name, _import(path))
        return _runners[app_name]


def _import(path: str) -> Any:
    try:
        return import_string(path)
    except ImportError as error:
        raise ImportError(f"COGNIZES_AGENTS: {path!r} cannot be imported: {error}") from error


def _build(app_name: str, target: Any) -> Runner:
    if isinstance(target, BaseAgent):
        return runner_for(target, app_name=app_name)
    runner = target if isinstance(target, Runner) else target() if callable(target) else None
    if not isinstance(runner, Runner):
        raise TypeError(
            f"COGNIZES_AGENTS[{app_name!r}] is neither an agent nor a Runner (or a function returning one)."
        )
    if runner.app_name != app_name:
        raise ValueError(f"COGNIZES_AGENTS[{app_name!r}] gives a Runner for app {runner.app_name!r}.")
    return runner


def forget_runners() -> None:
    """Drop the built Runners (tests, or after changing COGNIZES_AGENTS)."""
    with _lock:
        _runners.clear()
