"""The weather assistant of ADK's tutorials, on Cognizes (``adk web`` loads ``agent.root_agent``)."""

from . import agent  # noqa: F401
