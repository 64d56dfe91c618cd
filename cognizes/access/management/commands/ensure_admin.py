"""Create the admin user on first run and print its login once."""

import os
import secrets

from django.contrib.auth import get_user_model

from cognizes.infra import command
from cognizes.infra.quick_command import QuickCommand


class Command(QuickCommand):
    help = "Create the superuser 'admin' if missing (password from COGNIZES_ADMIN_PASSWORD or generated)."

    def add_arguments(self, parser):
        parser.add_argument("--username", default=os.environ.get("COGNIZES_ADMIN_USER", "admin"))

    def handle(self, *args, username: str, **options) -> None:
        User = get_user_model()
        if User.objects.filter(username=username).exists():
            self.stdout.write(
                f"Admin user: {username} (its password was printed when it was created; "
                f"`{command.typed('changepassword', username)}` sets a new one)"
            )
            return
        password = os.environ.get("COGNIZES_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, email="", password=password)
        self.stdout.write(self.style.SUCCESS(f"Admin login (shown once): {username} / {password}"))
