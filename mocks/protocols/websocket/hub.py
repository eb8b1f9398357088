"""Open WebSocket connections of one engine: the registry the admin API reads and acts on.

One :class:`WebSocketHub` per engine (kept in the engine's shared protocol state, so it
survives recompiles). It lists, counts and closes connections, pushes messages to one or all
of them, keeps the totals of ``GET /websocket/stats``, and remembers where a scenario stopped
for mocks with ``resetOnReconnect: false``.

A :class:`WebSocketConnection` owns a bounded queue of outgoing messages (an
:class:`Outbox` of :data:`SEND_QUEUE_LIMIT` items): a client that never reads cannot grow the
server's memory; when its queue is full the connection is closed with 1008.

Concurrency: used only on the engine's event loop.

Source: behavior notes §1 ("Connections": WebSocket routes), §10 (1012 when a mock changes);
SPEC "WebSocket, gRPC, MQTT and SOAP administration".
"""
from __future__ import annotations

import asyncio
import gc
import secrets
import time
from collections import deque
from typing import Any, Iterable

#: Outgoing messages a connection may have waiting before it is closed with 1008.
SEND_QUEUE_LIMIT = 1024

#: Broadcasts to at least this many connections hold off the garbage collector until the
#: message is written (:meth:`WebSocketHub.broadcast`).
GC_HOLD_CONNECTIONS = 500

#: Close codes used by the server (RFC 6455 §7.4.1 and the IANA registry).
CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_PROTOCOL_ERROR = 1002
CLOSE_POLICY_VIOLATION = 1008
CLOSE_TOO_BIG = 1009
CLOSE_INTERNAL_ERROR = 1011
CLOSE_SERVICE_RESTART = 1012
CLOSE_TRY_AGAIN_LATER = 1013


class CloseRequest:
    """The queue item that makes the writer send a close frame (``code``, ``reason``)."""

    __slots__ = ("code", "reason")

    def __init__(self, code: int, reason: str):
        self.code = code
        self.reason = reason


class Outbox:
    """The bounded FIFO of one connection's outgoing items, read by one writer task.

    The subset of :class:`asyncio.Queue` the connection and its writer use (``put_nowait``,
    raising :class:`asyncio.QueueFull` at ``maxsize`` items; ``get``, ``get_nowait``, ``empty``,
    ``qsize``, ``full``), built for thousands of mostly idle connections: an ``asyncio.Queue``
    holds four deques and an Event from the start (about 3 KiB); this holds nothing until the
    first item and then one deque, and wakes its single reader through one future.
    """

    __slots__ = ("maxsize", "_items", "_waiter")

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._items: deque[Any] | None = None
        self._waiter: asyncio.Future[None] | None = None

    def qsize(self) -> int:
        """Items waiting."""
        return len(self._items) if self._items is not None else 0

    def empty(self) -> bool:
        """Whether no item is waiting."""
        return not self._items

    def full(self) -> bool:
        """Whether ``maxsize`` items are waiting."""
        return self.qsize() >= self.maxsize

    def put_nowait(self, item: Any) -> None:
        """Append ``item``; :class:`asyncio.QueueFull` when ``maxsize`` items are waiting."""
        items = self._items
        if items is None:
            items = self._items = deque()
        elif len(items) >= self.maxsize:
            raise asyncio.QueueFull
        items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def get_nowait(self) -> Any:
        """The oldest item; :class:`asyncio.QueueEmpty` when none is waiting."""
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.popleft()

    async def get(self) -> Any:
        """The oldest item, waiting for one (one reader at a time)."""
        while not self._items:
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                if self._waiter is waiter:
                    self._waiter = None
        return self._items.popleft()


class WebSocketConnection:
    """One open connection (see the module docstring).

    Attributes:
        id: ``ws_<16 hex>``; mock_id, mock_name, path (as requested), client (``ip:port``),
        user_agent, subprotocol: fixed at accept.
        compiled: the compiled mock it was opened on (a newer compile of the mock retires it).
        started_at, last_message_at: epoch seconds.
        messages_received, messages_sent, bytes_received, bytes_sent: counters.
        close_code, close_reason: set once the server decides to close.
    """

    def __init__(self, compiled: Any, path: str, client: str, user_agent: str,
                 subprotocol: str | None):
        self.id = f"ws_{secrets.token_hex(8)}"
        self.compiled = compiled
        self.mock_id: str = compiled.mock_id
        self.mock_name: str | None = compiled.name
        self.path = path
        self.client = client
        self.user_agent = user_agent
        self.subprotocol = subprotocol
        self.started_at = time.time()
        self.last_message_at: float | None = None
        self.messages_received = 0
        self.messages_sent = 0
        self.bytes_received = 0
        self.bytes_sent = 0
        self.close_code: int | None = None
        self.close_reason = ""
        self.queue = Outbox(SEND_QUEUE_LIMIT)

    @property
    def closing(self) -> bool:
        """Whether a close was requested."""
        return self.close_code is not None

    def push(self, data: str | bytes, delay_seconds: float = 0.0) -> bool:
        """Queue one outgoing message (``str``: text frame, ``bytes``: binary frame), sent
        after ``delay_seconds``. Returns False (and closes with 1008) when the client is not
        reading and the queue is full, or when the connection is closing."""
        if self.closing:
            return False
        try:
            self.queue.put_nowait((data, delay_seconds))
        except asyncio.QueueFull:
            self.close(CLOSE_POLICY_VIOLATION, "send queue full: the client is not reading")
            return False
        return True

    def close(self, code: int, reason: str = "") -> bool:
        """Ask the writer to send a close frame (messages still queued are dropped). Returns
        False when a close was already requested."""
        if self.closing:
            return False
        self.close_code, self.close_reason = code, reason
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(CloseRequest(code, reason))
        return True

    def describe(self) -> dict[str, Any]:
        """The admin shape: ``{id, mockId, mockName?, path, clientIp, userAgent?,
        subprotocol?, startTime, duration (s), durationMs, messagesReceived, messagesSent,
        bytesReceived, bytesSent, lastMessageTime?, status}``; times are RFC 3339 UTC."""
        now = time.time()
        document: dict[str, Any] = {
            "id": self.id, "mockId": self.mock_id, "path": self.path,
            "clientIp": self.client.rsplit(":", 1)[0] if self.client else "",
            "startTime": _rfc3339(self.started_at),
            "duration": round(now - self.started_at, 3),
            "durationMs": int((now - self.started_at) * 1000),
            "messagesReceived": self.messages_received, "messagesSent": self.messages_sent,
            "bytesReceived": self.bytes_received, "bytesSent": self.bytes_sent,
            "status": "closing" if self.closing else "open"}
        if self.mock_name:
            document["mockName"] = self.mock_name
        if self.user_agent:
            document["userAgent"] = self.user_agent
        if self.subprotocol:
            document["subprotocol"] = self.subprotocol
        if self.last_message_at is not None:
            document["lastMessageTime"] = _rfc3339(self.last_message_at)
        return document


