"""The rules of an app's secrets (``AppSecret``): the API, the admin and ``manage.py reencrypt_secrets`` call these.

A secret is written and never read back: nothing here returns a value, only names and times. Setting or
deleting one moves the app's ``ToolRegistryMarker``, so running agents rebuild the toolsets that send it on
their next model turn (``secret_headers.load_secret_headers`` reads it then).

    do_set_secret(app_name="weather", name="OPENWEATHER_KEY", value="…", actor="api:ops")
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import QuerySet

from cognizes.infra import encryption
from tools_app.models import AppSecret, McpServer, SecretSource, Tool, UserCredential
from tools_app.secret_headers import SECRET_NAME
from tools_app.services import InvalidTool, ToolError, bump_marker

MAX_VALUE_LENGTH = 8192
"""Far above any API key or token; a header line past this is refused by most servers anyway."""


class SecretInUse(ToolError):
    """A secret rows still send: deleting it would silently strip their credentials."""


def check_secret(*, name: str, value: str) -> None:
    """Raise ``InvalidTool`` naming what is wrong with a secret's name or value (the value is never quoted)."""
    errors: dict[str, str] = {}
    if not isinstance(name, str) or not SECRET_NAME.match(name):
        errors["name"] = "Letters, digits and underscores, not starting with a digit, at most 128."
    if not isinstance(value, str) or not value:
        errors["value"] = "The secret's value, as text."
    elif len(value) > MAX_VALUE_LENGTH:
        errors["value"] = f"At most {MAX_VALUE_LENGTH} characters."
    elif any(c in value for c in "\r\n\0"):
        errors["value"] = "One line: a header value holds no line breaks or NUL."
    if errors:
        raise InvalidTool(errors)


def do_set_secret(*, app_name: str, name: str, value: str, actor: str = "") -> tuple[AppSecret, bool]:
    """Store (or replace) the app's secret ``name``, encrypted; return it and whether it is new."""
    check_secret(name=name, value=value)
    with transaction.atomic():
        secret, created = AppSecret.objects.update_or_create(
            app_name=app_name,
            name=name,
            defaults={"ciphertext": encryption.encrypt(value)},
        )
        bump_marker(app_name)
    return secret, created


def get_secrets(*, app_name: str) -> QuerySet[AppSecret]:
    """The app's secrets (read their names and times only)."""
    return AppSecret.objects.filter(app_name=app_name).order_by("name")


def get_secret(*, app_name: str, name: str) -> AppSecret | None:
    return AppSecret.objects.filter(app_name=app_name, name=name).first()


def get_secret_users(secret: AppSecret) -> list[str]:
    """The rows of the secret's app that send it: ``tool x``, ``MCP server y``."""
    scope = {"app_name": secret.app_name, "auth_secret_source": SecretSource.APP, "auth_secret_name": secret.name}
    return [
        *(
            f"tool {name}"
            for name in Tool.objects.filter(**scope).exclude(auth_scheme="none").values_list("name", flat=True)
        ),
        *(
            f"MCP server {name}"
            for name in McpServer.objects.filter(**scope).exclude(auth_scheme="none").values_list("name", flat=True)
        ),
    ]


def do_delete_secret(secret: AppSecret, *, actor: str = "") -> None:
    """Remove the app's secret; ``SecretInUse`` (nothing removed) while rows of the app send it."""
    with transaction.atomic():
        users = get_secret_users(secret)
        if users:
            raise SecretInUse(f"Secret {secret.name!r} is sent by {', '.join(users)}: change them first.")
        secret.delete()
        bump_marker(secret.app_name)


@dataclass
class ReencryptReport:
    """What ``do_reencrypt_secrets`` did: how many moved to the newest key, and which none opens."""

    moved: int = 0
    current: int = 0
    unreadable: list[str] = field(default_factory=list)


def do_reencrypt_secrets() -> ReencryptReport:
    """Encrypt every stored secret again with the newest key (``COGNIZES_SECRET_KEYS``'s first), so the
    older keys can be dropped: the apps' secrets and the users' stored credentials (``tools_app.credentials``). A
    secret set meanwhile is left as that write made it (compare and swap)."""
    report = ReencryptReport()
    rows = [
        (AppSecret, AppSecret.objects.values_list("pk", "ciphertext", "app_name", "name")),
        (UserCredential, UserCredential.objects.values_list("pk", "ciphertext", "app_name", "user_id")),
    ]
    for model, values in rows:
        for pk, token, *where in values.iterator():
            if encryption.encrypted_with_newest(token):
                report.current += 1
                continue
            try:
                fresh = encryption.reencrypt(token)
            except encryption.UnreadableSecret:
                report.unreadable.append(
                    "/".join(where) + (" (a user's credential)" if model is UserCredential else "")
                )
                continue
            report.moved += model._default_manager.filter(pk=pk, ciphertext=token).update(ciphertext=fresh)
    return report
