"""ASGI assembly of the data-plane listener (ARCHITECTURE "Processes and ports").

* data plane: Channels' ``ProtocolTypeRouter`` sending ``http`` straight to the engine's lean
  :class:`~mocks.engine.app.DataPlaneApp` (no Django on the hot path) and ``websocket`` to
  :class:`~mocks.engine.websocket.WebSocketRouterApp` (the protocol handlers' WebSocket routes).
  ``mockd engine`` uses :class:`~mocks.engine.routing.ScopeTypeRouter` instead, the same dispatch without the import
  cost: ``channels.routing`` imports ``django.urls``, which loads ``django.http`` and
  ``django.db.models`` (about 0.1-0.15 s, and the ORM modules a headless engine must not load);
* the admin listener is built by :func:`mockd_project.middleware.build_admin_application`
  (the API-key gateway in front of Django's ASGI handler) and engine control by
  :class:`~mocks.engine.control.EngineControlApp`; neither is assembled here.

Lifespan: startup work (config load, snapshot compile) is done by the runner *before* the
listeners bind, so every router maps ``lifespan`` to a handler that only acknowledges it
(STYLE §1: never leave it unmapped).
"""
from __future__ import annotations

from typing import Any

from mocks.engine.core import Engine
from mocks.engine.routing import ScopeTypeRouter, data_plane_mapping

__all__ = ["ScopeTypeRouter", "data_plane_application"]


def data_plane_application(engine: Engine, *, lean: bool = False) -> Any:
    """The data-plane ASGI app for ``engine``: Channels' ``ProtocolTypeRouter`` (full mode,
    where Django is loaded anyway), or with ``lean`` (``mockd engine``) a
    :class:`ScopeTypeRouter` over the same apps, so no Django module is imported."""
    mapping = data_plane_mapping(engine)
    if lean:
        return ScopeTypeRouter(mapping)
    from channels.routing import ProtocolTypeRouter

    return ProtocolTypeRouter(mapping)
