"""``cognizes import FILE [--app APP]``: memories from a ``cognizes export`` file, a batch at a time."""

from __future__ import annotations

import sys

from django.core.management.base import CommandError

from cognizes.infra.quick_command import QuickCommand
from memory_app.services.transfer import IMPORT_BATCH, do_import_memories
from memory_app.transfer_format import ImportRefused


class Command(QuickCommand):
    help = (
        "Import memories from a JSONL file written by `cognizes export`. Importing the same file again adds nothing; "
        "a vector made by another model than this server's is replaced by the text embedded again. A refused line "
        "stops the import with its number: the batches before it are kept, nothing of its own batch is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the file read; '-': stdin")
        parser.add_argument("--app", help="import into this app instead of the file's (the memories get new ids)")
        parser.add_argument("--batch", type=int, default=IMPORT_BATCH, help="memories written per transaction")

    def handle(self, *args, file: str, app: str | None = None, batch: int = IMPORT_BATCH, **options) -> None:
        try:
            if file == "-":
                report = do_import_memories(sys.stdin.buffer, app_name=app, batch_size=batch)
            else:
                with open(file, "rb") as stream:
                    report = do_import_memories(stream, app_name=app, batch_size=batch)
        except (ImportRefused, OSError) as error:
            raise CommandError(f"{file}: {error}") from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {report.created} memories ({report.skipped} already there, "
                f"{report.reembedded} embedded again, {report.unlinked} superseded by a memory not in the file)."
            )
        )
