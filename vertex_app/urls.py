"""Vertex AI Agent Engine paths, in both spellings clients use.

Express mode: ``v1beta1/reasoningEngines/{id}/…``; project mode:
``v1beta1/projects/{p}/locations/{l}/reasoningEngines/{id}/…`` (and ``v1/``, for
clients set to the GA version). Custom methods
follow a colon (``sessions/{id}:appendEvent``), so ids stop at ``/`` and ``:``.
"""

from django.urls import re_path

from vertex_app import engines, errors, memories, operations, sessions

ENGINE = r"^v1(?:beta1)?/(?:projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/)?reasoningEngines/(?P<engine_id>\d{1,19})"
SESSION = ENGINE + r"/sessions/(?P<session_id>[^/:]+)"
MEMORY = ENGINE + r"/memories/(?P<memory_id>[^/:]+)"
LOCATION = r"^v1(?:beta1)?/(?:projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/)?"

urlpatterns = [
    re_path(ENGINE + r"$", engines.EngineView.as_view()),
    re_path(ENGINE + r"/sessions$", sessions.SessionsView.as_view()),
    re_path(SESSION + r"$", sessions.SessionView.as_view()),
    re_path(SESSION + r":appendEvent$", sessions.AppendEventView.as_view()),
    re_path(SESSION + r"/events$", sessions.EventsView.as_view()),
    re_path(SESSION + r"/operations/(?P<operation_id>[^/:]+)$", sessions.SessionOperationView.as_view()),
    re_path(ENGINE + r"/memories$", memories.MemoriesView.as_view()),
    re_path(ENGINE + r"/memories:generate$", memories.GenerateView.as_view()),
    re_path(ENGINE + r"/memories:ingestEvents$", memories.IngestEventsView.as_view()),
    re_path(ENGINE + r"/memories:retrieve$", memories.RetrieveView.as_view()),
    re_path(ENGINE + r"/memories:retrieveProfiles$", memories.RetrieveProfilesView.as_view()),
    re_path(ENGINE + r"/memories:purge$", memories.PurgeView.as_view()),
    re_path(MEMORY + r"$", memories.MemoryView.as_view()),
    re_path(MEMORY + r":rollback$", memories.RollbackView.as_view()),
    re_path(MEMORY + r"/revisions$", memories.RevisionsView.as_view()),
    re_path(MEMORY + r"/revisions/(?P<revision_id>[^/:]+)$", memories.RevisionView.as_view()),
    re_path(MEMORY + r"/operations/(?P<operation_id>[^/:]+)$", memories.MemoryOperationView.as_view()),
    re_path(ENGINE + r"/operations/(?P<operation_id>[^/:]+)$", operations.EngineOperationView.as_view()),
    re_path(LOCATION + r"operations/(?P<operation_id>[^/:]+)$", operations.LocationOperationView.as_view()),
    re_path(r"^v1(?:beta1)?/", errors.not_found),
]
