"""Vertex AI Agent Engine Memory Bank (v1beta1) on memory_app's services.

* A Vertex scope is a map. ``user_id`` is the Cognizes user (a user-restricted
  key reaches only its own), ``app_name`` may name the engine's app (by name,
  engine id or resource name) and nothing else, and every other key is kept with the memory (``Memory.extra_scope``)
  and matched exactly, never by prefix: a retrieve with ``{user_id, agent}``
  finds none of the memories made under ``{user_id}`` alone.
* The Vertex surface shows active memories; a memory that consolidation
  superseded is, for Vertex, deleted (its revisions stay, for rollback).
* ``generate`` from contents or a session, and ``ingestEvents``, are
  consolidation jobs on the Celery workers: their operation
  (``operations/generate-{job}``) is done when the job is, and lists what the job
  made from the revisions it wrote. Direct memories are remembered at once.
* Managed topics are memory kinds; memory ids a caller chooses
  (``?memoryId=``) are mapped to a UUID by name, so the same id always names
  the same memory.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.db import IntegrityError
from django.db.models import QuerySet
from google.cloud.aiplatform_v1beta1.types.memory_bank import MemoryType
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.models import MAX_KEY_LENGTH
from memory_app import consolidation, services
from memory_app.models import ConsolidationJob, JobStatus, Memory, MemoryRevision, RevisionAction
from memory_app.models import MemoryType as MemoryKind
from memory_app.search import search_memories, search_weights
from sessions_app import services as session_services
from vertex_app import filters, memory_fields, memory_filters, names
from vertex_app.base import EMPTY, VertexView, operation, page
from vertex_app.errors import AlreadyExists, InvalidArgument, NotFound
from vertex_app.sessions import SessionLookup
from vertex_app.wire import duration, enum, expiry, field_mask, integer, mapping, message, rfc3339, string, timestamp

ACTIONS: dict[str, str] = {
    RevisionAction.CREATE: "CREATED",
    RevisionAction.MERGE: "UPDATED",
    RevisionAction.UPDATE: "UPDATED",
    RevisionAction.SUPERSEDE: "DELETED",
    RevisionAction.FORGET: "DELETED",
}
DEFAULT_TOP_K, MAX_TOP_K = 3, 100  # Vertex's: "at most 3 … values above 100 will be coerced to 100"
MAX_DIRECT_MEMORIES = 5
MAX_SCOPE_KEYS = 5
MAX_SCOPE_BYTES = 512
"""The scope keys besides app and user, as UTF-8 JSON: they are in the scope index's entries, which are bounded."""
_MEMORY_IDS = uuid.UUID("0f7f5bb0-7e0b-4d43-9a36-8f3c1c0a7d21")  # namespace of caller-chosen memory ids

_TOPIC = {"managed_memory_topic": None, "custom_memory_topic_label": None}
_MEMORY_FIELDS = {
    "fact": None,
    "scope": None,
    "ttl": None,
    "expire_time": None,
    "metadata": None,
    "topics": [_TOPIC],
    "display_name": None,
    "description": None,
    "revision_ttl": None,
    "revision_expire_time": None,
    "revision_labels": None,
    "disable_memory_revisions": None,
    "name": None,
    "create_time": None,
    "update_time": None,  # output only
}
_GENERATION_OPTIONS = {
    "scope": None,
    "disable_consolidation": None,
    "revision_labels": None,
    "revision_ttl": None,
    "revision_expire_time": None,
    "disable_memory_revisions": None,
    "metadata": None,
    "metadata_merge_strategy": None,
    "allowed_topics": [_TOPIC],
}
_CONTENTS = {"events": [{"content": None, "event_id": None, "event_time": None}]}
_GENERATE_FIELDS = {
    **_GENERATION_OPTIONS,
    "vertex_session_source": {"session": None, "start_time": None, "end_time": None},
    "direct_contents_source": _CONTENTS,
    "direct_memories_source": {"direct_memories": [{"fact": None, "topics": [_TOPIC]}]},
}
_INGEST_FIELDS = {
    **_GENERATION_OPTIONS,
    "stream_id": None,
    "direct_contents_source": _CONTENTS,
    "force_flush": None,
    "generation_trigger_config": {
        "generation_rule": {
            "idle_duration": None,
            "event_count": None,
            "fixed_interval": None,
            "overlap_event_count": None,
        },
    },
}
_METADATA_FILTER = {"key": None, "value": None, "op": None, "negate": None}
_RETRIEVE_FIELDS = {
    "scope": None,
    "filter": None,
    "filter_groups": [{"filters": [_METADATA_FILTER]}],
    "memory_types": None,
    "similarity_search_params": {"search_query": None, "top_k": None},
    "simple_retrieval_params": {"page_size": None, "page_token": None},
}
_PURGE_FIELDS = {"filter": None, "filter_groups": [{"filters": [_METADATA_FILTER]}], "force": None}


