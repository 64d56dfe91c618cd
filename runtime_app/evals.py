"""ADK's eval sets and eval results in PostgreSQL: ``PostgresEvalSetsManager``, ``PostgresEvalSetResultsManager``.

ADK keeps them in files beside the agents (``LocalEvalSetsManager``) or in a GCS bucket, the only URI
``--eval_storage_uri`` takes; ``cognizes adk web`` / ``cognizes adk eval`` (``runtime_app.adk_launcher``) put these
in their place, so every web process and every developer of a deployment sees the same sets and the history of
their runs, and the admin shows them.

The behaviour is ``LocalEvalSetsManager``'s, the one ``adk web``'s eval tab was built on: an eval set id is
``^[a-zA-Z0-9_]+$`` (``ValueError`` otherwise, or when it exists), a new set is named by its id, ids are listed
sorted, cases keep their order (an update replaces a case in place), a missing set or case is ADK's
``NotFoundError``, and results are listed by the names ``get_eval_set_result`` takes. Text a user typed may hold
anything (a NUL included): documents are stored as JSON text, and a name no row can hold is simply not found.

ADK's interface is synchronous but its dev server and ``LocalEvalService`` call it from coroutines, where Django
refuses the ORM (``SynchronousOnlyOperation``): every method runs its queries through ``call_from_sync``.
"""

from __future__ import annotations

import re
import time
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from google.adk.errors.not_found_error import NotFoundError
from google.adk.evaluation._eval_set_results_manager_utils import (
    create_eval_set_result,
    parse_eval_set_result_json,
)
from google.adk.evaluation.eval_case import EvalCase
from google.adk.evaluation.eval_result import EvalCaseResult, EvalSetResult
from google.adk.evaluation.eval_set import EvalSet
from google.adk.evaluation.eval_set_results_manager import EvalSetResultsManager
from google.adk.evaluation.eval_sets_manager import EvalSetsManager
from typing_extensions import override

from cognizes.access.models import MAX_KEY_LENGTH
from cognizes.infra.db_threads import call_from_sync
from runtime_app import models

EVAL_SET_ID = re.compile(r"^[a-zA-Z0-9_]+$")
"""ADK's rule for eval set ids (``LocalEvalSetsManager._validate_id``): they name files there."""


def _storable(value: object, *, max_length: int | None = MAX_KEY_LENGTH) -> bool:
    """Whether PostgreSQL can hold ``value`` in a column of ours (text without NUL, short enough)."""
    return isinstance(value, str) and "\0" not in value and (max_length is None or len(value) <= max_length)


def _case_json(case: EvalCase) -> str:
    return case.model_dump_json(by_alias=True)


class PostgresEvalSetsManager(EvalSetsManager):
    """ADK's ``EvalSetsManager`` on PostgreSQL (``EvalSet`` and ``EvalCase`` rows)."""

    def __init__(self, agents_dir: str | None = None, **_: Any) -> None:
        """``agents_dir``: what ADK passes to the class it replaces; the database needs no folder."""

    @override
    def get_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet | None:
        return call_from_sync(_get_eval_set, app_name, eval_set_id)

    @override
    def create_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet:
        return call_from_sync(_create_eval_set, app_name, eval_set_id)

    @override
    def list_eval_sets(self, app_name: str) -> list[str]:
        return call_from_sync(_list_eval_sets, app_name)

    @override
    def get_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> EvalCase | None:
        return call_from_sync(_get_eval_case, app_name, eval_set_id, eval_case_id)

    @override
    def add_eval_case(self, app_name: str, eval_set_id: str, eval_case: EvalCase) -> None:
        call_from_sync(_add_eval_case, app_name, eval_set_id, eval_case)

    @override
    def update_eval_case(self, app_name: str, eval_set_id: str, updated_eval_case: EvalCase) -> None:
        call_from_sync(_update_eval_case, app_name, eval_set_id, updated_eval_case)

    @override
    def delete_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> None:
        call_from_sync(_delete_eval_case, app_name, eval_set_id, eval_case_id)


class PostgresEvalSetResultsManager(EvalSetResultsManager):
    """ADK's ``EvalSetResultsManager`` on PostgreSQL (``EvalSetResult`` rows, each result whole)."""

    def __init__(self, agents_dir: str | None = None, **_: Any) -> None:
        """``agents_dir``: what ADK passes to the class it replaces; the database needs no folder."""

    @override
    def save_eval_set_result(self, app_name: str, eval_set_id: str, eval_case_results: list[EvalCaseResult]) -> None:
        call_from_sync(_save_eval_set_result, app_name, eval_set_id, eval_case_results)

    @override
    def get_eval_set_result(self, app_name: str, eval_set_result_id: str) -> EvalSetResult:
        return call_from_sync(_get_eval_set_result, app_name, eval_set_result_id)

    @override
    def list_eval_set_results(self, app_name: str) -> list[str]:
        return call_from_sync(_list_eval_set_results, app_name)


# --- the queries, run on a database thread when an event loop is running ---


def _find_set(app_name: str, eval_set_id: str, *, lock: bool = False) -> models.EvalSet | None:
    if not (_storable(app_name) and _storable(eval_set_id)):
        return None
    rows = models.EvalSet.objects.filter(app_name=app_name, eval_set_id=eval_set_id)
    return (rows.select_for_update() if lock else rows).first()


def _require_set(app_name: str, eval_set_id: str, *, lock: bool = False) -> models.EvalSet:
    found = _find_set(app_name, eval_set_id, lock=lock)
    if found is None:
        raise NotFoundError(f"EvalSet {eval_set_id} not found for app {app_name}.")
    return found


