"""Session, user and app state edited directly (by a person, the API or Vertex), compare-and-swap on version."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection, transaction

from sessions_app.services.base import SessionError, StaleState, _json, _live, _raise_missing_or_stale, check_key


def do_replace_session_state(
    *, app_name: str, user_id: str, session_id: str, state: dict[str, Any], expected_version: int
) -> int:
    """Replace the session-scoped state (an edit by a person), compare-and-swap on version.

    Bumping the version makes an agent holding an older copy of the session stale,
    so it reloads instead of overwriting the edit.
    """
    check_scoped_state(state)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE sessions SET state = %s::jsonb, version = version + 1
            WHERE app_name = %s AND user_id = %s AND session_id = %s AND version = %s
              AND {_live()}
            RETURNING version
            """,
            [json.dumps(state), app_name, user_id, session_id, expected_version],
        )
        row = cursor.fetchone()
    if row is None:
        _raise_missing_or_stale(app_name=app_name, user_id=user_id, session_id=session_id)
    return row[0]


def get_app_state(*, app_name: str) -> tuple[dict[str, Any], int]:
    """The app's shared state and its version (0 if nothing was ever stored)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT state, version FROM app_states WHERE app_name = %s", [app_name])
        row = cursor.fetchone()
    return (_json(row[0]), row[1]) if row else ({}, 0)


def get_user_state(*, app_name: str, user_id: str) -> tuple[dict[str, Any], int]:
    """The user's shared state and its version (0 if nothing was ever stored)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT state, version FROM user_states WHERE app_name = %s AND user_id = %s",
            [app_name, user_id],
        )
        row = cursor.fetchone()
    return (_json(row[0]), row[1]) if row else ({}, 0)


def do_replace_app_state(*, app_name: str, state: dict[str, Any], expected_version: int) -> int:
    """Replace an app's shared state if it is still at ``expected_version`` (0: never stored)."""
    check_key("app_name", app_name)
    check_scoped_state(state)
    return _replace_shared_state(
        table="app_states", keys={"app_name": app_name}, state=state, expected_version=expected_version
    )


def do_replace_user_state(*, app_name: str, user_id: str, state: dict[str, Any], expected_version: int) -> int:
    """Replace a user's shared state if it is still at ``expected_version`` (0: never stored)."""
    check_key("app_name", app_name)
    check_key("user_id", user_id)
    check_scoped_state(state)
    return _replace_shared_state(
        table="user_states",
        keys={"app_name": app_name, "user_id": user_id},
        state=state,
        expected_version=expected_version,
    )


def _replace_shared_state(*, table: str, keys: dict[str, str], state: dict[str, Any], expected_version: int) -> int:
    columns = ", ".join(keys)
    placeholders = ", ".join(["%s"] * len(keys))
    with transaction.atomic(), connection.cursor() as cursor:
        if expected_version == 0:
            cursor.execute(
                f"INSERT INTO {table} ({columns}, state, version, update_time) "
                f"VALUES ({placeholders}, %s::jsonb, 1, now()) ON CONFLICT DO NOTHING RETURNING version",
                [*keys.values(), json.dumps(state)],
            )
        else:
            where = " AND ".join(f"{column} = %s" for column in keys)
            cursor.execute(
                f"UPDATE {table} SET state = %s::jsonb, version = version + 1, update_time = now() "
                f"WHERE {where} AND version = %s RETURNING version",
                [json.dumps(state), *keys.values(), expected_version],
            )
        row = cursor.fetchone()
    if row is None:
        raise StaleState("The state was changed by someone else since it was loaded; reload and retry.")
    return row[0]


def check_scoped_state(state: Any) -> None:
    """Reject non-objects and prefixed keys in state stored for one scope."""
    if not isinstance(state, dict):
        raise SessionError("State must be a JSON object.")
    prefixed = sorted(key for key in state if key.startswith(("app:", "user:", "temp:")))
    if prefixed:
        raise SessionError(f"Keys with a scope prefix do not belong in this state: {', '.join(prefixed)}.")


def do_patch_session_state(
    *, app_name: str, user_id: str, session_id: str, patch: dict[str, Any], expected_version: int
) -> int:
    """Merge-patch the session state (null removes a key) if still at ``expected_version``."""
    check_scoped_state(patch)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE sessions SET state = (state || %s::jsonb) - %s::text[], version = version + 1
            WHERE app_name = %s AND user_id = %s AND session_id = %s AND version = %s
              AND {_live()}
            RETURNING version
            """,
            [*_merge_patch(patch), app_name, user_id, session_id, expected_version],
        )
        row = cursor.fetchone()
    if row is None:
        _raise_missing_or_stale(app_name=app_name, user_id=user_id, session_id=session_id)
    return row[0]


def do_patch_app_state(*, app_name: str, patch: dict[str, Any], expected_version: int) -> int:
    """Merge-patch an app's shared state (null removes a key) if still at ``expected_version``."""
    state, version = get_app_state(app_name=app_name)
    if version != expected_version:
        raise StaleState("The state was changed by someone else since it was loaded; reload and retry.")
    return do_replace_app_state(app_name=app_name, state=_apply_patch(state, patch), expected_version=version)


def do_patch_user_state(*, app_name: str, user_id: str, patch: dict[str, Any], expected_version: int) -> int:
    """Merge-patch a user's shared state (null removes a key) if still at ``expected_version``."""
    state, version = get_user_state(app_name=app_name, user_id=user_id)
    if version != expected_version:
        raise StaleState("The state was changed by someone else since it was loaded; reload and retry.")
    return do_replace_user_state(
        app_name=app_name, user_id=user_id, state=_apply_patch(state, patch), expected_version=version
    )


def _merge_patch(patch: dict[str, Any]) -> tuple[str, list[str]]:
    """RFC 7386 at the top level: the keys to set (as JSON) and the keys to remove."""
    return (
        json.dumps({key: value for key, value in patch.items() if value is not None}),
        [key for key, value in patch.items() if value is None],
    )


def _apply_patch(state: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    check_scoped_state(patch)
    merged = {**state, **{key: value for key, value in patch.items() if value is not None}}
    return {key: value for key, value in merged.items() if patch.get(key, 0) is not None}
