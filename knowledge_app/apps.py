from django.apps import AppConfig


class KnowledgeAppConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "knowledge_app"
    verbose_name = "Knowledge"

    def ready(self) -> None:
        from knowledge_app import erasure  # a user erased: the documents that are theirs go too

        erasure.connect()
