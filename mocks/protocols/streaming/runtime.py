"""Runtime state of streaming mocks that outlives a snapshot swap: open connections (with
ids), per-mock event buffers for ``Last-Event-ID`` resumption, and statistics.

One :class:`StreamRuntime` per engine (``Engine.streams``). The data plane opens and closes
connections through it; the admin side reads it only through ``EngineControl`` (ARCHITECTURE
seam 5). When the engine swaps in a new snapshot, :meth:`StreamRuntime.snapshot_loaded`
stops every stream whose mock is gone or whose definition changed, and drops its buffer.

Concurrency: single owner, the engine's event loop. Nothing here locks or awaits; stopping a
connection only resolves the future its stream is waiting on, and the stream ends itself on
its next step.

Source: SPEC "Admin API" → "SSE connections", "States and transitions" (SSE connection: open
→ closed by ``DELETE`` or a lifecycle limit); behavior notes §9 (resumption buffer, ≤ 100 open
SSE connections, 503 beyond) and §18.
"""
from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from mocks.protocols.streaming.names import DEFAULT_BUFFER_SIZE

#: Open SSE connections one process serves before answering 503 (behavior notes §9 and §18).
DEFAULT_MAX_SSE_CONNECTIONS = 100
#: Environment variable that overrides :data:`DEFAULT_MAX_SSE_CONNECTIONS` (for load tests).
MAX_CONNECTIONS_VARIABLE = "MOCKD_SSE_MAX_CONNECTIONS"

#: Stop reasons (:attr:`StreamConnection.stop_reason`).
CLIENT_DISCONNECTED = "client_disconnected"
CLOSED_BY_ADMIN = "closed_by_admin"
MOCK_CHANGED = "mock_changed"
SERVER_STOPPING = "server_stopping"

SSE = "sse"
CHUNKED = "chunked"


def _rfc3339(epoch_seconds: float | None) -> str | None:
    if epoch_seconds is None:
        return None
    moment = datetime.fromtimestamp(epoch_seconds, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class StreamConnection:
    """One open streaming response (SSE or chunked).

    Attributes:
        id: ``sse-<n>`` or ``chunked-<n>``, unique for the process's lifetime.
        kind: :data:`SSE` or :data:`CHUNKED`.
        mock_id, path, client, user_agent: who and what is being served.
        definition: the mock's definition when the stream opened (compared on snapshot swaps).
        started_at: epoch seconds when it opened.
        resumed_from: the ``Last-Event-ID`` the client sent, or None.
        events_sent, bytes_sent: counted by the sender (bytes include the opening and pings).
        last_event_id, last_event_at: the last event with an id / the last event's epoch time.
        status: ``active`` → ``closing`` (stop asked, or ending by its own rules) → ``closed``.
        stop_reason: why it was stopped (:data:`CLIENT_DISCONNECTED`, …), or None.
    """

    __slots__ = ("id", "kind", "mock_id", "mock_name", "path", "client", "user_agent",
                 "definition", "started_at", "resumed_from", "events_sent", "bytes_sent",
                 "last_event_id", "last_event_at", "status", "stop_reason", "wakeup")

    def __init__(self, connection_id: str, kind: str, mock_id: str, *, path: str = "",
                 client: str = "", user_agent: str = "", mock_name: str | None = None,
                 definition: Any = None, resumed_from: str | None = None):
        self.id = connection_id
        self.kind = kind
        self.mock_id = mock_id
        self.mock_name = mock_name
        self.path = path
        self.client = client
        self.user_agent = user_agent
        self.definition = definition
        self.started_at = time.time()
        self.resumed_from = resumed_from
        self.events_sent = 0
        self.bytes_sent = 0
        self.last_event_id: str | None = None
        self.last_event_at: float | None = None
        self.status = "active"
        self.stop_reason: str | None = None
        #: The future the stream is sleeping on (set by the sender's clock), or None.
        self.wakeup: asyncio.Future | None = None

    def stop(self, reason: str) -> bool:
        """Ask the stream to end now; returns False when it was already stopping.

        Safe to call from any coroutine on the engine loop: it only wakes the stream, which
        then ends itself (cleanly, except after a client disconnect, when nothing can be sent).
        """
        if self.stop_reason is not None:
            return False
        self.stop_reason = reason
        self.status = "closing"
        wakeup = self.wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)
        return True

    def info(self) -> dict[str, Any]:
        """The admin view: ``{id, mockId, mockName?, path, clientIp, userAgent?, startTime,
        duration, durationMs, eventsSent, bytesSent, lastEventId?, lastEventTime?,
        resumedFrom?, status}`` (times RFC 3339 UTC)."""
        elapsed = time.time() - self.started_at
        out: dict[str, Any] = {"id": self.id, "mockId": self.mock_id}
        if self.mock_name:
            out["mockName"] = self.mock_name
        out.update({"path": self.path, "clientIp": self.client})
        if self.user_agent:
            out["userAgent"] = self.user_agent
        out.update({"startTime": _rfc3339(self.started_at), "duration": f"{elapsed:.3f}s",
                    "durationMs": int(elapsed * 1000), "eventsSent": self.events_sent,
                    "bytesSent": self.bytes_sent})
        if self.last_event_id is not None:
            out["lastEventId"] = self.last_event_id
        if self.last_event_at is not None:
            out["lastEventTime"] = _rfc3339(self.last_event_at)
        if self.resumed_from is not None:
            out["resumedFrom"] = self.resumed_from
        out["status"] = self.status
        return out


