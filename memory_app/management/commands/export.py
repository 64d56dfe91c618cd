"""``cognizes export APP [--user USER] [--output FILE]``: an app's or a user's memories as JSONL, streamed."""

from __future__ import annotations

import sys

from cognizes.infra.quick_command import QuickCommand
from memory_app.services.transfer import export_to, get_export_lines


class Command(QuickCommand):
    help = (
        "Write an app's memories (or one user's) with their revisions, scopes and vectors as JSONL: a header line, "
        "then one memory a line (docs/operations.md, 'Export and import')."
    )

    def add_arguments(self, parser):
        parser.add_argument("app", help="the app whose memories are exported")
        parser.add_argument("--user", help="only this user's memories")
        parser.add_argument("--output", "-o", default="-", help="the file written; '-' (the default): stdout")

    def handle(self, *args, app: str, user: str | None = None, output: str = "-", **options) -> None:
        lines = get_export_lines(app, user_id=user)
        if output == "-":
            count = export_to(sys.stdout, lines)
        else:
            with open(output, "w", encoding="utf-8", newline="\n") as out:
                count = export_to(out, lines)
        self.stderr.write(f"Exported {count} memories of {app}" + (f" (user {user})" if user else "") + ".")
