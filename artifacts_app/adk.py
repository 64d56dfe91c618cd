"""``PostgresArtifactService``: ADK's ``BaseArtifactService`` on PostgreSQL.

The same rules as ADK's own services (InMemory, File, GCS): a ``user:`` name is
the user's, seen from every session; any other name belongs to one session;
versions count from 0; inline data, text and file-data parts round-trip
unchanged; an ``artifact://`` file-data part is a reference to another artifact
of the same scope, followed on load. A thin adapter over
``artifacts_app.services``, run on ``cognizes.infra.db_threads``.
"""

from __future__ import annotations

from typing import Any, cast

from google.adk.artifacts import artifact_util
from google.adk.artifacts.base_artifact_service import ArtifactVersion, BaseArtifactService, ensure_part
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.platform import time as platform_time
from google.genai import types
from typing_extensions import override

from artifacts_app import services
from artifacts_app.models import ArtifactVersion as StoredVersion
from cognizes.infra.db_threads import run_in_db_thread


class PostgresArtifactService(BaseArtifactService):
    """Artifacts in PostgreSQL, shared by every process; metadata and bytes stored apart."""

    @override
    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: types.Part | dict[str, Any],
        session_id: str | None = None,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        session_id = _trimmed(session_id)
        key = _key(app_name, user_id, filename, session_id)
        part = ensure_part(artifact)
        data, mime_type = None, None
        if part.inline_data is not None:
            data, mime_type = part.inline_data.data or b"", part.inline_data.mime_type
        elif part.text is not None:
            mime_type = "text/plain"
        elif part.file_data is not None:
            if artifact_util.is_artifact_ref(part):
                parsed = artifact_util.parse_artifact_uri(cast(str, part.file_data.file_uri))
                if not parsed:
                    raise InputValidationError(f"Invalid artifact reference URI: {part.file_data.file_uri}")
                artifact_util.validate_artifact_reference_scope(
                    app_name=app_name, user_id=user_id, session_id=session_id, parsed_uri=parsed
                )
            else:
                mime_type = part.file_data.mime_type
        else:
            raise InputValidationError("Not supported artifact type.")
        stored = part.model_dump(mode="json", exclude_none=True)
        if data is not None:
            stored["inline_data"].pop("data", None)
        try:
            return await run_in_db_thread(
                services.do_save,
                key,
                part=stored,
                data=data,
                mime_type=mime_type or "",
                custom_metadata=custom_metadata,
                now=platform_time.get_time(),
            )
        except services.ArtifactError as error:
            raise InputValidationError(str(error)) from error

    @override
    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> types.Part | None:
        session_id = _trimmed(session_id)
        return await self._load(
            app_name, user_id, filename, session_id, version, artifact_util._MAX_ARTIFACT_REFERENCE_DEPTH
        )

    async def _load(
        self,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None,
        version: int | None,
        remaining_depth: int,
    ) -> types.Part | None:
        key = _key(app_name, user_id, filename, session_id)
        stored = await run_in_db_thread(services.get_version, key, version)
        if stored is None:
            return None
        part = types.Part.model_validate(stored.part)
        if artifact_util.is_artifact_ref(part):
            assert part.file_data is not None  # a reference is file data
            target = artifact_util.resolve_artifact_reference(
                file_uri=cast(str, part.file_data.file_uri),
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                remaining_depth=remaining_depth,
            )
            return await self._load(
                target.app_name, target.user_id, target.filename, target.session_id, target.version, remaining_depth - 1
            )
        if part.inline_data is not None:
            part.inline_data.data = await run_in_db_thread(services.get_data, stored)
        if part == types.Part() or artifact_util._is_rewind_tombstone(part):
            return None
        return part

    @override
    async def list_artifact_keys(self, *, app_name: str, user_id: str, session_id: str | None = None) -> list[str]:
        session_id = _trimmed(session_id)
        artifact_util.validate_path_segment(app_name, "app_name")
        artifact_util.validate_path_segment(user_id, "user_id")
        if session_id is not None:
            artifact_util.validate_path_segment(session_id, "session_id")
        return await run_in_db_thread(
            services.list_filenames, app_name=app_name, user_id=user_id, session_id=session_id
        )

    @override
    async def delete_artifact(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> None:
        session_id = _trimmed(session_id)
        await run_in_db_thread(services.do_delete, _key(app_name, user_id, filename, session_id))

    @override
    async def list_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[int]:
        session_id = _trimmed(session_id)
        versions = await run_in_db_thread(services.list_versions, _key(app_name, user_id, filename, session_id))
        return [stored.version for stored in versions]

    @override
    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[ArtifactVersion]:
        session_id = _trimmed(session_id)
        key = _key(app_name, user_id, filename, session_id)
        return [_to_adk(key, stored) for stored in await run_in_db_thread(services.list_versions, key)]

    @override
    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> ArtifactVersion | None:
        session_id = _trimmed(session_id)
        key = _key(app_name, user_id, filename, session_id)
        stored = await run_in_db_thread(services.get_version, key, version)
        return _to_adk(key, stored) if stored is not None else None


def _trimmed(session_id: str | None) -> str | None:
    """A session id as the session service stores it (trimmed), so a padded id names the same session's artifacts."""
    return session_id.strip() if session_id is not None else None


def _key(app_name: str, user_id: str, filename: str, session_id: str | None) -> services.Key:
    """Where ``filename`` lives: the user's (``user:`` names) or the session's, validated as ADK's services do."""
    artifact_util.validate_path_segment(app_name, "app_name")
    artifact_util.validate_path_segment(user_id, "user_id")
    if filename.startswith("user:"):
        return services.Key(app_name, user_id, "", filename)
    if session_id is None:
        raise InputValidationError("Session ID must be provided for session-scoped artifacts.")
    artifact_util.validate_path_segment(session_id, "session_id")
    return services.Key(app_name, user_id, session_id, filename)


def _to_adk(key: services.Key, stored: StoredVersion) -> ArtifactVersion:
    return ArtifactVersion(
        version=stored.version,
        canonical_uri=artifact_util.get_artifact_uri(
            app_name=key.app_name,
            user_id=key.user_id,
            filename=key.filename,
            version=stored.version,
            session_id=key.session_id or None,
        ),
        custom_metadata=stored.custom_metadata,
        create_time=stored.create_time,
        mime_type=stored.mime_type or None,
    )
