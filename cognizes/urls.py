from django.contrib import admin
from django.urls import path
from django.views.generic import RedirectView

admin.site.site_header = "Cognizes"
admin.site.site_title = "Cognizes admin"
admin.site.index_title = "Sessions, memories, tools and traces"

urlpatterns = [
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
    path("admin/", admin.site.urls),
]
