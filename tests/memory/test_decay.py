"""Forgetting: strength decays by half-life, weak and expired memories are forgotten, then purged.

Time is controlled by passing ``now=`` and by moving the memories' timestamps back.
"""

from __future__ import annotations

import math
import threading
import time
from datetime import datetime, timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from memory_app.beat import forget
from memory_app.decay import ACCESS_BOOST, DecayReport, do_decay, do_purge_forgotten
from memory_app.models import Memory, MemoryRevision, RevisionAction, Status
from memory_app.search import search_memories
from memory_app.services import Candidate, do_forget, do_remember

pytestmark = pytest.mark.django_db

APP = "decay_app"
FACT_HALF_LIFE = 60


@pytest.fixture(autouse=True)
def half_lives(settings):
    settings.COGNIZES_MEMORY_HALF_LIFE_DAYS = {
        "personal_info": 365,
        "instruction": 365,
        "preference": 180,
        "fact": FACT_HALF_LIFE,
        "key_detail": 30,
    }
    settings.COGNIZES_MEMORY_FORGET_BELOW = 0.05
    settings.COGNIZES_MEMORY_PURGE_AFTER_DAYS = 30


@pytest.fixture
def now() -> datetime:
    return timezone.now()


def remember(text: str, *, kind: str = "fact", importance: float = 0.5, **fields) -> Memory:
    outcome = do_remember(
        app_name=APP,
        user_id="ada",
        candidates=[Candidate(text=text, kind=kind, importance=importance, **fields)],
        cause="test",
    )
    return Memory.objects.get(id=outcome.created[0])


def age(memory: Memory, *, days: float, now: datetime, **fields) -> None:
    """Make the memory last written ``days`` before ``now``."""
    then = now - timedelta(days=days)
    Memory.objects.filter(id=memory.id).update(created_at=then, updated_at=then, **fields)


def strength(memory: Memory) -> float:
    return Memory.objects.get(id=memory.id).strength


def test_strength_halves_after_each_half_life(now):
    fresh = remember("Ada's sister lives in Lisbon.")
    one = remember("The meeting room on floor three has a broken projector.")
    two = remember("The train to Porto leaves from platform seven.")
    age(one, days=FACT_HALF_LIFE, now=now)
    age(two, days=2 * FACT_HALF_LIFE, now=now)

    do_decay(now=now)

    assert strength(fresh) == pytest.approx(1.0, abs=1e-6)
    assert strength(one) == pytest.approx(0.5)
    assert strength(two) == pytest.approx(0.25)


def test_each_kind_has_its_own_half_life(now):
    name = remember("Ada's full name is Ada Lovelace King.", kind="personal_info")
    detail = remember("Ada mentioned she is tired today.", kind="key_detail")
    age(name, days=365, now=now)
    age(detail, days=30, now=now)

    do_decay(now=now)

    assert strength(name) == pytest.approx(0.5)
    assert strength(detail) == pytest.approx(0.5)


def test_accesses_boost_strength_and_a_recent_access_restarts_the_clock(now):
    unused = remember("Ada prefers window seats on planes.")
    used = remember("Ada's favourite tea is jasmine green tea.")
    touched = remember("Ada's dentist appointment is on Fridays.")
    for memory in (unused, used, touched):
        age(memory, days=FACT_HALF_LIFE, now=now)
    Memory.objects.filter(id=used.id).update(access_count=10, last_accessed_at=now - timedelta(days=FACT_HALF_LIFE))
    Memory.objects.filter(id=touched.id).update(access_count=1, last_accessed_at=now)

    do_decay(now=now)

    assert strength(unused) == pytest.approx(0.5)
    assert strength(used) == pytest.approx(0.5 * (1 + ACCESS_BOOST * math.log(11)))
    assert strength(touched) == pytest.approx(1 + ACCESS_BOOST * math.log(2))


def test_importance_slows_decay(now):
    trivial = remember("Ada once ate a sandwich at the station.", importance=0.0)
    vital = remember("Ada is allergic to penicillin.", importance=1.0)
    age(trivial, days=FACT_HALF_LIFE, now=now)
    age(vital, days=FACT_HALF_LIFE, now=now)

    do_decay(now=now)

    assert strength(trivial) == pytest.approx(0.25)  # half-life × 0.5
    assert strength(vital) == pytest.approx(2 ** (-1 / 1.5))  # half-life × 1.5
    assert strength(vital) > strength(trivial)


