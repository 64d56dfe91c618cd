from django.apps import AppConfig


class MemoryAppConfig(AppConfig):
    name = "memory_app"
    verbose_name = "Memory"

    def ready(self) -> None:
        from memory_app import lifecycle  # forgets with deleted sessions, when configured to

        lifecycle.connect()
