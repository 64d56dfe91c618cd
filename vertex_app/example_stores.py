"""Vertex's Example Store (v1beta1 ``exampleStores``) on memory_app's example store: stores and their examples.

What the clients send (``../shared/agent-engine-stores-wire.md`` §1): agentplatform 2.6's ``client.example_stores``
(get, upsertExamples, searchExamples, fetchExamples, removeExamples; its own create is broken, so stores are made
as the proto and GAPIC do: ``POST {parent}/exampleStores``) and ADK's ``VertexAiExampleStore`` (one
``:searchExamples`` with a ``contentSearchKey``, keeping scores of 0.5 and up). A store is a location resource,
the caller's key's app's, as RAG Engine's corpora are; any key of the app searches and fetches, a key of the whole
app changes. Bodies come in either spelling (the SDK forwards a caller's dicts as they are); contents are read as
``google.genai`` Contents and answered in camelCase.
"""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import ValidationError
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import check_scope, check_url, parse_id
from cognizes.access.key_kinds import check_whole_app
from cognizes.access.models import ApiKey
from memory_app import example_store
from memory_app.example_models import ExampleStore, StoredExample
from vertex_app import errors, names, wire
from vertex_app.base import EMPTY, VertexSurface, operation, page

_CONTENTS_EXAMPLE = {"contents": None, "expected_contents": [{"content": None}]}
_GENERATION = {"last_entry": None}
_EXAMPLE: wire.Spec = {
    "example_id": None,
    "display_name": None,
    "create_time": None,
    "stored_contents_example": {
        "search_key": None,
        "contents_example": _CONTENTS_EXAMPLE,
        "search_key_generation_method": _GENERATION,
    },
}
_FUNCTIONS = {"values": None, "array_operator": None}
_STORE: wire.Spec = {
    "name": None,
    "display_name": None,
    "description": None,
    "example_store_config": {"vertex_embedding_model": None},
    "create_time": None,
    "update_time": None,
}
_FILTER = {"search_keys": None, "function_names": _FUNCTIONS}
_OPERATORS = {"": False, "ARRAY_OPERATOR_UNSPECIFIED": False, "CONTAINS_ANY": False, "CONTAINS_ALL": True}
_OPERATOR_NUMBERS = {0: "", 1: "CONTAINS_ANY", 2: "CONTAINS_ALL"}


