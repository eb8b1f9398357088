"""The handler of ``websocket`` mocks: one mock -> one WebSocket route on the mock port.

Compiling a mock builds its :class:`~mocks.protocols.websocket.compiled.CompiledWebSocketMock`
(matchers, templates, scenario) and a :class:`~mocks.protocols.websocket.session.WebSocketEndpoint`
serving it. The engine-wide :class:`~mocks.protocols.websocket.hub.WebSocketHub` lives in
``context.shared["websocket"]`` (created on first use), so open connections survive
recompiles of other mocks; a changed or removed mock's endpoint is retired by the engine and
its clients are closed with 1012.

Source: behavior notes §10 (``websocket`` row), §12 (served under the workspace's base path);
SPEC "Mock".
"""
from __future__ import annotations

import time
from typing import Any

from mocks.core.templating import TemplateState
from mocks.protocols import CompileContext, CompiledMock, WebSocketRoute
from mocks.protocols.websocket.compiled import CompiledWebSocketMock
from mocks.protocols.websocket.config import WebSocketMock
from mocks.protocols.websocket.hub import WebSocketHub
from mocks.protocols.websocket.session import WebSocketEndpoint

#: Key of the hub in the engine's shared protocol state.
HUB_KEY = "websocket"


def hub_of(shared: dict[str, Any] | None) -> WebSocketHub:
    """The engine's WebSocket hub in ``shared`` (created on first use); a throw-away hub
    when ``shared`` is None (compiling only to validate)."""
    if shared is None:
        return WebSocketHub()
    hub = shared.get(HUB_KEY)
    if hub is None:
        hub = shared[HUB_KEY] = WebSocketHub()
    return hub


def connection_logger(serve_event: Any) -> Any:
    """The ``on_close`` callback of an endpoint: one event per connection when it ends
    (request log entry with ``protocol: websocket``, status 101, ``durationMs`` of the whole
    connection and ``wsConnectionId``, ``messagesReceived``, ``messagesSent``,
    ``closeCode``; verification counts it as a call of the mock)."""

    def closed(connection: Any, upgrade: Any) -> None:
        duration_ms = (time.time() - connection.started_at) * 1000.0
        details = {"wsConnectionId": connection.id,
                   "messagesReceived": connection.messages_received,
                   "messagesSent": connection.messages_sent}
        if connection.subprotocol:
            details["subprotocol"] = connection.subprotocol
        if connection.close_code is not None:
            details["closeCode"] = connection.close_code
        serve_event(request=upgrade, received_at=connection.started_at,
                    duration_ms=duration_ms, status=101, mock_id=connection.mock_id,
                    path_template=connection.compiled.path, protocol="websocket",
                    details=details)

    return closed


class WebSocketHandler:
    """Compiles ``websocket`` mocks (see the module docstring)."""

    mock_type = "websocket"
    config_model = WebSocketMock

    def compile(self, mock: Any, context: CompileContext) -> CompiledMock:
        """One :class:`~mocks.protocols.WebSocketRoute` at ``websocket.path``.

        Raises :class:`~mocks.core.errors.ConfigError` naming the key
        (``mocks[2].websocket.matchers[1].match.value: bad regex ...``).
        """
        config: WebSocketMock = mock.websocket
        key_path = f"{context.key_path}.websocket"
        compiled = CompiledWebSocketMock(mock, config, key_path, config.path)
        shared = context.shared
        state = shared.get("template_state") if shared is not None else None
        sink = shared.get("serve_event") if shared is not None else None
        endpoint = WebSocketEndpoint(compiled, hub_of(shared), state or TemplateState(),
                                     connection_logger(sink) if sink is not None else None)
        form = compiled.path_form
        return CompiledMock(websocket_routes=(WebSocketRoute(
            path=config.path, mock_id=mock.id, app=endpoint,
            pattern=form.regex if form.literal is None else None),))


#: The registered handler object (:data:`mocks.protocols.PROTOCOLS`).
HANDLER = WebSocketHandler()
