"""Benchmark: the HTTP API (uvicorn) against the same operations called in-process.

What the HTTP layer costs. Two hot operations of an agent runtime are timed both
ways, on one scratch database (``cognizes_bench_api``) of the same PostgreSQL:

* ``append``  store an ADK event in a session.
  HTTP: ``POST .../sessions/{id}/events/`` with ``{"event", "expected_version"}``.
  In-process: what the view does after parsing, called directly:
  ``trim_temp_state`` → ``to_new_event`` → ``sessions_app.services.do_append_event``,
  starting from the ADK ``Event`` object an in-process caller holds.
* ``search``  hybrid memory search (query embedding + one SQL statement), limit 10.
  HTTP: ``POST .../memories/search/``. In-process:
  ``memory_app.search.search_memories``, with ``reinforce=True`` as the view has it
  (the access count is bumped on a background database thread), so both sides
  do the same work.

The HTTP side is a real server, ``python -m uvicorn cognizes.asgi:application
--workers N --http httptools --loop uvloop --lifespan off`` (access log off; N is
``--web-workers``, one per core by default as under ``make run``), sharing this process's Redis
(``REDIS_URL``) for the throttle, whose rate is raised (``COGNIZES_API_RATE``) so
that it counts but never refuses. The client is ``httpx`` with one keep-alive
connection per client. So the HTTP figures include the client library, JSON
encoding, the loopback socket, uvicorn's HTTP parsing, Django's middleware, DRF
(API key lookup, throttle round trips to Redis, validation, serialisers) and the
hop from the event loop to the thread that runs sync views.

The server takes its connections from a pool of ``--pool-size`` (default 20, as
``make run`` does; ``DATABASE_POOL_SIZE``). With ``--pool-size 0`` it runs with
``DATABASE_CONN_MAX_AGE=0`` unless ``--conn-max-age`` says otherwise: each request
opens and closes its connection. (Under Django's own ASGI handler, which ran each
request on a new thread, persistent connections were never reused, and with the
setting's default, 600 s, they piled up until PostgreSQL refused more and the API
answered 500; cognizes.infra.asgi_handler's threads live on, but that case was not
measured again.)

Each operation runs sequentially (one client, ``--appends`` / ``--searches``
requests) and with ``--concurrency`` clients at once (threads, each with its own
client or database connection, the same requests split between them); we report
requests/s over the whole batch and p50/p95 of single requests. Every append
client writes its own session and sends back the version it was given, so there
are no conflicts. Searches run against ``--memories`` varied sentences of one
user, stored with ``do_remember`` beforehand, with varied questions.

Besides req/s and p50/p95, each row shows the connections opened per request
(``pg/req``: PostgreSQL sessions of the scratch database, from
``pg_stat_database``; ``redis/req``: the Redis server's connection count), and a
``404 floor`` row times a URL no route matches: httpx, uvicorn and Django's
middleware with no DRF and no database, the fixed cost of any request. The cost
of opening one connection of each kind is printed after the table.

The machine is small and shared, so rounds are interleaved: in each round every
(operation, concurrency) pair runs HTTP and in-process back to back, the one that
goes first alternating, and the table shows medians over rounds. Garbage
collection is off while the clock runs; each client makes one untimed request
first (opening its connection, loading the model in the server). ``DJANGO_DEBUG``
is forced off in both processes (debug mode records every query). The server
inherits this process's environment, so embedder settings (``--embedder-threads``,
or ``OMP_*`` variables for the OpenMP engine of the default embedder) apply to
both sides alike.

    .venv/bin/python bench/api.py [--rounds N] [--concurrency C] [--embedder-threads N] [--quick]
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import api_adk
from bench.http_load import ClientFactory, Load, run_load, start_server, stop_server
from bench.scratch import close_django_connections, recreate_databases, with_database

os.environ["DJANGO_SETTINGS_MODULE"] = "cognizes.settings"
os.environ["DJANGO_DEBUG"] = "false"

from cognizes.infra import local

BENCH_DB = "cognizes_bench_api"
APP = "bench_api"
APPEND_USER = "appender"
SEARCH_USER = "searcher"
SEARCH_LIMIT = 10
REMEMBER_BATCH = 64
QUESTIONS = 100
"""Different questions; searches cycle through them."""
CONNECTION_STATS_DELAY = 0.5
HTTP = "HTTP"
LOCAL = "in-process"
APPEND = "append"
SEARCH = "search"
FLOOR = "404 floor"
NOOP = "no-op app"


@dataclass(frozen=True)
class Sizes:
    appends: int = 300
    searches: int = 200
    memories: int = 500
    concurrency: int = 4

    @classmethod
    def quick(cls, concurrency: int) -> Sizes:
        return cls(appends=40, searches=20, memories=64, concurrency=concurrency)


# ---------------------------------------------------------------------------
# Scratch database and server
# ---------------------------------------------------------------------------


def analyze(database_url: str) -> None:
    """Planner statistics for the tables just filled, as autovacuum would gather them."""
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("ANALYZE")


class BackgroundFailures(logging.Handler):
    """Counts (instead of printing) failures of this process's background database work."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.errors: Counter[str] = Counter()
        self.logger = logging.getLogger("cognizes.infra.db_threads")

    def emit(self, record: logging.LogRecord) -> None:
        error = record.exc_info[1] if record.exc_info else None
        self.errors[f"{type(error).__name__}: {str(error).splitlines()[0]}" if error else record.getMessage()] += 1

    def __enter__(self) -> BackgroundFailures:
        self.logger.addHandler(self)
        self.logger.propagate = False
        return self

    def __exit__(self, *exc: object) -> None:
        self.logger.removeHandler(self)
        self.logger.propagate = True


