"""The ``cognizes`` command: ``cognizes run`` starts everything, any other word is a Django management command.

    cognizes --version
    cognizes run                       # PostgreSQL, Redis, web, gRPC, worker, beat; Ctrl-C stops them all
    cognizes migrate
    cognizes create_api_key weather

It is ``manage.py`` for an installed Cognizes: the settings are ``cognizes.settings`` unless
``DJANGO_SETTINGS_MODULE`` names others, and the data is under ``COGNIZES_VAR_DIR`` (``cognizes.infra.local``).
"""

from __future__ import annotations

import os
import sys

import cognizes


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` (``sys.argv[1:]`` by default) and return its exit status."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["--version"], ["-V"]):
        print(f"cognizes {cognizes.__version__}")
        return 0
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
    if args[:1] == ["run"]:
        from cognizes import run

        return run.main()
    if args[:1] == ["runserver"] and not os.environ.get("DJANGO_SECRET_KEY"):
        # The development server, like `cognizes run`, makes the installation's key if it has none (issue 41 E).
        from cognizes.infra import secret_key

        os.environ["DJANGO_SECRET_KEY"] = secret_key.ensure()
    from django.core.management import execute_from_command_line

    execute_from_command_line(["cognizes", *args])
    return 0
