"""The rerank stage of knowledge search: a model orders the fused candidates for the query.

Fusion (``knowledge_app.search``) ranks by words and by a small embedding's idea of
meaning; a model reading the query beside each passage judges better which one
answers it. So a reranked search takes more candidates than it returns
(``candidate_count``), numbers them in the prompt, and asks the model for the
numbers best first (a JSON list: ``parse_order`` tolerates prose and fences around
it and drops numbers it does not know or has seen). Candidates the model leaves
out follow the ones it ranked, in their fused order. The model is any ADK model by
name (``cognizes.infra.models``): Gemini's, or LiteLLM's ``provider/model`` at
``COGNIZES_RERANK_MODEL_API_BASE``.

A reranker is an improvement, never a dependency: a model that fails or answers
no list of numbers is asked once more, then the fused order is returned, a
warning logged, and each hit says ``failed`` (``Hit.rerank``).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings

from cognizes.infra.models import ask, model_named
from knowledge_app.search import MAX_QUERY_CHARS, Hit, search_chunks
from knowledge_app.services import KnowledgeError

logger = logging.getLogger(__name__)

ATTEMPTS = 2
"""Calls of the model per search: a second chance for a model that stumbled, and no more (a person waits)."""
MIN_CANDIDATES, MAX_CANDIDATES = 20, 60
PASSAGE_CHARS = 2000
"""A longer chunk is cut here in the prompt: its beginning says what it is about, and the prompt stays bounded."""
MAX_ANSWER_CHARS = 20_000
RANKED, UNRANKED, FAILED = "ranked", "unranked", "failed"
RERANK_STATES = (RANKED, UNRANKED, FAILED)
"""``Hit.rerank``: the model placed it; the model left it out (it follows, in fused order); the model failed
(every hit is in fused order)."""

INSTRUCTIONS = """You rank passages for a search engine.
Given a query and numbered passages, order the passages by how well they answer the query, best first.
Leave out passages that do not help answer it. The query and the passages may be in any language.
Answer with JSON only: a list of passage numbers, for example [3, 1, 2]."""


class RerankRefused(KnowledgeError):
    """A rerank that cannot be asked for: no model named, or one the server does not offer."""


class MalformedAnswer(ValueError):
    """The model's answer holds no JSON list of the passages' numbers."""


@dataclass(frozen=True)
class Ranked:
    """A search's hits, best first, and what the rerank stage did."""

    hits: list[Hit]
    model: str = ""
    """The model asked to rerank ('': no rerank was asked)."""
    error: str = ""
    """Why the fused order was kept though a rerank was asked ('': it was not)."""

    @property
    def reranked(self) -> bool:
        """The hits are in the model's order."""
        return bool(self.model) and not self.error


def candidate_count(top_k: int) -> int:
    """How many fused candidates the model sees for ``top_k`` hits: enough to lift one from below the cut."""
    return max(top_k, min(max(3 * top_k, MIN_CANDIDATES), MAX_CANDIDATES))


def model_for(rerank: bool | None, rerank_model: str | None) -> str:
    """The model that reranks a search ('' none): the one named, else ``COGNIZES_RERANK_MODEL`` unless ``rerank``
    is False. ``RerankRefused`` for a rerank asked without a model to do it, or a name not offered."""
    if rerank is False:
        if rerank_model:
            raise RerankRefused("rerank is false, yet rerank_model names a model: leave one out.")
        return ""
    if rerank_model:
        allowed = settings.COGNIZES_RERANK_MODELS
        if allowed and rerank_model not in allowed and rerank_model != settings.COGNIZES_RERANK_MODEL:
            raise RerankRefused(f"No rerank model {rerank_model!r} here; ask for one of: {', '.join(allowed)}.")
        return rerank_model
    if rerank and not settings.COGNIZES_RERANK_MODEL:
        raise RerankRefused("Name the model that reranks: this server has no default (COGNIZES_RERANK_MODEL).")
    return settings.COGNIZES_RERANK_MODEL


def search_and_rerank(
    *, query: str, top_k: int = 10, rerank: bool | None = None, rerank_model: str | None = None, **search: Any
) -> Ranked:
    """``search_chunks`` with the rerank stage: ``rerank`` True/False asks for it or not (None: as the server's
    default model says), ``rerank_model`` names the model. The other arguments are ``search_chunks``'s."""
    name = model_for(rerank, rerank_model)
    if not name:
        return Ranked(search_chunks(query=query, top_k=top_k, **search))
    try:
        model = _model(name)  # before the search: a name no model has is the caller's mistake, said as such
    except RerankRefused as error:
        if rerank_model:
            raise
        model, unbuilt = None, str(error)  # the server's default: its operator's to fix, not the caller's
    fused = search_chunks(query=query, top_k=candidate_count(top_k), **search)
    if model is None:
        logger.warning(
            "knowledge rerank: COGNIZES_RERANK_MODEL names no model (%s): the fused order is returned", unbuilt
        )
        return _failed(fused[:top_k], name, unbuilt)
    return rerank_hits(query, fused, model=model, name=name, top_k=top_k)


