"""A user erased (``sessions_app.signals.user_erased``): their tool calls, approvals, sandbox runs, sandboxes (rows,
interpreters and files) and stored credentials (OAuth tokens) go too; an app erased (its engine deleted with
``force``, ``sessions_app.signals.app_erased``): every user's of them, those of users without a session too, and
the app's sandbox templates."""

from __future__ import annotations

from typing import Any

from sessions_app.signals import app_erased, rows_by_kind, user_erased
from tools_app import sandbox_templates
from tools_app.models import SandboxExecution, ToolApproval, ToolExecution, UserCredential
from tools_app.sandboxes import erase_owner


def erase_user(*, app_name: str, user_id: str | None, **_: Any) -> dict[str, int]:
    """The user's rows of each kind (``user_id`` None: every user's of the app)."""
    whose = {"app_name": app_name} if user_id is None else {"app_name": app_name, "user_id": user_id}
    erased: dict[str, int] = {}
    for model in (ToolExecution, ToolApproval, SandboxExecution, UserCredential):
        erased.update(rows_by_kind(model.objects.filter(**whose).delete()))
    erased.update(rows_by_kind(erase_owner(app_name=app_name, user_id=user_id)))
    return erased


def erase_app(*, app_name: str, **_: Any) -> dict[str, int]:
    """Every user's rows, and the app's own: its sandbox templates."""
    return {**erase_user(app_name=app_name, user_id=None), **rows_by_kind(sandbox_templates.erase_app(app_name))}


def connect() -> None:
    user_erased.connect(erase_user, dispatch_uid="tools_app.erase_user")
    app_erased.connect(erase_app, dispatch_uid="tools_app.erase_app")
