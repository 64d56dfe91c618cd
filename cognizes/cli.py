"""The ``cognizes`` command: ``cognizes run`` starts everything, any other word is a Django management command.

    cognizes --version
    cognizes run                       # PostgreSQL, Redis, web, gRPC, worker, beat; Ctrl-C stops them all
    cognizes migrate
    cognizes create_api_key weather

It is ``manage.py`` for an installed Cognizes: the settings are ``cognizes.settings`` unless
``DJANGO_SETTINGS_MODULE`` names others, and the data is under ``COGNIZES_VAR_DIR`` (``cognizes.infra.local``).
Its own words (``--help``, ``--version``, ``run``) are answered before Django loads: the settings start the
embedded servers, which help and a version have no need of.
"""

from __future__ import annotations

import os
import sys

import cognizes

USAGE = f"""\
usage: cognizes <command> [options]

Cognizes {cognizes.__version__}: a self-hosted engine for ADK agents (sessions, memory, knowledge, tools) on
PostgreSQL.

commands:
  run                    start PostgreSQL, Redis, the web and gRPC servers, a worker and beat; Ctrl-C stops them
                         all (`cognizes run --help` lists its settings)
  adk <command> …        ADK's own command (web, api_server, run, eval) on Cognizes' services: sessions, memory,
                         artifacts, users' credentials, eval sets and results in PostgreSQL
  help                   list every other command (Django's management commands: migrate, create_api_key,
                         createsuperuser, vertex_engine, …)
  help <command>         one command's options
  <command> [options]    run that management command, e.g. `cognizes create_api_key my_app`

options:
  -h, --help             show this message and exit
  -V, --version          show the version and exit

Data (the embedded PostgreSQL and Redis, the secret key) lives under COGNIZES_VAR_DIR, by default the user's data
folder; DATABASE_URL and REDIS_URL name servers of your own instead.
"""


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` (``sys.argv[1:]`` by default) and return its exit status."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0
    if args[0] in ("-V", "--version"):
        print(f"cognizes {cognizes.__version__}")
        return 0
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
    if args[0] == "run":
        from cognizes import run

        return run.main(args[1:])
    if args[0] == "adk":
        from runtime_app.adk_launcher import main as adk_main

        return adk_main(args[1:])
    if args[0] == "runserver" and not os.environ.get("DJANGO_SECRET_KEY"):
        # The development server, like `cognizes run`, makes the installation's key if it has none (issue 41 E).
        from cognizes.infra import secret_key

        os.environ["DJANGO_SECRET_KEY"] = secret_key.ensure()
    from django.core.management import execute_from_command_line
    from django.db.utils import ProgrammingError

    try:
        execute_from_command_line(["cognizes", *args])
    except ProgrammingError:
        # A command run on a database never migrated met a missing table: say what to run, not a traceback.
        from cognizes.infra.setup import require_migrated

        require_migrated()
        raise
    return 0
