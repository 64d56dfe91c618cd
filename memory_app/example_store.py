"""Example Store rules (issue 47 item 3): stores of an app, examples upserted, searched by similarity, fetched, removed.

Examples come in as plain data (``NewExample``: the surface has read the wire); their search keys are embedded
by the embedder memories use, so an example store, memories and documents agree on what "similar" means in every
language the model reads. Similarity is the cosine of the query's vector and the key's, in [0, 1] as the embedder
rescales it (``Embedder.similarity``: e5's unrelated texts are 0, not 0.8): what ADK's ``VertexAiExampleStore``
compares to its 0.5 threshold.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from pgvector.django import CosineDistance

from cognizes.infra.embedders import get_embedder
from memory_app.example_models import ExampleStore, StoredExample

MAX_EXAMPLES_PER_CALL = 100
MAX_SEARCH_KEY_LENGTH = 10_000
MAX_TOP_K = 100
STORE_FIELDS = frozenset({"display_name", "description"})


class ExampleError(ValueError):
    """What a client sent cannot be stored or searched as it is (the surface answers 400)."""


class ExampleExists(ExampleError):
    """An upsert without ``overwrite`` named an example id the store already has."""


@dataclass(frozen=True)
class NewExample:
    example_id: str
    """'' for one the store names."""
    display_name: str
    search_key: str
    content: dict[str, Any]
    """The storedContentsExample to keep and return, as the surface spells it."""
    function_names: list[str]


@dataclass(frozen=True)
class ExampleFilter:
    """Which examples a fetch or a removal means: every condition given must hold (ids, keys, functions)."""

    example_ids: list[str]
    search_keys: list[str]
    function_names: list[str]
    all_functions: bool = False
    """CONTAINS_ALL (every name called) rather than CONTAINS_ANY."""

    @property
    def empty(self) -> bool:
        return not (self.example_ids or self.search_keys or self.function_names)


def do_create_store(
    *, app_name: str, display_name: str, description: str = "", embedding_model: str = ""
) -> ExampleStore:
    if not display_name or len(display_name) > 256:
        raise ExampleError("displayName is 1 to 256 characters.")
    return ExampleStore.objects.create(
        app_name=app_name, display_name=display_name, description=description, embedding_model=embedding_model[:256]
    )


def stores_of(app_name: str) -> QuerySet[ExampleStore]:
    return ExampleStore.objects.filter(app_name=app_name).order_by("id")


def get_store(*, app_name: str, store_id: int) -> ExampleStore | None:
    return stores_of(app_name).filter(pk=store_id).first()


def do_update_store(store: ExampleStore, changes: dict[str, str]) -> ExampleStore:
    unknown = set(changes) - STORE_FIELDS
    if unknown:
        raise ExampleError(f"An example store's {', '.join(sorted(unknown))} cannot be changed.")
    if "display_name" in changes and not 0 < len(changes["display_name"]) <= 256:
        raise ExampleError("displayName is 1 to 256 characters.")
    for name, value in changes.items():
        setattr(store, name, value)
    store.save(update_fields=[*changes, "update_time"])
    return store


def do_delete_store(store: ExampleStore) -> None:
    """Delete the store and its examples."""
    with transaction.atomic():
        store.delete()


def do_upsert_examples(
    store: ExampleStore, examples: list[NewExample | ExampleError], *, overwrite: bool
) -> list[StoredExample | ExampleError]:
    """Store each example (one refused by the surface stays its error), in order: an example without an id gets one;
    an id the store has is replaced only with ``overwrite`` (else ``ExampleExists`` in its place)."""
    if len(examples) > MAX_EXAMPLES_PER_CALL:
        raise ExampleError(f"At most {MAX_EXAMPLES_PER_CALL} examples per call.")
    for example in examples:
        if isinstance(example, NewExample) and not 0 < len(example.search_key) <= MAX_SEARCH_KEY_LENGTH:
            raise ExampleError(f"A search key is 1 to {MAX_SEARCH_KEY_LENGTH} characters.")
    valid = [example for example in examples if isinstance(example, NewExample)]
    embedder = get_embedder()
    vectors = iter(embedder.embed_documents([example.search_key for example in valid]) if valid else [])
    out: list[StoredExample | ExampleError] = []
    with transaction.atomic():
        for example in examples:
            if not isinstance(example, NewExample):
                out.append(example)
                continue
            vector = next(vectors)
            example_id = example.example_id or uuid.uuid4().hex
            values = {
                "display_name": example.display_name,
                "search_key": example.search_key,
                "content": example.content,
                "function_names": example.function_names,
                "embedding": vector,
                "embedder": embedder.id,
            }
            existing = StoredExample.objects.select_for_update().filter(store=store, example_id=example_id).first()
            if existing is None:
                out.append(StoredExample.objects.create(store=store, example_id=example_id, **values))
            elif not overwrite:
                out.append(ExampleExists(f"Example {example_id} already exists: upsert it with overwrite."))
            else:
                for name, value in values.items():
                    setattr(existing, name, value)
                existing.save()
                out.append(existing)
    return out


def search_examples(
    store: ExampleStore, *, query: str, function_names: list[str], all_functions: bool = False, top_k: int = 10
) -> list[tuple[StoredExample, float]]:
    """The store's examples most like ``query``, best first, with their similarity in [0, 1]."""
    if not query.strip():
        raise ExampleError("The search key is empty.")
    if not 1 <= top_k <= MAX_TOP_K:
        raise ExampleError(f"topK is 1 to {MAX_TOP_K}.")
    embedder = get_embedder()
    vector = embedder.embed_query(query[:MAX_SEARCH_KEY_LENGTH])
    examples = _with_functions(StoredExample.objects.filter(store=store), function_names, all_functions)
    found = examples.annotate(distance=CosineDistance("embedding", vector)).order_by("distance", "pk")[:top_k]
    return [(example, embedder.similarity(1.0 - float(example.distance))) for example in found]


def _with_functions(
    examples: QuerySet[StoredExample], names: list[str], all_functions: bool
) -> QuerySet[StoredExample]:
    if not names:
        return examples
    return (
        examples.filter(function_names__contains=names)
        if all_functions
        else examples.filter(function_names__overlap=names)
    )


def examples_matching(store: ExampleStore, which: ExampleFilter) -> QuerySet[StoredExample]:
    """The store's examples ``which`` names (all of them for an empty filter), oldest first."""
    examples = StoredExample.objects.filter(store=store)
    if which.example_ids:
        examples = examples.filter(example_id__in=which.example_ids)
    if which.search_keys:
        examples = examples.filter(search_key__in=which.search_keys)
    return _with_functions(examples, which.function_names, which.all_functions).order_by("create_time", "pk")


def do_remove_examples(store: ExampleStore, which: ExampleFilter) -> list[str]:
    """Remove the examples ``which`` names (it must name some: an empty filter would empty the store); their ids."""
    if which.empty:
        raise ExampleError("Name the examples to remove: exampleIds or storedContentsExampleFilter.")
    with transaction.atomic():
        removed = list(examples_matching(store, which).select_for_update().values_list("example_id", flat=True))
        StoredExample.objects.filter(store=store, example_id__in=removed).delete()
    return removed
