"""``{engine}/memories:retrieveProfiles``: a scope's structured profiles, as Vertex AI Memory Bank answers them.

``{"scope": {...}}`` → ``{"profiles": {schemaId: {"schemaId", "profile": {field: value}}}}``, the scope
matched exactly (another user's profile, or one kept under further scope keys, is another profile),
one entry per schema that has data. Profiles are filled by generation (memory_app.profiles); no client
writes them directly. ADK's ``retrieve_profiles`` and its ``load_profiles`` tool read this answer as is,
so ``profile`` is a plain JSON object.
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from memory_app.profiles import get_profiles
from vertex_app.memories import MemoryBankView
from vertex_app.wire import message


class RetrieveProfilesView(MemoryBankView):
    """Retrieve the structured profiles of exactly one scope."""

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Retrieve a scope's structured profiles, by schema id."""
        body = message(request.data, {"scope": None})
        user_id, extra_scope = self.memory_scope(body.get("scope"), write=False)
        profiles = get_profiles(self.app_name, user_id, extra_scope)
        return Response(
            {
                "profiles": {
                    schema_id: {"schemaId": schema_id, "profile": profile}
                    for schema_id, profile in sorted(profiles.items())
                    if profile
                }
            }
        )
