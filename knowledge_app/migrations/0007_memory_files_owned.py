"""Files ADK's VertexAiRagMemoryService uploaded before documents had owners become their users' (issue 41 H).

That service names each session's file ``adk-memory-v1.<app>.<user>.<session>`` (unpadded base64url parts) and
keeps every user's sessions in one corpus; uploaded with the app's key they were the app's, so every user's key
saw them. The decoding is copied from ``knowledge_app.services.get_memory_file_user`` as it is today, so this
migration keeps meaning what it meant when it ran.
"""

from __future__ import annotations

import base64
import binascii

from django.db import migrations

PREFIX = "adk-memory-v1."


def _user(display_name: str) -> str:
    parts = display_name[len(PREFIX):].split(".")
    if len(parts) != 3:
        return ""
    try:
        user = base64.b64decode(parts[1] + "=" * (-len(parts[1]) % 4), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return ""
    return user if 0 < len(user) <= 128 and "\x00" not in user else ""


def forwards(apps, schema_editor) -> None:
    Document = apps.get_model("knowledge_app", "Document")
    for document_id, display_name in Document.objects.filter(
            user_id="", display_name__startswith=PREFIX).values_list("id", "display_name").iterator():
        if user := _user(display_name):
            Document.objects.filter(id=document_id).update(user_id=user)


class Migration(migrations.Migration):

    dependencies = [
        ("knowledge_app", "0006_document_owner"),
    ]

    operations = [
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