def _eval_set(row: models.EvalSet) -> EvalSet:
    cases = [EvalCase.model_validate_json(document) for document in row.cases.values_list("document", flat=True)]
    return EvalSet(
        eval_set_id=row.eval_set_id,
        name=row.name or None,
        description=row.description or None,
        eval_cases=cases,
        creation_timestamp=row.creation_timestamp,
    )


def _get_eval_set(app_name: str, eval_set_id: str) -> EvalSet | None:
    row = _find_set(app_name, eval_set_id)
    return None if row is None else _eval_set(row)


def _create_eval_set(app_name: str, eval_set_id: str) -> EvalSet:
    if not isinstance(eval_set_id, str) or not EVAL_SET_ID.fullmatch(eval_set_id) or not _storable(eval_set_id):
        raise ValueError(
            f"Invalid Eval Set ID. Eval Set ID should have the `{EVAL_SET_ID.pattern}` format "
            f"(at most {MAX_KEY_LENGTH} characters)"
        )
    if not _storable(app_name) or not app_name:
        raise ValueError(f"Invalid app name: at most {MAX_KEY_LENGTH} characters, without NUL.")
    created = EvalSet(eval_set_id=eval_set_id, name=eval_set_id, eval_cases=[], creation_timestamp=time.time())
    try:
        with transaction.atomic():
            models.EvalSet.objects.create(
                app_name=app_name,
                eval_set_id=eval_set_id,
                name=eval_set_id,
                creation_timestamp=created.creation_timestamp,
            )
    except IntegrityError:
        raise ValueError(f"EvalSet {eval_set_id} already exists for app {app_name}.") from None
    return created


def _list_eval_sets(app_name: str) -> list[str]:
    if not _storable(app_name):
        return []
    return list(
        models.EvalSet.objects.filter(app_name=app_name).order_by("eval_set_id").values_list("eval_set_id", flat=True)
    )


def _get_eval_case(app_name: str, eval_set_id: str, eval_case_id: str) -> EvalCase | None:
    row = _find_set(app_name, eval_set_id)
    if row is None or not _storable(eval_case_id, max_length=None):
        return None
    document = row.cases.filter(eval_id=eval_case_id).values_list("document", flat=True).first()
    return None if document is None else EvalCase.model_validate_json(document)


def _add_eval_case(app_name: str, eval_set_id: str, eval_case: EvalCase) -> None:
    if not _storable(eval_case.eval_id, max_length=None):
        raise ValueError("Invalid eval case id: text without NUL.")
    with transaction.atomic():
        # Locked: one writer at a time numbers the set's positions.
        eval_set = _require_set(app_name, eval_set_id, lock=True)
        if eval_set.cases.filter(eval_id=eval_case.eval_id).exists():
            raise ValueError(f"Eval id `{eval_case.eval_id}` already exists in `{eval_set_id}` eval set.")
        last = eval_set.cases.aggregate(last=Max("position"))["last"]
        models.EvalCase.objects.create(
            eval_set=eval_set,
            eval_id=eval_case.eval_id,
            position=0 if last is None else last + 1,
            document=_case_json(eval_case),
        )


def _update_eval_case(app_name: str, eval_set_id: str, updated_eval_case: EvalCase) -> None:
    eval_set = _require_set(app_name, eval_set_id)
    changed = 0
    if _storable(updated_eval_case.eval_id, max_length=None):
        changed = eval_set.cases.filter(eval_id=updated_eval_case.eval_id).update(
            document=_case_json(updated_eval_case)
        )
    if not changed:
        raise NotFoundError(f"Eval case `{updated_eval_case.eval_id}` not found in eval set `{eval_set_id}`.")


def _delete_eval_case(app_name: str, eval_set_id: str, eval_case_id: str) -> None:
    eval_set = _require_set(app_name, eval_set_id)
    deleted = 0
    if _storable(eval_case_id, max_length=None):
        deleted, _ = eval_set.cases.filter(eval_id=eval_case_id).delete()
    if not deleted:
        raise NotFoundError(f"Eval case `{eval_case_id}` not found in eval set `{eval_set_id}`.")


def _save_eval_set_result(app_name: str, eval_set_id: str, eval_case_results: list[EvalCaseResult]) -> None:
    if not (_storable(app_name) and _storable(eval_set_id)) or not app_name:
        raise ValueError(f"Invalid app name or eval set id: at most {MAX_KEY_LENGTH} characters, without NUL.")
    result = create_eval_set_result(app_name, eval_set_id, eval_case_results)
    name = result.eval_set_result_name or result.eval_set_result_id
    models.EvalSetResult.objects.update_or_create(
        app_name=app_name,
        result_name=name,
        defaults={
            "eval_set_id": eval_set_id,
            "creation_timestamp": result.creation_timestamp,
            "document": result.model_dump_json(by_alias=True),
        },
    )


def _get_eval_set_result(app_name: str, eval_set_result_id: str) -> EvalSetResult:
    document = None
    if _storable(app_name) and _storable(eval_set_result_id, max_length=None):
        document = (
            models.EvalSetResult.objects.filter(app_name=app_name, result_name=eval_set_result_id)
            .values_list("document", flat=True)
            .first()
        )
    if document is None:
        raise NotFoundError(f"Eval set result `{eval_set_result_id}` not found.")
    return parse_eval_set_result_json(document)


def _list_eval_set_results(app_name: str) -> list[str]:
    if not _storable(app_name):
        return []
    return list(
        models.EvalSetResult.objects.filter(app_name=app_name)
        .order_by("creation_timestamp", "pk")
        .values_list("result_name", flat=True)
    )