class MemoryBankView(VertexView):
    """What the memory views share: scopes, memory lookup, resource shapes.

    A scope comes back as the request gave it (``{"user_id": "pat"}`` gains no
    ``app_name``, an engine id stays an engine id); a memory read without one
    (by name, listed) shows its app by name.
    """

    given_scopes: dict[tuple[str, str], dict[str, str]]
    """The scopes this request named, by (user, other keys): how to write them back."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        self.given_scopes = {}
        super().initial(request, *args, **kwargs)

    def memory_scope(self, value: Any, *, write: bool) -> tuple[str, dict[str, str]]:
        """(user id, other scope keys) of a Vertex scope, checked against the caller's key."""
        scope = dict(mapping(value, "scope"))
        if not scope:
            raise InvalidArgument('A scope is required, e.g. {"user_id": "alice"}.')
        if len(scope) > MAX_SCOPE_KEYS or not all(isinstance(v, str) and v and "*" not in v for v in scope.values()):
            raise InvalidArgument(f"A scope is at most {MAX_SCOPE_KEYS} keys with non-empty string values, no '*'.")
        given = dict(scope)
        app_name = scope.pop("app_name", self.app_name)
        if not names.names_engine(app_name, engine_id=self.engine_id, app_name=self.app_name):
            raise InvalidArgument(
                f"scope.app_name {app_name!r} names another engine: this is {self.engine} ({self.app_name!r});"
                " name it by its app name, engine id or resource name."
            )
        user_id = scope.pop("user_id", "")
        if len(user_id) > MAX_KEY_LENGTH or len(json.dumps(scope, ensure_ascii=False).encode()) > MAX_SCOPE_BYTES:
            raise InvalidArgument(
                f"A scope's user_id is at most {MAX_KEY_LENGTH} characters and its other keys and values"
                f" at most {MAX_SCOPE_BYTES} bytes in all."
            )
        self.scope(user_id or None, write=write)
        if not user_id and self.only_user:
            raise NotFound("Not found.")  # a key of one user has no memories outside that user
        self.given_scopes[(user_id, json.dumps(scope, sort_keys=True))] = given
        return user_id, scope

    def scope_of(self, memory: Memory) -> dict[str, str]:
        """A memory's scope: as this request gave it, else its user and keys with the app by name."""
        given = self.given_scopes.get((memory.user_id, json.dumps(memory.extra_scope, sort_keys=True)))
        if given is not None:
            return given
        return {
            "app_name": memory.app_name,
            **({"user_id": memory.user_id} if memory.user_id else {}),
            **memory.extra_scope,
        }

    def memories(self) -> QuerySet[Memory]:
        """The engine app's current memories (what the Vertex surface shows), narrowed to a one-user key's user."""
        queryset = Memory.objects.current().filter(app_name=self.app_name)
        return queryset.filter(user_id=self.only_user) if self.only_user else queryset

    def memory(self, memory_id: str, *, write: bool, any_status: bool = False) -> Memory:
        """The memory a URL names (active, unless ``any_status``: a rollback may revive a superseded one)."""
        queryset = Memory.objects.filter(app_name=self.app_name) if any_status else self.memories()
        memory = queryset.filter(id=self.memory_uuid(memory_id)).first()
        if memory is None:
            raise NotFound(f"Memory {memory_id} does not exist.")
        self.scope(memory.user_id or None, write=write)
        return memory

    def memory_uuid(self, memory_id: str) -> uuid.UUID:
        """The UUID a memory id stands for: itself, or the one a caller-chosen id maps to."""
        if not memory_id or len(memory_id) > 128 or "\x00" in memory_id:
            raise InvalidArgument("A memory id is 1 to 128 characters.")
        try:
            return uuid.UUID(memory_id)
        except ValueError:
            return uuid.uuid5(_MEMORY_IDS, f"{self.app_name}/{memory_id}")

    def memory_name(self, memory: Memory | uuid.UUID) -> str:
        return names.memory(self.engine, getattr(memory, "id", memory))

    def resource(self, memory: Memory) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.memory_name(memory),
            "fact": memory.text,
            "scope": self.scope_of(memory),
            "createTime": rfc3339(memory.created_at),
            "updateTime": rfc3339(memory.updated_at),
        }
        if memory.memory_type == MemoryKind.STRUCTURED_PROFILE:  # a profile field: its data, not a fact
            del out["fact"]
            out["memoryType"] = "STRUCTURED_PROFILE"
            content = memory.structured_content or {}
            out["structuredContent"] = {"schemaId": content.get("schema_id", ""), "data": content.get("data") or {}}
            return out
        if memory.topic or memory.kind in memory_fields.TOPICS:
            out["topics"] = [memory_fields.topic_id(memory.topic or memory.kind)]
        if memory.metadata:
            out["metadata"] = {key: memory_fields.metadata_value(value) for key, value in memory.metadata.items()}
        if memory.expires_at:
            out["expireTime"] = rfc3339(memory.expires_at)
        return out

    def generated(self, cause: str, made: dict[str, list[str]] | None = None) -> dict[str, Any]:
        """``generatedMemories``: what the revisions written for ``cause`` did, one entry per memory.

        Without revisions (the bank or the request turned them off), what the write says it
        ``made`` (created, updated, superseded ids): the same entries, without ``previousRevision``.
        """
        revisions = MemoryRevision.objects.filter(cause=cause, memory__app_name=self.app_name).select_related("memory")
        if made and not revisions.exists():
            return {"generatedMemories": self.made(made)}
        seen: set[uuid.UUID] = set()
        generated = []
        for revision in revisions.order_by("id"):
            action = ACTIONS.get(revision.action)
            if action is None or revision.memory_id in seen:
                continue
            seen.add(revision.memory_id)
            entry: dict[str, Any] = {"memory": self.resource(revision.memory), "action": action}
            previous = revision.memory.revisions.filter(id__lt=revision.id).order_by("-id").first()
            if previous is not None and action != "CREATED":
                entry["previousRevision"] = names.revision(self.memory_name(revision.memory), previous.id)
            generated.append(entry)
        return {"generatedMemories": generated}

    def made(self, made: dict[str, list[str]]) -> list[dict[str, Any]]:
        actions = {"created": "CREATED", "updated": "UPDATED", "superseded": "DELETED"}
        ids = [(uuid.UUID(memory_id), actions[key]) for key in actions for memory_id in made.get(key) or []]
        rows = Memory.objects.filter(app_name=self.app_name).in_bulk([memory_id for memory_id, _ in ids])
        return [
            {"memory": self.resource(rows[memory_id]), "action": action}
            for memory_id, action in ids
            if memory_id in rows
        ]

    def job_operation(self, job: ConsolidationJob) -> dict[str, Any]:
        name = names.generate_operation(self.engine, job.pk)
        if job.status == JobStatus.FAILED:
            return {"name": name, "done": True, "error": {"code": 13, "message": job.error or "Generation failed."}}
        if job.status != JobStatus.DONE:
            return operation(name, done=False)
        generated = self.generated(consolidation.job_cause(job.pk), job.outcome)
        return operation(name, generated, kind="GenerateMemoriesResponse")


