"""ADK ``Event`` objects rebuilt from the JSON stored for them, the very objects
``Event.model_validate_json`` returns, in a fraction of its time (docs/measured.md).

Rebuilding events is most of a session read (``Event.model_validate_json``, event by event). Most of
that is not validation but Python that, for JSON, can only hand its input back: every ``google.genai`` model
runs ``_check_field_type_mismatches`` before validating (it warns when a field holds a pydantic
model of another class, which a value parsed from JSON never is), ``Event`` runs
``_accept_convenience_kwargs`` (it moves top-level ``message``, ``state``, ``route`` and
``node_path`` keys into their fields; stored events have none), and ``Part``'s own ``__init__``
validates its fields a second time, in Python mode. Each of these also makes pydantic-core turn
the JSON into Python dicts first and validate those.

So this module builds, once, a validator from ``Event``'s own core schema with those steps left
out, everything else as pydantic built it: the same fields, defaults, aliases, the other
validators (``EventActions._parse_auth_configs``, ``CitationMetadata._rename_citation_sources``,
…) and ``model_post_init``. pydantic-core would put each model's own compiled validator back
(it reuses a complete model's validator wherever the model appears), so a model whose checks are
left out is validated as its fields (``model-fields``) and built from them as pydantic-core's
model validator builds it (``__dict__``, extra, fields set, no private state, then
``model_post_init``) — only where that model's configuration is the one the validator runs with;
any other model keeps its own validator, checks and all.

Where the steps left out would have done something, a text goes the whole way instead:
``Event.model_validate_json`` for a text holding ``"message"``, ``"state"``, ``"route"`` or
``"node_path"`` (possibly a convenience key), or ``null`` (``Part.__init__`` leaves a field given
as null out of the fields set), or one the fast validator refuses (so errors are ADK's own).
Before first use the validator is checked against ``Event.model_validate_json`` on a sample of
events exercising every kind of part; any difference (a pydantic, genai or ADK release that
changed what is left out) turns it off and every text goes the whole way.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, cast

from google.adk.events.event import Event
from google.genai import _common as genai_common
from pydantic import BaseModel
from pydantic_core import CoreConfig, SchemaValidator

logger = logging.getLogger(__name__)

_HANDS_BACK = {
    getattr(getattr(owner, name, None), "__func__", None)
    for owner, name in ((Event, "_accept_convenience_kwargs"), (genai_common.BaseModel, "_check_field_type_mismatches"))
} - {None}
"""Before-validators that return JSON input unchanged (see the module docstring); a release that renames one
leaves it in (slower, never wrong)."""

_CONFIG_NOT_FOR_FIELDS = {
    "title",
    "extra_fields_behavior",
    "from_attributes",
    "ser_json_bytes",
    "ser_json_timedelta",
    "ser_json_inf_nan",
    "ser_json_temporal",
}
"""Model config a model's fields do not validate with: its name, what serialising reads, and the two
settings a ``model-fields`` schema takes itself."""


def events_from_json(texts: list[str]) -> list[Event]:
    """The events of these stored JSON texts, each as ``Event.model_validate_json(text)`` returns it."""
    validate = _fast_validate()
    if validate is None:
        return [Event.model_validate_json(text) for text in texts]
    return [_event(text, validate) for text in texts]


def _event(text: str, validate: Callable[[str], Any]) -> Event:
    # Where a step left out would have acted, ADK's whole way (module docstring): a null (Part.__init__ drops
    # it from the fields set) or a convenience key, quoted as a JSON key (jsonb text never escapes letters).
    # Spelled out rather than looped over: it runs for every event of every read.
    if "null" in text or '"message"' in text or '"state"' in text or '"route"' in text or '"node_path"' in text:
        return Event.model_validate_json(text)
    try:
        return validate(text)
    except Exception:
        return Event.model_validate_json(text)


_validator: Callable[[str], Any] | None = None
_built = False
_lock = threading.Lock()


def _fast_validate() -> Callable[[str], Any] | None:
    """The fast validator's ``validate_json``, built and checked on first use; None if it is off."""
    global _validator, _built
    if not _built:
        with _lock:
            if not _built:
                try:
                    validator = SchemaValidator(
                        _without_hand_backs(Event.__pydantic_core_schema__, _root_config()), _root_config()
                    ).validate_json
                    _validator = validator if _agrees(validator) else None
                except Exception:
                    logger.exception("stored_events: fast event validator unavailable, using Event.model_validate_json")
                    _validator = None
                _built = True
    return _validator


def _root_config() -> CoreConfig:
    return cast(CoreConfig, dict(Event.__pydantic_core_schema__["schema"]["config"]))


def _fields_config(config: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in config.items() if key not in _CONFIG_NOT_FOR_FIELDS}


