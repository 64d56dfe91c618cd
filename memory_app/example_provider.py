"""ADK's example provider on the Example Store in PostgreSQL: ``ExampleTool`` few-shots for agents that run beside
the database (``cognizes.adk``), with no HTTP in between.

It answers as ADK's ``VertexAiExampleStore`` does from Vertex (issue 47 item 3): the ten most similar examples
of the store, those of similarity 0.5 and up, each the example's search key as the user's turn and its expected
contents as the model's. Agents that reach Cognizes over HTTP use ``cognizes.vertex.VertexAiExampleStore``.
"""

from __future__ import annotations

from google.adk.examples.base_example_provider import BaseExampleProvider
from google.adk.examples.example import Example
from google.genai import types
from typing_extensions import override

from cognizes.infra.db_threads import call_from_sync
from memory_app import example_store

TOP_K = 10
SIMILARITY_THRESHOLD = 0.5
"""ADK's own (``vertex_ai_example_store._SIMILARITY_THRESHOLD``): below it an example misleads more than it helps."""


class PostgresExampleStore(BaseExampleProvider):
    """Few-shot examples for ADK's ``ExampleTool`` from an app's Example Store (``exampleStores/{store_id}``)."""

    def __init__(self, store_id: int | str, *, app_name: str) -> None:
        self.store_id = int(str(store_id).rsplit("/", 1)[-1])
        self.app_name = app_name

    @override
    def get_examples(self, query: str) -> list[Example]:
        return call_from_sync(self._examples, query)

    def _examples(self, query: str) -> list[Example]:
        store = example_store.get_store(app_name=self.app_name, store_id=self.store_id)
        if store is None:
            raise ValueError(f"The app {self.app_name} has no example store {self.store_id}.")
        if not query.strip():
            return []
        found = example_store.search_examples(store, query=query, function_names=[], top_k=TOP_K)
        out = []
        for example, similarity in found:
            if similarity < SIMILARITY_THRESHOLD:
                continue
            expected = example.content.get("contentsExample", {}).get("expectedContents", [])
            out.append(
                Example(
                    input=types.Content(role="user", parts=[types.Part.from_text(text=example.search_key)]),
                    output=[types.Content.model_validate(each["content"]) for each in expected if each.get("content")],
                )
            )
        return out
