"""The domain operations on artifacts: what ADK's service, the admin and the API all call.

A save takes the next version of its artifact in the statement that creates or
bumps the artifact row (``INSERT … ON CONFLICT DO UPDATE … RETURNING``): the row
stays locked until the save commits, so concurrent saves of one name from any
number of processes get distinct, gap-free versions, and a failed save gives its
number back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Field

from artifacts_app.models import Artifact, ArtifactVersion


class ArtifactError(Exception):
    """A save refused (too large, not a kind of part an artifact can be)."""


class InvalidArtifact(ArtifactError):
    """A save refused for what it is named or typed: a name or media type longer than is kept."""


@dataclass(frozen=True)
class Key:
    """Where an artifact lives: ``session_id`` is "" for a user's artifact (a ``user:`` name)."""

    app_name: str
    user_id: str
    session_id: str
    filename: str


_NEXT_VERSION_SQL = """
INSERT INTO artifacts (app_name, user_id, session_id, filename, latest_version, created_at)
VALUES (%s, %s, %s, %s, 0, now())
ON CONFLICT (app_name, user_id, session_id, filename)
DO UPDATE SET latest_version = artifacts.latest_version + 1
RETURNING id, latest_version
"""


def do_save(
    key: Key,
    *,
    part: dict[str, Any],
    data: bytes | None,
    mime_type: str,
    custom_metadata: dict[str, Any] | None,
    now: float,
) -> int:
    """Store a new version (``part`` without its bytes, ``data`` the inline bytes if any) made at ``now``; its
    number."""
    size = len(data) if data is not None else len((part.get("text") or "").encode())
    limit = settings.COGNIZES_ARTIFACT_MAX_BYTES
    if size > limit:
        raise ArtifactError(f"The artifact is {size} bytes; the most one version may hold is {limit}.")
    _check_length(key.filename, "A filename", Artifact)
    _check_length(mime_type or "", "A media type (Content-Type)", ArtifactVersion)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(_NEXT_VERSION_SQL, [key.app_name, key.user_id, key.session_id, key.filename])
            artifact_id, version = cursor.fetchone()
        stored = ArtifactVersion.objects.create(
            artifact_id=artifact_id,
            version=version,
            mime_type=mime_type or "",
            size=size,
            custom_metadata=dict(custom_metadata or {}),
            part=part,
            create_time=now,
        )
        if data is not None:
            with _binary_cursor() as cursor:
                cursor.execute("INSERT INTO artifact_contents (version_id, data) VALUES (%s, %b)", [stored.pk, data])
    return version


def _check_length(value: str, label: str, model: type[Artifact] | type[ArtifactVersion]) -> None:
    """Refuse text longer than its column, naming the limit (PostgreSQL's DataError was a 500: issue 41 K)."""
    field = model._meta.get_field("filename" if model is Artifact else "mime_type")
    assert isinstance(field, Field)  # a column, not a relation
    limit = field.max_length
    if limit is not None and len(value) > limit:
        raise InvalidArtifact(f"{label} may have at most {limit} characters (this one has {len(value)}).")


def get_version(key: Key, version: int | None = None) -> ArtifactVersion | None:
    """A version's metadata (the latest with ``version`` None), or None."""
    versions = ArtifactVersion.objects.filter(
        artifact__app_name=key.app_name,
        artifact__user_id=key.user_id,
        artifact__session_id=key.session_id,
        artifact__filename=key.filename,
    )
    if version is None:
        return versions.order_by("-version").first()
    return versions.filter(version=version).first()


def get_data(version: ArtifactVersion) -> bytes | None:
    """The inline bytes of a version (None for text and file references)."""
    with _binary_cursor() as cursor:
        cursor.execute("SELECT data FROM artifact_contents WHERE version_id = %s", [version.pk], binary=True)
        row = cursor.fetchone()
    return bytes(row[0]) if row is not None else None


def _binary_cursor() -> psycopg.Cursor:
    """A cursor on Django's connection (and transaction) that moves bytes as binary.

    Django's own binds parameters client-side, spelling 20 MB out as 40 MB of
    hex in the query text and back: a second per save (bench/artifacts.py).
    """
    connection.ensure_connection()
    return psycopg.Cursor(connection.connection)


def list_versions(key: Key) -> list[ArtifactVersion]:
    """Every version's metadata, oldest first (no content is read)."""
    return list(
        ArtifactVersion.objects.filter(
            artifact__app_name=key.app_name,
            artifact__user_id=key.user_id,
            artifact__session_id=key.session_id,
            artifact__filename=key.filename,
        ).order_by("version")
    )


def list_filenames(*, app_name: str, user_id: str, session_id: str | None) -> list[str]:
    """The user's artifact names, and the session's too when one is given; sorted."""
    return sorted(_visible(app_name, user_id, session_id).values_list("filename", flat=True))


def list_latest(*, app_name: str, user_id: str, session_id: str | None) -> list[ArtifactVersion]:
    """The latest version of each artifact ``list_filenames`` names, by name, in one query (no content read)."""
    artifacts = _visible(app_name, user_id, session_id)
    return list(
        ArtifactVersion.objects.filter(artifact__in=artifacts, version=F("artifact__latest_version"))
        .select_related("artifact")
        .order_by("artifact__filename")
    )


def _visible(app_name: str, user_id: str, session_id: str | None):
    sessions = [""] + ([session_id] if session_id else [])
    return Artifact.objects.filter(app_name=app_name, user_id=user_id, session_id__in=sessions)


def do_delete(key: Key) -> bool:
    """Delete the artifact with every version; False if there was none."""
    deleted, _ = Artifact.objects.filter(
        app_name=key.app_name, user_id=key.user_id, session_id=key.session_id, filename=key.filename
    ).delete()
    return deleted > 0
