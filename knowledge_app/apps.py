from django.apps import AppConfig


class KnowledgeAppConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "knowledge_app"
    verbose_name = "Knowledge"
