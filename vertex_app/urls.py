"""Vertex AI Agent Engine paths, in both spellings clients use.

Express mode: ``v1beta1/reasoningEngines/{id}/…``; project mode:
``v1beta1/projects/{p}/locations/{l}/reasoningEngines/{id}/…`` (and ``v1/``, for
clients set to the GA version). Custom methods
follow a colon (``sessions/{id}:appendEvent``), so ids stop at ``/`` and ``:``.
The Agent Registry's paths (``agentregistry.googleapis.com``) are ``v1`` and
project mode only, as its clients send them: ``v1/projects/{p}/locations/{l}/agents``.
"""

from django.urls import re_path

from vertex_app import (
    agent_registry,
    agents,
    engine_collection,
    engines,
    errors,
    example_stores,
    feedback,
    memories,
    memory_profiles,
    memory_revisions,
    operations,
    rag,
    rag_ask,
    rag_config,
    sandbox_templates,
    sandboxes,
    sessions,
    skills,
)

ENGINE = (
    r"^v1(?:beta1)?/(?:projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/)?"
    r"reasoningEngines/(?P<engine_id>[0-9]{1,19})"
)
SESSION = ENGINE + r"/sessions/(?P<session_id>[^/:]+)"
MEMORY = ENGINE + r"/memories/(?P<memory_id>[^/:]+)"
LOCATION = r"^v1(?:beta1)?/(?:projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/)?"
CORPUS = LOCATION + r"ragCorpora/(?P<corpus_id>[^/:]+)"
EXAMPLE_STORE = LOCATION + r"exampleStores/(?P<store_id>[^/:]+)"
SKILL = LOCATION + r"skills/(?P<skill_id>[^/:]+)"
REGISTRY_ALPHA = r"^v1alpha/projects/(?P<project>[^/]+)/locations/(?P<location>[^/:]+)/"
SANDBOX = ENGINE + r"/sandboxEnvironments/(?P<sandbox_id>[^/:]+)"
SNAPSHOT = ENGINE + r"/sandboxEnvironmentSnapshots/(?P<snapshot_id>[^/:]+)"
TEMPLATE = ENGINE + r"/sandboxEnvironmentTemplates/(?P<template_id>[^/:]+)"
REGISTRY = r"^v1/projects/(?P<project>[^/]+)/locations/(?P<location>[^/:]+)/"

