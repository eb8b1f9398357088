"""The data plane's ASGI dispatch by scope type, without Channels or Django.

:class:`ScopeTypeRouter` sends each scope to the app mapped to its ``scope["type"]``, exactly as
Channels' ``ProtocolTypeRouter`` does (``channels.routing`` imports ``django.urls``, which loads
``django.http`` and ``django.db.models``: about 0.1-0.15 s and ORM modules a headless engine
must not load). :func:`data_plane_mapping` is the mapping every data-plane listener serves:
``http`` to the engine's :class:`~mocks.engine.app.DataPlaneApp`, ``websocket`` to its
WebSocket routes, ``lifespan`` acknowledged (start-up work is done before the listener binds).
Used by ``mockd engine`` (``mockd_project/asgi.py``) and the in-process ``mockd.MockServer``.

Source: ARCHITECTURE "Processes and ports"; STYLE §1 (never leave ``lifespan`` unmapped).
"""
from __future__ import annotations

from typing import Any

from mocks.engine.app import DataPlaneApp, acknowledge_lifespan
from mocks.engine.core import Engine
from mocks.engine.websocket import WebSocketRouterApp


async def acknowledge_lifespan_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """ASGI app for ``lifespan`` scopes: acknowledges startup and shutdown."""
    await acknowledge_lifespan(receive, send)


def data_plane_mapping(engine: Engine) -> dict[str, Any]:
    """``{"http": DataPlaneApp, "websocket": WebSocketRouterApp, "lifespan": ack}`` for
    ``engine``."""
    return {"http": DataPlaneApp(engine), "websocket": WebSocketRouterApp(engine),
            "lifespan": acknowledge_lifespan_app}


class ScopeTypeRouter:
    """Dispatch by ``scope["type"]`` (raises ValueError for an unmapped type).

    Args:
        application_mapping: scope type (``http``, ``websocket``, ``lifespan``) -> ASGI app.
    """

    def __init__(self, application_mapping: dict[str, Any]):
        self.application_mapping = application_mapping

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        application = self.application_mapping.get(scope["type"])
        if application is None:
            raise ValueError(f"No application configured for scope type {scope['type']!r}")
        await application(scope, receive, send)


def lean_data_plane(engine: Engine) -> ScopeTypeRouter:
    """The data-plane ASGI app of ``engine`` without Channels or Django."""
    return ScopeTypeRouter(data_plane_mapping(engine))
