"""A user erased (``sessions_app.signals.user_erased``): the documents uploaded with their keys go too.

A document uploaded with a key of one user is that user's (issue 41 H), so it is their data as their sessions
are; the app's documents, which every user reads, stay.
"""

from __future__ import annotations

from typing import Any

from knowledge_app.models import Document
from sessions_app.signals import rows_by_kind, user_erased


def erase_user(*, app_name: str, user_id: str, **_: Any) -> dict[str, int]:
    return rows_by_kind(Document.objects.filter(app_name=app_name, user_id=user_id).delete())


def connect() -> None:
    user_erased.connect(erase_user, dispatch_uid="knowledge_app.erase_user")
