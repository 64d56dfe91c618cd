"""Corpora, documents and chunks (vector and full-text indexed)."""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
import django.db.models.deletion
import django.db.models.expressions
import pgvector.django.indexes
import pgvector.django.vector
from pgvector.django import VectorExtension
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
    ]

    operations = [
        VectorExtension(),  # CREATE EXTENSION IF NOT EXISTS: knowledge needs no other app's migrations
        migrations.CreateModel(
            name='Corpus',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('app_name', models.CharField(max_length=128)),
                ('display_name', models.CharField(max_length=512)),
                ('description', models.TextField(blank=True)),
                ('chunk_size', models.PositiveIntegerField(default=1024, help_text="Tokens per chunk at most (Vertex's chunk_size).")),
                ('chunk_overlap', models.PositiveIntegerField(default=200, help_text="Tokens a chunk repeats from the one before it (Vertex's chunk_overlap).")),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'verbose_name_plural': 'corpora',
                'db_table': 'knowledge_corpora',
                'indexes': [models.Index(fields=['app_name', 'id'], name='corpora_by_app')],
            },
        ),
        migrations.CreateModel(
            name='Document',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('app_name', models.CharField(max_length=128)),
                ('display_name', models.CharField(max_length=512)),
                ('source_uri', models.CharField(blank=True, help_text='Where it came from (a file name, a URL).', max_length=2048)),
                ('mime_type', models.CharField(blank=True, max_length=255)),
                ('size_bytes', models.BigIntegerField(default=0)),
                ('content_hash', models.CharField(help_text='SHA-256 of the bytes: the same bytes again are the same document.', max_length=64)),
                ('content', models.BinaryField(help_text='The bytes as uploaded, kept to index again.')),
                ('status', models.CharField(choices=[('pending', 'pending'), ('running', 'running'), ('active', 'active'), ('failed', 'failed')], default='pending', max_length=16)),
                ('error', models.TextField(blank=True, help_text='Why it failed: what a person can do about it.')),
                ('chunk_count', models.PositiveIntegerField(default=0)),
                ('attempts', models.PositiveIntegerField(default=0)),
                ('lease_until', models.DateTimeField(blank=True, help_text='A running document not done by then is presumed lost (worker killed) and run again.', null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('indexed_at', models.DateTimeField(blank=True, null=True)),
                ('corpus', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='documents', to='knowledge_app.corpus')),
            ],
            options={
                'db_table': 'knowledge_documents',
            },
        ),
        migrations.CreateModel(
            name='Chunk',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('app_name', models.CharField(max_length=128)),
                ('ordinal', models.PositiveIntegerField(help_text="Its place among the document's chunks, from 0.")),
                ('text', models.TextField()),
                ('heading', models.TextField(blank=True, help_text="The headings it is under, outermost first, joined by ' › '.")),
                ('start', models.PositiveIntegerField(help_text="Character offset of its text in the document's text.")),
                ('end', models.PositiveIntegerField()),
                ('search_text', models.TextField(help_text='Heading and text as the keyword search reads them.')),
                ('search_vector', models.GeneratedField(db_persist=True, expression=django.db.models.expressions.RawSQL("to_tsvector('english'::regconfig, search_text)", ()), output_field=django.contrib.postgres.search.SearchVectorField())),
                ('embedding', pgvector.django.vector.VectorField(dimensions=384)),
                ('corpus', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='knowledge_app.corpus')),
                ('document', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='chunks', to='knowledge_app.document')),
            ],
            options={
                'db_table': 'knowledge_chunks',
                'ordering': ['document', 'ordinal'],
            },
        ),
        migrations.AddIndex(
            model_name='document',
            index=models.Index(fields=['app_name', 'corpus', 'id'], name='documents_by_corpus'),
        ),
        migrations.AddIndex(
            model_name='document',
            index=models.Index(fields=['status', 'lease_until'], name='documents_by_status'),
        ),
        migrations.AddConstraint(
            model_name='document',
            constraint=models.UniqueConstraint(fields=('corpus', 'content_hash'), name='documents_unique_content'),
        ),
        migrations.AddIndex(
            model_name='chunk',
            index=models.Index(fields=['document', 'ordinal'], name='chunks_by_document'),
        ),
        migrations.AddIndex(
            model_name='chunk',
            index=models.Index(fields=['app_name', 'corpus'], name='chunks_by_corpus'),
        ),
        migrations.AddIndex(
            model_name='chunk',
            index=django.contrib.postgres.indexes.GinIndex(fields=['search_vector'], name='chunks_search_vector'),
        ),
        migrations.AddIndex(
            model_name='chunk',
            index=pgvector.django.indexes.HnswIndex(ef_construction=128, fields=['embedding'], m=32, name='chunks_embedding_hnsw', opclasses=['vector_cosine_ops']),
        ),
    ]
