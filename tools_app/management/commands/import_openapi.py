"""python manage.py import_openapi APP FILE [--base-url URL]: one tool per operation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from cognizes.infra.quick_command import QuickCommand
from tools_app import services
from tools_app.openapi import InvalidOpenApi


class Command(QuickCommand):
    help = "Import an OpenAPI 3 document (JSON or YAML) into an app's tool registry."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("app_name")
        parser.add_argument("document", type=Path)
        parser.add_argument("--base-url", default="", help="Overrides the document's servers.")

    def handle(self, *args: Any, app_name: str, document: Path, base_url: str, **options: Any) -> None:
        try:
            report = services.do_import_openapi(
                app_name=app_name, document=document.read_bytes(), base_url=base_url, actor="manage.py import_openapi"
            )
        except (OSError, InvalidOpenApi) as error:
            raise CommandError(str(error)) from error
        self.stdout.write(json.dumps(report.as_dict(), indent=2))
