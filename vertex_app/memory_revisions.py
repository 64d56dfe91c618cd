"""A Memory Bank memory's history over Vertex AI (v1beta1): its revisions, and ``:rollback`` to one of them.

Every change consolidation or a caller makes is a revision (memory_app keeps them all, unless the engine's
``disableMemoryRevisions`` or the request's turns them off: then a rollback says so); a memory that consolidation
superseded is gone from the Vertex surface but its revisions stay, so it can still be rolled back.
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import parse_id
from memory_app import services
from memory_app.models import Memory, MemoryRevision
from vertex_app import filters, names
from vertex_app.base import operation, page
from vertex_app.errors import InvalidArgument, NotFound
from vertex_app.memories import MemoryBankView
from vertex_app.wire import message, rfc3339


class RollbackView(MemoryBankView):
    """``{memory}:rollback`` to a revision of it."""

    def post(self, request: Request, memory_id: str, **kwargs: Any) -> Response:
        """Roll a memory back to one of its revisions."""
        body = message(request.data, {"target_revision_id": None})
        target = str(body.get("target_revision_id") or "").rsplit("/", 1)[-1]
        memory = self.memory(memory_id, write=True, any_status=True)
        revision_id = _revision_id(target)
        exists = revision_id is not None and memory.revisions.filter(id=revision_id).exists()
        try:
            services.check_revision_exists(
                services.get_bank_config(self.app_name),
                exists,
                f"targetRevisionId {target!r} is not a revision of this memory.",
            )
        except services.MemoryServiceError as error:
            raise InvalidArgument(str(error)) from error
        assert revision_id is not None  # it exists
        memory = services.do_rollback(
            revision_id=revision_id, app_name=self.app_name, user_id=memory.user_id, cause="vertex rollback"
        )
        return Response(operation(names.operation(self.memory_name(memory)), self.resource(memory), kind="Memory"))


class RevisionsView(MemoryBankView):
    """``{memory}/revisions``: every change, oldest first."""

    def get(self, request: Request, memory_id: str, **kwargs: Any) -> Response:
        """List a memory's revisions, oldest first (filter labels.KEY="VALUE")."""
        memory = self.memory(memory_id, write=False, any_status=True)
        revisions = memory.revisions.order_by("id")
        for condition in filters.parse(request.query_params.get("filter"), fields={"labels.*"}):
            if condition.op != "=":
                raise InvalidArgument('Filter revisions by label as labels.KEY="VALUE".')
            revisions = revisions.filter(**{f"labels__{condition.field.removeprefix('labels.')}": str(condition.value)})
        return Response(page(request, revisions, "memoryRevisions", lambda r: self.revision(memory, r)))

    def revision(self, memory: Memory, revision: MemoryRevision) -> dict[str, Any]:
        out = {
            "name": names.revision(self.memory_name(memory), revision.id),
            "createTime": rfc3339(revision.created_at),
            "fact": revision.text_after or revision.text_before,
            "labels": revision.labels,
        }
        if revision.structured_data is not None:  # a profile field's: its data at this revision, not a fact
            del out["fact"]
            out["structuredData"] = revision.structured_data
        if revision.expires_at:
            out["expireTime"] = rfc3339(revision.expires_at)
        return out


class RevisionView(RevisionsView):
    """``{memory}/revisions/{id}``: one change of the memory."""

    def get(self, request: Request, memory_id: str, revision_id: str = "", **kwargs: Any) -> Response:
        """Read one revision of a memory."""
        memory = self.memory(memory_id, write=False, any_status=True)
        number = _revision_id(revision_id)
        revision = memory.revisions.filter(id=number).first() if number is not None else None
        if revision is None:
            raise NotFound(f"Revision {revision_id} does not exist.")
        return Response(self.revision(memory, revision))


def _revision_id(text: str) -> int | None:
    """A revision id as the database holds them (a bigint), or None for anything else."""
    return parse_id(text)