def test_a_weak_memory_is_forgotten_with_a_revision_and_leaves_search(now):
    weak = remember("Ada's old car was a red Fiat Panda.")
    kept = remember("Ada drives a blue electric bicycle.")
    age(weak, days=5 * FACT_HALF_LIFE, now=now)  # 1/32 < 0.05
    hits = search_memories(app_name=APP, user_id="ada", query="Ada's red Fiat car", reinforce=False)
    assert weak.id in [hit.id for hit in hits]

    report = do_decay(now=now)

    assert (report.forgotten_weak, report.forgotten_expired) == (1, 0)
    forgotten = Memory.objects.get(id=weak.id)
    assert (forgotten.status, forgotten.forgotten_at) == (Status.FORGOTTEN, now)
    revision = forgotten.revisions.last()
    assert (revision.action, revision.cause, revision.status_before, revision.status_after) == (
        RevisionAction.FORGET,
        "decay",
        Status.ACTIVE,
        Status.FORGOTTEN,
    )
    assert revision.text_before == revision.text_after == forgotten.text
    hits = search_memories(app_name=APP, user_id="ada", query="Ada's red Fiat car", reinforce=False)
    assert weak.id not in [hit.id for hit in hits]
    assert kept.id in [hit.id for hit in hits]
    assert Memory.objects.get(id=kept.id).status == Status.ACTIVE


def test_an_expired_memory_is_forgotten_even_when_strong(now):
    expired = remember("Ada's parking permit code is 4471.", expires_at=now - timedelta(minutes=1))
    current = remember("Ada's gym pass is valid this month.", expires_at=now + timedelta(days=1))

    report = do_decay(now=now)

    assert (report.forgotten_expired, report.forgotten_weak) == (1, 0)
    assert Memory.objects.get(id=expired.id).status == Status.FORGOTTEN
    assert expired.revisions.last().cause == "expired"
    assert Memory.objects.get(id=current.id).status == Status.ACTIVE


def test_decay_twice_changes_nothing(now):
    memories = [
        remember("Ada plays the cello on Sundays."),
        remember("Ada's office is in the north wing."),
        remember("Ada's cat is called Babbage."),
    ]
    for days, memory in zip((10, 100, 400), memories, strict=True):
        age(memory, days=days, now=now)

    first = do_decay(now=now)
    strengths = {m.id: m.strength for m in Memory.objects.filter(app_name=APP)}
    revisions = MemoryRevision.objects.count()
    second = do_decay(now=now)

    assert first == DecayReport(decayed=3, forgotten_weak=1)
    assert second == DecayReport()
    assert {m.id: m.strength for m in Memory.objects.filter(app_name=APP)} == strengths
    assert MemoryRevision.objects.count() == revisions


def test_remembering_again_renews_a_fading_memory(now):
    fading = remember("Ada takes the 8:15 bus to work.")
    age(fading, days=4 * FACT_HALF_LIFE, now=now)
    do_decay(now=now)
    assert strength(fading) == pytest.approx(1 / 16)

    assert do_remember(
        app_name=APP, user_id="ada", candidates=[Candidate(text="Ada takes the 8:15 bus to work.")], cause="test"
    ).updated == [fading.id]
    do_decay(now=now + timedelta(days=1))

    assert strength(fading) == pytest.approx(2 ** (-1 / FACT_HALF_LIFE), rel=1e-3)
    assert Memory.objects.get(id=fading.id).status == Status.ACTIVE


def test_superseded_memories_are_left_alone(now):
    old = remember("Ada lives in Manchester.")
    new = remember("Ada moved to Edinburgh.", supersedes=(str(old.id),))
    age(old, days=10 * FACT_HALF_LIFE, now=now, expires_at=now - timedelta(days=1))
    age(new, days=1, now=now)
    before = Memory.objects.get(id=old.id)

    report = do_decay(now=now)
    do_purge_forgotten(now=now + timedelta(days=365))

    after = Memory.objects.get(id=old.id)
    assert (after.status, after.strength, after.forgotten_at) == (Status.SUPERSEDED, before.strength, None)
    assert report == DecayReport(decayed=1)
    assert not after.revisions.filter(action=RevisionAction.FORGET).exists()


