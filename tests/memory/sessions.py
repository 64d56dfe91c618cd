"""A stored session of a few self-statements, for tests of consolidation jobs."""

from __future__ import annotations

import json
import time

from sessions_app import services as sessions

TEXTS = ["I live in Lisbon.", "I have a cat named Miso.", "I play the cello.", "My sister is called Ana."]


def session_with_events(app_name: str, user_id: str = "ada", session_id: str = "s1") -> None:
    """Create the session and append one user event per text of ``TEXTS``."""
    sessions.do_create_session(
        app_name=app_name, user_id=user_id, session_id=session_id, delta=sessions.StateDelta(), now=time.time()
    )
    for version, text in enumerate(TEXTS, start=1):
        data = json.dumps(
            {"author": "user", "id": f"e{version}", "content": {"role": "user", "parts": [{"text": text}]}}
        )
        sessions.do_append_event(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            expected_version=version,
            event=sessions.NewEvent(
                event_id=f"e{version}",
                invocation_id="i",
                author="user",
                branch=None,
                timestamp=time.time(),
                data_json=data,
                preview=text,
                state_delta=sessions.StateDelta(),
            ),
        )
