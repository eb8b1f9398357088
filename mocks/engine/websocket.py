"""The data plane's entry for WebSocket upgrades: dispatch to the handlers' WebSocket routes.

Channels' ``ProtocolTypeRouter`` on the mock port sends ``websocket`` scopes here. The live
snapshot's ``websocket_routes`` (filled by protocol handlers, see
:class:`~mocks.protocols.WebSocketRoute`) decide who serves the path; an upgrade at a path no
mock serves is refused before it is accepted, which the ASGI server answers with HTTP 403.

Every WebSocket route of every protocol (GraphQL subscriptions, WebSocket mocks, anything
later served over WebSocket on this port) passes the same origin check here: an upgrade whose
``Origin`` the engine's CORS policy does not allow is refused the same way (403), so a web
page on a foreign site cannot open a socket to a local mock. An upgrade without ``Origin``
(every non-browser client) is admitted. Plain HTTP never comes through this module.

A stream recording armed at the path (``POST /stream-recordings/start``) records the
connection's frames; a replay armed there (``POST /stream-recordings/{id}/replay``) serves the
next connection instead of any mock. Both cost one dict truth test when nothing is armed.

Source: ARCHITECTURE "Processes and ports" (``websocket`` -> the protocol handlers' WebSocket
routes); behavior notes §4 (the data plane's CORS origins) and §10; docs/websocket.md
"Origins". Django-free.
"""
from __future__ import annotations

from typing import Any

from mocks.engine.core import Engine
from recordings import replay, stream_registry
from recordings.replay import PENDING as PENDING_REPLAYS
from recordings.stream_registry import ARMED as ARMED_RECORDINGS


def upgrade_origin(scope: dict[str, Any]) -> str | None:
    """The ``Origin`` header of an ASGI ``websocket`` scope as text (latin-1), or None when
    the upgrade carries none."""
    for name, value in scope.get("headers") or ():
        if name == b"origin":
            return value.decode("latin-1")
    return None


async def refuse_upgrade(receive: Any, send: Any) -> None:
    """Refuse a WebSocket upgrade before accepting it; the ASGI server answers HTTP 403."""
    message = await receive()
    if message.get("type") == "websocket.connect":
        await send({"type": "websocket.close", "code": 1008})


class WebSocketRouterApp:
    """ASGI app for ``websocket`` scopes of one engine (see the module docstring).

    Refuses (HTTP 403, before accept) an upgrade at a path no mock serves and one whose
    ``Origin`` the data plane's CORS origin list (``serverConfig.cors.allowOrigins``,
    ``--cors-origins``, loopback by default; behavior notes §4) does not allow.
    """

    def __init__(self, engine: Engine):
        self.engine = engine

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        engine = self.engine
        path = scope.get("path", "")
        if PENDING_REPLAYS and await self._replay(scope, path, receive, send):
            return  # served by a stream-recording replay armed at this path
        routes = engine.snapshot.websocket_routes
        route = routes.get(path)
        if route is None:
            # Paths with {name} captures: few per config, tried in config order.
            for candidate in routes.values():
                if candidate.pattern is not None and candidate.pattern.fullmatch(path):
                    route = candidate
                    break
        if route is None:
            await refuse_upgrade(receive, send)
            return
        # Browsers send Origin on every upgrade and never ask CORS first, so the origin list
        # is enforced here, before chaos or the handler sees the connection. The list applies
        # even with `cors.enabled: false`, which only drops the HTTP CORS headers.
        origin = upgrade_origin(scope)
        if origin is not None and not engine.cors.allowed(origin):
            await refuse_upgrade(receive, send)
            return
        chaos = engine.chaos
        if chaos is not None and not await _admit_websocket(chaos, scope, receive, send):
            return  # refused by a chaos fault (behavior notes §11)
        if ARMED_RECORDINGS:
            recorder = stream_registry.claim("websocket", path, scope.get("headers"),
                                             scope.get("query_string", b""))
            if recorder is not None:
                tapped_receive, tapped_send = stream_registry.websocket_taps(recorder, receive,
                                                                             send)
                try:
                    await route.app(scope, tapped_receive, tapped_send)
                finally:
                    stream_registry.finish(recorder)
                return
        await route.app(scope, receive, send)

    async def _replay(self, scope: dict[str, Any], path: str, receive: Any,
                      send: Any) -> bool:
        """Serve the connection from a replay armed at ``path`` (see
        :mod:`recordings.replay`); False when none is armed there. The origin rule above
        applies to replays too."""
        session = replay.take("websocket", path)
        if session is None:
            return False
        origin = upgrade_origin(scope)
        if origin is not None and not self.engine.cors.allowed(origin):
            replay.put_back(session)
            await refuse_upgrade(receive, send)
            return True
        await session.serve_websocket(scope, receive, send)
        return True


async def _admit_websocket(chaos: Any, scope: Any, receive: Any, send: Any) -> bool:
    """:func:`chaos.injector.admit_websocket` (imported here: chaos is on, so it is loaded)."""
    from chaos.injector import admit_websocket

    return await admit_websocket(chaos, scope, receive, send)
