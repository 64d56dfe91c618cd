#!/usr/bin/env python
"""Django's command-line utility for Cognizes."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
    if sys.argv[1:2] == ["runserver"] and not os.environ.get("DJANGO_SECRET_KEY"):
        # The development server, like `make run`, makes the installation's key if it has none (issue 41 E).
        from infra import secret_key

        os.environ["DJANGO_SECRET_KEY"] = secret_key.ensure()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
