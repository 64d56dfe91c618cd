"""Knowledge for ADK agents: ``search_knowledge``, a tool any model can call, over an app's corpora.

It is an ordinary function tool (a function call the model makes and Cognizes
answers), so it works with every model: ADK's ``VertexAiRagRetrieval`` hands
retrieval to Google's servers for Gemini models, which cannot reach this store.
The audit and the traces see its calls like any tool's. With ``COGNIZES_RERANK_MODEL`` set, its
searches are reranked by that model (``knowledge_app.rerank``). ``runner_for(...,
knowledge=[…])`` gives it to the agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext

from cognizes.access import limits
from cognizes.infra.db_threads import run_in_db_thread
from knowledge_app import services
from knowledge_app.rerank import search_and_rerank

PASSAGES = 5


def knowledge_tool(app_name: str, corpora: Sequence[int | str]) -> FunctionTool:
    """The tool, searching the app's corpora named (by id, or by display name: found when called)."""

    def corpus_ids() -> list[int]:
        ids = [c for c in corpora if isinstance(c, int)]
        names = [c for c in corpora if isinstance(c, str)]
        found = services.corpora(app_name).filter(display_name__in=names).values_list("id", flat=True)
        return list(services.corpora(app_name).filter(id__in=ids).values_list("id", flat=True)) + list(found)

    def search(query: str, user_id: str) -> dict[str, Any]:
        try:
            hits = search_and_rerank(
                app_name=app_name,
                user_id=user_id,
                corpus_ids=corpus_ids(),
                query=query[: limits.max_query_chars()],  # a model's long query: cut, not refused
                top_k=PASSAGES,
            ).hits
        except services.EmbeddedWithAnother as refused:  # the model says so to the user instead of the turn failing
            return {"passages": [], "error": str(refused)}
        return {
            "passages": [
                {"text": hit.text, "document": hit.document_name, "heading": hit.heading, "source": hit.source_uri}
                for hit in hits
            ]
        }

    async def search_knowledge(query: str, tool_context: ToolContext) -> dict[str, Any]:
        """Searches the documents this agent may read (handbooks, product docs, notes) for passages that answer
        the query. Use it for facts the documents hold; quote what it returns and name the document.

        Args:
          query: What to find, as a question or key words.
        """
        # The turn's user's documents and the app's, never another user's (issue 41 H), as that user's key would.
        return await run_in_db_thread(search, query, tool_context.user_id)

    return FunctionTool(search_knowledge)