def test_purge_erases_only_memories_forgotten_longer_than_the_retention(now):
    long_ago = remember("Ada's first phone number was 555-0101.")
    recently = remember("Ada's locker number was 12.")
    active = remember("Ada likes hiking in the Highlands.")
    for memory in (long_ago, recently):
        do_forget(memory_id=memory.id, app_name=APP, user_id="ada", cause="test")
    Memory.objects.filter(id=long_ago.id).update(forgotten_at=now - timedelta(days=31))
    Memory.objects.filter(id=recently.id).update(forgotten_at=now - timedelta(days=29))
    age(active, days=400, now=now)

    assert do_purge_forgotten(now=now) == 1

    assert set(Memory.objects.filter(app_name=APP).values_list("id", flat=True)) == {recently.id, active.id}
    assert not MemoryRevision.objects.filter(memory_id=long_ago.id).exists()
    assert MemoryRevision.objects.filter(memory_id=recently.id).exists()


def test_decay_is_a_fixed_number_of_statements_however_many_memories(now):
    def statements() -> int:
        with CaptureQueriesContext(connection) as queries:
            do_decay(now=now)
        return len(queries)

    remember("Ada reads science fiction.")
    few = statements()
    for text in ("Ada bakes sourdough bread.", "Ada speaks Portuguese.", "Ada collects old maps."):
        age(remember(text), days=500, now=now)
    assert statements() == few


def test_a_half_life_missing_for_a_kind_is_a_configuration_error(settings):
    settings.COGNIZES_MEMORY_HALF_LIFE_DAYS = {"fact": 30}
    with pytest.raises(ImproperlyConfigured, match="missing"):
        do_decay()


def test_the_forget_task_decays_and_purges(now):
    weak = remember("Ada's childhood pet was a goldfish.")
    stale = remember("Ada's hotel room was 214.")
    age(weak, days=10 * FACT_HALF_LIFE, now=now)
    do_forget(memory_id=stale.id, app_name=APP, user_id="ada", cause="test")
    Memory.objects.filter(id=stale.id).update(forgotten_at=now - timedelta(days=60))

    forget.apply().get()

    assert Memory.objects.get(id=weak.id).status == Status.FORGOTTEN
    assert not Memory.objects.filter(id=stale.id).exists()


def test_the_hourly_schedule_is_a_periodic_task_editable_in_the_admin(admin_client):
    task = PeriodicTask.objects.get(name="Forget weak and expired memories")

    assert (task.task, task.enabled, task.interval.every, task.interval.period) == (
        "memory_app.forget",
        True,
        1,
        "hours",
    )
    from cognizes.celery import app

    assert "memory_app.forget" in app.tasks
    assert admin_client.get(f"/admin/django_celery_beat/periodictask/{task.pk}/change/").status_code == 200


def _with_first_held(first, second) -> None:
    """Run ``first`` in a transaction held open until ``second`` (another connection) waits on its locks."""
    started, finish = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                first()
                started.set()
                finish.wait(30)
        finally:
            connection.close()

    def then() -> None:
        try:
            second()
        finally:
            connection.close()

    holder, waiter = threading.Thread(target=hold), threading.Thread(target=then)
    holder.start()
    assert started.wait(30)
    waiter.start()
    for _ in range(300):  # until the second connection waits for a row the first has locked
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                break
        time.sleep(0.05)
    else:
        pytest.fail("the second transaction never waited for the first")
    finish.set()
    holder.join(30)
    waiter.join(30)


@pytest.mark.django_db(transaction=True)
def test_a_memory_renewed_while_the_decay_runs_stays_renewed(now):
    fading = remember("Ada takes the 8:15 bus to work.")
    age(fading, days=10 * FACT_HALF_LIFE, now=now)  # weak enough to be forgotten

    _with_first_held(
        lambda: do_remember(app_name=APP, user_id="ada", candidates=[Candidate(text=fading.text)], cause="test"),
        lambda: do_decay(now=timezone.now()),
    )

    renewed = Memory.objects.get(id=fading.id)
    assert renewed.status == Status.ACTIVE and renewed.strength == pytest.approx(1, abs=0.01)


@pytest.mark.django_db(transaction=True)
def test_a_memory_forgotten_while_it_is_repeated_is_remembered_anew(now):
    fading = remember("Ada takes the 8:15 bus to work.")
    age(fading, days=10 * FACT_HALF_LIFE, now=now)
    outcome = []

    _with_first_held(
        lambda: do_decay(now=now),
        lambda: outcome.append(
            do_remember(app_name=APP, user_id="ada", candidates=[Candidate(text=fading.text)], cause="test")
        ),
    )

    assert Memory.objects.get(id=fading.id).status == Status.FORGOTTEN
    [created] = outcome[0].created
    assert Memory.objects.get(id=created).status == Status.ACTIVE  # not merged into the forgotten one
