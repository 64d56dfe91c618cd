from django.apps import AppConfig


class ToolsAppConfig(AppConfig):
    name = "tools_app"
    verbose_name = "Tools"

    def ready(self) -> None:
        from tools_app import erasure  # a user erased: this app's share goes too

        erasure.connect()