class ExampleStoreView(VertexSurface):
    """A path of the Example Store: the stores are the caller's key's app's."""

    reads_only = False
    """A POST that only reads (search, fetch): any key of the app may call it."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        check_url(request, kwargs)
        if not isinstance(request.auth, ApiKey):
            raise exceptions.NotAuthenticated("The Example Store takes a Cognizes API key.")
        self.app_name = request.auth.app_name
        self.caller = check_scope(request, self.app_name, None, write=False if self.reads_only else None)
        if request.method not in ("GET", "HEAD") and not self.reads_only:
            check_whole_app(self.caller.only_user, self.app_name, "change the app's example stores")
        self.prefix = names.location_prefix(kwargs.get("project"), kwargs.get("location"))

    def store(self, store_id: str) -> ExampleStore:
        number = parse_id(store_id)
        found = (
            example_store.get_store(app_name=self.app_name, store_id=number)
            if number is not None and number < 2**63
            else None
        )
        if found is None:
            raise errors.NotFound(f"exampleStores/{store_id} does not exist.")
        return found

    def store_name(self, store: ExampleStore) -> str:
        return f"{self.prefix}exampleStores/{store.pk}"

    def store_json(self, store: ExampleStore) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.store_name(store),
            "displayName": store.display_name,
            "createTime": wire.rfc3339(store.create_time),
            "updateTime": wire.rfc3339(store.update_time),
        }
        if store.description:
            out["description"] = store.description
        if store.embedding_model:
            out["exampleStoreConfig"] = {"vertexEmbeddingModel": store.embedding_model}
        return out


class ExampleStoresView(ExampleStoreView):
    """``{location}/exampleStores`` (and ``:create``): create a store, list the app's."""

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Create an example store (done at once: the operation's response is the store)."""
        body = wire.message(request.data, _STORE)
        config = body.get("example_store_config") or {}
        try:
            store = example_store.do_create_store(
                app_name=self.app_name,
                display_name=wire.string(body.get("display_name"), "displayName", required=True),
                description=wire.string(body.get("description"), "description"),
                embedding_model=wire.string(config.get("vertex_embedding_model"), "vertexEmbeddingModel"),
            )
        except example_store.ExampleError as error:
            raise errors.InvalidArgument(str(error)) from error
        name = self.store_name(store)
        return Response(operation(names.operation(name), self.store_json(store), kind="ExampleStore"))

    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the app's example stores (pageSize, pageToken)."""
        if request.query_params.get("filter"):
            raise errors.InvalidArgument("Example stores are listed without a filter.")
        return Response(page(request, example_store.stores_of(self.app_name), "exampleStores", self.store_json))


class CreateExampleStoreView(ExampleStoreView):
    """``{location}/exampleStores:create``: the proto's other spelling of create."""

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Create an example store (the :create spelling; done at once)."""
        return ExampleStoresView.post(self, request, **kwargs)  # type: ignore[arg-type]  # the same view state


class ExampleStoreDetailView(ExampleStoreView):
    """``exampleStores/{id}``: get, patch, delete."""

    def get(self, request: Request, store_id: str, **kwargs: Any) -> Response:
        """Read an example store."""
        return Response(self.store_json(self.store(store_id)))

    def patch(self, request: Request, store_id: str, **kwargs: Any) -> Response:
        """Change an example store's display name or description (updateMask, else the fields sent)."""
        body = wire.message(request.data, _STORE)
        mask = wire.field_mask(request.query_params.get("updateMask"), set(example_store.STORE_FIELDS))
        fields = (
            mask if mask is not None else example_store.STORE_FIELDS & {k for k, v in body.items() if v is not None}
        )
        store = self.store(store_id)
        changes = {name: wire.string(body.get(name), wire.camel(name)) for name in fields}
        try:
            example_store.do_update_store(store, changes)
        except example_store.ExampleError as error:
            raise errors.InvalidArgument(str(error)) from error
        return Response(self.store_json(store))

    def delete(self, request: Request, store_id: str, **kwargs: Any) -> Response:
        """Delete an example store and its examples."""
        store = self.store(store_id)
        name = self.store_name(store)
        example_store.do_delete_store(store)
        return Response(operation(names.operation(name), kind=EMPTY))


class ExampleStoreOperationView(ExampleStoreView):
    """``exampleStores/{id}/operations/{op}``: the store's operations are done when returned."""

    def get(self, request: Request, store_id: str, operation_id: str, **kwargs: Any) -> Response:
        """Read an operation of an example store."""
        store = self.store(store_id)
        if not names.issued_operation(operation_id):
            raise errors.NotFound(f"Operation {operation_id} does not exist.")
        name = names.operation(self.store_name(store), operation_id)
        return Response(operation(name, self.store_json(store), kind="ExampleStore"))


class UpsertExamplesView(ExampleStoreView):
    """``exampleStores/{id}:upsertExamples``."""

    def post(self, request: Request, store_id: str, **kwargs: Any) -> Response:
        """Add or replace examples; each answers its example or its error, in order."""
        body = wire.message(request.data, {"examples": None, "overwrite": None})
        sent = body.get("examples")
        if not isinstance(sent, list) or not sent:
            raise errors.InvalidArgument("'examples' is a list of 1 or more examples.")
        if len(sent) > example_store.MAX_EXAMPLES_PER_CALL:
            raise errors.InvalidArgument(f"At most {example_store.MAX_EXAMPLES_PER_CALL} examples per call.")
        store = self.store(store_id)
        try:
            stored = example_store.do_upsert_examples(
                store, [_new_example(each) for each in sent], overwrite=body.get("overwrite") is True
            )
        except example_store.ExampleError as error:
            raise errors.InvalidArgument(str(error)) from error
        return Response({"results": [_result(each) for each in stored]})


class SearchExamplesView(ExampleStoreView):
    """``exampleStores/{id}:searchExamples``: similarity search over the search keys."""

    reads_only = True

    def post(self, request: Request, store_id: str, **kwargs: Any) -> Response:
        """Find the examples most like a search key (or the last content's text), best first."""
        body = wire.message(
            request.data,
            {
                "stored_contents_example_parameters": {
                    "search_key": None,
                    "content_search_key": {"contents": None, "search_key_generation_method": _GENERATION},
                    "function_names": _FUNCTIONS,
                },
                "top_k": None,
            },
        )
        parameters = body.get("stored_contents_example_parameters") or {}
        query = wire.string(parameters.get("search_key"), "searchKey")
        if not query and parameters.get("content_search_key"):
            query = _last_text(_contents(parameters["content_search_key"].get("contents"), "contentSearchKey.contents"))
        if not query:
            raise errors.InvalidArgument("Search by storedContentsExampleParameters.searchKey or contentSearchKey.")
        names_, all_functions = _functions(parameters.get("function_names"))
        top_k = wire.integer(body.get("top_k"), "topK", default=10, low=1, high=example_store.MAX_TOP_K)
        store = self.store(store_id)
        try:
            found = example_store.search_examples(
                store, query=query, function_names=names_, all_functions=all_functions, top_k=top_k
            )
        except example_store.ExampleError as error:
            raise errors.InvalidArgument(str(error)) from error
        return Response({"results": [{"example": _example_json(e), "similarityScore": s} for e, s in found]})


class FetchExamplesView(ExampleStoreView):
    """``exampleStores/{id}:fetchExamples``: examples by id, search key or function, in pages."""

    reads_only = True

    def post(self, request: Request, store_id: str, **kwargs: Any) -> Response:
        """Read examples by id and/or filter (all of them without either), a page at a time."""
        body = wire.message(
            request.data,
            {"example_ids": None, "stored_contents_example_filter": _FILTER, "page_size": None, "page_token": None},
        )
        which = _which(body)
        store = self.store(store_id)
        query = {"pageSize": body.get("page_size"), "pageToken": body.get("page_token")}
        return Response(
            page(request, example_store.examples_matching(store, which), "examples", _example_json, query=query)
        )


class RemoveExamplesView(ExampleStoreView):
    """``exampleStores/{id}:removeExamples``."""

    def post(self, request: Request, store_id: str, **kwargs: Any) -> Response:
        """Remove the examples named by id and/or filter; their ids."""
        body = wire.message(request.data, {"example_ids": None, "stored_contents_example_filter": _FILTER})
        which = _which(body)
        store = self.store(store_id)
        try:
            removed = example_store.do_remove_examples(store, which)
        except example_store.ExampleError as error:
            raise errors.InvalidArgument(str(error)) from error
        return Response({"exampleIds": removed})


def _strings(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(each, str) and 0 < len(each) <= 10_000 for each in value):
        raise errors.InvalidArgument(f"'{name}' is a list of strings.")
    if len(value) > 1000:
        raise errors.InvalidArgument(f"'{name}' has at most 1000 entries.")
    return value


def _functions(value: Any) -> tuple[list[str], bool]:
    """A functionNames filter: the names, and whether all must be called (CONTAINS_ALL)."""
    if not value:
        return [], False
    operator = value.get("array_operator")
    if isinstance(operator, int) and not isinstance(operator, bool):
        operator = _OPERATOR_NUMBERS.get(operator, "?")
    if (operator is not None and not isinstance(operator, str)) or str(operator or "").upper() not in _OPERATORS:
        raise errors.InvalidArgument("functionNames.arrayOperator is CONTAINS_ANY or CONTAINS_ALL.")
    return _strings(value.get("values"), "functionNames.values"), _OPERATORS[str(operator or "").upper()]


def _which(body: dict[str, Any]) -> example_store.ExampleFilter:
    conditions = body.get("stored_contents_example_filter") or {}
    function_names, all_functions = _functions(conditions.get("function_names"))
    return example_store.ExampleFilter(
        example_ids=_strings(body.get("example_ids"), "exampleIds"),
        search_keys=_strings(conditions.get("search_keys"), "searchKeys"),
        function_names=function_names,
        all_functions=all_functions,
    )


def _contents(value: Any, name: str) -> list[dict[str, Any]]:
    """Contents as Google's Content messages (either spelling in), camelCase out; 400 for what is not one."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > 1000:
        raise errors.InvalidArgument(f"'{name}' is a list of contents.")
    try:
        return [
            types.Content.model_validate(each).model_dump(mode="json", by_alias=True, exclude_none=True)
            for each in value
        ]
    except ValidationError as error:
        raise errors.InvalidArgument(
            f"'{name}' holds something that is not a Content: {error.errors()[0]['msg']}"
        ) from None


def _last_text(contents: list[dict[str, Any]]) -> str:
    """The text of the last content (what ``searchKeyGenerationMethod.lastEntry`` makes the search key of)."""
    if not contents:
        return ""
    return " ".join(part["text"] for part in contents[-1].get("parts", []) if part.get("text")).strip()


def _new_example(sent: Any) -> example_store.NewExample | example_store.ExampleError:
    """An example as memory_app takes it, or the error that refuses it (answered in its place, not for the call)."""
    try:
        example = wire.message(sent, _EXAMPLE, where="example")
        stored = example.get("stored_contents_example")
        if not stored or not stored.get("contents_example"):
            raise errors.InvalidArgument("An example is a storedContentsExample with a contentsExample.")
        contents = _contents(stored["contents_example"].get("contents"), "contents")
        expected = [
            {"content": _contents([each.get("content") or {}], "expectedContents.content")[0]}
            for each in stored["contents_example"].get("expected_contents") or []
        ]
        search_key = wire.string(stored.get("search_key"), "searchKey") or _last_text(contents)
        if not search_key:
            raise errors.InvalidArgument("An example needs a searchKey, or contents whose last entry has text.")
        example_id = wire.string(example.get("example_id"), "exampleId")
        if len(example_id) > 256:
            raise errors.InvalidArgument("exampleId is at most 256 characters.")
        content: dict[str, Any] = {
            "searchKey": search_key,
            "contentsExample": {"contents": contents, "expectedContents": expected},
        }
        if stored.get("search_key_generation_method") is not None:
            content["searchKeyGenerationMethod"] = {"lastEntry": {}}
        called = [
            part["functionCall"]["name"]
            for each in expected
            for part in each["content"].get("parts", [])
            if isinstance(part.get("functionCall"), dict) and part["functionCall"].get("name")
        ]
        return example_store.NewExample(
            example_id=example_id,
            display_name=wire.string(example.get("display_name"), "displayName")[:256],
            search_key=search_key,
            content=content,
            function_names=sorted(set(called)),
        )
    except errors.InvalidArgument as error:
        return example_store.ExampleError(str(error.detail))


def _example_json(example: StoredExample) -> dict[str, Any]:
    out: dict[str, Any] = {
        "exampleId": example.example_id,
        "storedContentsExample": example.content,
        "createTime": wire.rfc3339(example.create_time),
    }
    if example.display_name:
        out["displayName"] = example.display_name
    return out


def _result(each: StoredExample | example_store.ExampleError) -> dict[str, Any]:
    if isinstance(each, StoredExample):
        return {"example": _example_json(each)}
    code = 6 if isinstance(each, example_store.ExampleExists) else 3  # google.rpc.Code ALREADY_EXISTS, INVALID_ARGUMENT
    return {"status": {"code": code, "message": str(each)}}
