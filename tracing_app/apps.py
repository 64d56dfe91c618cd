from django.apps import AppConfig
from django.conf import settings


class TracingAppConfig(AppConfig):
    name = "tracing_app"
    verbose_name = "Tracing"

    def ready(self) -> None:
        from tracing_app import erasure  # a user erased: their traces go too

        erasure.connect()
        # Every Django process (web, worker, agent scripts via cognizes.adk) traces
        # itself, so an agent run inside any of them lands next to its session.
        if settings.COGNIZES_TRACING:
            from tracing_app.setup import configure_tracing

            configure_tracing()