class MemoriesView(MemoryBankView):
    """``{engine}/memories``: create, list."""

    rpcs = {"post": "CreateMemory", "get": "ListMemories"}

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Create a memory in a scope, as stated (no consolidation)."""
        body = message(request.data, _MEMORY_FIELDS)
        user_id, extra_scope = self.memory_scope(body.get("scope"), write=True)
        chosen = request.query_params.get("memoryId") or request.query_params.get("memory_id")
        memory_id = self.memory_uuid(chosen) if chosen else uuid.uuid4()
        if Memory.objects.filter(id=memory_id).exists():
            raise AlreadyExists(f"Memory {chosen} already exists.")
        kind, topic = memory_fields.kind_and_topic(body.get("topics"))
        candidate = services.Candidate(
            text=string(body.get("fact"), "fact", required=True),
            kind=kind,
            topic=topic,
            metadata=memory_fields.plain_metadata(body.get("metadata")),
            expires_at=expiry(body),
            memory_id=memory_id,
        )
        _remember(
            self.app_name,
            user_id,
            [candidate],
            cause="vertex create",
            extra_scope=extra_scope,
            generation=services.Generation(consolidate=False, **memory_fields.revision_options(body)),
            created_directly=True,
        )
        memory = Memory.objects.get(id=memory_id)
        return Response(operation(names.operation(self.memory_name(memory)), self.resource(memory), kind="Memory"))

    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the engine's memories, filtered and ordered."""
        queryset = memory_filters.filtered(self.memories(), request.query_params.get("filter"))
        order = memory_filters.order(request.query_params.get("orderBy") or request.query_params.get("order_by"))
        return Response(page(request, queryset.order_by(*order), "memories", self.resource))


