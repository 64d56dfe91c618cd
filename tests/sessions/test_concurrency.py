"""Writers racing on one database: stale copies are refused, shared state loses nothing."""

from __future__ import annotations

import asyncio
import textwrap

import pytest
from google.adk.errors._stale_session_error import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.sessions.base_session_service import GetSessionConfig

from cognizes.adk import PostgresSessionService
from sessions_app.models import Event as StoredEvent
from tests.processes import run_python
from tests.sessions.test_contract import text_event

pytestmark = pytest.mark.django_db(transaction=True)

APP = "race_app"


@pytest.fixture
def service():
    return PostgresSessionService()


async def test_second_writer_of_a_stale_copy_is_refused_and_stores_nothing(service):
    session = await service.create_session(app_name=APP, user_id="u1", state={"n": 0})
    copy_a = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    copy_b = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)

    await service.append_event(copy_a, text_event("from a", n=1, **{"user:who": "a"}))
    with pytest.raises(StaleSessionError):
        await service.append_event(copy_b, text_event("from b", n=2, **{"user:who": "b", "app:x": 1}))

    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert [e.content.parts[0].text for e in stored.events] == ["from a"]
    assert stored.state == {"n": 1, "user:who": "a"}


async def test_two_service_instances_detect_each_others_writes():
    first, second = PostgresSessionService(), PostgresSessionService()
    session = await first.create_session(app_name=APP, user_id="u1")
    held_by_second = await second.get_session(app_name=APP, user_id="u1", session_id=session.id)

    await first.append_event(session, text_event("first"))

    with pytest.raises(StaleSessionError):
        await second.append_event(held_by_second, text_event("second"))


async def test_a_write_from_another_process_makes_this_copy_stale(service):
    session = await service.create_session(app_name=APP, user_id="u1", session_id="shared")
    script = textwrap.dedent(
        """
        import asyncio
        from cognizes.adk import PostgresSessionService
        from tests.sessions.test_contract import text_event

        async def main():
            service = PostgresSessionService()
            session = await service.get_session(app_name="race_app", user_id="u1", session_id="shared")
            await service.append_event(session, text_event("from the other process", **{"user:p": 2}))

        asyncio.run(main())
        """
    )
    run_python(script)

    with pytest.raises(StaleSessionError):
        await service.append_event(session, text_event("from this process"))

    stored = await service.get_session(app_name=APP, user_id="u1", session_id="shared")
    assert [e.content.parts[0].text for e in stored.events] == ["from the other process"]
    assert stored.state == {"user:p": 2}


async def test_a_session_loaded_without_events_appends_without_a_false_stale_error(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    for i in range(3):
        await service.append_event(session, text_event(f"m{i}"))

    light = await service.get_session(
        app_name=APP, user_id="u1", session_id=session.id, config=GetSessionConfig(num_recent_events=0)
    )
    await service.append_event(light, text_event("after a light load"))

    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert len(stored.events) == 4


async def test_concurrent_appends_to_one_session_from_copies_have_exactly_one_winner(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    copies = [await service.get_session(app_name=APP, user_id="u1", session_id=session.id) for _ in range(8)]

    results = await asyncio.gather(
        *(service.append_event(copy, text_event(f"writer {i}", n=i)) for i, copy in enumerate(copies)),
        return_exceptions=True,
    )

    winners = [r for r in results if not isinstance(r, BaseException)]
    assert len(winners) == 1
    assert all(isinstance(r, StaleSessionError) for r in results if isinstance(r, BaseException))
    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert len(stored.events) == 1
    assert stored.state["n"] == int(winners[0].content.parts[0].text.split()[1])


async def test_many_sessions_of_a_user_writing_user_and_app_keys_at_once_lose_none(service):
    sessions = [await service.create_session(app_name=APP, user_id="u1") for _ in range(16)]

    async def writer(index: int, session) -> None:
        for turn in range(5):
            await service.append_event(
                session, text_event("w", **{f"user:k{index}_{turn}": turn, f"app:a{index}_{turn}": turn})
            )

    await asyncio.gather(*(writer(i, s) for i, s in enumerate(sessions)))

    user_state = await service.get_user_state(app_name=APP, user_id="u1")
    assert set(user_state) == {f"k{i}_{t}" for i in range(16) for t in range(5)}
    fresh = await service.create_session(app_name=APP, user_id="someone_else")
    assert {key for key in fresh.state if key.startswith("app:")} == {
        f"app:a{i}_{t}" for i in range(16) for t in range(5)
    }


async def test_concurrent_creates_writing_user_keys_lose_none(service):
    await asyncio.gather(
        *(
            service.create_session(app_name=APP, user_id="u1", state={f"user:k{i}": i, f"app:a{i}": i})
            for i in range(24)
        )
    )

    assert await service.get_user_state(app_name=APP, user_id="u1") == {f"k{i}": i for i in range(24)}


async def test_concurrent_creates_of_one_id_have_exactly_one_winner(service):
    results = await asyncio.gather(
        *(service.create_session(app_name=APP, user_id="u1", session_id="same", state={"user:n": i}) for i in range(8)),
        return_exceptions=True,
    )

    winners = [r for r in results if not isinstance(r, BaseException)]
    assert len(winners) == 1
    assert all(isinstance(r, AlreadyExistsError) for r in results if isinstance(r, BaseException))
    assert await service.get_user_state(app_name=APP, user_id="u1") == {"n": winners[0].state["user:n"]}


async def test_a_duplicate_event_id_is_refused_and_changes_nothing(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    event = text_event("once", n=1)
    await service.append_event(session, event)
    again = event.model_copy(update={"actions": event.actions.model_copy(update={"state_delta": {"n": 2}})})

    with pytest.raises(ValueError, match="already stored"):
        await service.append_event(session, again)

    assert await StoredEvent.objects.acount() == 1
    stored = await service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert stored.state == {"n": 1}
