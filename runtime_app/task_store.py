"""a2a-sdk's ``TaskStore`` on PostgreSQL: an app's A2A tasks, each visible only to the user it ran for.

In a process's memory, a task would be lost at a restart and unknown to every
other web process, so ``tasks/get`` would depend on which process answered.
Listing pages the way a2a-sdk's own stores do (newest status first, an opaque
cursor naming the last task of a page), in SQL rather than in Python.
"""

from __future__ import annotations

from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskState
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from a2a.utils.task import ListTasksCursor, decode_list_tasks_cursor, encode_list_tasks_cursor
from django.db.models import F, Q, QuerySet
from google.protobuf.json_format import MessageToDict, ParseDict

from cognizes.infra.db_threads import run_in_db_thread
from runtime_app.models import A2aTask


class PostgresTaskStore(TaskStore):
    """The tasks of one app; the owner of a call is its authenticated user (``context.user.user_name``)."""

    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    def _owned(self, context: ServerCallContext) -> QuerySet[A2aTask]:
        return A2aTask.objects.filter(app_name=self.app_name, user_id=context.user.user_name)

    async def save(self, task: Task, context: ServerCallContext) -> None:
        has_time = task.HasField("status") and task.status.HasField("timestamp")
        fields = {
            "context_id": task.context_id,
            "state": TaskState.Name(task.status.state),
            "status_time_ns": task.status.timestamp.ToNanoseconds() if has_time else None,
            "data": MessageToDict(task),
        }
        await run_in_db_thread(
            lambda: A2aTask.objects.update_or_create(
                app_name=self.app_name,
                user_id=context.user.user_name,
                task_id=task.id,
                defaults=fields,
            )
        )

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        data = await run_in_db_thread(
            lambda: self._owned(context).filter(task_id=task_id).values_list("data", flat=True).first()
        )
        return None if data is None else _task(data)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        await run_in_db_thread(lambda: self._owned(context).filter(task_id=task_id).delete())

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        def page() -> tuple[list[dict[str, Any]], int, int, str | None]:
            tasks = self._owned(context)
            if params.context_id:
                tasks = tasks.filter(context_id=params.context_id)
            if params.status:
                tasks = tasks.filter(state=TaskState.Name(params.status))
            if params.HasField("status_timestamp_after"):
                tasks = tasks.filter(status_time_ns__gte=params.status_timestamp_after.ToNanoseconds())
            total = tasks.count()
            if params.page_token:
                tasks = tasks.filter(_after(params.page_token))
            size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
            rows = list(
                tasks.order_by(F("status_time_ns").desc(nulls_last=True), "-task_id").values(
                    "task_id", "status_time_ns", "data"
                )[: size + 1]
            )
            token = None
            if len(rows) > size:
                last = rows[size - 1]
                token = encode_list_tasks_cursor(
                    ListTasksCursor(timestamp_ns=last["status_time_ns"], task_id=last["task_id"])
                )
            return [row["data"] for row in rows[:size]], total, size, token

        found, total, size, token = await run_in_db_thread(page)
        return ListTasksResponse(
            tasks=[_task(data) for data in found], total_size=total, page_size=size, next_page_token=token
        )


def _task(data: dict[str, Any]) -> Task:
    return ParseDict(data, Task(), ignore_unknown_fields=True)


def _after(page_token: str) -> Q:
    """The tasks after the cursor in the listing order: newest status first, tasks with none last, then by id."""
    cursor = decode_list_tasks_cursor(page_token)
    if cursor is None:
        raise InvalidParamsError(f"Invalid page token: {page_token}")
    if cursor.timestamp_ns is None:
        return Q(status_time_ns__isnull=True, task_id__lt=cursor.task_id)
    return (
        Q(status_time_ns__isnull=True)
        | Q(status_time_ns__lt=cursor.timestamp_ns)
        | Q(status_time_ns=cursor.timestamp_ns, task_id__lt=cursor.task_id)
    )
