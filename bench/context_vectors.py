"""Benchmark: what a memory's context costs its embedding (``memory_app.services.remember.memory_vectors``).

What is measured, and why
-------------------------
A memory's vector leans towards its context (the turn it answered), which raised LoCoMo recall
(docs/measured.md); a context embedded on its own costs about a second embedding per memory. Contexts that
are turns of the same call take those memories' vectors, so between people the cost should stay near the text
alone; between a user and an agent every context is the agent's and is embedded.
For LoCoMo conversations remembered as the two paths do (``bench/memory_quality.py``):

* ``add_memory``: every turn ``"<speaker>: <text>"``, its context the turn before, 64 a call;
* sessions by the speaker: every session one call, each turn's text as said, its author the speaker, its
  context the turn before as said (as the offline extractor hands them over);
* a user and an agent: the same sessions, the first speaker's turns a user's memories (author ``user``) and the
  other's the agent's replies, which are contexts only: each context is embedded on its own (its end);

each call is embedded both ways in turns, in this process: ``memory_vectors`` (text and context) and the text
alone (``embed_documents`` of what is said, led by its speaker), the rule before contexts counted. Printed: the
texts each way embeds and the CPU seconds (``time.process_time``, the model's threads included), with the
ratio of the two: the figure a busy machine blurs least.

    .venv/bin/python bench/context_vectors.py PATH/locomo_dev.json [--conversations 1] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from itertools import groupby
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.memory_quality import BATCH, Conversation, batched, load_locomo, preceding_turns
from bench.timing import no_gc


def add_memory_calls(conversation: Conversation) -> list[list[tuple[str, str, str]]]:
    before = preceding_turns(conversation.turns)
    return [[(t.text, t.speaker, before[t.dia_id]) for t in batch] for batch in batched(conversation.turns, BATCH)]


def session_calls(conversation: Conversation) -> list[list[tuple[str, str, str]]]:
    calls = []
    for _, turns in groupby(conversation.turns, key=lambda t: t.session):
        said = [(t.text.split(": ", 1)[1], t.speaker) for t in turns]
        calls.append([(text, who, said[i - 1][0] if i else "") for i, (text, who) in enumerate(said)])
    return calls


def user_and_agent_calls(conversation: Conversation) -> list[list[tuple[str, str, str]]]:
    """The first speaker as an agent's user, the other as the agent: only the user's turns are memories, and each
    context is the agent's turn before it, which no memory says."""
    user = conversation.turns[0].speaker
    return [
        [(text, "user", context) for text, who, context in call if who == user] for call in session_calls(conversation)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path, help="LoCoMo JSON (e.g. ../shared/data/locomo/locomo_dev.json)")
    parser.add_argument("--conversations", type=int, default=1, help="the first N conversations")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of both ways, in turns")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
    import django

    django.setup()
    from cognizes.infra.embedders import get_embedder
    from memory_app.services.remember import Said, _with_speaker, memory_vectors

    embedder = get_embedder()
    embedder.embed_documents(["warm-up"])
    conversations = load_locomo(args.path, args.conversations)
    embedded: list[str] = []
    counting = embedder.embed_documents

    def count(texts: list[str]) -> object:
        embedded.extend(texts)
        return counting(texts)

    ways: dict[str, Callable[[list[Said]], object]] = {
        "text alone": lambda said: embedder.embed_documents([_with_speaker(s.text, s.author) for s in said]),
        "text and context": lambda said: memory_vectors(embedder, said),
    }
    print(
        f"{embedder.id}; {', '.join(c.sample_id for c in conversations)}; load average "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"
    )
    paths = {
        "add_memory": add_memory_calls,
        "sessions by the speaker": session_calls,
        "a user and an agent": user_and_agent_calls,
    }
    for path, calls_of in paths.items():
        calls = [[Said(*s) for s in call] for c in conversations for call in calls_of(c)]
        seconds = dict.fromkeys(ways, 0.0)
        texts = dict.fromkeys(ways, 0)
        embedder.embed_documents = count  # type: ignore[method-assign]  # counted for this run, on purpose
        for _ in range(args.rounds):
            for call in calls:
                for way, embed in ways.items():
                    embedded.clear()
                    with no_gc():
                        start = time.process_time()
                        embed(call)
                        seconds[way] += time.process_time() - start
                    texts[way] += len(embedded)
        del embedder.embed_documents
        memories = sum(len(call) for call in calls)
        alone, both = seconds["text alone"], seconds["text and context"]
        print(
            f"{path}: {memories} memories in {len(calls)} calls; texts embedded a round, alone "
            f"{texts['text alone'] // args.rounds}, with contexts {texts['text and context'] // args.rounds}; "
            f"CPU {alone:.1f} s and {both:.1f} s over {args.rounds} rounds: ratio {both / alone:.3f}"
        )


if __name__ == "__main__":
    main()
