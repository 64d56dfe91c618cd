"""Skills: Vertex's v1beta1 ``skills`` (agentplatform 2.6's ``client.skills``) and the Agent Registry's v1alpha ones
(ADK's ``GCPSkillRegistry``), on tools_app's skills.

The skills are the caller's key's app's, as the app's agent and MCP servers in the Agent Registry are (the project
and location are taken as given). agentplatform creates (``?skillId``, the zip base64 in ``zippedFilesystem``),
gets, lists, updates (``updateMask``), deletes, retrieves by meaning (``skills:retrieve?query``) and reads
revisions, polling each write's operation once (done at once here). ADK's registry searches
(``POST skills:search {"search_string"}``, or GET), gets a skill for its ``defaultRevision`` and downloads that
revision's zip (``?alt=media``), served inert. Any key of the app reads; changing takes a key of the whole app.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from django.http import HttpResponse
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import check_scope, check_url, parse_id
from cognizes.access.key_kinds import check_whole_app
from cognizes.access.models import ApiKey
from tools_app import skills
from tools_app.skill_models import Skill, SkillRevision
from tools_app.skill_zips import MAX_ZIP_BYTES
from vertex_app import errors, names, registry_filters, wire
from vertex_app.base import EMPTY, VertexSurface, operation, page

_SKILL: wire.Spec = {
    "name": None,
    "display_name": None,
    "description": None,
    "zipped_filesystem": None,
    "labels": None,
    "license": None,
    "compatibility": None,
    "state": None,
    "create_time": None,
    "update_time": None,
    "sha256": None,
    "skill_source": None,
}
_UPDATABLE = {"display_name", "description", "zipped_filesystem", "labels", "state"}
_FILTER_FIELDS = {"name", "displayName", "description", "state", "labels"}


class SkillSurface(VertexSurface):
    """What every skills path shares: the key's app, the names in the caller's spelling."""

    reads_only = False

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        check_url(request, kwargs)
        if not isinstance(request.auth, ApiKey):
            raise exceptions.NotAuthenticated("Skills take a Cognizes API key.")
        self.app_name = request.auth.app_name
        caller = check_scope(request, self.app_name, None, write=False if self.reads_only else None)
        if request.method not in ("GET", "HEAD") and not self.reads_only:
            check_whole_app(caller.only_user, self.app_name, "change the app's skills")
        self.prefix = names.location_prefix(kwargs.get("project"), kwargs.get("location"))

    def skill(self, skill_id: str) -> Skill:
        found = skills.get_skill(app_name=self.app_name, skill_id=skill_id) if len(skill_id) <= 256 else None
        if found is None:
            raise errors.NotFound(f"skills/{skill_id} does not exist.")
        return found

    def skill_name(self, skill: Skill) -> str:
        return f"{self.prefix}skills/{skill.skill_id}"

    def revision_name(self, revision: SkillRevision) -> str:
        return f"{self.skill_name(revision.skill)}/revisions/{revision.pk}"

    def skill_json(self, skill: Skill) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.skill_name(skill),
            "displayName": skill.display_name,
            "description": skill.description,
            "state": "ACTIVE" if skill.state != "DISABLED" else "FAILED",
            "skillSource": "USER",
            "createTime": wire.rfc3339(skill.create_time),
            "updateTime": wire.rfc3339(skill.update_time),
        }
        for field in ("license", "compatibility", "labels"):
            if getattr(skill, field):
                out[field] = getattr(skill, field)
        revision = skills.default_revision(skill)
        if revision is not None:
            out["defaultRevision"] = f"{self.skill_name(skill)}/revisions/{revision[0]}"
            out["sha256"] = revision[1]
        return out

    def revision(self, skill: Skill, revision_id: str) -> SkillRevision:
        number = parse_id(revision_id)
        found = skills.get_revision(skill, number) if number is not None and number < 2**63 else None
        if found is None:
            raise errors.NotFound(f"revisions/{revision_id} does not exist.")
        return found

    def revision_json(self, revision: SkillRevision) -> dict[str, Any]:
        return {
            "name": self.revision_name(revision),
            "createTime": wire.rfc3339(revision.create_time),
            "skill": self.skill_json(revision.skill),
            "state": "ACTIVE",
        }

    def done(self, skill: Skill, response: dict[str, Any] | None = None, kind: str | None = "Skill") -> Response:
        name = names.operation(self.skill_name(skill))
        return Response(operation(name, response if response is not None else self.skill_json(skill), kind=kind))


def _zip(value: Any) -> bytes:
    """``zippedFilesystem``: the zip, base64 (either alphabet), bounded before it is decoded."""
    text = wire.string(value, "zippedFilesystem", required=True)
    if len(text) > MAX_ZIP_BYTES * 4 // 3 + 8:
        raise errors.InvalidArgument(f"A skill's zip is at most {MAX_ZIP_BYTES // 1024} KB.")
    try:
        return base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        raise errors.InvalidArgument("zippedFilesystem is not base64.") from None


def _refused(error: skills.SkillError) -> errors.GoogleError:
    if isinstance(error, skills.SkillExists):
        return errors.AlreadyExists(str(error))
    return errors.InvalidArgument(str(error))


class SkillsView(SkillSurface):
    """``skills``: create a skill from its zip, list the app's."""

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Create a skill from a zip of SKILL.md and its files (skillId in the query)."""
        body = wire.message(request.data, _SKILL)
        try:
            skill = skills.do_create_skill(
                app_name=self.app_name,
                skill_id=wire.string(request.query_params.get("skillId"), "skillId", required=True),
                zipped=_zip(body.get("zipped_filesystem")),
                display_name=wire.string(body.get("display_name"), "displayName"),
                description=wire.string(body.get("description"), "description"),
            )
        except skills.SkillError as error:
            raise _refused(error) from error
        return self.done(skill)

    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the app's skills (filter, pageSize, pageToken)."""
        keep = registry_filters.parse(request.query_params.get("filter"), fields=_FILTER_FIELDS)
        records = [record for record in map(self.skill_json, skills.skills_of(self.app_name)) if keep(record)]
        return Response(page(request, records, "skills", lambda record: record))


