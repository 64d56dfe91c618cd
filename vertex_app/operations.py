"""Operations asked for by name: under the engine, at the location, or by id alone.

Cognizes' writes are done when they return, so an id it handed out for one
(a past nanosecond) names a done operation wherever it is asked for; a
generation's operation is its consolidation job (``generate-{job}``), done when
the job is. ADK for Java polls ``projects/{p}/locations/{l}/operations/{id}``
after creating a session, and waits for ``done`` there.
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import check_scope, check_url
from memory_app.models import ConsolidationJob
from vertex_app import names
from vertex_app.base import VertexView, operation
from vertex_app.engines import resource
from vertex_app.errors import NotFound
from vertex_app.memories import MemoryBankView
from vertex_app.services import get_engine


class EngineOperationView(MemoryBankView):
    """``{engine}/operations/{id}``: the engine's own (a create or a change, ``engine-…``: answered with the engine as
    it now is), generation and ingestion."""

    rpcs = {"get": "GetOperation"}

    def get(self, request: Request, operation_id: str, **kwargs: Any) -> Response:
        """Read an operation of the engine: a configuration change, a generation or an ingestion."""
        name = names.operation(self.engine, operation_id)
        if names.is_engine_operation(operation_id):  # a create's or an update's: the SDK reads the engine from it
            return Response(operation(name, resource(get_engine(self.app_name), self.engine), kind="ReasoningEngine"))
        if names.generate_job(operation_id) is None:
            return Response(_finished(name, operation_id))
        return Response(self.job_operation(_job(request, operation_id, app_name=self.app_name)))


class LocationOperationView(MemoryBankView):
    """``projects/{p}/locations/{l}/operations/{id}`` and express ``operations/{id}``: no engine in the path."""

    rpcs = {"get": "GetOperation"}

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super(VertexView, self).initial(request, *args, **kwargs)  # keys and errors, but no engine to load
        check_url(request, kwargs)
        self.given_scopes = {}

    def get(
        self, request: Request, operation_id: str, project: str | None = None, location: str | None = None
    ) -> Response:
        """Read an operation by its id alone, at the location."""
        name = names.location_operation(operation_id, project=project, location=location)
        if names.generate_job(operation_id) is None:
            return Response(_finished(name, operation_id))
        job = _job(request, operation_id)
        self.app_name, self.only_user = job.app_name, None
        self.engine = names.engine(get_engine(job.app_name).engine_id, project=project, location=location)
        return Response({**self.job_operation(job), "name": name})


def _finished(name: str, operation_id: str) -> dict[str, Any]:
    if not (names.issued_operation(operation_id) or names.is_engine_operation(operation_id)):
        raise NotFound(f"Operation {operation_id} does not exist.")
    return operation(name)


def _job(request: Request, operation_id: str, *, app_name: str | None = None) -> ConsolidationJob:
    """The job a generation operation stands for, if the caller may read it (another app's: 404)."""
    job_id = names.generate_job(operation_id)  # None: not a generation's name, so no job
    jobs = ConsolidationJob.objects.filter(pk=job_id) if job_id is not None else ConsolidationJob.objects.none()
    job = (jobs.filter(app_name=app_name) if app_name else jobs).first()
    if job is None:
        raise NotFound(f"Operation {operation_id} does not exist.")
    check_scope(request, job.app_name, job.user_id or None, write=False)
    return job