class WebSocketHub:
    """Every open connection of one engine, with totals (see the module docstring)."""

    def __init__(self) -> None:
        self.connections: dict[str, WebSocketConnection] = {}
        self.total_connections = 0
        self.refused_connections = 0
        self.total_messages_received = 0
        self.total_messages_sent = 0
        self.total_bytes_received = 0
        self.total_bytes_sent = 0
        #: ``mock id -> next scenario step`` for mocks with ``resetOnReconnect: false``.
        self.scenario_positions: dict[str, int] = {}

    def add(self, connection: WebSocketConnection) -> None:
        """Register an accepted connection."""
        self.connections[connection.id] = connection
        self.total_connections += 1

    def remove(self, connection: WebSocketConnection) -> None:
        """Forget a connection that ended (no error when already gone)."""
        self.connections.pop(connection.id, None)

    def get(self, connection_id: str) -> WebSocketConnection | None:
        """The open connection with this id, or None."""
        return self.connections.get(connection_id)

    def of_mock(self, mock_id: str) -> list[WebSocketConnection]:
        """Open connections of one mock, oldest first."""
        return [connection for connection in self.connections.values()
                if connection.mock_id == mock_id]

    def count(self, mock_id: str) -> int:
        """How many connections of ``mock_id`` are open."""
        return sum(1 for connection in self.connections.values()
                   if connection.mock_id == mock_id)

    def close_all(self, connections: Iterable[WebSocketConnection], code: int,
                  reason: str) -> int:
        """Close each of ``connections``; returns how many were not closing already."""
        return sum(1 for connection in list(connections) if connection.close(code, reason))

    def retire(self, live: set[int]) -> int:
        """Close (1012) the connections opened on a compiled mock that is no longer live:
        ``live`` holds ``id()`` of the compiled mocks of the new snapshot. Returns how many."""
        stale = [connection for connection in self.connections.values()
                 if id(connection.compiled) not in live]
        return self.close_all(stale, CLOSE_SERVICE_RESTART, "mock changed")

    def broadcast(self, data: str | bytes, mock_id: str | None = None) -> int:
        """Queue ``data`` to every open connection (of ``mock_id`` when given); returns how
        many took it.

        The garbage collector is held off until every woken writer has written its message:
        with thousands of connections a full collection takes a few hundred milliseconds
        (every connection holds about eighty tracked objects, most of them the server's and
        the protocol library's), and the allocations of the broadcast itself would otherwise
        start one while the message is still being written to the sockets. The collection
        runs right after the writes instead.
        """
        targets = self.of_mock(mock_id) if mock_id else list(self.connections.values())
        hold = len(targets) >= GC_HOLD_CONNECTIONS and gc.isenabled()
        if hold:
            gc.disable()
        try:
            return sum(1 for connection in targets if connection.push(data))
        finally:
            if hold:
                # Scheduled after the writers' wake-ups (the loop runs callbacks in order), so
                # it runs once each of them has handed its message to the transport.
                _call_soon_or_now(gc.enable)

    def stats(self) -> dict[str, Any]:
        """``{activeConnections, totalConnections, refusedConnections, messagesReceived,
        messagesSent, bytesReceived, bytesSent, connectionsByMock}``."""
        by_mock: dict[str, int] = {}
        for connection in self.connections.values():
            by_mock[connection.mock_id] = by_mock.get(connection.mock_id, 0) + 1
        return {"activeConnections": len(self.connections),
                "totalConnections": self.total_connections,
                "refusedConnections": self.refused_connections,
                "messagesReceived": self.total_messages_received,
                "messagesSent": self.total_messages_sent,
                "bytesReceived": self.total_bytes_received,
                "bytesSent": self.total_bytes_sent,
                "connectionsByMock": by_mock}


def _call_soon_or_now(callback: Any) -> None:
    """``callback`` after the callbacks already scheduled on the running loop; at once when
    no loop runs."""
    try:
        asyncio.get_running_loop().call_soon(callback)
    except RuntimeError:
        callback()


def _rfc3339(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + \
        f".{int((epoch % 1) * 1000):03d}Z"
