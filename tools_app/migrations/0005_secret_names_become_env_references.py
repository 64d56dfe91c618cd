"""Rows that named an environment variable before issue 41 A keep naming it, now as an env reference.

Before, ``auth_secret_name`` named any environment variable of the server, read at call time. Now a row names
one of its app's stored secrets (``auth_secret_source`` "app", the default) or an environment variable the
operator allows its app in ``COGNIZES_ENV_SECRETS`` ("env"). Each existing row with a scheme and a name becomes
an "env" reference to the same variable, rather than having the variable's value copied into an encrypted
secret of its app:

* a copy would launder every name a tenant picked before the fix: a row that named ``SECRET_KEY`` or
  ``DATABASE_URL`` would turn the operator's secret into that tenant's own, stored and sent for good. An env
  reference is sent only if the operator allows it, so the operator, not this migration, vouches for each one;
* the rows the operator allows keep working unchanged, and keep following the variable when it is rotated.

Rows whose variable the settings at migrate time do not allow their app stop sending it (logged at call time);
the migration prints them and the setting that would allow them, for the operator to review.
"""

from __future__ import annotations

from django.conf import settings
from django.db import migrations


def _to_env_references(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    allowed: dict[str, list[str]] = getattr(settings, "COGNIZES_ENV_SECRETS", {})
    missing: dict[str, set[str]] = {}
    for model_name in ("Tool", "McpServer"):
        model = apps.get_model("tools_app", model_name)
        rows = model.objects.exclude(auth_scheme="none").exclude(auth_secret_name="")
        for app_name, name in rows.values_list("app_name", "auth_secret_name").distinct():
            if name not in allowed.get(app_name, ()):
                missing.setdefault(app_name, set()).add(name)
        rows.update(auth_secret_source="env")
    if missing:
        wanted = ";".join(f"{app}={','.join(sorted(names))}" for app, names in sorted(missing.items()))
        print(
            "\n  tools_app: these tool/MCP server secrets name environment variables COGNIZES_ENV_SECRETS does not"
            f" allow their app; they are not sent until it does (review each first): COGNIZES_ENV_SECRETS={wanted}"
            " — or store the secret in the app (PUT /api/v1/apps/<app>/secrets/<name>/) and set the row's"
            " auth_secret_source to \"app\"."
        )


def _back_to_names(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    """Nothing to undo: the previous schema has no source, and the names are unchanged."""


class Migration(migrations.Migration):

    dependencies = [
        ("tools_app", "0004_app_secrets"),
    ]

    operations = [migrations.RunPython(_to_env_references, _back_to_names)]
