from django.apps import AppConfig


class RuntimeAppConfig(AppConfig):
    """Serves the agents of ``COGNIZES_AGENTS`` on the domain apps: runners, run API, chat, demo."""

    name = "runtime_app"
    verbose_name = "Agent runtime"

    def ready(self) -> None:
        from runtime_app import erasure  # a user erased: their A2A tasks go too

        erasure.connect()
