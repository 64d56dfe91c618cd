"""Cognizes: a self-hosted engine for ADK agents (sessions, memory, knowledge, tools) on PostgreSQL.

Importing the package loads nothing else: ``cognizes.infra`` and ``cognizes.access`` sit on the lowest floors
(DESIGN.md) and every app imports them, so this file must not pull the project (settings, Celery) in with them.
The Celery app is loaded when Django is (``cognizes.apps``).
"""

__version__ = "0.1.0"