# ---------------------------------------------------------------------------
# Test data: events, memories, questions
# ---------------------------------------------------------------------------

PEOPLE = [
    "sister Maya",
    "brother Tom",
    "mother",
    "father",
    "colleague Priya",
    "friend Jonas",
    "manager Elena",
    "neighbour Mr. Okafor",
    "daughter Lily",
    "son Ben",
    "partner Sam",
    "cousin Aiko",
    "grandmother Rosa",
    "best friend Karim",
    "uncle Pedro",
    "flatmate Chloe",
]
CITIES = [
    "Lisbon",
    "Osaka",
    "Toronto",
    "Nairobi",
    "Berlin",
    "Austin",
    "Edinburgh",
    "Seoul",
    "Valparaíso",
    "Krakow",
    "Melbourne",
    "Marrakesh",
    "Oslo",
    "Hanoi",
    "Bologna",
    "Denver",
]
FOODS = [
    "mushrooms",
    "spicy ramen",
    "olives",
    "dark chocolate",
    "goat cheese",
    "sushi",
    "lentil soup",
    "coriander",
    "blue cheese",
    "pineapple on pizza",
    "fresh figs",
    "grilled aubergine",
    "anchovies",
    "mango sticky rice",
]
SKILLS = [
    "Spanish",
    "the piano",
    "pottery",
    "rock climbing",
    "Python",
    "watercolour painting",
    "Japanese",
    "salsa dancing",
    "chess",
    "woodworking",
    "the cello",
    "sourdough baking",
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
JOBS = [
    ("nurse", "hospital"),
    ("data analyst", "logistics firm"),
    ("teacher", "primary school"),
    ("architect", "design studio"),
    ("software engineer", "fintech startup"),
    ("chef", "seafood restaurant"),
    ("pharmacist", "community pharmacy"),
    ("translator", "publishing house"),
]
PETS = [
    ("dog", "Biscuit"),
    ("cat", "Miso"),
    ("parrot", "Captain"),
    ("rabbit", "Clover"),
    ("dog", "Pepper"),
    ("cat", "Nori"),
    ("tortoise", "Sheldon"),
    ("hamster", "Peanut"),
]
BOOKS = [
    "The Left Hand of Darkness",
    "Middlemarch",
    "Sapiens",
    "The Overstory",
    "Dune",
    "Educated",
    "Piranesi",
    "The Remains of the Day",
    "Thinking, Fast and Slow",
    "Circe",
]
TASKS = [
    "water the plants",
    "call their mother",
    "take out the recycling",
    "back up the laptop",
    "pay the rent",
    "renew the gym membership",
    "order contact lenses",
    "review the budget",
]
PROJECTS = [
    "the Q3 roadmap",
    "the office move",
    "the mobile app launch",
    "the hiring plan",
    "the data migration",
    "the charity run",
    "the kitchen renovation",
]

MEMORY_TEMPLATES: list[Callable[[random.Random], str]] = [
    lambda r: f"The user's {r.choice(PEOPLE)} lives in {r.choice(CITIES)}.",
    lambda r: f"The user is allergic to {r.choice(FOODS)} and always checks menus for it.",
    lambda r: f"The user dislikes {r.choice(FOODS)} but really enjoys {r.choice(FOODS)}.",
    lambda r: f"The user started learning {r.choice(SKILLS)} in {r.choice(MONTHS)} {r.randint(2015, 2025)}.",
    lambda r: "The user works as a {} at a {} in {}.".format(*r.choice(JOBS), r.choice(CITIES)),
    lambda r: "The user has a {} called {} who is {} years old.".format(*r.choice(PETS), r.randint(1, 15)),
    lambda r: f"The user is planning a trip to {r.choice(CITIES)} with their {r.choice(PEOPLE)} in {r.choice(MONTHS)}.",
    lambda r: f"The user visited {r.choice(CITIES)} in {r.choice(MONTHS)} {r.randint(2010, 2025)} and loved the food.",
    lambda r: f"The user meets their {r.choice(PEOPLE)} about {r.choice(PROJECTS)} every {r.choice(WEEKDAYS)}.",
    lambda r: f"The user wants a reminder to {r.choice(TASKS)} every {r.choice(WEEKDAYS)} evening.",
    lambda r: f"The user runs {r.randint(3, 21)} kilometres on {r.choice(WEEKDAYS)} mornings.",
    lambda r: (
        f"The user is reading '{r.choice(BOOKS)}' and finds it {r.choice(['slow', 'gripping', 'moving', 'dense'])}."
    ),
    lambda r: f"The user's {r.choice(PEOPLE)} has a birthday on {r.randint(1, 28)} {r.choice(MONTHS)}.",
    lambda r: (
        f"The user prefers {r.choice(['green tea', 'espresso', 'oat latte', 'hot chocolate'])} "
        f"in the {r.choice(['morning', 'afternoon', 'evening'])}."
    ),
]

QUERY_TEMPLATES: list[Callable[[random.Random], str]] = [
    lambda r: f"Where does the user's {r.choice(PEOPLE)} live?",
    lambda r: "What foods is the user allergic to?",
    lambda r: f"Does the user like {r.choice(FOODS)}?",
    lambda r: f"When did the user start learning {r.choice(SKILLS)}?",
    lambda r: "What does the user do for a living?",
    lambda r: "What is the name of the user's pet?",
    lambda r: f"Who is going to {r.choice(CITIES)} with the user?",
    lambda r: f"What did the user think of {r.choice(CITIES)}?",
    lambda r: f"What does the user discuss with their {r.choice(PEOPLE)}?",
    lambda r: f"What should I remind the user about on {r.choice(WEEKDAYS)}?",
    lambda r: "How far does the user usually run?",
    lambda r: f"Has the user read {r.choice(BOOKS)}?",
    lambda r: f"When is the birthday of the user's {r.choice(PEOPLE)}?",
    lambda r: "What does the user like to drink in the morning?",
]

REPLY = (
    "Sure, here is a short summary of what we discussed so far, followed by the next "
    "steps I suggest. Let me know if any of it needs more detail."
)


def distinct_texts(templates: list[Callable[[random.Random], str]], count: int, seed: int) -> list[str]:
    """``count`` different sentences, cycling through the templates (seeded, so every run has the same)."""
    rng, texts, seen = random.Random(seed), [], set()
    for attempt in range(count * 100):
        text = templates[attempt % len(templates)](rng)
        if text not in seen:
            seen.add(text)
            texts.append(text)
            if len(texts) == count:
                return texts
    raise ValueError(f"the templates make fewer than {count} different sentences")


def text_event(text: str, turn: int) -> Any:
    """A model reply as an agent appends it: text plus a small session-state delta."""
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions
    from google.genai import types

    return Event(
        author="bench_agent",
        invocation_id=f"e-{uuid.uuid4()}",
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta={"turn": turn}),
    )


