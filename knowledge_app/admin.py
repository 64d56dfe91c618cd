"""Knowledge in the admin: corpora with their document counts, documents with their status and chunks, imports."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from knowledge_app import services
from knowledge_app.models import Chunk, Corpus, Document, Import


@admin.register(Corpus)
class CorpusAdmin(admin.ModelAdmin):
    list_display = ("display_name", "app_name", "documents", "chunk_size", "chunk_overlap", "created_at")
    list_filter = ("app_name",)
    search_fields = ("display_name", "description")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Corpus]:
        return super().get_queryset(request).annotate(document_count=Count("documents"))

    @admin.display(description="documents", ordering="document_count")
    def documents(self, corpus: Corpus) -> int:
        return corpus.document_count

    def save_model(self, request: HttpRequest, obj: Corpus, form: forms.ModelForm, change: bool) -> None:
        services.check_chunking(obj.chunk_size, obj.chunk_overlap)
        super().save_model(request, obj, form, change)


class ChunkInline(admin.TabularInline):
    model = Chunk
    fields = ("ordinal", "heading", "text", "start", "end")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # chunks are made by indexing


class UploadForm(forms.ModelForm):
    """A document added from the browser: a corpus and a file, indexed by a worker like any upload."""

    file = forms.FileField()

    class Meta:
        model = Document
        fields = ("corpus", "display_name")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["display_name"].required = False


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ("display_name", "corpus", "app_name", "status", "chunk_count", "size_bytes", "updated_at")
    list_filter = ("status", "app_name")
    search_fields = ("display_name", "source_uri")
    readonly_fields = ("corpus", "app_name", "display_name", "source_uri", "mime_type", "size_bytes", "content_hash",
                       "status", "error", "chunk_count", "attempts", "lease_until", "created_at", "updated_at",
                       "indexed_at")
    exclude = ("content",)
    inlines = [ChunkInline]
    actions = ["index_again"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        return super().get_queryset(request).defer("content").select_related("corpus")

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        return UploadForm if obj is None else super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return self.readonly_fields if obj is not None else ()

    def get_exclude(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return self.exclude if obj is not None else ()

    def get_inlines(self, request: HttpRequest, obj: Any = None) -> list[type]:
        return self.inlines if obj is not None else []

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a document changes by indexing it again

    def save_model(self, request: HttpRequest, obj: Document, form: forms.ModelForm, change: bool) -> None:
        upload = form.cleaned_data["file"]
        try:
            added = services.do_add_document(obj.corpus, data=upload.read(), filename=upload.name,
                                             mime_type=upload.content_type or "",
                                             display_name=form.cleaned_data.get("display_name") or "")
        except services.KnowledgeError as error:
            self.message_user(request, str(error), messages.ERROR)
            obj.pk = None
            return
        obj.pk = added.document.pk
        if not added.created:
            self.message_user(request, f"{upload.name} is in the corpus already: nothing changed.", messages.INFO)

    def response_add(self, request: HttpRequest, obj: Document, post_url_continue: str | None = None) -> Any:
        if obj.pk is None:
            from django.shortcuts import redirect

            return redirect(request.path)
        return super().response_add(request, Document.objects.get(pk=obj.pk), post_url_continue)

    @admin.action(description="Index selected documents again")
    def index_again(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        for document in queryset:
            services.do_reindex(document)
        self.message_user(request, f"{queryset.count()} documents sent to be indexed again.", messages.SUCCESS)


@admin.register(Import)
class ImportAdmin(admin.ModelAdmin):
    """Imports are made through ragFiles:import and run by a worker: here they are read, with what failed and why."""

    list_display = ("id", "corpus", "app_name", "status", "files_found", "added_count", "skipped_count",
                    "refused_count", "created_at", "finished_at")
    list_filter = ("status", "app_name")
    readonly_fields = ("corpus", "app_name", "uris", "chunk_size", "chunk_overlap", "status", "files_found",
                       "added_count", "skipped_count", "refused_count", "failures", "error", "attempts", "lease_until",
                       "created_at", "updated_at", "finished_at")
    exclude = ("documents",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Import]:
        return super().get_queryset(request).select_related("corpus")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
