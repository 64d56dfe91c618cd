"""The artifacts API: what a session's agents saved, its versions, and their content; uploads.

``user:`` names are the user's and appear in every session of theirs, as in ADK.
A filename may not contain "/" here (one path segment).
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from artifacts_app import services
from artifacts_app.models import ArtifactVersion
from cognizes.access.api import BIGINT, ScopedView, valid
from cognizes.access.parsers import PayloadTooLarge
from cognizes.access.stored_content import inert_response


class VersionSerializer(serializers.ModelSerializer):
    class Meta:
        model = ArtifactVersion
        fields = ["version", "mime_type", "size", "custom_metadata", "create_time"]
        read_only_fields = fields


class ArtifactSerializer(serializers.Serializer):
    filename = serializers.CharField()
    latest = VersionSerializer()


class ArtifactVersionsSerializer(serializers.Serializer):
    filename = serializers.CharField()
    versions = VersionSerializer(many=True)


class UploadedSerializer(serializers.Serializer):
    filename = serializers.CharField()
    version = serializers.IntegerField()


class VersionQuerySerializer(serializers.Serializer):
    version = serializers.IntegerField(required=False, min_value=0, max_value=BIGINT)


def _key(app_name: str, user_id: str, session_id: str, filename: str) -> services.Key:
    return services.Key(app_name, user_id, "" if filename.startswith("user:") else session_id, filename)


class ArtifactsView(ScopedView):
    """The artifacts a session sees (its own and the user's ``user:`` ones), each with its latest version."""

    @extend_schema(operation_id="list_artifacts", responses=ArtifactSerializer(many=True))
    def get(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        latest = services.list_latest(app_name=app_name, user_id=user_id, session_id=session_id)
        return Response(
            [{"filename": version.artifact.filename, "latest": VersionSerializer(version).data} for version in latest]
        )


class ArtifactView(ScopedView):
    """One artifact's versions (metadata only)."""

    @extend_schema(operation_id="get_artifact", responses=ArtifactVersionsSerializer)
    def get(self, request: Request, app_name: str, user_id: str, session_id: str, filename: str) -> Response:
        versions = services.list_versions(_key(app_name, user_id, session_id, filename))
        if not versions:
            raise Http404
        return Response({"filename": filename, "versions": VersionSerializer(versions, many=True).data})


class ArtifactContentView(ScopedView):
    """A version's content with its mime type (the latest unless ``?version=``); POST saves a new version."""

    @extend_schema(
        operation_id="upload_artifact", request={"*/*": OpenApiTypes.BINARY}, responses={201: UploadedSerializer}
    )
    def post(self, request: Request, app_name: str, user_id: str, session_id: str, filename: str) -> Response:
        """The body, as sent, becomes the artifact's next version, with the request's Content-Type as mime type."""
        limit = settings.COGNIZES_ARTIFACT_MAX_BYTES
        if int(request.META.get("CONTENT_LENGTH") or 0) > limit:
            raise PayloadTooLarge(f"The artifact is larger than {limit} bytes.")
        data = request.stream.read(limit + 1) if request.stream is not None else b""
        mime_type = (request.content_type or "application/octet-stream").split(";")[0].strip()
        try:
            version = services.do_save(
                _key(app_name, user_id, session_id, filename),
                part={"inline_data": {"mime_type": mime_type}},
                data=data,
                mime_type=mime_type,
                custom_metadata=None,
                now=time.time(),
            )
        except services.InvalidArtifact as error:
            raise ValidationError({"artifact": [str(error)]}) from error
        except services.ArtifactError as error:
            raise PayloadTooLarge(str(error)) from error
        return Response({"filename": filename, "version": version}, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="download_artifact",
        parameters=[VersionQuerySerializer],
        responses={(200, "*/*"): OpenApiTypes.BINARY},
    )
    def get(self, request: Request, app_name: str, user_id: str, session_id: str, filename: str) -> Any:
        version = valid(VersionQuerySerializer, request.query_params, strict=False).get("version")
        stored = services.get_version(_key(app_name, user_id, session_id, filename), version)
        if stored is None:
            raise Http404
        content = content_of(stored)
        if content is None:
            raise Http404  # a file reference: its content is not stored here (its URI is in the version's part)
        data, mime_type = content
        return inert_response(data, mime_type=mime_type, filename=filename.removeprefix("user:"))


def content_of(stored: ArtifactVersion) -> tuple[bytes, str] | None:
    """A version's bytes and mime type: inline data, or text; None for a file reference."""
    if "inline_data" in stored.part:
        return services.get_data(stored) or b"", stored.mime_type
    if "text" in stored.part:
        return stored.part["text"].encode(), "text/plain; charset=utf-8"
    return None
