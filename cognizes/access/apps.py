from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "cognizes.access"
    label = "access"
    verbose_name = "API access"
