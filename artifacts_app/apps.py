from django.apps import AppConfig


class ArtifactsAppConfig(AppConfig):
    name = "artifacts_app"
    verbose_name = "Artifacts"

    def ready(self) -> None:
        from artifacts_app import erasure  # a user erased: this app's share goes too

        erasure.connect()
