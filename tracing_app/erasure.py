"""A user erased (``sessions_app.signals.user_erased``): the traces of their runs go too, with their spans."""

from __future__ import annotations

from typing import Any

from sessions_app.signals import rows_by_kind, user_erased
from tracing_app.models import Trace


def erase_user(*, app_name: str, user_id: str, **_: Any) -> dict[str, int]:
    return rows_by_kind(Trace.objects.filter(app_name=app_name, user_id=user_id).delete())


def connect() -> None:
    user_erased.connect(erase_user, dispatch_uid="tracing_app.erase_user")
