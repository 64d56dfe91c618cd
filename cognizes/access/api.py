"""What every API view shares: the tenant scope check, errors, pagination, validation.

The scope rule lives here and only here: ``ScopedView.initial`` checks the
``app_name`` / ``user_id`` of the URL against the caller before any view code
runs, and views build every query from ``self.scope``. A key of another app,
or of another user of the app, gets 404 — the same answer as for a resource
that does not exist, so ids of other tenants cannot be probed.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any, ClassVar

from django import forms
from django.db.models import QuerySet
from django.http import Http404, QueryDict
from django_filters import filters
from django_filters.fields import IsoDateTimeField
from django_filters.filterset import FilterSet
from rest_framework import exceptions, serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.serializer_helpers import BindingDict
from rest_framework.views import APIView, exception_handler

from cognizes.access.key_kinds import check_read_write, needs_whole_app
from cognizes.access.models import MAX_KEY_LENGTH, ApiKey
from cognizes.access.outages import as_unavailable
from cognizes.access.ownership import get_owner

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
BIGINT = 2**63 - 1
"""The largest id, version or offset PostgreSQL stores: integer inputs stop here (a larger one is a 400, not a 500)."""


def parse_id(value: object) -> int | None:
    """The row id (or offset) ``value`` spells, if it is 1–19 ASCII digits within ``BIGINT``; None for anything else.

    Every id read from a path, a page token or a name goes through here: ``str.isdigit`` is also true for '²'
    (which ``int()`` refuses: a 500 before) and for other scripts' digits, and an id past bigint made PostgreSQL
    fail the query (issue 41 K). None is the caller's 404 or 400.
    """
    text = value if isinstance(value, str) else str(value)
    if not (0 < len(text) <= 19 and text.isascii() and text.isdigit()):
        return None
    number = int(text)
    return number if number <= BIGINT else None


@dataclass(frozen=True)
class Scope:
    app_name: str
    user_id: str | None
    """The user of the URL; None on app-wide URLs."""
    only_user: str | None
    """For a key restricted to one user: that user (app-wide listings are narrowed to it)."""


class ScopedView(APIView):
    """Base of every tenant view: the URL's app and user must be the caller's."""

    scope: Scope
    changes_nothing: ClassVar[bool] = False
    """Set by a view whose POST only reads (a search): a read-only key may call it."""
    staff_permission: ClassVar[str] = ""
    """The model permission a staff user's session needs here (an admin page's live panel reads through the API);
    without one, only superusers use the API by session."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        check_url(request, kwargs)
        if "session_id" in kwargs:  # as ADK's services: a padded id names the session created from it
            self.kwargs["session_id"] = kwargs["session_id"] = kwargs["session_id"].strip()
        write = False if self.changes_nothing else None
        self.scope = check_scope(
            request, kwargs["app_name"], kwargs.get("user_id"), write=write, staff_permission=self.staff_permission
        )


def check_url(request: Request, ids: dict[str, Any]) -> None:
    """The URL's ids and query hold only what PostgreSQL can store, or the request is a 400 before any query.

    Every API surface's views call it first (``ScopedView``, the Vertex surface's ``VertexView``).
    """
    values = [str(value) for value in ids.values()]
    if any("\x00" in value for value in [*values, *(v for _, vs in request.query_params.lists() for v in vs)]):
        raise exceptions.ParseError("The URL may not contain NUL (%00) characters.")
    if any(len(value) > MAX_KEY_LENGTH for value in values):
        raise exceptions.ParseError(f"Ids in the URL may be at most {MAX_KEY_LENGTH} characters long.")


def check_scope(
    request: Request, app_name: str, user_id: str | None, *, write: bool | None = None, staff_permission: str = ""
) -> Scope:
    """The one place that decides whether the caller may touch this app and user.

    ``write`` says whether the call changes anything; by default, whether its
    method is unsafe (a search sent as POST passes ``write=False``). A logged-in
    staff user reaches every app, so only a superuser may, or one holding
    ``staff_permission`` (the admin checks the model permission of what it shows:
    a staff user without it reads nothing here either, issue 41 D).
    """
    if write is None:
        write = request.method not in SAFE_METHODS
    if isinstance(request.auth, ApiKey):
        return check_key_scope(request.auth, app_name, user_id, write=write)
    user = request.user
    if getattr(user, "is_staff", False) and (
        user.is_superuser or (staff_permission and user.has_perm(staff_permission))
    ):
        return Scope(app_name=app_name, user_id=user_id, only_user=None)
    if getattr(user, "is_staff", False):
        raise exceptions.PermissionDenied(
            f"Staff need the permission {staff_permission} here."
            if staff_permission
            else "Only superusers use the API with a login; send an API key."
        )
    raise exceptions.PermissionDenied("Staff only.")


