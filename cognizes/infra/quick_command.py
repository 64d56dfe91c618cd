"""The base of a management command that serves nothing: Django's system checks, less the URLconf's.

Django checks the URLconf before every command (``check_url_config``), and importing Cognizes' URLconf
imports every surface: Vertex AI's protos, a2a's server, ADK. That was most of the 11 s ``create_api_key``
took to write one row (issue 43). A command that reads or writes rows has no use for the check; the
commands that serve (``runserver``, ``cognizes run``'s servers) and ``cognizes check`` still run it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.core import checks
from django.core.management.base import BaseCommand

if TYPE_CHECKING:
    from django.apps import AppConfig


class QuickCommand(BaseCommand):
    """A ``BaseCommand`` whose checks are every registered tag's but ``urls``."""

    def check(
        self,
        app_configs: Sequence[AppConfig] | None = None,
        tags: Sequence[str] | None = None,
        display_num_errors: bool = False,
        include_deployment_checks: bool = False,
        fail_level: int = checks.ERROR,
        databases: Sequence[str] | None = None,
    ) -> None:
        super().check(
            app_configs,
            tags or sorted(checks.registry.registry.tags_available() - {checks.Tags.urls}),
            display_num_errors,
            include_deployment_checks,
            fail_level,
            databases,
        )
