"""ASGI assembly of the three listeners (ARCHITECTURE "Processes and ports").

* data plane: Channels' ``ProtocolTypeRouter`` sending ``http`` straight to the engine's lean
  :class:`~mocks.engine.app.DataPlaneApp` (no Django on the hot path);
* admin: Django's ASGI handler (django-ninja API, Django admin);
* engine control: :class:`~mocks.engine.control.EngineControlApp`.

Lifespan: startup work (config load, snapshot compile) is done by the runner *before* the
listeners bind, so every router maps ``lifespan`` to a handler that only acknowledges it
(STYLE §1: never leave it unmapped).
"""
from __future__ import annotations

import os
from typing import Any

from channels.routing import ProtocolTypeRouter

from mocks.engine.app import DataPlaneApp, acknowledge_lifespan
from mocks.engine.core import Engine


async def _lifespan(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await acknowledge_lifespan(receive, send)


def data_plane_application(engine: Engine) -> ProtocolTypeRouter:
    """The data-plane ASGI app for ``engine``."""
    return ProtocolTypeRouter({"http": DataPlaneApp(engine), "lifespan": _lifespan})


def admin_application() -> Any:
    """The admin ASGI app (Django must already be set up by the caller)."""
    from django.core.asgi import get_asgi_application

    return ProtocolTypeRouter({"http": get_asgi_application(), "lifespan": _lifespan})


def _default_application() -> Any:  # pragma: no cover - for `daphne mockd_project.asgi:...`
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mockd_project.settings")
    import django

    django.setup()
    return admin_application()
