"""Memory over MCP: the tools every app's MCP server offers beside its registry's, for the caller's user (issue 45).

    remember          store a fact about the user (said again: merged into what is known)
    search_memories   the user's memories that best answer a question (hybrid search, any language)
    list_memories     the user's memories, newest first
    forget_memory     stop one memory from being found (its revisions stay; the admin can restore it)

Claude Desktop, Cursor or any MCP client thus gets the memory an ADK agent has. The rules are
``memory_app``'s (``services.do_remember`` as Memory Bank's direct create, ``search.search_memories``,
``services.do_forget``); this module only describes the tools, checks their arguments and translates.
The user is the one the branch authenticated (a user's key, or ``X-User-Id`` with a key of the whole app): every
read and write is scoped to it by the services, so another user's memory is never found, listed or forgotten, and
a memory id of another user is answered as an unknown one.

A bad call (empty or too long text, a non-string, ``1e400`` as a limit, an unknown id) is a tool result with
``isError`` and a message saying what to send, so a model can correct itself (MCP: input errors are tool errors).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from uuid import UUID

import mcp_types as types
from rest_framework.exceptions import ParseError

from cognizes.access import limits
from cognizes.access.parsers import refuse_unstorable
from cognizes.infra.db_threads import run_in_db_thread
from memory_app import services
from memory_app.models import Memory
from memory_app.search import search_memories
from tools_app.services import InvalidArguments, check_arguments

MAX_LIMIT = 50
"""The most memories one search or listing answers: a model's context, not a bulk export."""
_MAX_ERROR_CHARS = 500
"""A refusal quotes at most this much (jsonschema quotes the value it refused, which may be a megabyte)."""

_LIMIT = {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 10}

TOOLS: dict[str, types.Tool] = {
    tool.name: tool
    for tool in [
        types.Tool(
            name="remember",
            description=(
                "Save a fact about the user to long-term memory, so that it can be recalled in later conversations. "
                "Use it when the user tells you something worth keeping (a preference, a plan, a name, a detail of "
                "their life) or asks you to remember something. Write one self-contained statement in the user's "
                "language, e.g. 'Prefers window seats on flights.'. Saying a known fact again updates it instead "
                "of storing it twice."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "text": {
                        "type": "string",
                        "description": f"The fact, one statement (at most {services.MAX_MEMORY_LENGTH} characters).",
                    }
                },
                "required": ["text"],
                "additionalProperties": False,
            },
            annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
        ),
        types.Tool(
            name="search_memories",
            description=(
                "Find what you remember about the user that answers a question, best match first (by meaning and "
                "by words, in any language). Use it before answering anything that may depend on the user's "
                "preferences, history or earlier conversations, e.g. 'where does the user live?'."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "A question or a few words about what to find."},
                    "limit": {**_LIMIT, "description": "How many memories at most."},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            annotations=types.ToolAnnotations(read_only_hint=True),
        ),
        types.Tool(
            name="list_memories",
            description=(
                "List what you remember about the user, newest first. Use it when the user asks what you know "
                "about them, or to find the id of a memory to forget; to answer a question, search_memories."
            ),
            input_schema={
                "type": "object",
                "properties": {"limit": {**_LIMIT, "description": "How many memories at most."}},
                "additionalProperties": False,
            },
            annotations=types.ToolAnnotations(read_only_hint=True),
        ),
        types.Tool(
            name="forget_memory",
            description=(
                "Forget one memory about the user, by its id (from search_memories or list_memories), so that it "
                "is no longer recalled. Use it when the user asks you to forget something, or when a memory is "
                "wrong or no longer true (then remember the correct fact)."
            ),
            input_schema={
                "type": "object",
                "properties": {"memory_id": {"type": "string", "description": "The id of the memory to forget."}},
                "required": ["memory_id"],
                "additionalProperties": False,
            },
            annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
        ),
    ]
}

