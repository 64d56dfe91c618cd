"""Skill rules (issue 47 item 5): uploaded, changed, found by meaning, deleted; every upload a checked revision.

The API (Vertex's v1beta1 ``skills`` and the Agent Registry's v1alpha ones) and the admin call these. A skill's
display name and description default to its SKILL.md's ``name`` and ``description``; search embeds the query with
the memories' embedder and ranks skills by the cosine to their descriptions.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import OuterRef, QuerySet, Subquery
from pgvector.django import CosineDistance

from cognizes.infra.embedders import get_embedder
from tools_app.skill_models import Skill, SkillRevision, SkillState
from tools_app.skill_zips import SkillZipError, check_skill_zip

SKILL_ID = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$")
"""What ADK's ``GCPSkillRegistry`` accepts as a skill's id (before it sends any request)."""
MAX_SKILL_ID = 63
MAX_DESCRIPTION = 1024
CHANGEABLE = frozenset({"display_name", "description", "labels", "state"})


class SkillError(ValueError):
    """What was sent is not a skill Cognizes stores (400 on the surfaces)."""


class SkillExists(SkillError):
    pass


def check_skill_id(skill_id: str) -> str:
    if not isinstance(skill_id, str) or not 0 < len(skill_id) <= MAX_SKILL_ID or not SKILL_ID.match(skill_id):
        raise SkillError(
            f"A skill id is 1 to {MAX_SKILL_ID} lowercase letters and digits, joined by single '.', '_' or '-'."
        )
    return skill_id


def skills_of(app_name: str) -> QuerySet[Skill]:
    """The app's skills, each with its default (newest) revision's id and checksum: a list is one query."""
    newest = SkillRevision.objects.filter(skill=OuterRef("pk")).order_by("-id")
    return (
        Skill.objects.filter(app_name=app_name)
        .annotate(
            default_revision_id=Subquery(newest.values("id")[:1]), default_sha256=Subquery(newest.values("sha256")[:1])
        )
        .order_by("skill_id")
    )


def get_skill(*, app_name: str, skill_id: str) -> Skill | None:
    return skills_of(app_name).filter(skill_id=skill_id).first()


def default_revision(skill: Skill) -> tuple[int, str] | None:
    """The newest revision's (id, sha256): the one clients download (from ``skills_of``'s annotation when there)."""
    if hasattr(skill, "default_revision_id"):
        newest = skill.default_revision_id
        return (newest, str(getattr(skill, "default_sha256", ""))) if newest else None
    found = skill.revisions.order_by("-id").values_list("id", "sha256").first()
    return (found[0], found[1]) if found else None


def _embed(skill: Skill) -> None:
    embedder = get_embedder()
    skill.embedding = embedder.embed_documents([f"{skill.display_name}: {skill.description}"])[0]
    skill.embedder = embedder.id


def _checked(zipped: bytes) -> Any:
    try:
        return check_skill_zip(zipped)
    except SkillZipError as error:
        raise SkillError(str(error)) from error


def do_create_skill(
    *, app_name: str, skill_id: str, zipped: bytes, display_name: str = "", description: str = ""
) -> Skill:
    """A new skill of the app from its zip (its first revision)."""
    check_skill_id(skill_id)
    checked = _checked(zipped)
    front = checked.frontmatter
    skill = Skill(
        app_name=app_name,
        skill_id=skill_id,
        display_name=(display_name or str(front.get("name", "")))[:256],
        description=_description(description or str(front.get("description", ""))),
        license=str(front.get("license") or "")[:256],
        compatibility=str(front.get("compatibility") or "")[:500],
    )
    _embed(skill)
    try:
        with transaction.atomic():
            skill.save()
            _add_revision(skill, checked)
    except IntegrityError:
        raise SkillExists(f"The app already has a skill {skill_id}.") from None
    return skill


def _description(text: str) -> str:
    if not 0 < len(text.strip()) <= MAX_DESCRIPTION:
        raise SkillError(f"A skill's description is 1 to {MAX_DESCRIPTION} characters.")
    return text


def _add_revision(skill: Skill, checked: Any) -> SkillRevision:
    return SkillRevision.objects.create(
        skill=skill, zipped=checked.zipped, sha256=checked.sha256, frontmatter=checked.frontmatter, files=checked.files
    )


def do_update_skill(skill: Skill, changes: dict[str, Any], *, zipped: bytes | None = None) -> Skill:
    """Change the named fields; a zip makes a new (default) revision."""
    unknown = set(changes) - CHANGEABLE
    if unknown:
        raise SkillError(f"A skill's {', '.join(sorted(unknown))} cannot be changed.")
    if "description" in changes:
        changes["description"] = _description(str(changes["description"]))
    if "display_name" in changes and not 0 < len(str(changes["display_name"])) <= 256:
        raise SkillError("A skill's displayName is 1 to 256 characters.")
    if "state" in changes and changes["state"] not in SkillState.values:
        raise SkillError(f"A skill's state is one of {', '.join(SkillState.values)}.")
    checked = _checked(zipped) if zipped is not None else None
    for name, value in changes.items():
        setattr(skill, name, value)
    if changes.keys() & {"display_name", "description"}:
        _embed(skill)
    with transaction.atomic():
        skill.save()
        if checked is not None:
            _add_revision(skill, checked)
    return skill


def do_delete_skill(skill: Skill) -> None:
    with transaction.atomic():
        skill.delete()


def search_skills(*, app_name: str, query: str, top_k: int = 10) -> list[tuple[Skill, float]]:
    """The app's findable skills (not disabled) most like ``query``, best first, with the cosine in [0, 1]."""
    if not query.strip():
        raise SkillError("The query is empty.")
    vector = get_embedder().embed_query(query[:10_000])
    found = (
        skills_of(app_name)
        .exclude(state=SkillState.DISABLED)
        .filter(embedding__isnull=False)
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance", "skill_id")[:top_k]
    )
    return [(skill, min(1.0, max(0.0, 1.0 - float(skill.distance)))) for skill in found]


def get_revision(skill: Skill, revision_id: int) -> SkillRevision | None:
    return skill.revisions.filter(pk=revision_id).first()


def downloadable(skill: Skill) -> bool:
    """Google serves a revision's zip only for active and deprecated skills."""
    return skill.state in (SkillState.ACTIVE, SkillState.DEPRECATED)
