"""An A2A 0.3 client (a2a-sdk 0.3.x, what many frameworks still ship) against a Cognizes agent.

Usage: client.py BASE_URL KEY USER. Prints ``ok: …`` per check; exits non-zero on the first failure.
Runs in its own virtualenv (a2a-sdk 0.3 and 1.x cannot share one): tests/runtime/test_a2a_v03.py makes it.
"""

from __future__ import annotations

import asyncio
import sys

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory, create_text_message_object
from a2a.types import Task, TaskQueryParams, TaskState


async def main(base_url: str, key: str, user: str) -> None:
    headers = {"Authorization": f"Bearer {key}", "X-User-Id": user}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()  # validates it as a 0.3 AgentCard
        assert card.url.rstrip("/") == base_url.rstrip("/") and card.protocol_version, card
        print(f"ok: card {card.name!r} at {card.url}, protocol {card.protocol_version}")
        print("ok: skills " + ", ".join(skill.name for skill in card.skills))
        for streaming in (False, True):
            client = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)
            task = None
            async for event in client.send_message(create_text_message_object(content="I prefer Fahrenheit.")):
                task = event[0] if isinstance(event, tuple) else event
            assert isinstance(task, Task) and task.status.state == TaskState.completed, task
            texts = [part.root.text for artifact in task.artifacts or [] for part in artifact.parts]
            assert any("Fahrenheit" in text for text in texts), texts
            print(f"ok: {'streamed' if streaming else 'sent'} a message, task {task.status.state.value}: {texts[0]!r}")
            fetched = await client.get_task(TaskQueryParams(id=task.id))
            assert fetched.id == task.id
            print(f"ok: got the task back ({fetched.status.state.value})")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
