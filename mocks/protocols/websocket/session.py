"""Serving one WebSocket connection of a ``websocket`` mock (a raw ASGI ``websocket`` app).

What a connection goes through:

1. **Handshake.** ``maxConnections`` reached: accepted, then closed with 1013 ("try again
   later"). ``requireSubprotocol`` and the client offers none of ``subprotocols``: accepted,
   then closed with 1002 naming the subprotocols. Otherwise accepted with the first
   configured subprotocol the client offered.
2. **Messages.** Each client message (text or binary frame) is answered by the first
   matching ``matchers`` entry (or swallowed by ``noResponse``), else ``defaultResponse``,
   else echoed with ``echoMode``. While a scenario waits in an ``expect`` step, messages go
   to the scenario instead. A message longer than ``maxMessageSize`` bytes closes the
   connection with 1009. No message for ``idleTimeout``: closed with 1001.
3. **Scenario.** ``send``, ``expect`` (with ``timeout``; ``optional`` steps are skipped on
   timeout or mismatch, others end the scenario and close with 1008 "unexpected message" /
   1001 "expect timed out"), ``wait``; ``loop`` restarts; ``resetOnReconnect: false``
   resumes the next connection where this one stopped.
4. **Heartbeat.** WebSocket pings every ``interval``; no pong within ``timeout`` closes the
   connection with 1011 (the ping frames are sent by the ASGI server's own keepalive, tuned
   per connection).
5. **Outgoing.** Every outgoing message (answers, scenario sends, admin sends, broadcasts)
   goes through the connection's bounded queue, written in order by one writer task; a
   response's ``delay`` is waited in that task, so later messages stay in order.

Every task of a connection ends with it; no exception reaches the event loop's handler.

Source: behavior notes §10 (``websocket`` row, close codes 1009/1013/1012), §1
("Connections"); SPEC "Templating".
"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from mocks.core.paths import path_captures
from mocks.core.request import MockRequest
from mocks.protocols.websocket.compiled import (CompiledResponse, CompiledWebSocketMock,
                                                message_request)
from mocks.protocols.websocket.hub import (CLOSE_GOING_AWAY, CLOSE_NORMAL,
                                           CLOSE_POLICY_VIOLATION, CLOSE_PROTOCOL_ERROR,
                                           CLOSE_TOO_BIG, CLOSE_TRY_AGAIN_LATER, WebSocketConnection,
                                           WebSocketHub, CloseRequest)

logger = logging.getLogger("mockd.websocket")


class WebSocketEndpoint:
    """The ASGI app of one compiled ``websocket`` mock (see the module docstring).

    Args:
        compiled: the compiled mock.
        hub: the engine's :class:`WebSocketHub`.
        template_state: the engine's template state (sequences).
        on_close: called with ``(connection, upgrade request)`` when a connection ends (the
            engine's request log and metrics), or None.
    """

    def __init__(self, compiled: CompiledWebSocketMock, hub: WebSocketHub,
                 template_state: Any, on_close: Any = None):
        self.compiled = compiled
        self.hub = hub
        self.template_state = template_state
        self.on_close = on_close

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        first = await receive()
        if first.get("type") != "websocket.connect":
            return
        compiled = self.compiled
        if compiled.max_connections is not None and \
                self.hub.count(compiled.mock_id) >= compiled.max_connections:
            self.hub.refused_connections += 1
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": CLOSE_TRY_AGAIN_LATER,
                        "reason": f"maximum connections ({compiled.max_connections}) reached"})
            return
        offered = [str(name) for name in scope.get("subprotocols") or ()]
        subprotocol = compiled.choose_subprotocol(offered)
        if subprotocol is None and compiled.require_subprotocol:
            self.hub.refused_connections += 1
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": CLOSE_PROTOCOL_ERROR,
                        "reason": "subprotocol required: " + ", ".join(compiled.subprotocols)})
            return
        upgrade = _upgrade_request(scope)
        path_params = _path_params(compiled, upgrade.path)
        await send({"type": "websocket.accept", "subprotocol": subprotocol})
        connection = WebSocketConnection(compiled, upgrade.path, upgrade.client,
                                         upgrade.headers.get("user-agent", ""), subprotocol)
        self.hub.add(connection)
        session = _Session(self, connection, upgrade, path_params, receive, send)
        try:
            await session.run()
        finally:
            self.hub.remove(connection)
            if self.on_close is not None:
                try:
                    self.on_close(connection, upgrade)
                except Exception:  # noqa: BLE001 - logging must never break a connection
                    logger.exception("websocket close observer failed")

    def retire(self) -> None:
        """Close this endpoint's connections with 1012 (its mock changed or is gone)."""
        from mocks.protocols.websocket.hub import CLOSE_SERVICE_RESTART

        self.hub.close_all(
            [connection for connection in self.hub.connections.values()
             if connection.compiled is self.compiled], CLOSE_SERVICE_RESTART, "mock changed")


class _Session:
    """The tasks of one connection: reader (this task), writer, scenario, idle timer."""

    def __init__(self, endpoint: WebSocketEndpoint, connection: WebSocketConnection,
                 upgrade: MockRequest, path_params: dict[str, str], receive: Any, send: Any):
        self.endpoint = endpoint
        self.compiled = endpoint.compiled
        self.connection = connection
        self.upgrade = upgrade
        self.path_params = path_params
        self.receive = receive
        self.send = send
        #: Messages for a scenario ``expect`` step, when one is waiting.
        self.expecting: asyncio.Queue[tuple[MockRequest, bool]] | None = None

    async def run(self) -> None:
        writer = asyncio.ensure_future(self._write())
        tasks = [writer]
        if self.compiled.steps:
            tasks.append(asyncio.ensure_future(self._scenario()))
        if self.compiled.heartbeat is not None:
            _tune_keepalive(self.send, *self.compiled.heartbeat)
        try:
            await self._read()
        finally:
            for task in tasks:
                if not task.done():
                    task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------------ reading

    async def _read(self) -> None:
        """Read frames until the client disconnects (after our close frame too: the ASGI
        server ends the connection when the closing handshake completes or times out)."""
        compiled, connection, hub = self.compiled, self.connection, self.endpoint.hub
        idle = compiled.idle_timeout
        receive = self.receive
        while True:
            if idle is None or connection.closing:
                message = await receive()
            else:
                try:
                    async with asyncio.timeout(idle):
                        message = await receive()
                except TimeoutError:
                    connection.close(CLOSE_GOING_AWAY, "idle timeout")
                    continue
            kind = message.get("type")
            if kind == "websocket.disconnect":
                if connection.close_code is None:
                    connection.close_code = message.get("code", CLOSE_NORMAL)
                return
            if kind != "websocket.receive":
                continue
            text = message.get("text")
            data = text.encode() if text is not None else (message.get("bytes") or b"")
            binary = text is None
            size = len(data)
            if size > compiled.max_message_size:
                connection.close(CLOSE_TOO_BIG, f"message of {size} bytes is over the "
                                                f"{compiled.max_message_size}-byte limit")
                continue
            connection.messages_received += 1
            connection.bytes_received += size
            connection.last_message_at = time.time()
            hub.total_messages_received += 1
            hub.total_bytes_received += size
            if connection.closing:
                continue
            request = message_request(self.upgrade, data)
            if self.expecting is not None:
                self.expecting.put_nowait((request, binary))
                continue
            self._answer(request, binary, data if binary else text)

    def _answer(self, request: MockRequest, binary: bool, original: str | bytes) -> None:
        outcome = self.compiled.answer(request, binary)
        if outcome is True:  # echo
            self.connection.push(original)
        elif isinstance(outcome, CompiledResponse):
            self._send_rendered(outcome, request)

    def _send_rendered(self, response: CompiledResponse, request: MockRequest) -> None:
        rendered = response.render(request, self.path_params, self.endpoint.template_state)
        self.connection.push(rendered.data, rendered.delay_seconds)

    # ------------------------------------------------------------------ writing

    async def _write(self) -> None:
        connection, hub, send = self.connection, self.endpoint.hub, self.send
        while True:
            item = await connection.queue.get()
            if isinstance(item, CloseRequest):
                await send({"type": "websocket.close", "code": item.code,
                            "reason": item.reason[:120]})
                return
            data, delay = item
            if delay:
                await asyncio.sleep(delay)
                if connection.closing and connection.queue.empty():
                    continue
            if isinstance(data, bytes):
                await send({"type": "websocket.send", "bytes": data})
                size = len(data)
            else:
                await send({"type": "websocket.send", "text": data})
                size = len(data.encode())
            connection.messages_sent += 1
            connection.bytes_sent += size
            hub.total_messages_sent += 1
            hub.total_bytes_sent += size

    # ------------------------------------------------------------------ scenario

    async def _scenario(self) -> None:
        compiled, hub = self.compiled, self.endpoint.hub
        steps = compiled.steps
        position = 0 if compiled.reset_on_reconnect else \
            hub.scenario_positions.get(compiled.mock_id, 0) % len(steps)
        try:
            while True:
                if position >= len(steps):
                    if not compiled.loop:
                        return
                    position = 0
                step = steps[position]
                if step.kind == "send":
                    self._send_rendered(step.message, self.upgrade)
                elif step.kind == "wait":
                    await asyncio.sleep(step.duration_seconds)
                elif not await self._expect(step):
                    return
                position += 1
                if not compiled.reset_on_reconnect:
                    hub.scenario_positions[compiled.mock_id] = position % len(steps)
        finally:
            self.expecting = None

    async def _expect(self, step: Any) -> bool:
        """Wait for the step's message; True to go on with the next step."""
        self.expecting = asyncio.Queue()
        try:
            async with asyncio.timeout(step.timeout_seconds):
                request, binary = await self.expecting.get()
        except TimeoutError:
            if step.optional:
                return True
            self.connection.close(CLOSE_GOING_AWAY, "scenario: expected message did not "
                                                    "arrive in time")
            return False
        finally:
            self.expecting = None
        if step.match.matches(request, binary):
            return True
        if step.optional:
            # The message was not this step's: treat it as an ordinary message.
            self._answer(request, binary, request.body if binary else request.text)
            return True
        self.connection.close(CLOSE_POLICY_VIOLATION, "scenario: unexpected message")
        return False


def _upgrade_request(scope: dict[str, Any]) -> MockRequest:
    raw_query = scope.get("query_string", b"")
    return MockRequest("GET", scope.get("path", "/"),
                       raw_query.decode("latin-1") if isinstance(raw_query, bytes)
                       else str(raw_query),
                       raw_headers=list(scope.get("headers") or ()),
                       scheme="wss" if scope.get("scheme") == "wss" else "ws",
                       peer=scope.get("client"), server=scope.get("server"),
                       tls=(scope.get("extensions") or {}).get("tls"))


def _path_params(compiled: CompiledWebSocketMock, path: str) -> dict[str, str]:
    form = compiled.path_form
    if form.regex is None:
        return {}
    found = form.regex.fullmatch(path)
    return path_captures(form, found) if found is not None else {}


def _tune_keepalive(send: Any, interval: float, timeout: float) -> None:
    """Make the ASGI server ping this connection every ``interval`` s and close it with 1011
    when no pong comes within ``timeout`` s. Works with uvicorn's WebSocket protocols, which
    keep the keepalive settings on the protocol object that owns ``send``; elsewhere the
    heartbeat is logged as unavailable."""
    protocol = getattr(send, "__self__", None)
    if protocol is None or not all(hasattr(protocol, name) for name in
                                   ("ping_interval", "ping_timeout", "stop_keepalive",
                                    "start_keepalive")):
        logger.warning("websocket heartbeat is not available with this server; no pings sent")
        return
    protocol.stop_keepalive()
    protocol.ping_interval = interval
    protocol.ping_timeout = timeout
    protocol.start_keepalive()