@dataclass(slots=True)
class BufferedEvent:
    """One sent event kept for resumption.

    Attributes:
        id: its ``id:``.
        type, data, retry: as sent (``data`` is the payload text).
        position: its place in the mock's event sequence (0-based).
        sent_at: epoch seconds of the send.
    """

    id: str
    type: str | None
    data: str | None
    retry: int | None
    position: int
    sent_at: float

    def document(self, index: int) -> dict[str, Any]:
        """``{id, type?, data, retry?, position, index, timestamp}`` for the admin buffer view."""
        out: dict[str, Any] = {"id": self.id}
        if self.type is not None:
            out["type"] = self.type
        out["data"] = self.data
        if self.retry is not None:
            out["retry"] = self.retry
        out.update({"position": self.position, "index": index,
                    "timestamp": _rfc3339(self.sent_at)})
        return out


class EventBuffer:
    """The last ``capacity`` events with an id sent by one mock (any of its connections).

    Keyed by id: an id sent again (a second client, a repeating generator) moves to the end,
    so "the events after id X" never repeats an event.

    Args:
        capacity: events kept (oldest dropped first).
        max_age_seconds: events older than this are ignored and dropped (0 = no limit).
    """

    __slots__ = ("capacity", "max_age_seconds", "_events")

    def __init__(self, capacity: int = DEFAULT_BUFFER_SIZE, max_age_seconds: float = 0):
        self.capacity = capacity
        self.max_age_seconds = max_age_seconds
        self._events: OrderedDict[str, BufferedEvent] = OrderedDict()

    def __len__(self) -> int:
        return len(self._events)

    def add(self, event: BufferedEvent) -> None:
        """Keep ``event`` (replacing an older one with the same id)."""
        events = self._events
        events.pop(event.id, None)
        events[event.id] = event
        while len(events) > self.capacity:
            events.popitem(last=False)

    def _expire(self) -> None:
        if self.max_age_seconds:
            oldest_allowed = time.time() - self.max_age_seconds
            while self._events:
                first = next(iter(self._events.values()))
                if first.sent_at >= oldest_allowed:
                    break
                self._events.popitem(last=False)

    def find(self, event_id: str) -> BufferedEvent | None:
        """The kept event with this id, or None."""
        self._expire()
        return self._events.get(event_id)

    def after(self, event_id: str) -> list[BufferedEvent]:
        """The kept events sent after the one with ``event_id`` (empty when it is unknown)."""
        self._expire()
        if event_id not in self._events:
            return []
        later = itertools.dropwhile(lambda key: key != event_id, self._events)
        next(later)  # the event itself
        return [self._events[key] for key in later]

    def events(self) -> list[BufferedEvent]:
        """Every kept event, oldest first."""
        self._expire()
        return list(self._events.values())

    def clear(self) -> int:
        """Drop every event; returns how many there were."""
        count = len(self._events)
        self._events.clear()
        return count


@dataclass(slots=True)
class StreamStats:
    """Counters for ``GET /sse/stats`` (SSE connections only).

    Attributes:
        total_connections: SSE streams opened since start.
        total_events_sent, total_bytes_sent: over all SSE streams since start.
        connection_errors: SSE requests refused (the connection limit) or failed.
    """

    total_connections: int = 0
    total_events_sent: int = 0
    total_bytes_sent: int = 0
    connection_errors: int = 0


def _definition_of(mock: Any) -> tuple[Any, ...]:
    """What must stay equal for an open stream of ``mock`` to survive a snapshot swap."""
    return (mock.type, mock.enabled, mock.http)


