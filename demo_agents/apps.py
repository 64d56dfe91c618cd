from django.apps import AppConfig


class DemoAgentsConfig(AppConfig):
    """The demo weather agent, as an app so that ``manage.py load_demo`` lives beside it."""

    name = "demo_agents"
    verbose_name = "Demo agents"
