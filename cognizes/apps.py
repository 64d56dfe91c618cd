"""The project's one app config: Django's admin, on the site that opens on an overview."""

from django.contrib.admin.apps import AdminConfig


class CognizesAdminConfig(AdminConfig):
    """``django.contrib.admin`` with ``cognizes.admin_site``'s site as ``admin.site``: every app's
    ``@admin.register`` lands on it. (Its module imports models, so it is named here, not imported.)"""

    default_site = "cognizes.admin_site.CognizesAdminSite"
