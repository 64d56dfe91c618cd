"""Knowledge URLs, mounted under /api/v1/apps/<app_name>/ by cognizes/urls.py."""

from django.urls import path

from knowledge_app import api, import_api

corpus = "corpora/<int:corpus_id>/"
document = corpus + "documents/<int:document_id>/"

urlpatterns = [
    path("corpora/", api.CorporaView.as_view(), name="corpora"),
    path(corpus, api.CorpusView.as_view(), name="corpus"),
    path(corpus + "search/", api.CorpusSearchView.as_view(), name="corpus-search"),
    path(corpus + "documents/", api.DocumentsView.as_view(), name="documents"),
    path(corpus + "imports/", import_api.ImportsView.as_view(), name="imports"),
    path(corpus + "imports/<int:import_id>/", import_api.ImportView.as_view(), name="import"),
    path(document, api.DocumentView.as_view(), name="document"),
    path(document + "chunks/", api.DocumentChunksView.as_view(), name="document-chunks"),
]