class RetrieveSkillsView(SkillSurface):
    """``skills:retrieve``: the app's skills nearest a query in meaning."""

    def get(self, request: Request, **kwargs: Any) -> Response:
        """Find the skills whose descriptions are nearest the query (topK, 10 by default)."""
        query = request.query_params.get("query") or ""
        top_k = wire.integer(request.query_params.get("topK"), "topK", default=10, low=1, high=100)
        try:
            found = skills.search_skills(app_name=self.app_name, query=query, top_k=top_k)
        except skills.SkillError as error:
            raise _refused(error) from error
        return Response(
            {"retrievedSkills": [{"skillName": self.skill_name(s), "description": s.description} for s, _ in found]}
        )


class SkillView(SkillSurface):
    """``skills/{id}``: get, update, delete."""

    def get(self, request: Request, skill_id: str, **kwargs: Any) -> Response:
        """Read a skill (its defaultRevision is the newest upload)."""
        return Response(self.skill_json(self.skill(skill_id)))

    def patch(self, request: Request, skill_id: str, **kwargs: Any) -> Response:
        """Change a skill's display name, description, labels or state; a new zip makes a new revision."""
        body = wire.message(request.data, _SKILL)
        mask = wire.field_mask(request.query_params.get("updateMask"), _UPDATABLE)
        fields = mask if mask is not None else _UPDATABLE & {k for k, v in body.items() if v is not None}
        skill = self.skill(skill_id)
        changes: dict[str, Any] = {}
        for field in fields - {"zipped_filesystem"}:
            value = body.get(field)
            changes[field] = wire.mapping(value, "labels") if field == "labels" else wire.string(value, field)
        zipped = _zip(body.get("zipped_filesystem")) if "zipped_filesystem" in fields else None
        try:
            skills.do_update_skill(skill, changes, zipped=zipped)
        except skills.SkillError as error:
            raise _refused(error) from error
        return self.done(skill)

    def delete(self, request: Request, skill_id: str, **kwargs: Any) -> Response:
        """Delete a skill and its revisions."""
        skill = self.skill(skill_id)
        name = self.skill_name(skill)
        skills.do_delete_skill(skill)
        return Response(operation(names.operation(name), kind=EMPTY))


