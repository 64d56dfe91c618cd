"""A user erased (``sessions_app.signals.user_erased``): their tool calls, approvals, sandbox runs and sandboxes (rows,
interpreters and files) go too."""

from __future__ import annotations

from typing import Any

from sessions_app.signals import rows_by_kind, user_erased
from tools_app.models import SandboxExecution, ToolApproval, ToolExecution
from tools_app.sandboxes import erase_owner


def erase_user(*, app_name: str, user_id: str, **_: Any) -> dict[str, int]:
    erased: dict[str, int] = {}
    for model in (ToolExecution, ToolApproval, SandboxExecution):
        erased.update(rows_by_kind(model.objects.filter(app_name=app_name, user_id=user_id).delete()))
    erased.update(rows_by_kind(erase_owner(app_name=app_name, user_id=user_id)))
    return erased


def connect() -> None:
    user_erased.connect(erase_user, dispatch_uid="tools_app.erase_user")
