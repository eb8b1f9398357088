"""ASGI assembly of the data-plane listener (ARCHITECTURE "Processes and ports").

* data plane: Channels' ``ProtocolTypeRouter`` sending ``http`` straight to the engine's lean
  :class:`~mocks.engine.app.DataPlaneApp` (no Django on the hot path) and ``websocket`` to
  :class:`~mocks.engine.websocket.WebSocketRouterApp` (the protocol handlers' WebSocket routes);
* the admin listener is built by :func:`mockd_project.middleware.build_admin_application`
  (the API-key gateway in front of Django's ASGI handler) and engine control by
  :class:`~mocks.engine.control.EngineControlApp`; neither is assembled here.

Lifespan: startup work (config load, snapshot compile) is done by the runner *before* the
listeners bind, so every router maps ``lifespan`` to a handler that only acknowledges it
(STYLE §1: never leave it unmapped).
"""
from __future__ import annotations

from typing import Any

from channels.routing import ProtocolTypeRouter

from mocks.engine.app import DataPlaneApp, acknowledge_lifespan
from mocks.engine.core import Engine
from mocks.engine.websocket import WebSocketRouterApp


async def _lifespan(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await acknowledge_lifespan(receive, send)


def data_plane_application(engine: Engine) -> ProtocolTypeRouter:
    """The data-plane ASGI app for ``engine``."""
    return ProtocolTypeRouter({"http": DataPlaneApp(engine),
                               "websocket": WebSocketRouterApp(engine),
                               "lifespan": _lifespan})