def check_key_scope(key: ApiKey, app_name: str, user_id: str | None, *, write: bool) -> Scope:
    """``check_scope`` for an API key however it came (the A2A endpoints read it outside DRF).

    Another app's or user's data is a 404, not a 403: a key learns nothing of what it may not see. A key reaches its
    app and the apps its app made (an engine created by its client, ``cognizes.access.ownership``), there with the
    same limits: a key of one user still reaches only that user, a read-only key still only reads.
    """
    if key.app_name != app_name and get_owner(app_name) != key.app_name:
        raise Http404
    if key.user_id and user_id is not None and key.user_id != user_id:
        raise Http404
    check_read_write(key.read_only and write, app_name)
    return Scope(app_name=app_name, user_id=user_id, only_user=key.user_id or None)


SHARED_STATE_PREFIX = "app:"
"""ADK's prefix of state every user of the app shares (sessions_app stores it in ``app_states``)."""


def check_state_write(scope: Scope, *states: Mapping[str, Any] | None) -> None:
    """Refuse ``app:`` keys in state a key of one user writes (a 400 naming the prefix), on every surface.

    App state is read by every user's sessions: a user-bound key that set it would
    write into everyone else's conversations (issue 41 G). App-wide keys and staff
    may; a user-bound key changes only its own user's and sessions' state.
    """
    if not scope.only_user:
        return
    shared = sorted(
        {
            key
            for state in states
            if isinstance(state, Mapping)
            for key in state
            if isinstance(key, str) and key.startswith(SHARED_STATE_PREFIX)
        }
    )
    if shared:
        raise exceptions.ValidationError(
            needs_whole_app(
                scope.app_name,
                f"write app-wide state (keys with the {SHARED_STATE_PREFIX!r} prefix: {', '.join(shared)})",
            )
        )


class IdConverter:
    """``<id:…>`` in URLs: a row id PostgreSQL can hold (1 to 18 digits); anything longer matches no route (404)."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


class Conflict(exceptions.APIException):
    """409: the resource changed since the caller read it (or already exists); ``details`` say how it is now."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "Conflict."
    default_code = "conflict"

    def __init__(self, detail: str | None = None, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.details = details


class Pagination(LimitOffsetPagination):
    default_limit = 100
    max_limit = 1000

    def get_limit(self, request: Request) -> int | None:
        _check_whole_number(request, self.limit_query_param)
        return super().get_limit(request)

    def get_offset(self, request: Request) -> int:
        _check_whole_number(request, self.offset_query_param)
        return super().get_offset(request)


def _check_whole_number(request: Request, name: str) -> None:
    """A paging parameter given must be ASCII digits within bigint: DRF quietly answered the first page for
    ``offset=²`` or ``offset=abc``, as if it had been read (issue 41 K)."""
    value = request.query_params.get(name)
    if value not in (None, "") and parse_id(value) is None:
        raise exceptions.ValidationError({name: [f"Ensure this value is a whole number from 0 to {BIGINT}."]})


class _UtcTimeField(IsoDateTimeField):
    def clean(self, value: Any) -> datetime | None:
        time = super().clean(value)
        try:
            return time.astimezone(UTC) if time is not None else None
        except OverflowError:
            raise forms.ValidationError("This time has no UTC value.") from None


class SinceFilter(filters.IsoDateTimeFilter):
    """``…_since=``: an ISO 8601 time, compared in UTC.

    ISO 8601 allows offsets PostgreSQL refuses (past ±15:59: a 500 before), and a
    time near year 1 may have no UTC value: that is the caller's error.
    """

    field_class = _UtcTimeField

    def __init__(self, field_name: str, **kwargs: Any) -> None:
        super().__init__(field_name=field_name, lookup_expr="gte", **kwargs)


def filtered(filterset: type[FilterSet], query: QueryDict, queryset: QuerySet) -> QuerySet:
    """``queryset`` narrowed by the query's filters; a value a filter cannot read is a 400 that names it.

    A filter set alone drops such a value and answers everything (``?status=done``
    listed every status).
    """
    return _read_filters(filterset, query, queryset).qs


def filter_values(filterset: type[FilterSet], query: QueryDict) -> dict[str, Any]:
    """The query's filter values, read and refused as ``filtered`` does, for a view whose statement is a
    service's rather than a queryset (a value not given is None or empty)."""
    return _read_filters(filterset, query, filterset._meta.model.objects.none()).form.cleaned_data


def _read_filters(filterset: type[FilterSet], query: QueryDict, queryset: QuerySet) -> FilterSet:
    found = filterset(query, queryset=queryset)
    if not found.is_valid():
        raise exceptions.ValidationError(found.errors)
    return found


def page_of(view: APIView, request: Request, queryset: Any, serializer: type[serializers.Serializer]) -> Response:
    """One ``Pagination`` page of ``queryset``, each row through ``serializer``: what a list endpoint answers."""
    paginator = Pagination()
    rows: list[Any] | None = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer(rows, many=True).data)


