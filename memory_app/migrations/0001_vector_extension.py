from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    """Enable pgvector before any table needs the vector type."""

    initial = True
    dependencies: list = []
    operations = [VectorExtension()]