class MemoryView(MemoryBankView):
    """``{engine}/memories/{id}``: get, patch, delete."""

    rpcs = {"get": "GetMemory", "patch": "UpdateMemory", "delete": "DeleteMemory"}

    def get(self, request: Request, memory_id: str, **kwargs: Any) -> Response:
        """Read a memory."""
        return Response(self.resource(self.memory(memory_id, write=False)))

    def patch(self, request: Request, memory_id: str, **kwargs: Any) -> Response:
        """Change a memory's fact, metadata, topics or expiry (a new revision)."""
        body = message(request.data, _MEMORY_FIELDS)
        updatable = {"fact", "metadata", "topics", "ttl", "expire_time"}
        mask = field_mask(request.query_params.get("updateMask") or request.query_params.get("update_mask"), updatable)
        fields = mask if mask is not None else updatable & {name for name, value in body.items() if value is not None}
        memory = self.memory(memory_id, write=True)
        changes: dict[str, Any] = {}
        if "fact" in fields:
            changes["text"] = string(body.get("fact"), "fact", required=True)
        if "metadata" in fields:
            changes["metadata"] = memory_fields.plain_metadata(body.get("metadata"))
        if "topics" in fields:
            changes["kind"], changes["topic"] = memory_fields.kind_and_topic(body.get("topics"))
        if fields & {"ttl", "expire_time"}:
            changes["expires_at"] = expiry(body)
        try:
            memory = services.do_edit_memory(
                memory_id=memory.id,
                app_name=self.app_name,
                user_id=memory.user_id,
                cause="vertex update",
                generation=services.Generation(**memory_fields.revision_options(body)),
                **changes,
            )
        except services.MemoryServiceError as error:
            raise InvalidArgument(str(error)) from error
        return Response(operation(names.operation(self.memory_name(memory)), self.resource(memory), kind="Memory"))

    def delete(self, request: Request, memory_id: str, **kwargs: Any) -> Response:
        """Delete a memory."""
        memory = self.memory(memory_id, write=True)
        services.do_delete_memory(memory_id=memory.id, app_name=self.app_name, user_id=memory.user_id)
        return Response(operation(names.operation(self.memory_name(memory)), kind=EMPTY))


