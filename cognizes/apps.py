"""The project's one app config: Django's admin, on the site that opens on an overview."""

from django.contrib.admin.apps import AdminConfig


class CognizesAdminConfig(AdminConfig):
    """``django.contrib.admin`` with ``cognizes.admin_site``'s site as ``admin.site``: every app's
    ``@admin.register`` lands on it. (Its module imports models, so it is named here, not imported.)"""

    default_site = "cognizes.admin_site.CognizesAdminSite"

    def ready(self) -> None:
        """Load the Celery app with Django, so that every process that queues a task (web, commands, agents)
        queues it on Cognizes' broker rather than on a default Celery app's."""
        super().ready()
        from cognizes import celery  # noqa: F401  (imported for its side effect: the current Celery app)
