"""Django's ``migrate``, less the URLconf's check (``cognizes.infra.quick_command`` says why).

Migrating needs no URL, and importing the URLconf imports every surface: ~5 s of a ``cognizes migrate`` with
nothing to apply, which ``cognizes run`` and every deployment run first.
"""

from __future__ import annotations

from django.core.management.commands import migrate

from cognizes.infra.quick_command import QuickCommand


class Command(QuickCommand, migrate.Command):
    """``migrate``, with every system check but the URLconf's."""