class _MocksById:
    """``mock id -> mock`` of a snapshot, read through its ``compiled`` map when it has one
    (so a snapshot swap builds nothing per mock), else from a dict of its ``mocks``."""

    __slots__ = ("_compiled", "_mocks")

    def __init__(self, snapshot: Any):
        self._compiled = getattr(snapshot, "compiled", None)
        self._mocks = (None if self._compiled is not None
                       else {mock.id: mock for mock in snapshot.mocks})

    def get(self, mock_id: str) -> Any:
        if self._compiled is None:
            return self._mocks.get(mock_id)
        entry = self._compiled.get(mock_id)
        return None if entry is None else entry.mock


class StreamRuntime:
    """Open streaming connections, resumption buffers and statistics of one engine.

    Attributes:
        max_connections: open SSE connections allowed at once (``$MOCKD_SSE_MAX_CONNECTIONS``,
            else 100); chunked streams are not limited.
        stats: the :class:`StreamStats`.
    """

    def __init__(self, max_connections: int | None = None):
        if max_connections is None:
            try:
                max_connections = int(os.environ.get(MAX_CONNECTIONS_VARIABLE) or
                                      DEFAULT_MAX_SSE_CONNECTIONS)
            except ValueError:
                max_connections = DEFAULT_MAX_SSE_CONNECTIONS
        self.max_connections = max_connections
        self.stats = StreamStats()
        self._connections: dict[str, StreamConnection] = {}
        self._open_sse = 0
        self._numbers = itertools.count(1)
        self._buffers: dict[str, EventBuffer] = {}
        #: ``mock id -> mock`` of the live snapshot (definitions and names are read from it
        #: when a stream opens, so a swap costs nothing per mock).
        self._mocks: Any = {}
        install_abrupt_close_filter()

    # ------------------------------------------------------------------ connections
    def open(self, kind: str, mock_id: str, *, path: str = "", client: str = "",
             user_agent: str = "", resumed_from: str | None = None) -> StreamConnection | None:
        """Register a new stream; None when it is SSE and :attr:`max_connections` are open
        (counted in ``connection_errors``; the caller answers 503)."""
        if kind == SSE:
            if self._open_sse >= self.max_connections:
                self.stats.connection_errors += 1
                return None
            self._open_sse += 1
            self.stats.total_connections += 1
        mock = self._mocks.get(mock_id)
        connection = StreamConnection(f"{kind}-{next(self._numbers)}", kind, mock_id,
                                      path=path, client=client, user_agent=user_agent,
                                      mock_name=getattr(mock, "name", None),
                                      definition=None if mock is None else _definition_of(mock),
                                      resumed_from=resumed_from)
        self._connections[connection.id] = connection
        return connection

    def close(self, connection: StreamConnection) -> None:
        """Forget a stream that has ended (the sender calls this exactly once)."""
        connection.status = "closed"
        if self._connections.pop(connection.id, None) is not None and connection.kind == SSE:
            self._open_sse -= 1

    def record_send(self, connection: StreamConnection, size: int, is_event: bool,
                    event_id: str | None = None) -> None:
        """Count ``size`` bytes (and one event when ``is_event``) sent on ``connection``."""
        connection.bytes_sent += size
        if is_event:
            connection.events_sent += 1
            connection.last_event_at = time.time()
            if event_id is not None:
                connection.last_event_id = event_id
        if connection.kind == SSE:
            self.stats.total_bytes_sent += size
            if is_event:
                self.stats.total_events_sent += 1

    def connections(self, mock_id: str | None = None, kind: str = SSE) -> list[StreamConnection]:
        """Open connections of ``kind`` (all mocks, or one), oldest first."""
        return [connection for connection in self._connections.values()
                if connection.kind == kind and (mock_id is None or connection.mock_id == mock_id)]

    def get(self, connection_id: str, kind: str = SSE) -> StreamConnection | None:
        """One open connection of ``kind``, or None."""
        connection = self._connections.get(connection_id)
        return connection if connection is not None and connection.kind == kind else None

    def stop(self, connection_id: str, reason: str = CLOSED_BY_ADMIN, kind: str = SSE) -> bool:
        """Stop one open connection of ``kind``; False when there is none with that id."""
        connection = self.get(connection_id, kind)
        if connection is None:
            return False
        connection.stop(reason)
        return True

    def stop_mock(self, mock_id: str, reason: str = CLOSED_BY_ADMIN,
                  kind: str | None = SSE) -> int:
        """Stop the open connections of one mock (of ``kind``, or all kinds when None);
        returns how many were asked to stop."""
        return sum(connection.stop(reason) for connection in list(self._connections.values())
                   if connection.mock_id == mock_id and (kind is None or connection.kind == kind))

    def stop_all(self, reason: str = SERVER_STOPPING) -> int:
        """Stop every open stream of every kind; returns how many were asked to stop."""
        return sum(connection.stop(reason) for connection in list(self._connections.values()))

    def stats_document(self) -> dict[str, Any]:
        """``{activeConnections, totalConnections, totalEventsSent, totalBytesSent,
        connectionErrors, connectionsByMock, maxConnections}``."""
        by_mock: dict[str, int] = {}
        for connection in self.connections():
            by_mock[connection.mock_id] = by_mock.get(connection.mock_id, 0) + 1
        stats = self.stats
        return {"activeConnections": self._open_sse, "totalConnections": stats.total_connections,
                "totalEventsSent": stats.total_events_sent,
                "totalBytesSent": stats.total_bytes_sent,
                "connectionErrors": stats.connection_errors, "connectionsByMock": by_mock,
                "maxConnections": self.max_connections}

    # ------------------------------------------------------------------ buffers
    def buffer(self, mock_id: str, capacity: int = DEFAULT_BUFFER_SIZE,
               max_age_seconds: float = 0) -> EventBuffer:
        """The resumption buffer of ``mock_id``, created on first use (a later call with
        another ``capacity`` resizes it: the mock's definition changed)."""
        buffer = self._buffers.get(mock_id)
        if buffer is None:
            buffer = self._buffers[mock_id] = EventBuffer(capacity, max_age_seconds)
        elif buffer.capacity != capacity or buffer.max_age_seconds != max_age_seconds:
            buffer.capacity, buffer.max_age_seconds = capacity, max_age_seconds
        return buffer

    def existing_buffer(self, mock_id: str) -> EventBuffer | None:
        """The resumption buffer of ``mock_id`` if one was created, else None."""
        return self._buffers.get(mock_id)

    def clear_buffer(self, mock_id: str) -> int:
        """Empty the buffer of ``mock_id``; returns how many events it held."""
        buffer = self._buffers.get(mock_id)
        return buffer.clear() if buffer is not None else 0

    # ------------------------------------------------------------------ snapshot swaps
    def snapshot_loaded(self, snapshot: Any) -> int:
        """Called by the engine right after it swapped in ``snapshot`` (no await between):
        stops every stream whose mock is gone, disabled or changed, drops those mocks'
        buffers, and remembers the new definitions. Returns how many streams were stopped."""
        previous, mocks = self._mocks, _MocksById(snapshot)
        self._mocks = mocks
        stopped = 0
        for connection in list(self._connections.values()):
            mock = mocks.get(connection.mock_id)
            if mock is None or _definition_of(mock) != connection.definition:
                stopped += connection.stop(MOCK_CHANGED)
        for mock_id in list(self._buffers):
            old, new = previous.get(mock_id), mocks.get(mock_id)
            if new is None or old is None or (
                    new is not old and _definition_of(new) != _definition_of(old)):
                del self._buffers[mock_id]
        return stopped


# ---------------------------------------------------------------------------- abrupt close

#: True while the current request ends its stream abruptly on purpose (see the filter below).
abrupt_close_requested: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "mockd_abrupt_close_requested", default=False)

_ABRUPT_MESSAGE = "ASGI callable returned without completing response."
_filter_installed = False


class _IntendedAbruptCloseFilter(logging.Filter):
    """Drops uvicorn's error line for a response left incomplete on purpose.

    ASGI has no "reset the connection" message; an app ends a response abruptly by returning
    before its last body message, and uvicorn then closes the transport and logs an error.
    For ``termination: abrupt`` / ``error`` and ``simulateDisconnect`` that is the intended
    behaviour, so the line is dropped when the request's context says so (uvicorn logs it in
    the request's own task, right after the app returns, so the context variable set by the
    stream is still visible). Any other incomplete response is still logged.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.msg == _ABRUPT_MESSAGE and abrupt_close_requested.get())


def install_abrupt_close_filter() -> None:
    """Add the filter to the ``uvicorn.error`` logger once per process."""
    global _filter_installed
    if not _filter_installed:
        logging.getLogger("uvicorn.error").addFilter(_IntendedAbruptCloseFilter())
        _filter_installed = True
