"""python manage.py create_api_key APP [--user U] [--read-only] [--name NAME]"""

from cognizes.access.services import do_create_api_key
from cognizes.infra.quick_command import QuickCommand


class Command(QuickCommand):
    help = "Create an API key for one app (optionally one user, read-only) and print it once."

    def add_arguments(self, parser):
        parser.add_argument("app_name")
        parser.add_argument("--user", default="", help="restrict the key to this user id")
        parser.add_argument("--read-only", action="store_true")
        parser.add_argument("--name", default="")

    def handle(self, *args, app_name: str, user: str, read_only: bool, name: str, **options) -> None:
        api_key, key = do_create_api_key(name=name, app_name=app_name, user_id=user, read_only=read_only)
        self.stdout.write(f"Created {api_key}. The key (shown only now):")
        self.stdout.write(key)