class MemoryOperationView(MemoryBankView):
    """``{memory}/operations/{id}``: Cognizes' create and update operations are done when returned."""

    rpcs = {"get": "GetOperation"}

    def get(self, request: Request, memory_id: str, operation_id: str, **kwargs: Any) -> Response:
        """Read an operation of a memory."""
        memory = self.memory(memory_id, write=False)
        return Response(
            operation(names.operation(self.memory_name(memory), operation_id), self.resource(memory), kind="Memory")
        )


class GenerateView(MemoryBankView, SessionLookup):
    """``{engine}/memories:generate`` from a session, from contents, or from memories stated directly."""

    rpcs = {"post": "GenerateMemories"}

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Generate memories from a session, from contents, or from facts stated directly."""
        body = message(request.data, _GENERATE_FIELDS)
        sources = [
            name
            for name in ("vertex_session_source", "direct_contents_source", "direct_memories_source")
            if body.get(name) is not None
        ]
        if len(sources) != 1:
            raise InvalidArgument("Give one of vertexSessionSource, directContentsSource or directMemoriesSource.")
        metadata, generation = memory_fields.plain_metadata(body.get("metadata")), memory_fields.generation(body)
        if sources == ["direct_memories_source"]:
            return self.remember(body, metadata, generation)
        if sources == ["direct_contents_source"]:
            user_id, extra_scope = self.memory_scope(body.get("scope"), write=True)
            events = memory_fields.contents_events(body["direct_contents_source"])
            job = consolidation.do_enqueue_events(
                app_name=self.app_name,
                user_id=user_id,
                events=events,
                custom_metadata=metadata,
                extra_scope=extra_scope,
                generation=generation,
            )
            return Response(self.job_operation(job))
        return Response(self.job_operation(self.from_session(body, metadata, generation)))

    def remember(self, body: dict[str, Any], metadata: dict[str, Any], generation: services.Generation) -> Response:
        user_id, extra_scope = self.memory_scope(body.get("scope"), write=True)
        stated = body["direct_memories_source"].get("direct_memories") or []
        if not 1 <= len(stated) <= MAX_DIRECT_MEMORIES:
            raise InvalidArgument(f"Give 1 to {MAX_DIRECT_MEMORIES} direct memories.")
        candidates = [memory_fields.stated(item, metadata) for item in stated]
        cause = f"vertex generate {uuid.uuid4().hex[:12]}"
        outcome = _remember(
            self.app_name, user_id, candidates, cause=cause, extra_scope=extra_scope, generation=generation
        )
        made = {name: [str(i) for i in getattr(outcome, name)] for name in ("created", "updated", "superseded")}
        generated = self.generated(cause, made)
        return Response(operation(names.operation(self.engine), generated, kind="GenerateMemoriesResponse"))

    def from_session(
        self, body: dict[str, Any], metadata: dict[str, Any], generation: services.Generation
    ) -> ConsolidationJob:
        source = body["vertex_session_source"]
        name = string(source.get("session"), "vertexSessionSource.session", required=True)
        session_id = names.session_of(name, int(self.kwargs["engine_id"]))
        if session_id is None:
            raise InvalidArgument(
                "vertexSessionSource.session names a session of this engine: …/reasoningEngines/ID/sessions/SID."
            )
        owner = self.owner(session_id, write=True)
        user_id, extra_scope = self.memory_scope(body.get("scope") or {"user_id": owner}, write=True)
        start = timestamp(source["start_time"], "startTime").timestamp() if source.get("start_time") else None
        end = timestamp(source["end_time"], "endTime").timestamp() if source.get("end_time") else None
        if start is None and end is None and not extra_scope and user_id == owner:
            return consolidation.do_enqueue_session(
                app_name=self.app_name,
                user_id=owner,
                session_id=session_id,
                custom_metadata=metadata,
                generation=generation,
            )
        stored = session_services.get_events_after(app_name=self.app_name, user_id=owner, session_id=session_id) or []
        events = [
            event
            for _, event in stored
            if (start is None or event["timestamp"] >= start) and (end is None or event["timestamp"] < end)
        ]
        return consolidation.do_enqueue_events(
            app_name=self.app_name,
            user_id=user_id,
            events=events,
            session_id=session_id,
            custom_metadata=metadata,
            extra_scope=extra_scope,
            generation=generation,
        )


class IngestEventsView(MemoryBankView):
    """``{engine}/memories:ingestEvents``: events of a stream, turned into memories by a worker.

    Without a generation rule (or with ``forceFlush``) the stream's pending events
    are generated from at once; with one, once ``eventCount`` events are pending,
    the stream has been idle for ``idleDuration``, or ``fixedInterval`` has passed.
    A request without ``generationTriggerConfig`` follows the engine's
    ``generationConfig.generation_trigger_config``.
    """

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Send events of a stream, for a worker to turn into memories."""
        body = message(request.data, _INGEST_FIELDS)
        user_id, extra_scope = self.memory_scope(body.get("scope"), write=True)
        rule = (body.get("generation_trigger_config") or {}).get("generation_rule") or {}
        if rule.get("overlap_event_count"):
            raise InvalidArgument("overlapEventCount is not supported yet.")
        trigger = consolidation.StreamTrigger(
            event_count=integer(rule.get("event_count"), "eventCount", default=0, low=0, high=10_000) or None,
            idle=duration(rule["idle_duration"], "idleDuration") if rule.get("idle_duration") else None,
            interval=duration(rule["fixed_interval"], "fixedInterval") if rule.get("fixed_interval") else None,
        )
        if body.get("generation_trigger_config") is None:  # the engine's generationConfig says when
            trigger = consolidation.StreamTrigger.of_bank(services.get_bank_config(self.app_name))
        job = consolidation.do_ingest_stream(
            app_name=self.app_name,
            user_id=user_id,
            stream=string(body.get("stream_id"), "streamId"),
            events=memory_fields.contents_events(body.get("direct_contents_source") or {}),
            extra_scope=extra_scope,
            custom_metadata=memory_fields.plain_metadata(body.get("metadata")),
            generation=memory_fields.generation(body),
            trigger=trigger,
            force_flush=body.get("force_flush") is True,
        )
        return Response(self.job_operation(job))


