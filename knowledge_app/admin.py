"""Knowledge in the admin: corpora with their document counts and a search box, documents with their status and
chunks, uploads, imports."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse
from django.utils.html import format_html

from cognizes.access.admin_views import ChangedByActions, permitted_view
from cognizes.infra.embedders import get_embedder_id
from cognizes.infra.served_embedder import EmbeddingUnavailable
from knowledge_app import services
from knowledge_app.models import Chunk, Corpus, Document, Import
from knowledge_app.reembedding import CannotStore, do_reembed_corpus
from knowledge_app.rerank import RerankRefused, search_and_rerank
from knowledge_app.search import MAX_QUERY_CHARS, MODES


class SearchForm(forms.Form):
    query = forms.CharField(max_length=MAX_QUERY_CHARS, widget=forms.TextInput(attrs={"size": 80, "autofocus": True}))
    top_k = forms.IntegerField(label="Top k", min_value=1, max_value=100, initial=10)
    mode = forms.ChoiceField(
        choices=[(mode, mode) for mode in MODES],
        initial="hybrid",
        help_text="hybrid: both rank lists fused, as agents search; or either list alone.",
    )
    rerank_model = forms.CharField(
        required=False,
        max_length=200,
        label="Rerank with",
        help_text="A model that orders the candidates (gemini-2.5-flash, openai/…); "
        "empty: none, whatever COGNIZES_RERANK_MODEL says.",
    )


@admin.register(Corpus)
class CorpusAdmin(admin.ModelAdmin):
    list_display = (
        "display_name",
        "app_name",
        "documents",
        "chunk_size",
        "chunk_overlap",
        "embedder",
        "created_at",
        "search",
    )
    list_filter = ("app_name",)
    search_fields = ("display_name", "description")
    readonly_fields = ("embedder",)  # what its chunks are; changed only by re-embedding them (reembed_corpus)
    actions = ["reembed"]
    change_form_template = "admin/knowledge_app/corpus/change_form.html"  # a link to search it

    @admin.display(description="search")
    def search(self, corpus: Corpus) -> str:
        return format_html('<a href="{}">Search</a>', reverse("admin:knowledge_app_corpus_search", args=[corpus.pk]))

    def get_urls(self) -> list:
        search = permitted_view(self, self.search_view)
        return [path("<int:corpus_id>/search/", search, name="knowledge_app_corpus_search"), *super().get_urls()]

    def search_view(self, request: HttpRequest, corpus_id: int) -> HttpResponse:
        """Search the corpus as an agent would, showing each chunk's score, distance and place in both rank lists;
        with a rerank model, in its order, each with its fused score (and why the fused order stayed, if it did)."""
        corpus = get_object_or_404(Corpus, pk=corpus_id)
        form = SearchForm(request.GET or None)
        found = None
        if form.is_valid():
            model = form.cleaned_data["rerank_model"]
            try:
                found = search_and_rerank(
                    app_name=corpus.app_name,
                    corpus_ids=[corpus.id],
                    query=form.cleaned_data["query"],
                    top_k=form.cleaned_data["top_k"],
                    mode=form.cleaned_data["mode"],
                    rerank=bool(model),
                    rerank_model=model,
                )
            except RerankRefused as error:
                form.add_error("rerank_model", str(error))
            except services.EmbeddedWithAnother as error:
                form.add_error("query", str(error))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": corpus,
            "title": f"Search {corpus.display_name}",
            "form": form,
            "hits": found and found.hits,
            "found": found,
        }
        return render(request, "admin/knowledge_app/corpus/search.html", context)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Corpus]:
        return super().get_queryset(request).annotate(document_count=Count("documents"))

    @admin.display(description="documents", ordering="document_count")
    def documents(self, corpus: Corpus) -> int:
        return corpus.document_count  # type: ignore[attr-defined]  # annotated by get_queryset

    def save_model(self, request: HttpRequest, obj: Corpus, form: forms.ModelForm, change: bool) -> None:
        services.check_chunking(obj.chunk_size, obj.chunk_overlap)
        super().save_model(request, obj, form, change)

    @admin.action(description="Re-embed selected corpora with the current embedder", permissions=["change"])
    def reembed(self, request: HttpRequest, queryset: QuerySet[Corpus]) -> None:
        """What ``cognizes reembed_corpus`` does, in the request: for corpora small enough to wait for."""
        count = 0
        try:
            for corpus in queryset:
                count += do_reembed_corpus(corpus)
        except (CannotStore, EmbeddingUnavailable) as error:
            self.message_user(request, f"{count} chunks re-embedded, then: {error}", messages.ERROR)
            return
        self.message_user(
            request,
            f"{count} chunks of {len(queryset)} corpora re-embedded with {get_embedder_id()}.",
            messages.SUCCESS,
        )


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
class DocumentAdmin(ChangedByActions, admin.ModelAdmin):
    list_display = ("display_name", "corpus", "app_name", "user_id", "state", "chunk_count", "size_bytes", "updated_at")
    list_filter = ("status", "app_name")
    search_fields = ("display_name", "source_uri", "user_id")
    readonly_fields = (
        "corpus",
        "app_name",
        "user_id",
        "display_name",
        "description",
        "metadata",
        "source_uri",
        "source_path",
        "mime_type",
        "size_bytes",
        "content_hash",
        "chunk_size",
        "chunk_overlap",
        "status",
        "progress",
        "pages",
        "chunks_total",
        "chunks_embedded",
        "error",
        "chunk_count",
        "attempts",
        "lease_until",
        "created_at",
        "updated_at",
        "indexed_at",
    )
    exclude = ("content",)
    inlines = [ChunkInline]
    actions = ["index_again"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        return super().get_queryset(request).defer("content").select_related("corpus")

    @admin.display(description="status", ordering="status")
    def state(self, document: Document) -> str:
        return document.state

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
            added = services.do_add_document(
                obj.corpus,
                data=upload.read(),
                filename=upload.name,
                mime_type=upload.content_type or "",
                display_name=form.cleaned_data.get("display_name") or "",
            )
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

    @admin.action(description="Index selected documents again", permissions=["act"])
    def index_again(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        for document in queryset:
            services.do_reindex(document)
        self.message_user(request, f"{queryset.count()} documents sent to be indexed again.", messages.SUCCESS)


@admin.register(Import)
class ImportAdmin(admin.ModelAdmin):
    """Imports are made through ragFiles:import and run by a worker: here they are read, with what failed and why."""

    list_display = (
        "id",
        "corpus",
        "app_name",
        "status",
        "files_found",
        "added_count",
        "replaced_count",
        "skipped_count",
        "refused_count",
        "deleted_count",
        "created_at",
        "finished_at",
    )
    list_filter = ("status", "app_name")
    readonly_fields = (
        "corpus",
        "app_name",
        "uris",
        "chunk_size",
        "chunk_overlap",
        "delete_missing",
        "status",
        "files_found",
        "added_count",
        "replaced_count",
        "skipped_count",
        "refused_count",
        "deleted_count",
        "failures",
        "error",
        "attempts",
        "lease_until",
        "created_at",
        "updated_at",
        "finished_at",
    )
    exclude = ("documents",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Import]:
        return super().get_queryset(request).select_related("corpus")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
