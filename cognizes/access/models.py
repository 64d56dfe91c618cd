"""API keys: who may call the HTTP API, for which app, which user, read-only or not.

Only a SHA-256 of each key is stored (keys are 192-bit random, so a fast hash is
enough); the key itself is shown once, when it is created.
"""

from __future__ import annotations

from django.db import models

MAX_KEY_LENGTH = 128
"""The longest app name, user id or session id: every table's key columns are this wide, and the
scope check refuses longer ids in URLs (PostgreSQL would refuse them mid-request)."""


class ApiKeyQuerySet(models.QuerySet):
    def usable(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiKey(models.Model):
    name = models.CharField(max_length=200, help_text="Who or what uses this key.")
    prefix = models.CharField(max_length=16, unique=True, help_text="The key's public first part, to recognise it.")
    key_hash = models.CharField(max_length=64, help_text="SHA-256 of the key.")
    app_name = models.CharField(max_length=MAX_KEY_LENGTH, help_text="The one app this key may use.")
    user_id = models.CharField(
        "user id", max_length=MAX_KEY_LENGTH, blank=True, help_text="If set, the one user of the app this key may use."
    )
    read_only = models.BooleanField(default=False, help_text="May read but not write.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True, help_text="Set to revoke the key.")

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        db_table = "api_keys"
        verbose_name = "API key"

    def __str__(self) -> str:
        scope = f"{self.app_name}/{self.user_id or '*'}"
        return f"{self.name} ({self.prefix}…, {scope}{', read-only' if self.read_only else ''})"


class OwnedApp(models.Model):
    """An app made by another app's client (issue 45 item 2): ``POST …/reasoningEngines`` makes a new engine, and
    its app belongs to the app of the key that made it.

    Ownership is what the one scope check (``cognizes.access.api.check_key_scope``) reads: a key of the owner reaches
    the owned app as its own (a user-bound key still only its user, a read-only key still only reads). It is one
    level deep: an owned app owns nothing, so a key's reach is its app and the apps that app made, never further.
    """

    app_name = models.CharField(max_length=MAX_KEY_LENGTH, unique=True, help_text="The app that was made.")
    owner_app = models.CharField(
        max_length=MAX_KEY_LENGTH, db_index=True, help_text="The app whose key made it, and whose keys reach it."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "owned_apps"
        verbose_name = "app made by another app"
        verbose_name_plural = "apps made by other apps"

    def __str__(self) -> str:
        return f"{self.app_name} (made by {self.owner_app})"
