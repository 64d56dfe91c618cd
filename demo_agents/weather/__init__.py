"""The weather assistant of ADK's tutorials, on Cognizes (``adk web`` loads ``agent.root_agent``)."""

from . import agent  # noqa: F401  (imported for ADK's loader, which reads weather.agent.root_agent)
