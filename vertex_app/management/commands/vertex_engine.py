"""``manage.py vertex_engine APP``: the engine id a Vertex AI client uses for APP (created once)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from vertex_app.services import do_get_or_create_engine


class Command(BaseCommand):
    help = "Print the Vertex AI reasoning engine id of an app, creating it the first time."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("app_name")

    def handle(self, *args: Any, app_name: str, **options: Any) -> None:
        try:
            engine = do_get_or_create_engine(app_name=app_name)
        except ValueError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(str(engine.engine_id))