class RetrieveView(MemoryBankView):
    """``{engine}/memories:retrieve``: hybrid search (similarity) or the newest memories (simple), exact scope.

    Besides Vertex's filter fields, ``valid_time="<RFC 3339>"`` retrieves what held at that
    moment (superseded memories included if they held then), Cognizes' point-in-time search.
    """

    rpcs = {"post": "RetrieveMemories"}

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Retrieve a scope's memories: the most similar to a query, or the newest."""
        body = message(request.data, _RETRIEVE_FIELDS)
        user_id, extra_scope = self.memory_scope(body.get("scope"), write=False)
        conditions = filters.parse(body.get("filter"), fields={"fact", "create_time", "update_time", "valid_time"})
        as_of = memory_filters.valid_time(conditions)
        conditions = [c for c in conditions if c.field != "valid_time"]
        groups = memory_filters.metadata_groups(body.get("filter_groups"))
        types = _memory_types(body.get("memory_types"))
        held = Memory.objects.held_at(as_of) if as_of else Memory.objects.current()
        scoped = held.filter(app_name=self.app_name, user_id=user_id, extra_scope=extra_scope, memory_type__in=types)
        similarity = body.get("similarity_search_params")
        if similarity is None:
            params = body.get("simple_retrieval_params") or {}
            size = integer(params.get("page_size"), "pageSize", default=DEFAULT_TOP_K, low=1, high=10**9)
            memories = memory_filters.matching(memory_filters.filtered(scoped, conditions=conditions), groups)
            first = memories[: min(size, MAX_TOP_K)]
            # No nextPageToken: Google's client fails to page :retrieve; list memories to page.
            return Response({"retrievedMemories": [{"memory": self.resource(m)} for m in first]})
        query = string(similarity.get("search_query"), "searchQuery", required=True)
        top_k = min(integer(similarity.get("top_k"), "topK", default=DEFAULT_TOP_K, low=1, high=10**9), MAX_TOP_K)
        narrowed = bool(conditions or groups)
        hits = search_memories(
            app_name=self.app_name,
            user_id=user_id,
            query=query,
            extra_scope=extra_scope,
            limit=top_k * 5 if narrowed else top_k,
            as_of=as_of,
            memory_types=types,
        )
        rows = {
            m.id: m
            for m in memory_filters.filtered(scoped.filter(id__in=[hit.id for hit in hits]), conditions=conditions)
        }
        found = [(rows[hit.id], hit.score) for hit in hits if hit.id in rows]
        found = [(memory, score) for memory, score in found if memory_filters.matches_groups(memory, groups)][:top_k]
        best = _best_score()
        return Response(
            {
                "retrievedMemories": [
                    {"memory": self.resource(memory), "distance": round(max(0.0, 1 - score / best), 6)}
                    for memory, score in found
                ]
            }
        )


