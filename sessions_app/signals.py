"""What sessions_app tells the apps above it, without knowing them (memory_app listens)."""

from __future__ import annotations

from dataclasses import dataclass

from django.dispatch import Signal


@dataclass(frozen=True)
class DeletedSession:
    app_name: str
    user_id: str
    session_id: str
    event_ids: tuple[str, ...]


sessions_deleted = Signal()
"""Sent once a deletion has committed — through ADK, the API, the admin or expiry — with ``sessions``:
the ``DeletedSession`` of each session that went."""
