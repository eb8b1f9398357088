"""Admin-port URLs: the admin API at the root paths, the Django admin at ``/admin/``."""
from __future__ import annotations

from django.contrib import admin
from django.urls import path

from mockd_project.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", api.urls),
]