urlpatterns = [
    re_path(LOCATION + r"reasoningEngines$", engine_collection.EnginesView.as_view()),
    re_path(ENGINE + r"$", engines.EngineView.as_view()),
    re_path(ENGINE + r"/runtimeRevisions$", engine_collection.RuntimeRevisionsView.as_view()),
    re_path(ENGINE + r"/runtimeRevisions/(?P<revision_id>[^/:]+)$", engine_collection.RuntimeRevisionView.as_view()),
    re_path(ENGINE + r":query$", agents.QueryView.as_view()),
    re_path(ENGINE + r":streamQuery$", agents.StreamQueryView.as_view()),
    re_path(ENGINE + r"/sessions$", sessions.SessionsView.as_view()),
    re_path(SESSION + r"$", sessions.SessionView.as_view()),
    re_path(SESSION + r":appendEvent$", sessions.AppendEventView.as_view()),
    re_path(SESSION + r"/events$", sessions.EventsView.as_view()),
    re_path(SESSION + r"/operations/(?P<operation_id>[^/:]+)$", sessions.SessionOperationView.as_view()),
    re_path(ENGINE + r"/memories$", memories.MemoriesView.as_view()),
    re_path(ENGINE + r"/memories:generate$", memories.GenerateView.as_view()),
    re_path(ENGINE + r"/memories:ingestEvents$", memories.IngestEventsView.as_view()),
    re_path(ENGINE + r"/memories:retrieve$", memories.RetrieveView.as_view()),
    re_path(ENGINE + r"/memories:retrieveProfiles$", memory_profiles.RetrieveProfilesView.as_view()),
    re_path(ENGINE + r"/memories:purge$", memories.PurgeView.as_view()),
    re_path(MEMORY + r"$", memories.MemoryView.as_view()),
    re_path(MEMORY + r":rollback$", memory_revisions.RollbackView.as_view()),
    re_path(MEMORY + r"/revisions$", memory_revisions.RevisionsView.as_view()),
    re_path(MEMORY + r"/revisions/(?P<revision_id>[^/:]+)$", memory_revisions.RevisionView.as_view()),
    re_path(MEMORY + r"/operations/(?P<operation_id>[^/:]+)$", memories.MemoryOperationView.as_view()),
    re_path(ENGINE + r"/feedbackEntries$", feedback.FeedbackEntriesView.as_view()),
    re_path(ENGINE + r"/feedbackEntries/(?P<entry_id>[^/:]+)$", feedback.FeedbackEntryView.as_view()),
    re_path(ENGINE + r"/feedbackEntries/(?P<entry_id>[^/:]+)/feedbackContext$", feedback.FeedbackContextView.as_view()),
    re_path(ENGINE + r"/sandboxEnvironments$", sandboxes.SandboxesView.as_view()),
    re_path(SANDBOX + r"$", sandboxes.SandboxView.as_view()),
    re_path(SANDBOX + r"/?:execute$", sandboxes.ExecuteView.as_view()),  # agentplatform sends {name}/:execute
    re_path(SANDBOX + r"/?:pause$", sandboxes.PauseView.as_view()),
    re_path(SANDBOX + r"/?:resume$", sandboxes.ResumeView.as_view()),
    re_path(SANDBOX + r"/?:snapshot$", sandboxes.SnapshotView.as_view()),
    re_path(ENGINE + r"/sandboxEnvironmentSnapshots$", sandboxes.SnapshotsView.as_view()),
    re_path(SNAPSHOT + r"$", sandboxes.SnapshotResourceView.as_view()),
    re_path(SNAPSHOT + r"/operations/(?P<operation_id>[^/:]+)$", sandboxes.SnapshotOperationView.as_view()),
    re_path(ENGINE + r"/sandboxEnvironmentTemplates$", sandbox_templates.TemplatesView.as_view()),
    re_path(TEMPLATE + r"$", sandbox_templates.TemplateView.as_view()),
    re_path(TEMPLATE + r"/operations/(?P<operation_id>[^/:]+)$", sandbox_templates.TemplateOperationView.as_view()),
    re_path(SANDBOX + r"/operations/(?P<operation_id>[^/:]+)$", sandboxes.SandboxOperationView.as_view()),
    re_path(ENGINE + r"/operations/(?P<operation_id>[^/:]+)$", operations.EngineOperationView.as_view()),
    re_path(LOCATION + r"operations/(?P<operation_id>[^/:]+)$", operations.LocationOperationView.as_view()),
    re_path(LOCATION + r"ragCorpora$", rag.RagCorporaView.as_view()),
    re_path(CORPUS + r"$", rag.RagCorpusView.as_view()),
    re_path(CORPUS + r"/operations/(?P<operation_id>[^/:]+)$", rag.RagOperationView.as_view()),
    re_path(CORPUS + r"/ragFiles$", rag.RagFilesView.as_view()),
    re_path(CORPUS + r"/ragFiles:import$", rag.RagImportView.as_view()),
    re_path(CORPUS + r"/ragFiles/(?P<file_id>[^/:]+)$", rag.RagFileView.as_view()),
    re_path(r"^upload/" + CORPUS.removeprefix("^") + r"/ragFiles:upload$", rag.RagUploadView.as_view()),
    # What the clients send: .../locations/L:retrieveContexts, .../locations/L/:retrieveContexts, and /:retrieveContexts
    re_path(
        r"^v1(?:beta1)?/projects/(?P<project>[^/]+)/locations/(?P<location>[^/:]+):retrieveContexts$",
        rag.RetrieveContextsAsTheProtoSpellsItView.as_view(),
    ),
    re_path(LOCATION + r":retrieveContexts$", rag.RetrieveContextsView.as_view()),
    re_path(
        r"^v1(?:beta1)?/projects/(?P<project>[^/]+)/locations/(?P<location>[^/:]+):askContexts$",
        rag_ask.AskContextsAsTheProtoSpellsItView.as_view(),
    ),
    re_path(LOCATION + r":askContexts$", rag_ask.AskContextsView.as_view()),
    re_path(LOCATION + r"ragEngineConfig$", rag_config.RagEngineConfigView.as_view()),
    re_path(LOCATION + r"exampleStores$", example_stores.ExampleStoresView.as_view()),
    re_path(LOCATION + r"exampleStores:create$", example_stores.CreateExampleStoreView.as_view()),
    re_path(EXAMPLE_STORE + r"$", example_stores.ExampleStoreDetailView.as_view()),
    re_path(
        EXAMPLE_STORE + r"/operations/(?P<operation_id>[^/:]+)$", example_stores.ExampleStoreOperationView.as_view()
    ),
    re_path(EXAMPLE_STORE + r":upsertExamples$", example_stores.UpsertExamplesView.as_view()),
    re_path(EXAMPLE_STORE + r":searchExamples$", example_stores.SearchExamplesView.as_view()),
    re_path(EXAMPLE_STORE + r":fetchExamples$", example_stores.FetchExamplesView.as_view()),
    re_path(EXAMPLE_STORE + r":removeExamples$", example_stores.RemoveExamplesView.as_view()),
    re_path(REGISTRY + r"agents$", agent_registry.AgentsView.as_view()),
    re_path(REGISTRY + r"agents:search$", agent_registry.SearchAgentsView.as_view()),
    re_path(REGISTRY + r"agents/(?P<agent_id>[^/:]+)$", agent_registry.AgentView.as_view()),
    re_path(REGISTRY + r"mcpServers$", agent_registry.McpServersView.as_view()),
    re_path(REGISTRY + r"mcpServers:search$", agent_registry.SearchMcpServersView.as_view()),
    re_path(REGISTRY + r"mcpServers/(?P<server_id>[^/:]+)$", agent_registry.McpServerView.as_view()),
    re_path(REGISTRY + r"bindings$", agent_registry.BindingsView.as_view()),
    re_path(REGISTRY + r"bindings:fetchAvailable$", agent_registry.AvailableBindingsView.as_view()),
    re_path(REGISTRY + r"endpoints$", agent_registry.EndpointsView.as_view()),
    re_path(REGISTRY + r"endpoints/(?P<endpoint_id>[^/:]+)$", agent_registry.EndpointView.as_view()),
    re_path(LOCATION + r"skills$", skills.SkillsView.as_view()),
    re_path(LOCATION + r"skills:retrieve$", skills.RetrieveSkillsView.as_view()),
    re_path(SKILL + r"$", skills.SkillView.as_view()),
    re_path(SKILL + r"/operations/(?P<operation_id>[^/:]+)$", skills.SkillOperationView.as_view()),
    re_path(SKILL + r"/revisions$", skills.SkillRevisionsView.as_view()),
    re_path(SKILL + r"/revisions/(?P<revision_id>[^/:]+)$", skills.SkillRevisionView.as_view()),
    re_path(REGISTRY_ALPHA + r"skills:search$", skills.RegistrySearchSkillsView.as_view()),
    re_path(REGISTRY_ALPHA + r"skills/(?P<skill_id>[^/:]+)$", skills.RegistrySkillView.as_view()),
    re_path(
        REGISTRY_ALPHA + r"skills/(?P<skill_id>[^/:]+)/revisions/(?P<revision_id>[^/:]+)$",
        skills.RegistrySkillRevisionView.as_view(),
    ),
    re_path(r"^v1(?:alpha|beta1)?/", errors.not_found),
]