def _without_hand_backs(schema: Any, root_config: Mapping[str, Any]) -> Any:
    """A copy of a core schema without the before-validators in ``_HANDS_BACK`` and with models whose
    fields validate under ``root_config`` validated as their fields (module docstring)."""
    if isinstance(schema, list):
        return [_without_hand_backs(each, root_config) for each in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if (
        kind == "function-before"
        and isinstance(schema.get("function"), dict)
        and getattr(schema["function"].get("function"), "__func__", None) in _HANDS_BACK
    ):
        inner = _without_hand_backs(schema["schema"], root_config)
        return {**inner, "ref": schema["ref"]} if "ref" in schema else inner
    if kind == "model" and not _flattens(schema, root_config):
        return schema  # validated by its own validator, all of it (pydantic-core reuses the model's own)
    if kind == "model":
        config = schema.get("config", {})
        fields = {
            **_without_hand_backs(schema["schema"], root_config),
            "extra_behavior": config.get("extra_fields_behavior", "ignore"),
            "from_attributes": config.get("from_attributes", False),
        }
        flat = {
            "type": "function-after",
            "schema": fields,
            "function": {"type": "no-info", "function": _builder(schema["cls"], schema.get("post_init"))},
        }
        return {**flat, "ref": schema["ref"]} if "ref" in schema else flat
    return {key: _without_hand_backs(value, root_config) for key, value in schema.items()}


def _flattens(model: dict[str, Any], root_config: Mapping[str, Any]) -> bool:
    """Whether this model can be validated as its fields: a plain model (its own ``__init__`` only where it is
    ``Part``'s, whose difference the ``null`` rule covers) configured for its fields as the root is."""
    if model.get("root_model") or model["schema"].get("type") not in ("model-fields", "function-before"):
        return False
    if model.get("custom_init") and model["cls"] is not _part_class():
        return False
    inner = model["schema"]
    if inner["type"] == "function-before":  # only ours to leave out, with the fields under it
        if getattr(inner["function"].get("function"), "__func__", None) not in _HANDS_BACK:
            return False
        if inner["schema"].get("type") != "model-fields":
            return False
    return _fields_config(model.get("config", {})) == _fields_config(root_config)


def _part_class() -> type:
    from google.genai import types

    return types.Part


_setattr = object.__setattr__


def _builder(cls: type[BaseModel], post_init: str | None) -> Callable[[tuple[Any, Any, Any]], BaseModel]:
    """What pydantic-core's model validator does with its fields' output: a bare instance, its attributes
    set, then ``post_init``."""
    new = object.__new__

    def build(output: tuple[Any, Any, Any]) -> BaseModel:
        fields, extra, fields_set = output
        instance = new(cls)
        _setattr(instance, "__dict__", fields)
        _setattr(instance, "__pydantic_extra__", extra)
        _setattr(instance, "__pydantic_private__", None)
        _setattr(instance, "__pydantic_fields_set__", fields_set)
        if post_init:
            getattr(instance, post_init)(None)
        return instance

    return build


def _agrees(validate: Callable[[str], Any]) -> bool:
    """Whether ``validate`` gives what ``Event.model_validate_json`` gives for the sample events."""
    for text in _sample_texts():
        if model_state(validate(text)) != model_state(Event.model_validate_json(text)):
            logger.warning("stored_events: fast event validator disagrees with ADK's, using Event.model_validate_json")
            return False
    return True


def model_state(value: Any) -> Any:
    """Everything that makes two pydantic objects the same, nested: class, fields, fields set, extra and
    private state (``==`` on models ignores the fields set, and compares no class of nested values)."""
    if isinstance(value, BaseModel):
        return (
            type(value),
            frozenset(value.__pydantic_fields_set__),
            model_state(value.__pydantic_extra__),
            model_state(value.__pydantic_private__),
            model_state(dict(value.__dict__)),
        )
    if isinstance(value, dict):
        return (type(value), tuple((model_state(k), model_state(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(model_state(each) for each in value))
    if isinstance(value, (set, frozenset)):
        return (type(value), frozenset(value))
    return (type(value), value)


def _sample_texts() -> list[str]:
    """Stored JSON (as ``sessions_app.adk.event_json`` writes it) of events with every kind of part and action."""
    import json

    from google.adk.events.event_actions import EventActions, EventCompaction
    from google.genai import types

    parts = [
        types.Part(text="Grüße, 你好, こんにちは, 안녕, привет", thought=True, thought_signature=b"\x00sig\xff"),
        types.Part(inline_data=types.Blob(data=b"\x89PNG\x00\x01", mime_type="image/png")),
        types.Part(file_data=types.FileData(file_uri="gs://b/f.pdf", mime_type="application/pdf")),
        types.Part(function_call=types.FunctionCall(id="c1", name="lookup", args={"city": "Zürich", "n": 2})),
        types.Part(function_response=types.FunctionResponse(id="c1", name="lookup", response={"temp": 21.5})),
        types.Part(executable_code=types.ExecutableCode(code="print(1)", language=types.Language.PYTHON)),
        types.Part(code_execution_result=types.CodeExecutionResult(outcome=types.Outcome.OUTCOME_OK, output="1")),
    ]
    events = [
        Event(author="user", invocation_id="i1", content=types.Content(role="user", parts=[types.Part(text="hi")])),
        Event(
            author="agent",
            invocation_id="i1",
            branch="root.sub",
            content=types.Content(role="model", parts=parts),
            actions=EventActions(
                state_delta={"k": [1, {"x": "y"}], "user:u": True},
                artifact_delta={"a.txt": 1},
                transfer_to_agent="sub",
                escalate=True,
                skip_summarization=True,
                compaction=EventCompaction(
                    start_timestamp=1.0,
                    end_timestamp=2.0,
                    compacted_content=types.Content(role="model", parts=[types.Part(text="sum")]),
                ),
            ),
            long_running_tool_ids={"c1", "c2"},
            custom_metadata={"tag": "t"},
            turn_complete=True,
            usage_metadata=types.GenerateContentResponseUsageMetadata(prompt_token_count=3, total_token_count=5),
            grounding_metadata=types.GroundingMetadata(
                web_search_queries=["q"],
                grounding_chunks=[types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://e.x", title="E"))],
            ),
            error_code="E1",
            error_message="boom",
            interrupted=False,
            model_version="m-1",
        ),
    ]
    return [json.dumps(event.model_dump(mode="json", exclude_none=True), ensure_ascii=False) for event in events]