READ_ONLY = frozenset(name for name, tool in TOOLS.items() if tool.annotations and tool.annotations.read_only_hint)
"""The memory tools a read-only key may call."""


class MemoryToolError(ValueError):
    """A call the memory tools refuse: the message tells the caller what to send instead."""


async def call(name: str, arguments: Any, *, app_name: str, user_id: str, cause: str) -> types.CallToolResult:
    """Run memory tool ``name`` for ``user_id`` of ``app_name``; a refused call is a result with ``isError``."""
    try:
        refuse_unstorable(arguments)  # NUL and 1e400, as the HTTP API refuses them: PostgreSQL stores neither
        check_arguments(TOOLS[name].input_schema, arguments)
        result = await run_in_db_thread(_RUN[name], arguments, app_name=app_name, user_id=user_id, cause=cause)
    except ParseError as unstorable:
        return _refusal(name, str(unstorable.detail))
    except (InvalidArguments, MemoryToolError, services.MemoryServiceError, limits.LimitExceeded) as refused:
        return _refusal(name, str(getattr(refused, "reason", refused)))
    text = json.dumps(result, ensure_ascii=False, default=str)
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=result)


def _refusal(name: str, message: str) -> types.CallToolResult:
    """A tool error naming the tool; a long message loses its middle (the value quoted), not what is wrong."""
    if len(message) > _MAX_ERROR_CHARS:
        half = _MAX_ERROR_CHARS // 2
        message = f"{message[:half]} … {message[-half:]}"
    return types.CallToolResult(content=[types.TextContent(text=f"{name}: {message}")], is_error=True)


def _remember(arguments: dict[str, Any], *, app_name: str, user_id: str, cause: str) -> dict[str, Any]:
    candidate = services.Candidate(text=arguments["text"])
    services.check_candidate(candidate)  # do_remember skips a blank text silently; a caller is told
    outcome = services.do_remember(
        app_name=app_name, user_id=user_id, candidates=[candidate], cause=cause, created_directly=True
    )
    if outcome.created:
        return {"id": str(outcome.created[0]), "status": "remembered"}
    return {"id": str(outcome.updated[0]), "status": "merged into a memory that said the same"}


def _search(arguments: dict[str, Any], *, app_name: str, user_id: str, cause: str) -> dict[str, Any]:
    query = arguments["query"]
    if not query.strip():
        raise MemoryToolError("The query needs text: a question or a few words about what to find.")
    hits = search_memories(app_name=app_name, user_id=user_id, query=query, limit=arguments.get("limit", 10))
    return {
        "memories": [
            {"id": str(hit.id), "text": hit.text, "created_at": _when(hit.created_at), "score": round(hit.score, 4)}
            for hit in hits
        ]
    }


def _list(arguments: dict[str, Any], *, app_name: str, user_id: str, cause: str) -> dict[str, Any]:
    # Of the user's own scope only, as search reads it: memories of further scope keys (Vertex's) are other scopes'.
    memories = (
        Memory.objects.for_scope(app_name, user_id)
        .current()
        .statements()
        .filter(extra_scope={})
        .order_by("-updated_at", "id")[: arguments.get("limit", 10)]
    )
    return {
        "memories": [
            {"id": str(memory.id), "text": memory.text, "created_at": _when(memory.created_at)} for memory in memories
        ]
    }


def _forget(arguments: dict[str, Any], *, app_name: str, user_id: str, cause: str) -> dict[str, Any]:
    memory_id = arguments["memory_id"]
    try:
        UUID(memory_id)
    except ValueError:
        raise MemoryToolError(
            f"{memory_id[:64]!r} is not a memory id; search_memories and list_memories give them."
        ) from None
    memory = services.do_forget(memory_id=memory_id, app_name=app_name, user_id=user_id, cause=cause)
    return {"id": str(memory.id), "status": "forgotten"}


def _when(moment: datetime) -> str:
    return moment.isoformat()


_RUN = {"remember": _remember, "search_memories": _search, "list_memories": _list, "forget_memory": _forget}
