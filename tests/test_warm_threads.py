"""cognizes.infra.warm_threads: the thread that finished last takes the next call; concurrent calls still spread."""

from __future__ import annotations

import threading
import time

import pytest

from cognizes.infra.warm_threads import WarmThreadPool


@pytest.fixture
def pool():
    pool = WarmThreadPool(max_workers=4, thread_name_prefix="warm-test")
    yield pool
    pool.shutdown()


def _name() -> str:
    return threading.current_thread().name


def test_calls_one_after_another_all_run_on_one_thread(pool):
    assert {pool.submit(_name).result() for _ in range(100)} == {"warm-test_0"}


def test_calls_at_once_spread_over_the_threads_and_the_rest_wait_their_turn(pool):
    gate = threading.Event()
    started: list[int] = []

    def work(n: int) -> str:
        started.append(n)
        gate.wait(5)
        return _name()

    futures = [pool.submit(work, n) for n in range(6)]
    deadline = time.monotonic() + 5
    while len(started) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    assert sorted(started) == [0, 1, 2, 3]  # four threads busy; calls 4 and 5 wait
    gate.set()
    names = [future.result(5) for future in futures]
    assert len(set(names)) == 4 and started[4:] == [4, 5]  # the waiting ones ran next, in order


def test_an_error_reaches_the_caller_and_the_thread_goes_on(pool):
    with pytest.raises(ZeroDivisionError):
        pool.submit(lambda: 1 / 0).result()
    assert pool.submit(_name).result() == "warm-test_0"


def test_a_waiting_call_cancelled_never_runs(pool):
    gate = threading.Event()
    busy = [pool.submit(gate.wait, 5) for _ in range(4)]
    ran: list[str] = []
    waiting = pool.submit(ran.append, "ran")
    assert waiting.cancel()
    gate.set()
    for future in busy:
        future.result(5)
    assert pool.submit(_name).result() and ran == []


def test_shutdown_waits_for_calls_under_way_and_runs_the_last_call_on_every_thread():
    pool = WarmThreadPool(max_workers=3, thread_name_prefix="warm-end")
    gate = threading.Event()
    under_way = [pool.submit(lambda: (gate.wait(5), time.sleep(0.05), "done")[2]) for _ in range(3)]
    ended: list[str] = []
    threading.Timer(0.05, gate.set).start()
    pool.shutdown(last=lambda: ended.append(_name()))

    assert [future.result(0) for future in under_way] == ["done"] * 3
    assert sorted(ended) == ["warm-end_0", "warm-end_1", "warm-end_2"]
    with pytest.raises(RuntimeError):
        pool.submit(_name)


@pytest.mark.django_db(transaction=True)
async def test_one_agents_database_calls_in_a_row_use_one_connection_after_others_ran_at_once():
    """With ThreadPoolExecutor, once a burst had started several threads, calls in a row went round them all."""
    import asyncio

    from cognizes.infra.db_threads import run_in_db_thread
    from tests.sessions.test_connections import _backend_pid

    def slow_pid() -> int:
        time.sleep(0.05)
        return _backend_pid()

    at_once = await asyncio.gather(*(run_in_db_thread(slow_pid) for _ in range(4)))
    in_a_row = [await run_in_db_thread(_backend_pid) for _ in range(20)]
    assert len(set(at_once)) == 4
    assert len(set(in_a_row)) == 1