def turn_events(count: int) -> list[Any]:
    return [text_event(f"{REPLY} (turn {i})", i) for i in range(count)]


def load_memories(count: int) -> tuple[int, int]:
    """Store ``count`` varied sentences for the search user; returns (created, merged)."""
    from memory_app.services import Candidate, do_remember

    texts = distinct_texts(MEMORY_TEMPLATES, count, seed=1)
    created = merged = 0
    for start in range(0, len(texts), REMEMBER_BATCH):
        batch = [Candidate(text=text, kind="fact") for text in texts[start : start + REMEMBER_BATCH]]
        outcome = do_remember(app_name=APP, user_id=SEARCH_USER, candidates=batch, cause="bench")
        created, merged = created + len(outcome.created), merged + len(outcome.updated)
    return created, merged


# ---------------------------------------------------------------------------
# Clients: one per thread, made in the thread that uses it
# ---------------------------------------------------------------------------


def http_client(base_url: str, key: str) -> Any:
    import httpx

    return httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30.0)


def check(response: Any, status: int) -> Any:
    if response.status_code != status:
        raise RuntimeError(f"{response.request.method} {response.request.url}: {response.status_code} {response.text}")
    return response.json()


class HttpAppender:
    def __init__(self, base_url: str, key: str, count: int) -> None:
        self.http = http_client(base_url, key)
        self.user_url = f"/api/v1/apps/{APP}/users/{APPEND_USER}/"
        created = check(self.http.post(self.user_url + "sessions/", json={"state": {"turn": 0}}), 201)
        self.events_url = f"{self.user_url}sessions/{created['id']}/events/"
        self.version = created["version"]
        self.payloads = [e.model_dump(mode="json", exclude_none=True) for e in turn_events(count + 1)]
        self.append(self.payloads[0])  # untimed

    def call(self, index: int) -> None:
        self.append(self.payloads[index + 1])

    def append(self, payload: dict[str, Any]) -> None:
        body = {"event": payload, "expected_version": self.version}
        self.version = check(self.http.post(self.events_url, json=body), 201)["version"]

    def close(self) -> None:
        self.http.close()


