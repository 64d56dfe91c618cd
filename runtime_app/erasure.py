"""A user erased (``sessions_app.signals.user_erased``): their A2A tasks go too."""

from __future__ import annotations

from typing import Any

from runtime_app.models import A2aTask
from sessions_app.signals import rows_by_kind, user_erased


def erase_user(*, app_name: str, user_id: str, **_: Any) -> dict[str, int]:
    return rows_by_kind(A2aTask.objects.filter(app_name=app_name, user_id=user_id).delete())


def connect() -> None:
    user_erased.connect(erase_user, dispatch_uid="runtime_app.erase_user")
