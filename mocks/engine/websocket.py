"""The data plane's entry for WebSocket upgrades: dispatch to the handlers' WebSocket routes.

Channels' ``ProtocolTypeRouter`` on the mock port sends ``websocket`` scopes here. The live
snapshot's ``websocket_routes`` (filled by protocol handlers, see
:class:`~mocks.protocols.WebSocketRoute`) decide who serves the path; an upgrade at a path no
mock serves is refused before it is accepted, which the ASGI server answers with HTTP 403.

Source: ARCHITECTURE "Processes and ports" (``websocket`` -> the protocol handlers' WebSocket
routes); behavior notes §10. Django-free.
"""
from __future__ import annotations

from typing import Any

from chaos.injector import admit_websocket
from mocks.engine.core import Engine


class WebSocketRouterApp:
    """ASGI app for ``websocket`` scopes of one engine (see the module docstring)."""

    def __init__(self, engine: Engine):
        self.engine = engine

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        routes = self.engine.snapshot.websocket_routes
        path = scope.get("path", "")
        route = routes.get(path)
        if route is None:
            # Paths with {name} captures: few per config, tried in config order.
            for candidate in routes.values():
                if candidate.pattern is not None and candidate.pattern.fullmatch(path):
                    route = candidate
                    break
        if route is None:
            message = await receive()
            if message.get("type") == "websocket.connect":
                # Closing before accepting makes the server answer the upgrade with 403.
                await send({"type": "websocket.close", "code": 1008})
            return
        chaos = self.engine.chaos
        if chaos is not None and not await admit_websocket(chaos, scope, receive, send):
            return  # refused by a chaos fault (behavior notes §11)
        await route.app(scope, receive, send)