class LocalAppender:
    def __init__(self, count: int) -> None:
        from sessions_app import adk, services

        self.adk, self.services = adk, services
        self.session_id = str(uuid.uuid4())
        stored = services.do_create_session(
            app_name=APP,
            user_id=APPEND_USER,
            session_id=self.session_id,
            delta=adk.split_delta({"turn": 0}),
            now=time.time(),
        )
        self.version = stored.version
        self.events = turn_events(count + 1)
        self.append(self.events[0])  # untimed

    def call(self, index: int) -> None:
        self.append(self.events[index + 1])

    def append(self, event: Any) -> None:
        self.version = self.services.do_append_event(
            app_name=APP,
            user_id=APPEND_USER,
            session_id=self.session_id,
            expected_version=self.version,
            event=self.adk.to_new_event(self.adk.trim_temp_state(event)),
        )

    def close(self) -> None:
        from django.db import connection

        connection.close()


class HttpSearcher:
    def __init__(self, base_url: str, key: str, queries: list[str]) -> None:
        self.http = http_client(base_url, key)
        self.url = f"/api/v1/apps/{APP}/users/{SEARCH_USER}/memories/search/"
        self.queries = queries
        self.call(-1)

    def call(self, index: int) -> None:
        hits = check(self.http.post(self.url, json={"query": self.queries[index], "limit": SEARCH_LIMIT}), 200)
        if not hits:
            raise RuntimeError(f"no hits for {self.queries[index]!r}")

    def close(self) -> None:
        self.http.close()


class LocalSearcher:
    def __init__(self, queries: list[str]) -> None:
        from memory_app.search import search_memories

        self.search = search_memories
        self.queries = queries
        self.call(-1)

    def call(self, index: int) -> None:
        hits = self.search(
            app_name=APP, user_id=SEARCH_USER, query=self.queries[index], limit=SEARCH_LIMIT, reinforce=True
        )
        if not hits:
            raise RuntimeError(f"no hits for {self.queries[index]!r}")

    def close(self) -> None:
        from django.db import connection

        connection.close()


class HttpFloor:
    """A URL no route matches: uvicorn, middleware and the JSON 404, no DRF and no database.

    Sent to the no-op app's server (bench/noop_asgi.py), it measures the ceiling: client and server alone.
    """

    def __init__(self, base_url: str, key: str) -> None:
        self.http = http_client(base_url, key)
        self.call(0)

    def call(self, index: int) -> None:
        check(self.http.get("/api/v1/no-such-route/"), 404)

    def close(self) -> None:
        self.http.close()


