"""Benchmark: Cognizes past one machine — through PgBouncer against direct, and two web servers against one.

Three topologies serve the same scratch database (``cognizes_bench_topology``) of
the configured (or embedded) PostgreSQL and the same Redis, in the same run:

* ``direct``    one web server (``uvicorn --workers 1``, a pool of ``--pool-size``
  connections), ``DATABASE_URL`` straight to PostgreSQL.
* ``pgbouncer`` the same web server with ``DATABASE_URL`` through Debian's pgbouncer
  (1.18, ``pool_mode = transaction``, ``default_pool_size`` = ``--pool-size``),
  ``DATABASE_LISTEN_URL`` direct and ``DATABASE_TRANSACTION_POOLING=1``, as the
  README's production topology has it.
* ``2 web``     two such web servers, direct, each on its own port (two hosts, on
  one machine), the clients split evenly between them.

Two operations, each with ``--concurrency`` clients at once (threads, an httpx
client each, keep-alive): ``append`` (every client appends to a session of its own,
sending back the version it got: no conflicts) and hybrid memory ``search`` over
``--memories`` memories of one user (query embedding included). For each: req/s
over the batch and p50/p95 of single requests; the ratios to ``direct`` are the
result. Rounds are interleaved (every topology runs each operation once per round,
the order rotating) and the table shows medians over rounds, since the machine is
shared. The clients, the servers, PgBouncer and PostgreSQL share this machine's
cores: two web servers cannot be faster than one when one already uses them all,
so ``2 web`` measures what a second process costs here, not what a second host
would add.

    .venv/bin/python bench/topology.py [--rounds N] [--concurrency C] [--pool-size N] [--quick]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.api import (
    APPEND,
    SEARCH,
    HttpAppender,
    HttpSearcher,
    Results,
    Server,
    Sizes,
    prepare,
    run_load,
    start_server,
    stop_server,
    summarise,
)
from bench.scratch import close_django_connections, recreate_databases, with_database

os.environ["DJANGO_SETTINGS_MODULE"] = "cognizes.settings"
os.environ["DJANGO_DEBUG"] = "false"

from cognizes.infra import local
from tests.pgbouncer import EXECUTABLE as PGBOUNCER
from tests.pgbouncer import MISSING, PgBouncer

BENCH_DB = "cognizes_bench_topology"
DIRECT, BOUNCER, TWO_WEB = "direct", "pgbouncer", "2 web"


@dataclass(frozen=True)
class Topology:
    name: str
    servers: list[Server]

    def base_url(self, client: int) -> str:
        return self.servers[client % len(self.servers)].base_url


def factory(topology: Topology, operation: str, key: str, queries: list[str]) -> Callable:
    if operation == APPEND:
        return lambda number, count: HttpAppender(topology.base_url(number), key, count)
    return lambda number, count: HttpSearcher(
        topology.base_url(number), key, [queries[(number * count + i) % len(queries)] for i in range(count)]
    )


def start_topologies(database_url: str, redis_url: str, pool_size: int, bouncer: PgBouncer) -> list[Topology]:
    def server(url: str, **env: str) -> Server:
        return start_server(url, redis_url, 0, pool_size, 1, extra_env=env)

    return [
        Topology(DIRECT, [server(database_url)]),
        Topology(
            BOUNCER, [server(bouncer.url(BENCH_DB), DATABASE_LISTEN_URL=database_url, DATABASE_TRANSACTION_POOLING="1")]
        ),
        Topology(TWO_WEB, [server(database_url), server(database_url)]),
    ]


def benchmark(database_url: str, sizes: Sizes, rounds: int, pool_size: int) -> Results:
    from django.conf import settings

    key, queries = prepare(database_url, sizes)
    bouncer = PgBouncer(database_url, pool_size=pool_size)
    topologies = start_topologies(database_url, settings.REDIS_URL, pool_size, bouncer)
    requests = {APPEND: sizes.appends, SEARCH: sizes.searches}
    results = Results()  # keyed (operation, topology, clients)
    try:
        for topology in topologies:  # untimed: connections, the model in each server, plans
            for operation in (APPEND, SEARCH):
                run_load(factory(topology, operation, key, queries), sizes.concurrency, 2 * sizes.concurrency)
        for round_no in range(rounds):
            order = topologies[round_no % 3 :] + topologies[: round_no % 3]
            for operation in (APPEND, SEARCH):
                for topology in order:
                    load = run_load(factory(topology, operation, key, queries), sizes.concurrency, requests[operation])
                    results.add((operation, topology.name, sizes.concurrency), summarise(load, (0, 0)))
            print(f"round {round_no + 1}/{rounds} done", flush=True)
        notifications = bouncer.notifications_to_nobody()
        print(f"pgbouncer: {notifications} notifications reached a server connection no client held")
    finally:
        for topology in topologies:
            for server in topology.servers:
                stop_server(server)
        bouncer.stop()
    return results


def report(results: Results, sizes: Sizes, rounds: int) -> None:
    print(
        f"\n{sizes.concurrency} clients; medians over {rounds} round(s); {os.cpu_count()} CPUs, "
        f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    header = (
        f"{'operation':<10}{'topology':<11}{'req/s':>9}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'req/s vs direct':>17}{'p95 vs direct':>15}"
    )
    print(header + "\n" + "-" * len(header))
    for operation in (APPEND, SEARCH):
        base = results.median((operation, DIRECT, sizes.concurrency))
        for name in (DIRECT, BOUNCER, TWO_WEB):
            f = results.median((operation, name, sizes.concurrency))
            print(
                f"{operation:<10}{name:<11}{f.requests_per_second:>9.1f}{f.p50_ms:>9.2f}{f.p95_ms:>9.2f}"
                f"{f.requests_per_second / base.requests_per_second:>16.2f}x{f.p95_ms / base.p95_ms:>14.2f}x"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3; 1 with --quick)")
    parser.add_argument("--concurrency", type=int, default=8, help="concurrent clients (threads), default 8")
    parser.add_argument(
        "--pool-size",
        type=int,
        default=20,
        help="DATABASE_POOL_SIZE of each web server and pgbouncer's default_pool_size (default 20)",
    )
    parser.add_argument("--quick", action="store_true", help="one round with small sizes: a smoke check")
    args = parser.parse_args()
    if not PGBOUNCER:
        raise SystemExit(MISSING)
    sizes = (
        Sizes.quick(args.concurrency) if args.quick else Sizes(appends=400, searches=200, concurrency=args.concurrency)
    )
    rounds = args.rounds or (1 if args.quick else 3)

    server_url = local.database_url()
    database_url = with_database(server_url, BENCH_DB)
    recreate_databases(server_url, [BENCH_DB])
    os.environ["DATABASE_URL"] = database_url  # before Django is set up: its one connection names the scratch database
    try:
        import django

        django.setup()
        logging.getLogger("httpx").setLevel(logging.WARNING)
        report(benchmark(database_url, sizes, rounds, args.pool_size), sizes, rounds)
    finally:
        close_django_connections()
        recreate_databases(server_url, [BENCH_DB], create=False)


if __name__ == "__main__":
    main()