class PurgeView(MemoryBankView):
    """``{engine}/memories:purge``: count what a filter matches; delete it only with ``force``."""

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Count the memories a filter matches, and delete them if force is set."""
        body = message(request.data, _PURGE_FIELDS)
        force = body.get("force") is True
        if force:
            self.scope(None, write=True)
        matched = memory_filters.matching(
            memory_filters.filtered(self.memories(), body.get("filter")),
            memory_filters.metadata_groups(body.get("filter_groups")),
        )
        if force:
            for memory in matched:
                services.do_delete_memory(memory_id=memory.id, app_name=self.app_name, user_id=memory.user_id)
        return Response(operation(names.operation(self.engine), {"purgeCount": str(len(matched))}))


def _remember(app_name: str, user_id: str, candidates: list[services.Candidate], **options: Any) -> services.Outcome:
    try:
        return services.do_remember(app_name=app_name, user_id=user_id, candidates=candidates, **options)
    except services.MemoryServiceError as error:
        raise InvalidArgument(str(error)) from error
    except IntegrityError as error:  # a memory id chosen twice at the same moment
        raise AlreadyExists("That memory already exists.") from error


def _memory_types(value: Any) -> tuple[str, ...]:
    """The memory types a retrieve asks for (``memoryTypes``): natural-language ones unless it names others."""
    if value is None:
        return (MemoryKind.NATURAL_LANGUAGE,)
    if not isinstance(value, list):
        raise InvalidArgument("'memoryTypes' must be a list.")
    types = {enum(kind, MemoryType, "memoryTypes") for kind in value} - {"MEMORY_TYPE_UNSPECIFIED"}
    return tuple(memory_filters.MEMORY_TYPES[t] for t in sorted(types)) or (MemoryKind.NATURAL_LANGUAGE,)


def _best_score() -> float:
    """The fused score of a memory first in both rank lists at full strength: distance 0."""
    weights = search_weights()
    return (weights.vector + weights.keyword) / (weights.rrf_k + 1)
