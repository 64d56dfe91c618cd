"""A user erased (``sessions_app.signals.user_erased``): their artifacts go too, every version and its bytes."""

from __future__ import annotations

from typing import Any

from artifacts_app.models import Artifact
from sessions_app.signals import rows_by_kind, user_erased


def erase_user(*, app_name: str, user_id: str, **_: Any) -> dict[str, int]:
    return rows_by_kind(Artifact.objects.filter(app_name=app_name, user_id=user_id).delete())


def connect() -> None:
    user_erased.connect(erase_user, dispatch_uid="artifacts_app.erase_user")
