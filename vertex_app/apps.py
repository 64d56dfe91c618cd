from django.apps import AppConfig


class VertexAppConfig(AppConfig):
    name = "vertex_app"
    verbose_name = "Vertex AI compatibility"
