"""``cognizes.access.api.valid``: every request body and query is validated by fields copied from a set built once per
class.

The copies must be what DRF would have built (same fields, each bound to this request's
serializer) and must share nothing a validation touches with another request's.
"""

from __future__ import annotations

import importlib
import threading

import pytest
from rest_framework import exceptions, serializers

from cognizes.access.api import bound_fields, valid

API_MODULES = [
    "sessions_app.api",
    "memory_app.api",
    "tools_app.api",
    "knowledge_app.api",
    "runtime_app.api",
    "artifacts_app.api",
    "tracing_app.api",
    "vertex_app.rag",
]


def _serializer_classes() -> list[type[serializers.Serializer]]:
    classes = []
    for module in map(importlib.import_module, API_MODULES):
        classes += [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, serializers.Serializer)
            and value.__module__ == module.__name__
        ]
    return sorted(classes, key=lambda cls: f"{cls.__module__}.{cls.__name__}")


def _binding(field: serializers.Field) -> tuple:
    child = getattr(field, "child", None)
    return (
        type(field),
        field.field_name,
        field.source,
        field.label,
        field.required,
        field.allow_null,
        field.read_only,
        field.default,
        _binding(child) if isinstance(child, serializers.Field) else None,
    )


@pytest.mark.parametrize("serializer_class", _serializer_classes(), ids=lambda cls: cls.__name__)
def test_the_copied_fields_are_bound_as_drfs_own_and_shared_with_no_other_request(serializer_class):
    ours, other = serializer_class(data={}), serializer_class(data={})
    theirs = serializer_class(data={}).fields  # DRF's: every field built anew
    fields, other_fields = bound_fields(ours), bound_fields(other)

    assert list(fields) == list(theirs)
    for name, field in fields.items():
        assert _binding(field) == _binding(theirs[name]), name
        assert field.parent is ours and field is not other_fields[name]
        child = getattr(field, "child", None)
        if isinstance(child, serializers.Field) and not isinstance(field, serializers.BaseSerializer):
            assert child.parent is field and child is not other_fields[name].child
            assert child.root is ours  # the child's errors and context are this request's


def test_a_childs_error_names_its_own_request_and_partial_is_each_requests():
    from sessions_app.api import SessionCreateSerializer, StatePatchSerializer

    with pytest.raises(exceptions.ValidationError) as refused:
        valid(StatePatchSerializer, {"state": ["not", "a", "dict"], "expected_version": 1})
    assert "state" in refused.value.detail
    assert valid(SessionCreateSerializer, {"state": {"a": 1}})["state"] == {"a": 1}
    with pytest.raises(exceptions.ValidationError) as missing:
        valid(StatePatchSerializer, {"state": {}})
    assert "expected_version" in missing.value.detail
    assert valid(StatePatchSerializer, {"state": {}}, partial=True) == {"state": {}}


def test_requests_validated_at_once_on_many_threads_each_get_their_own_data_and_errors():
    from sessions_app.api import EventAppendSerializer

    results: dict[int, object] = {}
    wrong: list[tuple] = []

    def validate(i: int) -> None:
        for round_ in range(200):
            data = {"event": {"author": f"a{i}", "n": round_}, "expected_version": i} if i % 2 else {"event": i}
            try:
                results[i] = valid(EventAppendSerializer, data)
            except exceptions.ValidationError as error:
                results[i] = sorted(error.detail)
            expected = {"event": data["event"], "expected_version": i} if i % 2 else ["event", "expected_version"]
            if results[i] != expected:
                wrong.append((i, round_, results[i]))

    threads = [threading.Thread(target=validate, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8 and wrong == []
