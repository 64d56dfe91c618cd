"""``from cognizes.adk_services import register``: the path agents directories' ``services.py`` use.

The ``cognizes://`` scheme itself lives with the runtime (``runtime_app.adk_services``).
"""

from runtime_app.adk_services import register

__all__ = ["register"]