class SkillOperationView(SkillSurface):
    """``skills/{id}/operations/{op}``: a skill's writes are done when they return (a deleted skill's too)."""

    def get(self, request: Request, skill_id: str, operation_id: str, **kwargs: Any) -> Response:
        """Read an operation of a skill."""
        if not names.issued_operation(operation_id):
            raise errors.NotFound(f"Operation {operation_id} does not exist.")
        found = skills.get_skill(app_name=self.app_name, skill_id=skill_id) if len(skill_id) <= 256 else None
        name = names.operation(f"{self.prefix}skills/{skill_id}", operation_id)
        if found is None:
            return Response(operation(name, kind=EMPTY))
        return Response(operation(name, self.skill_json(found), kind="Skill"))


class SkillRevisionsView(SkillSurface):
    """``skills/{id}/revisions``: every upload of a skill, newest first."""

    def get(self, request: Request, skill_id: str, **kwargs: Any) -> Response:
        """List a skill's revisions, newest first."""
        skill = self.skill(skill_id)
        return Response(page(request, skill.revisions.order_by("-id"), "skillRevisions", self.revision_json))


class SkillRevisionView(SkillSurface):
    """``skills/{id}/revisions/{rev}``: one upload; ``?alt=media`` is its zip."""

    def get(self, request: Request, skill_id: str, revision_id: str, **kwargs: Any) -> Any:
        """Read a skill revision, or download its zip with alt=media."""
        skill = self.skill(skill_id)
        revision = self.revision(skill, revision_id)
        if request.query_params.get("alt") == "media":
            return _zip_response(skill, revision)
        return Response(self.revision_json(revision))


def _zip_response(skill: Skill, revision: SkillRevision) -> HttpResponse:
    """The zip, served inert: an attachment that no browser sniffs or runs."""
    if not skills.downloadable(skill):
        raise errors.FailedPrecondition(f"Skill {skill.skill_id} is {skill.state.lower()}: its zip is not served.")
    response = HttpResponse(bytes(revision.zipped), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{skill.skill_id}-{revision.pk}.zip"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox"
    return response


class RegistrySearchSkillsView(SkillSurface):
    """Agent Registry v1alpha ``skills:search`` (ADK's ``GCPSkillRegistry.search_skills``)."""

    reads_only = True

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Search the app's skills by meaning (search_string in the body)."""
        body = wire.message(request.data, {"search_string": None, "page_size": None})
        return self.search(wire.string(body.get("search_string"), "search_string", required=True))

    def get(self, request: Request, **kwargs: Any) -> Response:
        """Search the app's skills by meaning (search_string in the query)."""
        text = request.query_params.get("search_string") or request.query_params.get("searchString")
        return self.search(wire.string(text, "search_string", required=True))

    def search(self, text: str) -> Response:
        try:
            found = skills.search_skills(app_name=self.app_name, query=text, top_k=20)
        except skills.SkillError as error:
            raise _refused(error) from error
        return Response(
            {
                "skills": [
                    {"name": self.skill_name(s), "displayName": s.display_name, "description": s.description}
                    for s, _ in found
                ]
            }
        )


class RegistrySkillView(SkillSurface):
    """Agent Registry v1alpha ``skills/{id}``: the skill and its ``defaultRevision``, relative to the API's base."""

    def get(self, request: Request, skill_id: str, **kwargs: Any) -> Response:
        """Read a skill of the Agent Registry, with the revision to download."""
        return Response(self.skill_json(self.skill(skill_id)))


class RegistrySkillRevisionView(SkillRevisionView):
    """Agent Registry v1alpha ``skills/{id}/revisions/{rev}``: ``?alt=media`` is the zip ADK loads."""

    def get(self, request: Request, skill_id: str, revision_id: str, **kwargs: Any) -> Any:
        """Download a skill revision's zip (alt=media), or read the revision."""
        return super().get(request, skill_id, revision_id, **kwargs)
