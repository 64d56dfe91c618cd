"""``reasoningEngines`` as a collection: engines created and listed by their clients, and their runtime revisions.

agentplatform's ``runtimes.create`` / ``memory_banks.create`` (and ``agent_engines.create`` of the older SDK) POST
an engine, with no body at all when called without arguments (ADK's sandbox executor, ``adk deploy``), and read the
new engine from the operation's ``response`` after GETting the operation at least once by its name — which must be
``projects/{p}/locations/{l}/reasoningEngines/{id}/operations/{op}`` even in express mode
(shared/memory-bank-more-wire.md §2, §5). The new engine is a new app, owned by the caller's app
(``vertex_app.services.do_create_engine``); ``list`` answers the engines the caller's key reaches.

Runtime revisions (``{engine}/runtimeRevisions``): one per deployed configuration — a row whenever a create or
update changes the engine's display name, spec or context spec (``engines.record_revision``). The newest is ACTIVE,
the rest ARCHIVED; an archived one may be deleted, the current one not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import check_scope, check_url, parse_id
from cognizes.access.key_kinds import check_read_write, check_whole_app
from cognizes.access.models import ApiKey
from cognizes.access.ownership import OwnedAppCannotOwn
from vertex_app import engine_fields, filters, names
from vertex_app.base import VertexSurface, VertexView, operation, page
from vertex_app.engines import apply_bank, engine_operation, read_body, record_revision, resource
from vertex_app.errors import FailedPrecondition, InvalidArgument, NotFound
from vertex_app.models import Engine, RuntimeRevision
from vertex_app.services import (
    CurrentRevision,
    do_create_engine,
    do_delete_revision,
    get_reachable_engines,
)
from vertex_app.wire import rfc3339

_FILTERS = {"display_name", "description", "labels.*"}


class EnginesView(VertexSurface):
    """``[projects/{p}/locations/{l}/]reasoningEngines``: create an engine, or list those the key reaches."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        check_url(request, kwargs)

    def post(self, request: Request, project: str | None = None, location: str | None = None) -> Response:
        """Create an engine (a new app, owned by the key's), with what the body sets: displayName, description,
        labels, spec, contextSpec.memoryBankConfig."""
        key = _key(request)
        check_read_write(key.read_only, key.app_name)
        check_whole_app(key.user_id or None, key.app_name, "create an engine")
        body = read_body(request.data)
        update = engine_fields.read(body, mask=None)
        bank = update.bank

        def configure(app_name: str) -> None:
            if bank is not None:
                apply_bank(app_name, bank)

        try:
            engine = do_create_engine(owner_app=key.app_name, fields=update.fields, configure=configure)
        except OwnedAppCannotOwn as error:
            raise FailedPrecondition(str(error)) from error
        record_revision(engine)
        return Response(
            engine_operation(engine, names.full_engine(engine.engine_id, project=project, location=location))
        )

    def get(self, request: Request, project: str | None = None, location: str | None = None) -> Response:
        """List the engines the key reaches: its app's own, then those its app created.

        ``filter`` compares displayName, description and labels with ``=`` and ``!=``, joined by AND.
        """
        key = _key(request)
        check_scope(request, key.app_name, None, write=False)
        test = _filter(request.query_params.get("filter"))
        rows = [engine for engine in get_reachable_engines(key.app_name) if test(engine)]
        return Response(
            page(
                request,
                rows,
                "reasoningEngines",
                lambda engine: resource(engine, names.engine(engine.engine_id, project=project, location=location)),
            )
        )


def _key(request: Request) -> ApiKey:
    """The caller's API key: engines are created for, and listed by, the app of a key (a login has none)."""
    if not isinstance(request.auth, ApiKey):
        raise FailedPrecondition("Engines are created and listed with an API key: the engine belongs to its app.")
    return request.auth


def _filter(text: str | None) -> Callable[[Engine], bool]:
    """A test of an engine for a list's ``filter`` (comparisons joined by AND). The engines a key reaches are few,
    so they are tested here rather than in SQL, where a label key could be read as an ORM lookup
    (``labels.contains``)."""
    conditions = filters.parse(text, fields=_FILTERS)
    for found in conditions:
        if found.op not in ("=", "!="):
            raise InvalidArgument(f"Engines are filtered with = and != only, not {found.op}.")

    def value(engine: Engine, field: str) -> str | None:
        if field.startswith("labels."):
            return engine.labels.get(field.removeprefix("labels."))
        return engine.display_name or engine.app_name if field == "display_name" else engine.description

    return lambda engine: all(
        (value(engine, found.field) == str(found.value)) == (found.op == "=") for found in conditions
    )


class RuntimeRevisionsView(VertexView):
    """``{engine}/runtimeRevisions``: the engine's deployed configurations, newest first."""

    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the engine's runtime revisions, newest (the current one) first."""
        rows = RuntimeRevision.objects.filter(engine__engine_id=self.engine_id).order_by("-id")
        current = rows.values_list("id", flat=True).first()
        return Response(
            page(request, rows, "reasoningEngineRuntimeRevisions", lambda row: _revision(self.engine, row, current))
        )


class RuntimeRevisionView(VertexView):
    """``{engine}/runtimeRevisions/{id}``: one deployed configuration."""

    def get(self, request: Request, revision_id: str, **kwargs: Any) -> Response:
        """Read a runtime revision."""
        revision = self._revision(revision_id)
        current = RuntimeRevision.objects.filter(engine_id=revision.engine_id).order_by("-id").first()
        return Response(_revision(self.engine, revision, current.pk if current else None))

    def delete(self, request: Request, revision_id: str, **kwargs: Any) -> Response:
        """Delete an archived runtime revision (the current one is refused)."""
        check_whole_app(self.scope(None, write=True).only_user, self.app_name, "delete a runtime revision")
        revision = self._revision(revision_id)
        try:
            do_delete_revision(revision)
        except CurrentRevision as error:
            raise FailedPrecondition(str(error)) from error
        return Response(operation(names.operation(f"{self.engine}/runtimeRevisions/{revision.pk}")))

    def _revision(self, revision_id: str) -> RuntimeRevision:
        number = parse_id(revision_id)
        revision = (
            RuntimeRevision.objects.filter(pk=number, engine__engine_id=self.engine_id).first()
            if number is not None
            else None
        )
        if revision is None:
            raise NotFound(f"{self.engine}/runtimeRevisions/{revision_id} does not exist.")
        return revision


def _revision(engine_name: str, row: RuntimeRevision, current: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": f"{engine_name}/runtimeRevisions/{row.pk}",
        "createTime": rfc3339(row.created_at),
        "state": "ACTIVE" if row.pk == current else "ARCHIVED",
    }
    if row.spec is not None:
        out["spec"] = row.spec
    return out
