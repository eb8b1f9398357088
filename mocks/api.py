"""Admin API routes of the mocks app (django-ninja ``Router``).

Source: SPEC "Admin API" / "Health and metrics"; behavior notes §1 "Health, status, ports".
"""
from __future__ import annotations

import time

from django.http import JsonResponse
from ninja import Router

from mockd_project.runtime import runtime
from mocks.engine.core import utc_timestamp

router = Router(tags=["health"])


@router.get("/health", auth=None)
def health(request):
    """Liveness: ``{"status": "ok", "uptime": <s>, "timestamp"}``, no auth."""
    return {"status": "ok", "uptime": int(time.time() - runtime.started_at),
            "timestamp": utc_timestamp()}


@router.get("/ready", auth=None)
def ready(request):
    """Readiness: 200 ``{status: ready, uptime, timestamp}`` once config is loaded, else 503."""
    if not runtime.ready:
        return JsonResponse({"status": "initializing", "timestamp": utc_timestamp()}, status=503)
    return {"status": "ready", "uptime": int(time.time() - runtime.started_at),
            "timestamp": utc_timestamp()}