@dataclass
class Bench:
    base_url: str
    noop_url: str
    key: str
    queries: list[str]
    counter: ConnectionCounter

    def factory(self, operation: str, mode: str) -> ClientFactory:
        def questions(number: int, count: int) -> list[str]:
            start = number * count
            return [self.queries[(start + i) % len(self.queries)] for i in range(count)]

        if operation == APPEND:
            if mode == HTTP:
                return lambda number, count: HttpAppender(self.base_url, self.key, count)
            return lambda number, count: LocalAppender(count)
        if operation == SEARCH:
            if mode == HTTP:
                return lambda number, count: HttpSearcher(self.base_url, self.key, questions(number, count))
            return lambda number, count: LocalSearcher(questions(number, count))
        url = self.noop_url if operation == NOOP else self.base_url
        return lambda number, count: HttpFloor(url, self.key)


# ---------------------------------------------------------------------------
# Load runs
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    requests_per_second: float
    p50_ms: float
    p95_ms: float
    pg_connections: float = 0.0
    """New PostgreSQL sessions on the scratch database per request (setup and untimed requests included)."""
    redis_connections: float = 0.0
    """New connections to the Redis server per request (server-wide count)."""


class ConnectionCounter:
    """Connections opened so far: PostgreSQL sessions of the scratch database, and the Redis server's."""

    def __init__(self, database_url: str, redis_url: str) -> None:
        import psycopg
        import redis

        self.pg = psycopg.connect(database_url, autocommit=True)
        self.redis = redis.Redis.from_url(redis_url)

    def read(self) -> tuple[int, int]:
        (sessions,) = self.pg.execute(
            "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
        return sessions, int(self.redis.info("stats")["total_connections_received"])

    def close(self) -> None:
        self.pg.close()
        self.redis.close()


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


def summarise(load: Load, opened: tuple[int, int]) -> Run:
    ms = [s * 1000 for s in load.latencies]
    count = len(ms)
    return Run(
        count / load.seconds,
        statistics.median(ms),
        percentile(ms, 95),
        pg_connections=opened[0] / count,
        redis_connections=opened[1] / count,
    )


def measure(factory: ClientFactory, clients: int, requests: int, counter: ConnectionCounter) -> Run:
    before = counter.read()
    load = run_load(factory, clients, requests)
    time.sleep(CONNECTION_STATS_DELAY)  # a backend counts its session as it exits
    after = counter.read()
    return summarise(load, (after[0] - before[0], after[1] - before[1]))


# ---------------------------------------------------------------------------
# Rounds and report
# ---------------------------------------------------------------------------

Key = tuple[str, str, int]
"""(operation, mode, clients)"""


@dataclass
class Results:
    runs: dict[Key, list[Run]] = field(default_factory=dict)
    background_failures: dict[str, Counter[str]] = field(default_factory=dict)
    """mode -> failures of background database work (the search's reinforcement), by error."""

    def add(self, key: Key, run: Run) -> None:
        self.runs.setdefault(key, []).append(run)

    def median(self, key: Key) -> Run:
        runs = self.runs[key]
        return Run(*(statistics.median(getattr(r, name) for r in runs) for name in Run.__dataclass_fields__))


def cases(sizes: Sizes) -> Iterator[tuple[str, int, int]]:
    """(operation, clients, requests) measured each round."""
    for operation, requests in ((APPEND, sizes.appends), (SEARCH, sizes.searches)):
        for clients in sorted({1, sizes.concurrency}):
            yield operation, clients, requests


def run_round(round_no: int, bench: Bench, sizes: Sizes, results: Results) -> None:
    for case_no, (operation, clients, requests) in enumerate(cases(sizes)):
        order = (HTTP, LOCAL) if (round_no + case_no) % 2 == 0 else (LOCAL, HTTP)
        for mode in order:
            run = measure(bench.factory(operation, mode), clients, requests, bench.counter)
            results.add((operation, mode, clients), run)
    for floor in (FLOOR, NOOP):
        for clients in sorted({1, sizes.concurrency}):
            results.add(
                (floor, HTTP, clients), measure(bench.factory(floor, HTTP), clients, sizes.appends, bench.counter)
            )
    print(f"  round {round_no + 1} done", flush=True)


def report(results: Results, sizes: Sizes, rounds: int) -> None:
    print(
        f"\nMedians over {rounds} round(s). Ratios are HTTP / in-process: req/s below 1 means HTTP "
        "serves fewer,\np95 above 1 means HTTP is slower. pg/req and redis/req: connections opened per request.\n"
    )
    header = (
        f"{'operation':<11}{'mode':<12}{'clients':>7}{'req/s':>9}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'pg/req':>8}{'redis/req':>10}{'req/s ratio':>13}{'p95 ratio':>11}"
    )
    print(header)
    print("-" * len(header))
    for operation, clients, _ in cases(sizes):
        local_run = results.median((operation, LOCAL, clients))
        http_run = results.median((operation, HTTP, clients))
        print(row(operation, LOCAL, clients, local_run))
        print(
            row(operation, HTTP, clients, http_run)
            + f"{http_run.requests_per_second / local_run.requests_per_second:>12.3f}x"
            + f"{http_run.p95_ms / local_run.p95_ms:>10.1f}x"
        )
    for floor in (FLOOR, NOOP):
        for clients in sorted({1, sizes.concurrency}):
            print(row(floor, HTTP, clients, results.median((floor, HTTP, clients))))

    def ceiling(clients: int) -> float:
        noop = results.median((NOOP, HTTP, clients)).requests_per_second
        return noop / results.median((APPEND, LOCAL, clients)).requests_per_second

    ceilings = ", ".join(f"x{clients} {ceiling(clients):.2f}x" for clients in sorted({1, sizes.concurrency}))
    overheads = ", ".join(
        f"{operation} x{clients} {overhead_ms(results, operation, clients):.1f} ms"
        for operation, clients, _ in cases(sizes)
    )
    print(f"\n{FLOOR}: GET of a URL no route matches (httpx, uvicorn, Django middleware; no DRF, no database).")
    print(
        f"{NOOP}: the same GET to the same uvicorn serving an app that answers at once (bench/noop_asgi.py):\n"
        f"  the client and server alone. Its req/s over in-process appends, the best an HTTP append ratio\n"
        f"  could be on this machine with this client: {ceilings}."
    )
    print(f"HTTP - in-process, p50: {overheads}.")
    for mode in (LOCAL, HTTP):
        failures = results.background_failures.get(mode) or Counter()
        listed = "; ".join(f"{error} x{count}" for error, count in failures.most_common()) or "none"
        print(f"Failed search reinforcements ({mode}, background thread): {listed}")


def overhead_ms(results: Results, operation: str, clients: int) -> float:
    return results.median((operation, HTTP, clients)).p50_ms - results.median((operation, LOCAL, clients)).p50_ms


def row(operation: str, mode: str, clients: int, run: Run) -> str:
    return (
        f"{operation:<11}{mode:<12}{clients:>7}{run.requests_per_second:>9.1f}"
        f"{run.p50_ms:>9.2f}{run.p95_ms:>9.2f}{run.pg_connections:>8.2f}{run.redis_connections:>10.2f}"
    )


def report_connection_setup(database_url: str, redis_url: str, samples: int = 50) -> None:
    """What opening one connection costs, for reading the pg/req and redis/req columns."""
    import psycopg
    import redis

    def pg() -> None:
        with psycopg.connect(database_url) as conn:
            conn.execute("SELECT 1")

    def rd() -> None:
        client = redis.Redis.from_url(redis_url)
        client.ping()
        client.close()

    print(
        f"Opening a connection (and one round trip), p50 of {samples}: "
        f"PostgreSQL {median_ms(pg, samples):.2f} ms, Redis {median_ms(rd, samples):.2f} ms."
    )


def median_ms(call: Callable[[], None], samples: int) -> float:
    timings = []
    for _ in range(samples):
        begin = time.perf_counter()
        call()
        timings.append((time.perf_counter() - begin) * 1000)
    return statistics.median(timings)


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def prepare(database_url: str, sizes: Sizes) -> tuple[str, list[str]]:
    """Migrate, create the API key, store the memories; returns (key, questions)."""
    from django.core.management import call_command

    from cognizes.access.services import do_create_api_key

    call_command("migrate", verbosity=0)
    _, key = do_create_api_key(name="bench", app_name=APP)
    started = time.perf_counter()
    created, merged = load_memories(sizes.memories)
    print(
        f"stored {created} memories for {SEARCH_USER} ({merged} merged as duplicates) "
        f"in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    analyze(database_url)
    return key, distinct_texts(QUERY_TEMPLATES, QUESTIONS, seed=2)


def benchmark(database_url: str, sizes: Sizes, rounds: int, conn_max_age: int, pool_size: int, workers: int) -> Results:
    from django.conf import settings

    key, queries = prepare(database_url, sizes)
    server = start_server(database_url, settings.REDIS_URL, conn_max_age, pool_size, workers)
    noop = start_server(database_url, settings.REDIS_URL, conn_max_age, pool_size, workers, app="bench.noop_asgi:app")
    counter = ConnectionCounter(database_url, settings.REDIS_URL)
    print(
        f"uvicorn (pid {server.process.pid}, {workers} worker process(es)) answering at {server.base_url}", flush=True
    )
    results = Results()
    with BackgroundFailures() as local_failures:
        try:
            bench = Bench(base_url=server.base_url, noop_url=noop.base_url, key=key, queries=queries, counter=counter)
            warm_up(bench)
            for round_no in range(rounds):
                run_round(round_no, bench, sizes, results)
        except Exception:
            print(f"uvicorn's log, last lines:\n{server.log_tail()}", file=sys.stderr)
            raise
        finally:
            counter.close()
            results.background_failures[HTTP] = server.background_failures()
            stop_server(server)
            stop_server(noop)
    results.background_failures[LOCAL] = local_failures.errors
    return results


def warm_up(bench: Bench) -> None:
    """One short untimed pass of everything (imports, the model in both processes, plans)."""
    for operation in (APPEND, SEARCH):
        for mode in (HTTP, LOCAL):
            run_load(bench.factory(operation, mode), 2, 10)


def chosen_sizes(args: argparse.Namespace) -> Sizes:
    sizes = Sizes.quick(args.concurrency) if args.quick else Sizes(concurrency=args.concurrency)
    given = {name: getattr(args, name) for name in ("appends", "searches", "memories")}
    return replace(sizes, **{name: value for name, value in given.items() if value is not None})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3; 1 with --quick)")
    parser.add_argument("--concurrency", type=int, default=4, help="concurrent clients (threads), default 4")
    parser.add_argument(
        "--embedder-threads",
        type=int,
        default=None,
        help="COGNIZES_EMBEDDER_THREADS for both processes (default: as the environment has it)",
    )
    parser.add_argument(
        "--conn-max-age",
        type=int,
        default=0,
        help="DATABASE_CONN_MAX_AGE of the server (default 0; see the module docstring for why not 600)",
    )
    parser.add_argument(
        "--pool-size",
        type=int,
        default=20,
        help="DATABASE_POOL_SIZE of the server (default 20, as `make run`; 0: a connection per request)",
    )
    parser.add_argument(
        "--web-workers",
        type=int,
        default=os.cpu_count() or 1,
        help="uvicorn worker processes (default one per core, as `make run`)",
    )
    parser.add_argument("--appends", type=int, default=None, help="appends per run (default 300)")
    parser.add_argument("--searches", type=int, default=None, help="searches per run (default 200)")
    parser.add_argument("--memories", type=int, default=None, help="memories of the search user (default 500)")
    parser.add_argument("--quick", action="store_true", help="one round with small sizes: a smoke check")
    parser.add_argument(
        "--adk",
        action="store_true",
        help="instead: Cognizes against `adk api_server`, one web process each (bench/api_adk.py, issue 29 goal 5)",
    )
    args = parser.parse_args()
    sizes = chosen_sizes(args)
    rounds = args.rounds or (1 if args.quick else 3)
    if args.embedder_threads is not None:
        os.environ["COGNIZES_EMBEDDER_THREADS"] = str(args.embedder_threads)
    print(
        f"embedder threads: {os.environ.get('COGNIZES_EMBEDDER_THREADS') or 'default (one per core)'}; "
        f"{os.cpu_count()} CPUs",
        flush=True,
    )

    server_url = local.database_url()
    database_url = with_database(server_url, BENCH_DB)
    recreate_databases(server_url, [BENCH_DB])
    # Before Django is set up, so its one connection setting names the scratch database.
    os.environ["DATABASE_URL"] = database_url
    try:
        import django

        django.setup()
        from django.conf import settings

        logging.getLogger("httpx").setLevel(logging.WARNING)  # it logs every request at INFO
        if args.adk:
            api_adk.compare(
                database_url,
                server_url,
                settings.REDIS_URL,
                rounds,
                sizes.concurrency,
                sizes.appends if args.appends or not args.quick else 80,
            )
            return
        results = benchmark(database_url, sizes, rounds, args.conn_max_age, args.pool_size, args.web_workers)
        report(results, sizes, rounds)
        report_connection_setup(database_url, settings.REDIS_URL)
    finally:
        close_django_connections()
        recreate_databases(server_url, [BENCH_DB], create=False)


if __name__ == "__main__":
    main()
