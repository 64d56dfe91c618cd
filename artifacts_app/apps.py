from django.apps import AppConfig


class ArtifactsAppConfig(AppConfig):
    name = "artifacts_app"
    verbose_name = "Artifacts"