def _model(name: str) -> Any:
    try:
        return model_named(
            name,
            api_base=settings.COGNIZES_RERANK_MODEL_API_BASE,
            timeout=settings.COGNIZES_RERANK_MODEL_TIMEOUT_SECONDS,
        )
    except ValueError as error:  # LLMRegistry: no class serves the name
        raise RerankRefused(f"No model is named {name!r}: {error}") from None


def rerank_hits(query: str, hits: list[Hit], *, model: Any, name: str, top_k: int) -> Ranked:
    """The ``top_k`` of ``hits`` (fused order) in the order ``model`` gives them, or in fused order if it fails."""
    if len(hits) < 2:  # nothing to order: no call
        return Ranked([_placed(hit, 1, RANKED) for hit in hits[:top_k]], model=name)
    prompt = prompt_for(query, hits)
    for attempt in range(1, ATTEMPTS + 1):
        try:
            order = parse_order(ask(model, prompt, system_instruction=INSTRUCTIONS), len(hits))
            break
        except Exception as error:  # the model is outside: any failure of it is the model's
            reason = f"{type(error).__name__}: {str(error)[:300]}"
            logger.warning("knowledge rerank with %s: attempt %d of %d failed: %s", name, attempt, ATTEMPTS, reason)
    else:
        logger.warning("knowledge rerank with %s failed %d times: the fused order is returned", name, ATTEMPTS)
        return _failed(hits[:top_k], name, reason)
    ranked = set(order)
    ordered = [(hits[i], RANKED) for i in order] + [(hit, UNRANKED) for i, hit in enumerate(hits) if i not in ranked]
    return Ranked([_placed(hit, rank, state) for rank, (hit, state) in enumerate(ordered[:top_k], 1)], model=name)


def _failed(hits: list[Hit], name: str, reason: str) -> Ranked:
    return Ranked([replace(hit, fused_score=hit.score, rerank=FAILED) for hit in hits], model=name, error=reason)


def _placed(hit: Hit, rank: int, state: str) -> Hit:
    """``hit`` at ``rank`` of the model's order: its score says the place (1, 1/2, 1/3…), the fusion's is kept."""
    return replace(hit, score=1.0 / rank, fused_score=hit.score, rerank=state)


def prompt_for(query: str, hits: list[Hit]) -> str:
    """The query and the candidates, numbered from 1 in fused order, each with its document and heading."""
    passages = []
    for number, hit in enumerate(hits, 1):
        where = " › ".join(part for part in (hit.document_name, hit.heading) if part)
        passages.append(f"[{number}] ({where})\n{hit.text[:PASSAGE_CHARS]}")
    return f"Query: {query[:MAX_QUERY_CHARS]}\n\nPassages:\n\n" + "\n\n".join(passages)


def parse_order(answer: str, count: int) -> list[int]:
    """The passages' indexes (from 0) in the order the model's answer gives them.

    The answer's JSON list with the most known numbers is taken (the last of equals: a model that echoes a
    passage's ``[2]`` before answering ends with its list); a number may be an integer or a string of digits.
    Numbers outside 1..``count`` and repeats are dropped. ``MalformedAnswer`` when no list names a passage.
    """
    answer = answer[:MAX_ANSWER_CHARS]
    decoder, best = json.JSONDecoder(), list[int]()
    for bracket in re.finditer(r"\[", answer):
        try:
            value, _ = decoder.raw_decode(answer, bracket.start())
        except ValueError:
            continue
        if isinstance(value, list) and len(known := _known(value, count)) >= max(len(best), 1):
            best = known
    if not best:
        raise MalformedAnswer(f"no list of passage numbers in the model's answer: {answer[:200]!r}")
    return best


_NUMBER = re.compile(r"[0-9]{1,6}")


def _known(items: list[Any], count: int) -> list[int]:
    seen: list[int] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            continue
        if isinstance(item, str):
            if not _NUMBER.fullmatch(item.strip()):
                continue
            item = int(item.strip())
        if 1 <= item <= count and item - 1 not in seen:
            seen.append(item - 1)
    return seen
