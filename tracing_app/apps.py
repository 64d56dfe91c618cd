from django.apps import AppConfig


class TracingAppConfig(AppConfig):
    name = "tracing_app"
    verbose_name = "Tracing"
