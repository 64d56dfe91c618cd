"""The ground floor: infrastructure every app stands on, importing none of them.

Database threads for ADK's async services (``db_threads``), the pooled PostgreSQL
backend (``postgres``), the replica router (``replica``), direct connections for
``LISTEN`` (``direct_db``), the process-local cache (``cache``), the embedded
PostgreSQL and Redis (``local``), the ASGI handler (``asgi_handler``), Django set
up for scripts (``setup``) and what Celery tasks share (``tasks``).
"""
