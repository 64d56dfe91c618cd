"""Documents keyed by their source (issue 44, item 2): an imported file is one document per path in the app's
import folder, replaced when it changes; uploads stay known by their bytes.

The documents imports added before are given their paths where their URI spells one: ``gs://BUCKET/path`` is
``BUCKET/path``; ``file:///…`` is read against the import root configured now (left as an upload if it is not
under it). Where a changed file was imported twice (the bug this fixes), the newest document takes the path and
the older ones stay, as uploads would: delete them in the admin or through the API.
"""

import os
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models


def _path(uri: str, app_name: str) -> str | None:
    if uri.startswith("gs://"):
        names = uri.removeprefix("gs://").split("/")
    elif uri.startswith("file:") and settings.COGNIZES_KNOWLEDGE_IMPORT_ROOT:
        asked = PurePosixPath(unquote(urlsplit(uri).path))
        root = settings.COGNIZES_KNOWLEDGE_IMPORT_ROOT
        for folder in {PurePosixPath(os.path.abspath(root), app_name), PurePosixPath(os.path.realpath(root), app_name)}:
            if asked.is_relative_to(folder):
                names = list(asked.relative_to(folder).parts)
                break
        else:
            return None
    else:
        return None
    names = [name for name in names if name not in ("", ".")]
    return "/".join(names) if names and ".." not in names else None


def keyed_by_source(apps, schema_editor):
    Document = apps.get_model("knowledge_app", "Document")
    taken: set[tuple[int, str, str]] = set()
    imported = Document.objects.filter(imports__isnull=False).distinct().order_by("-id")
    for document in imported.only("id", "corpus_id", "user_id", "app_name", "source_uri").iterator():
        path = _path(document.source_uri, document.app_name)
        key = (document.corpus_id, document.user_id, path or "")
        if path is None or key in taken:
            continue
        taken.add(key)
        Document.objects.filter(id=document.id).update(source_path=path)


class Migration(migrations.Migration):

    dependencies = [
        ('knowledge_app', '0008_indexing_turns_fair_share'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='document',
            name='documents_unique_content_per_owner',
        ),
        migrations.AddField(
            model_name='document',
            name='source_path',
            field=models.TextField(blank=True, default='', help_text="For a document an import added: the file's path in the app's import folder, whichever URI named it. Importing that path again replaces this document's content if the file changed and skips it if not. Empty for an upload."),
        ),
        migrations.RunPython(keyed_by_source, migrations.RunPython.noop),
        migrations.AddField(
            model_name='import',
            name='delete_missing',
            field=models.BooleanField(default=False, help_text='Delete the documents of files no longer under its URIs (imported before from there, gone since).'),
        ),
        migrations.AddField(
            model_name='import',
            name='deleted_count',
            field=models.PositiveIntegerField(default=0, help_text='Documents deleted because their files are gone (asked for with delete_missing).'),
        ),
        migrations.AddField(
            model_name='import',
            name='replaced_count',
            field=models.PositiveIntegerField(default=0, help_text='Files imported before that changed since (or asked for another chunking): their documents, the same ones, indexed again.'),
        ),
        migrations.AlterField(
            model_name='document',
            name='content_hash',
            field=models.CharField(help_text='SHA-256 of the bytes: the same bytes uploaded again are the same document, and a file imported again unchanged is skipped.', max_length=64),
        ),
        migrations.AlterField(
            model_name='import',
            name='documents',
            field=models.ManyToManyField(blank=True, db_table='knowledge_import_documents', help_text='The documents this import added or replaced: it is done when all are indexed (or failed).', related_name='imports', to='knowledge_app.document'),
        ),
        migrations.AlterField(
            model_name='import',
            name='skipped_count',
            field=models.PositiveIntegerField(default=0, help_text='Files imported before and unchanged since (the same bytes, the same chunking).'),
        ),
        migrations.AddConstraint(
            model_name='document',
            constraint=models.UniqueConstraint(condition=models.Q(('source_path', '')), fields=('corpus', 'user_id', 'content_hash'), name='documents_unique_upload_per_owner'),
        ),
        migrations.AddConstraint(
            model_name='document',
            constraint=models.UniqueConstraint(models.F('corpus'), models.F('user_id'), django.db.models.functions.text.MD5('source_path'), condition=models.Q(('source_path', ''), _negated=True), name='documents_unique_source_per_owner'),
        ),
    ]
