"""Memory rules: remembering (with deduplication), editing, forgetting, erasing.

Every change writes a ``MemoryRevision`` in the same transaction (unless the app's memory bank
config, or the request, turns revisions off). Writes to one
scope (app, user) take a transaction-level advisory lock, so two consolidation
jobs for one user cannot both decide that a memory is new and create it twice.
Search lives in ``memory_app.search``. The rules live by what they do —
``remember``, ``edit``, ``erase``, ``bank`` (an app's memory bank config), and
``base`` for what all share — and are imported from here.
"""

from __future__ import annotations

from memory_app.services.bank import (
    NO_REVISIONS,
    Customization,
    check_bank_config,
    check_revision_exists,
    check_topic,
    customization_for,
    do_configure_bank,
    get_customization,
    scope_keys_of,
)
from memory_app.services.base import (
    MAX_MEMORY_LENGTH,
    Candidate,
    Expiry,
    Generation,
    MemoryNotFound,
    MemoryServiceError,
    Outcome,
    RevisionMark,
    get_bank_config,
)
from memory_app.services.edit import (
    do_delete_memory,
    do_edit_memory,
    do_forget,
    do_reembed,
    do_restore,
    do_rollback,
    do_update_memory,
)
from memory_app.services.erase import (
    SessionForgetting,
    do_erase_app,
    do_erase_user,
    do_forget_session_memories,
)
from memory_app.services.remember import (
    NEAR_DUPLICATE_SIMILARITY,
    check_candidate,
    do_remember,
    merge_metadata,
)

__all__ = [
    "MAX_MEMORY_LENGTH",
    "NEAR_DUPLICATE_SIMILARITY",
    "NO_REVISIONS",
    "Candidate",
    "Customization",
    "Expiry",
    "Generation",
    "MemoryNotFound",
    "MemoryServiceError",
    "Outcome",
    "RevisionMark",
    "SessionForgetting",
    "check_bank_config",
    "check_candidate",
    "check_revision_exists",
    "check_topic",
    "customization_for",
    "do_configure_bank",
    "do_delete_memory",
    "do_edit_memory",
    "do_erase_app",
    "do_erase_user",
    "do_forget",
    "do_forget_session_memories",
    "do_reembed",
    "do_remember",
    "do_restore",
    "do_rollback",
    "do_update_memory",
    "get_bank_config",
    "get_customization",
    "merge_metadata",
    "scope_keys_of",
]
