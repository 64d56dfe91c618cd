import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
application = get_wsgi_application()

from cognizes.infra import secret_key  # noqa: E402  (after Django is set up, as in asgi.py)

secret_key.require("The web server")
