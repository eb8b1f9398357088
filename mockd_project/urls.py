"""Admin-port URLs: the dashboard at ``/``, the admin API at the root paths, the Django admin
at ``/admin/``.

Unknown routes answer JSON ``{"error": "not_found", ...}`` (behavior notes §3).
"""
from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import path

from mockd_project import dashboard
from mockd_project.api import api

# The API first: it owns `/admin/api-key` (notes §1), which the Django admin's catch-all
# would otherwise redirect to its login page.
urlpatterns = [
    path("", dashboard.index, name="dashboard"),
    path("index.html", dashboard.index),
    path("manifest.json", dashboard.manifest),
    path("", api.urls),
    path("admin/", admin.site.urls),
]


def not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """404 ``{"error": "not_found", "message"}`` for a path no route serves."""
    return JsonResponse({"error": "not_found",
                         "message": f"No admin route for {request.path}; see /docs"},
                        status=404)


def server_error(request: HttpRequest) -> JsonResponse:
    """500 ``{"error": "internal_error", "message"}`` (the details are in the server log)."""
    return JsonResponse({"error": "internal_error",
                         "message": "Unexpected server error; see the server log"}, status=500)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """400 ``{"error": "bad_request", "message"}`` for requests Django itself rejects."""
    return JsonResponse({"error": "bad_request", "message": "Malformed request"}, status=400)


handler404 = not_found
handler500 = server_error
handler400 = bad_request
