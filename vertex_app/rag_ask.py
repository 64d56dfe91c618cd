"""RAG Engine's ``:askContexts`` (agentplatform's ``rag.ask_contexts``): retrieval with an answer.

agentplatform 2.6 posts ``{"query": RagQuery, "tools": [Tool]}`` to ``…/locations/{l}/:askContexts``
(express: ``v1beta1/:askContexts``); the corpora are in the tools, as a Gemini request names them
(``tools[].retrieval.vertexRagStore.ragResources``). The contexts are ``:retrieveContexts``'s for that
store and query; ``response`` is the answer of ``COGNIZES_ANSWER_MODEL`` from them
(``knowledge_app.answers``), left out when no model is configured or it failed. Other tools (Google
Search, Vertex AI Search, functions) run on Google's servers and are refused with a 400 that says so.
"""

from __future__ import annotations

from typing import Any, cast

from rest_framework.request import Request
from rest_framework.response import Response

from knowledge_app import answers
from vertex_app import errors, wire
from vertex_app.rag import RETRIEVE_SPEC, RetrieveContextsView

_QUERY_SPEC = cast(wire.Spec, RETRIEVE_SPEC["query"])
_RESOURCE = {"rag_corpus": None, "rag_file_ids": None}
_TOOL_STORE_SPEC: wire.Spec = {  # tool.proto's VertexRagStore (the Gemini tool's), not RetrieveContexts' own
    "rag_resources": [_RESOURCE],
    "rag_corpora": None,
    "similarity_top_k": None,
    "vector_distance_threshold": None,
    "rag_retrieval_config": _QUERY_SPEC["rag_retrieval_config"],
    "store_context": None,
}
_RETRIEVAL_SPEC: wire.Spec = {"vertex_rag_store": _TOOL_STORE_SPEC, "disable_attribution": None}
_ASK_SPEC: wire.Spec = {"parent": None, "query": _QUERY_SPEC, "tools": None}


class AskContextsView(RetrieveContextsView):
    def post(self, request: Request, **kwargs: Any) -> Response:
        """Retrieve from the corpora the tools name, and answer the query from what was found."""
        given = wire.message(request.data, _ASK_SPEC)  # the tools are read by _store, which says what is Google's
        query = given.get("query") or {}
        store = _store(given.get("tools"))
        if query.get("similarity_top_k") is None and store.get("similarity_top_k") is not None:
            query["similarity_top_k"] = store["similarity_top_k"]
        if query.get("rag_retrieval_config") is None and store.get("rag_retrieval_config") is not None:
            query["rag_retrieval_config"] = store["rag_retrieval_config"]
        contexts = self.contexts(
            {key: store[key] for key in ("rag_resources", "rag_corpora", "vector_distance_threshold") if key in store},
            query,
        )
        found: dict[str, Any] = {"contexts": {"contexts": contexts}}
        answer = answers.answer(query["text"], [(c["sourceDisplayName"], c["text"]) for c in contexts])
        return Response({**({"response": answer} if answer else {}), **found})


def _store(tools: Any) -> dict[str, Any]:
    """The one ``VertexRagStore`` the tools name (several: their resources together)."""
    if tools is None or tools == []:
        raise errors.InvalidArgument("Name a corpus: tools[].retrieval.vertexRagStore.ragResources[].ragCorpus.")
    if not isinstance(tools, list):
        raise errors.InvalidArgument("'tools' must be a list.")
    stores: list[dict[str, Any]] = []
    for number, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise errors.InvalidArgument(f"'tools[{number}]' must be a JSON object.")
        kinds = {wire.snake(key): value for key, value in tool.items() if value is not None}
        others = sorted(set(kinds) - {"retrieval"})
        if others:
            raise errors.InvalidArgument(
                f"Cognizes answers askContexts from its own corpora only (tools[].retrieval.vertexRagStore): "
                f"tools[{number}].{wire.camel(others[0])} runs on Google's servers."
            )
        retrieval = kinds.get("retrieval")
        if retrieval is None:
            continue
        if not isinstance(retrieval, dict):
            raise errors.InvalidArgument(f"'tools[{number}].retrieval' must be a JSON object.")
        given = {key: value for key, value in retrieval.items() if value is not None}
        google = sorted(wire.camel(wire.snake(key)) for key in given if wire.snake(key) not in _RETRIEVAL_SPEC)
        if google:
            raise errors.InvalidArgument(
                f"Cognizes retrieves from its own corpora only: tools[{number}].retrieval takes a vertexRagStore, "
                f"not {google[0]} (Vertex AI Search and external APIs are Google's)."
            )
        read = wire.message(given, _RETRIEVAL_SPEC, where=f"tools[{number}].retrieval")
        if read.get("vertex_rag_store") is not None:
            stores.append(read["vertex_rag_store"])
    if not stores:
        raise errors.InvalidArgument("Name a corpus: tools[].retrieval.vertexRagStore.ragResources[].ragCorpus.")
    merged = dict(stores[0])
    for store in stores[1:]:
        merged["rag_resources"] = [*(merged.get("rag_resources") or []), *(store.get("rag_resources") or [])]
        merged["rag_corpora"] = [*(merged.get("rag_corpora") or []), *(store.get("rag_corpora") or [])]
    return merged


class AskContextsAsTheProtoSpellsItView(AskContextsView):
    def post(self, request: Request, **kwargs: Any) -> Response:
        """The same ask at …/locations/{l}:askContexts, the path of the proto's HTTP rule."""
        return super().post(request, **kwargs)