@cache
def paginated(serializer_class: type[serializers.Serializer]) -> serializers.Serializer:
    """The OpenAPI shape of a ``Pagination`` page of ``serializer_class`` items."""
    from drf_spectacular.utils import inline_serializer

    name = serializer_class.__name__.removesuffix("Serializer")
    return inline_serializer(
        name=f"Paginated{name}List",
        fields={
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer_class(many=True),
        },
    )


def valid(
    serializer_class: type[serializers.Serializer], data: Any, *, strict: bool = True, partial: bool = False
) -> dict[str, Any]:
    """The validated data, or a 400 listing what is wrong (with ``strict``, unknown fields too).

    ``partial``: only the fields given are validated (a PATCH of some settings).
    """
    serializer = serializer_class(data=data, partial=partial)
    serializer.fields = bound_fields(serializer)
    unknown = sorted(set(data) - set(serializer.fields)) if strict and hasattr(data, "keys") else []
    if not serializer.is_valid() or unknown:  # both told at once: a misspelt field is the likely cause of a missing one
        raise exceptions.ValidationError({**serializer.errors, **{name: ["Unknown field."] for name in unknown}})
    return serializer.validated_data


def bound_fields(serializer: serializers.Serializer) -> BindingDict:
    """The serializer's fields, copied from its class's once-built set: what DRF's ``fields`` gives, for less.

    DRF builds every field of every serializer anew per instance (``copy.deepcopy`` of the declared
    fields, each one's ``__init__`` run again). A field keeps no state of a validation, only its
    binding (name, source, label, parent), so a shallow copy bound to this serializer serves; a list's
    or dict's ``child`` is copied too, to name its own parent. A nested serializer is deep-copied, as
    DRF does. Validating a session create's body, an event append's and a session read's query is then
    markedly faster (docs/measured.md).
    """
    fields = BindingDict(serializer)
    for name, field in _declared_fields(type(serializer)).items():
        fields[name] = _copied(field)
    return fields


@cache
def _declared_fields(serializer_class: type[serializers.Serializer]) -> dict[str, serializers.Field]:
    return serializer_class().get_fields()  # never bound: each request binds its copies


def _copied(field: serializers.Field) -> serializers.Field:
    if isinstance(field, serializers.BaseSerializer):
        return copy.deepcopy(field)
    copied = copy.copy(field)
    child = getattr(field, "child", None)
    if isinstance(child, serializers.Field):
        copied.child = _copied(child)  # type: ignore[attr-defined]  # a ListField's or DictField's: it has one
        copied.child.parent = copied  # type: ignore[attr-defined]  # as above
    return copied


def error_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Every error as ``{"error": {"code", "message", "details"}}``; an outage as a 503."""
    exc = as_unavailable(exc)
    response = exception_handler(exc, context)
    if response is None:
        return None
    detail = response.data
    if isinstance(exc, exceptions.ValidationError):
        code, message = "invalid", "The request is not valid."
    elif isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else "error"
        message = str(detail.get("detail", exc)) if isinstance(detail, dict) else str(exc)
        detail = getattr(exc, "details", None)
    elif isinstance(exc, Http404):
        code, message, detail = "not_found", "Not found.", None
    else:
        code, message, detail = "error", str(exc), None
    response.data = error_body(code, message, detail)
    return response


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    """The API's error shape, for answers made outside DRF's handler."""
    return {"error": {"code": code, "message": message, "details": details}}
