"""An answer to a question from the passages a search found: RAG Engine's ``:askContexts``.

The search finds the passages; a model reads them beside the question and answers from them
alone, in the question's language. The model is any ADK model by name (``cognizes.infra.models``),
``COGNIZES_ANSWER_MODEL``, at ``COGNIZES_ANSWER_MODEL_API_BASE`` for LiteLLM's. Cognizes has no model
of its own: with none configured there is no answer (''), never one made up, and the caller still
has the passages. A model that fails is asked once more, then the answer is '' and a warning logged:
the passages were found, and a person is waiting for them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.conf import settings

from cognizes.infra.models import ask, model_named
from knowledge_app.search import MAX_QUERY_CHARS

logger = logging.getLogger(__name__)

ATTEMPTS = 2
PASSAGE_CHARS = 4000
"""A longer passage is cut here in the prompt, which stays bounded however large the chunks."""

INSTRUCTIONS = """You answer questions from the numbered passages you are given, and from nothing else.
Answer in the language of the question, briefly. Cite the passages you used by their numbers, like [1].
If the passages do not hold the answer, say that they do not."""


def answer(question: str, passages: Sequence[tuple[str, str]]) -> str:
    """The configured model's answer to ``question`` from ``passages`` (source name, text), best first; '' when no
    model is configured, no passage was found, or the model failed twice."""
    name = settings.COGNIZES_ANSWER_MODEL
    if not name or not passages:
        return ""
    try:
        model = model_named(
            name,
            api_base=settings.COGNIZES_ANSWER_MODEL_API_BASE,
            timeout=settings.COGNIZES_ANSWER_MODEL_TIMEOUT_SECONDS,
        )
    except ValueError as error:  # no class serves the name: the operator's setting, not the caller's request
        logger.warning("knowledge answer: COGNIZES_ANSWER_MODEL names no model (%s): no answer is given", error)
        return ""
    prompt = prompt_for(question, passages)
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return ask(model, prompt, system_instruction=INSTRUCTIONS).strip()
        except Exception as error:  # the model is outside: any failure of it is the model's
            logger.warning(
                "knowledge answer with %s: attempt %d of %d failed: %s: %s",
                name,
                attempt,
                ATTEMPTS,
                type(error).__name__,
                str(error)[:300],
            )
    return ""


def prompt_for(question: str, passages: Sequence[tuple[str, str]]) -> str:
    """The question and the passages, numbered from 1 in the order found, each with the file it is from."""
    numbered = [
        f"[{number}] ({source})\n{text[:PASSAGE_CHARS]}" if source else f"[{number}]\n{text[:PASSAGE_CHARS]}"
        for number, (source, text) in enumerate(passages, 1)
    ]
    return f"Question: {question[:MAX_QUERY_CHARS]}\n\nPassages:\n\n" + "\n\n".join(numbered)
