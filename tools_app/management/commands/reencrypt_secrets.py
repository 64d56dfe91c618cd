"""python manage.py reencrypt_secrets [--print-derived-key]: every stored secret to the newest key.

Rotation without downtime (``cognizes.infra.encryption``): put a new key first in ``COGNIZES_SECRET_KEYS`` (the old ones
after it) on every process, run this, then drop the old keys.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from cognizes.infra import encryption
from cognizes.infra.quick_command import QuickCommand
from tools_app import secrets


class Command(QuickCommand):
    help = "Encrypt every stored app secret again with the newest key of COGNIZES_SECRET_KEYS."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--print-derived-key",
            action="store_true",
            help="Print the key derived from SECRET_KEY (the default) and stop: list it after a new key of "
            "COGNIZES_SECRET_KEYS to move off the default.",
        )

    def handle(self, *args: Any, print_derived_key: bool, **options: Any) -> None:
        if print_derived_key:
            self.stdout.write(encryption.derived_key(settings.SECRET_KEY))
            return
        report = secrets.do_reencrypt_secrets()
        self.stdout.write(f"Re-encrypted {report.moved} secret(s); {report.current} already had the newest key.")
        if report.unreadable:
            raise CommandError(
                f"No configured key opens {len(report.unreadable)} secret(s): {', '.join(report.unreadable)}. "
                "Put the key they were written with back in COGNIZES_SECRET_KEYS and run this again."
            )
