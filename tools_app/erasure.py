"""A user erased (``sessions_app.signals.user_erased``): their tool calls, approvals, sandbox runs and stored
credentials (OAuth tokens) go too."""

from __future__ import annotations

from typing import Any

from sessions_app.signals import rows_by_kind, user_erased
from tools_app.models import SandboxExecution, ToolApproval, ToolExecution, UserCredential


def erase_user(*, app_name: str, user_id: str, **_: Any) -> dict[str, int]:
    erased: dict[str, int] = {}
    for model in (ToolExecution, ToolApproval, SandboxExecution, UserCredential):
        erased.update(rows_by_kind(model.objects.filter(app_name=app_name, user_id=user_id).delete()))
    return erased


def connect() -> None:
    user_erased.connect(erase_user, dispatch_uid="tools_app.erase_user")
