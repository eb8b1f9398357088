"""Engine control: what the admin side may ask of an engine, and its HTTP face.

The admin side drives an engine through :class:`EngineControl`; in full mode that is an
in-process call on the shared event loop, in split mode it is HTTP to
:class:`EngineControlApp` on the engine-control port (default first free from 4281). The HTTP
routes mirror the admin's (behavior notes §16): ``/health``, ``/config``, ``/mocks``,
``/status``, ``/traffic`` (the metrics counters an admin merges), ``/requests`` (+ ``/{id}``,
``/stream``), ``/mocks/{id}/verify``,
``/mocks/{id}/invocations``, ``/verify``, ``/scenarios…`` (scenario states; resetting every
table resets them too), ``/state…``, ``/sse…``, ``/mocks/{id}/sse/…``, ``/websocket/…`` and
``/mocks/{id}/websocket/connections``, ``/chaos…`` (:mod:`chaos.control`). The routes of a
protocol with a port or library of its own (WebSocket, SOAP, gRPC, MQTT) come from the
registry's ``control_routes`` strings and are imported on the first request of their paths
(:class:`ProtocolControlRoutes`), so an HTTP-only engine never loads grpc or amqtt. Only
``mockd engine`` binds that port (never full mode); each request must carry the engine token,
name an allowed ``Host`` (:mod:`mocks.engine.hosts`), send JSON bodies and no ``Origin`` header
(:func:`gate_answer`), so no web page can reach it, a DNS-rebound one included.

Concurrency: every method runs on the engine's event loop (ARCHITECTURE seam 5); the request
log and the snapshot are only touched there.

Source: ARCHITECTURE "Processes and ports"; behavior notes §1 ("Verification", "Request log")
and §16.
"""
from __future__ import annotations

import asyncio
import hmac
import re
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator, Mapping
from urllib.parse import parse_qsl, urlencode

import orjson

from chaos.control import ChaosControl, route_chaos
from tables.control import TableControl, route_state

from mocks.config import ConfigFile
from mocks.protocols.http.scenarios import (route_scenarios, scenario_overview,
                                            set_scenario_state)
from mocks.protocols.streaming.names import DEFAULT_BUFFER_SIZE
from mocks.protocols import PROTOCOLS
from mocks.protocols.streaming.control import route_sse
from mocks.protocols.streaming.runtime import CLOSED_BY_ADMIN
from mocks.protocols.websocket.hub import CLOSE_NORMAL as WS_CLOSE_NORMAL, WebSocketHub
from mocks.engine.app import Receive, Scope, Send, acknowledge_lifespan, read_body
from mocks.engine.core import Engine, utc_timestamp
from mocks.engine.hosts import LOOPBACK_ONLY, HostPolicy
from mocks.core.errors import ConfigError
from mocks.loader import validate_config
from mocks.protocols.streaming.runtime import CHUNKED as STREAM_CHUNKED, SSE as STREAM_SSE
from mocks.engine.requestlog import (DEFAULT_CAPACITY, QueryParameterError, RequestFilter, RequestLog,
                         parse_int, parse_request_filter, records_between)
from mocks.core.responses import JSON_TYPE, send_simple
from mocks.engine.verification import CallCriteria, verify_calls

#: A full compile of at least this many mocks runs in a worker thread, off the event loop.
OFF_LOOP_COMPILE_MOCKS = 1000

#: Close reason of a WebSocket connection closed through the admin API (code 1000).
WS_CLOSED_BY_ADMIN = "closed by admin"

#: Seconds between keep-alive comments on an idle request stream.
STREAM_KEEPALIVE_SECONDS = 15.0


class WorkspaceOf(Mapping[str, str]):
    """``mock id -> workspace id`` (``local`` when unset) read from a snapshot's compiled
    mocks, so a snapshot swap builds no per-mock dict for the request log."""

    __slots__ = ("_compiled",)

    def __init__(self, compiled: Mapping[str, Any]):
        self._compiled = compiled

    def __getitem__(self, mock_id: str) -> str:
        return self._compiled[mock_id].mock.workspace_id or "local"

    def __contains__(self, mock_id: object) -> bool:
        return mock_id in self._compiled

    def __iter__(self) -> Iterator[str]:
        return iter(self._compiled)

    def __len__(self) -> int:
        return len(self._compiled)


class EngineControl(TableControl, ChaosControl):
    """The in-process control interface of one :class:`Engine`.

    Table methods (state overview, reset, clear, items, register/unregister a table) come
    from :class:`~tables.control.TableControl`; chaos methods (config, stats, fault state,
    circuit breakers, profiles) from :class:`~chaos.control.ChaosControl`.

    Creating it registers the :class:`RequestLog` as the engine's serve-event observer.

    Attributes:
        engine: the engine driven.
        request_log: its request log (ring buffer of ``max_log_entries`` entries).
    """

    def __init__(self, engine: Engine, max_log_entries: int = DEFAULT_CAPACITY):
        self.engine = engine
        self.request_log = RequestLog(max_log_entries)
        #: One config load at a time (created lazily on the engine's loop).
        self._loading_lock: asyncio.Lock | None = None
        #: The admin's config version this engine serves (``POST /config?version=N``; 0:
        #: none pushed), reported by :meth:`health` so an admin can tell a stale engine.
        self.config_version = 0
        engine.add_observer(self.request_log.observe)
        self._note_workspaces(engine.snapshot)

    # ------------------------------------------------------------------ health and config
    async def health(self) -> dict[str, Any]:
        """``{"status": "healthy", "timestamp", "configVersion"}`` (the version of the last
        config an admin pushed; 0 when none)."""
        return {"status": "healthy", "timestamp": utc_timestamp(),
                "configVersion": self.config_version}

    async def load_config(self, document: dict[str, Any],
                          version: int | None = None) -> dict[str, Any]:
        """Validate and load a whole config document; raises :class:`ConfigError`. With
        ``version`` (the admin's config version) the engine records it for :meth:`health`.

        Returns ``{"message": "Configuration loaded", "mocks": <count>}``.
        """
        answer = await self.apply_config(validate_config(document))
        if version is not None:
            self.config_version = version
        return answer

    async def apply_config(self, config: ConfigFile,
                           base_dir: Path | str | None = None) -> dict[str, Any]:
        """Compile an already validated config and make it live (atomic swap).

        A small edit of the live config is patched in on the loop (milliseconds with 10,000
        mocks); a full compile of :data:`OFF_LOOP_COMPILE_MOCKS` mocks or more runs in a worker
        thread while the loop keeps serving, then is swapped in on the loop. Loads are
        serialised.

        Returns once the listeners of the new config (gRPC servers, MQTT brokers...) have
        started or failed to (at most 30 s).

        Raises :class:`ConfigError` naming the key; the old snapshot then stays live.
        Returns ``{"message": "Configuration loaded", "mocks": <count>}``.
        """
        async with self._loading:
            snapshot = self.engine.compile(config, base_dir, patch_only=True)
            if snapshot is None:
                if len(config.mocks) >= OFF_LOOP_COMPILE_MOCKS:
                    # A large full compile runs in a worker thread: the loop keeps serving
                    # from the live snapshot meanwhile.
                    snapshot = await asyncio.to_thread(self.engine.compile, config, base_dir)
                else:
                    snapshot = self.engine.compile(config, base_dir)
            self.engine.swap(snapshot)
        # The answer means the new config serves: a gRPC server or MQTT broker of a new mock
        # accepts connections once the caller hears back (its start is logged and listed in
        # the listener failures when its port cannot be had).
        await self.engine.listeners.settled()
        self._note_workspaces(snapshot)
        return {"message": "Configuration loaded", "mocks": snapshot.mock_count}

    @property
    def _loading(self) -> asyncio.Lock:
        if self._loading_lock is None:
            self._loading_lock = asyncio.Lock()
        return self._loading_lock

    def _note_workspaces(self, snapshot: Any) -> None:
        self.request_log.workspace_of = WorkspaceOf(snapshot.compiled)
        self.request_log.use_config(snapshot.config)

    async def current_config(self) -> ConfigFile:
        """The config the live snapshot was compiled from."""
        return self.engine.snapshot.config

    async def mocks(self) -> dict[str, Any]:
        """``{"mocks": [mock documents], "count"}`` as the engine serves them."""
        mocks = [mock.model_dump(mode="json", by_alias=True, exclude_none=True)
                 for mock in self.engine.snapshot.mocks]
        return {"mocks": mocks, "count": len(mocks)}

    async def has_mock(self, mock_id: str) -> bool:
        """Whether the live snapshot holds a mock with this id (enabled or not)."""
        return any(mock.id == mock_id for mock in self.engine.snapshot.mocks)

    def _open_streams_by_protocol(self) -> dict[str, int]:
        """Open data-plane streams by protocol label (``sse``, ``chunked``, ``websocket``):
        the ``mockd_active_connections{protocol}`` gauge (behavior notes §17)."""
        streams = {kind: len(self.engine.streams.connections(kind=kind))
                   for kind in (STREAM_SSE, STREAM_CHUNKED)}
        # No hub yet means no WebSocket mock ever compiled (its handler stays unloaded).
        websocket_hub = self.engine.shared_state.get("websocket")
        streams["websocket"] = len(websocket_hub.connections) if websocket_hub is not None else 0
        # gRPC calls in progress; no hub yet means no gRPC mock ever served (and grpc unloaded)
        grpc_hub = self.engine.shared_state.get("grpc")
        streams["grpc"] = len(grpc_hub.calls) if grpc_hub is not None else 0
        return streams

    async def status(self) -> dict[str, Any]:
        """``{ready, mockCount, activeMocks, requestCount, mocksByType, enabledByType,
        streamSubscribers, openStreams, grpcPorts, startedAt, uptime}`` (uptime in whole
        seconds; ``grpcPorts`` the ``/ports`` rows of gRPC servers)."""
        by_type: dict[str, int] = {}
        enabled_by_type: dict[str, int] = {}
        for mock in self.engine.snapshot.mocks:
            by_type[mock.type] = by_type.get(mock.type, 0) + 1
            if mock.enabled:
                enabled_by_type[mock.type] = enabled_by_type.get(mock.type, 0) + 1
        return {"ready": self.engine.ready, "mockCount": self.engine.snapshot.mock_count,
                "activeMocks": sum(enabled_by_type.values()),
                "requestCount": self.request_log.counters.total,
                "mocksByType": by_type, "enabledByType": enabled_by_type,
                "streamSubscribers": self.request_log.subscriber_count,
                "openStreams": self._open_streams_by_protocol(),
                "grpcPorts": self._grpc_ports(),
                "startedAt": utc_timestamp(self.engine.started_at),
                "uptime": int(time.time() - self.engine.started_at)}

    def _grpc_ports(self) -> list[dict[str, Any]]:
        """The ``/ports`` rows of gRPC servers; ``[]`` without a gRPC mock, so that an engine
        serving none never imports grpc."""
        if not any(mock.type == "grpc" for mock in self.engine.snapshot.mocks):
            return []
        from mocks.protocols.grpc.control import grpc_ports

        return grpc_ports(self)

    async def traffic(self) -> dict[str, Any]:
        """A copy of the traffic counters (see :meth:`TrafficCounters.snapshot`)."""
        return self.request_log.counters.snapshot()

    # ------------------------------------------------------------------ request log
    async def requests(self, filters: RequestFilter) -> dict[str, Any]:
        """``{"requests": [entry], "count": <page size>, "total": <entries passing filters>}``,
        newest first."""
        entries, total = self.request_log.query(filters)
        return {"requests": entries, "count": len(entries), "total": total}

    async def request(self, entry_id: str) -> dict[str, Any] | None:
        """One request-log entry, or None."""
        return self.request_log.get(entry_id)

    async def clear_requests(self) -> int:
        """Clear the whole request log; returns how many entries were dropped."""
        return self.request_log.clear()

    def subscribe(self) -> asyncio.Queue:
        """A queue of new log records for the request stream (call on the engine loop).

        Pair every call with :meth:`unsubscribe`. Records turn into entries with
        :meth:`entry_of`.
        """
        return self.request_log.subscribe()

    def unsubscribe(self, queue: asyncio.Queue) -> None:
        """Stop feeding a queue returned by :meth:`subscribe`."""
        self.request_log.unsubscribe(queue)

    def entry_of(self, record: Any) -> dict[str, Any]:
        """The request-log entry of a record taken from a subscription queue."""
        return record.entry(self.request_log.workspace_of)

    # ------------------------------------------------------------------ verification
    async def verification(self, mock_id: str) -> dict[str, Any]:
        """``{mockId, callCount, firstCalledAt?, lastCalledAt?}`` from the retained log."""
        calls = self.request_log.calls(mock_id)
        first, last = records_between(calls)
        out: dict[str, Any] = {"mockId": mock_id, "callCount": len(calls)}
        if first:
            out["firstCalledAt"] = first
            out["lastCalledAt"] = last
        return out

    async def verify(self, mock_id: str, criteria: CallCriteria) -> dict[str, Any]:
        """Judge the mock's retained call count: ``{success, passed, actual, expected?,
        message}``."""
        return verify_calls(len(self.request_log.calls(mock_id)), criteria)

    async def invocations(self, mock_id: str, limit: int = 100,
                          offset: int = 0) -> dict[str, Any]:
        """``{invocations: [...], count, total}``, oldest first."""
        calls = self.request_log.calls(mock_id)
        page = calls[offset:offset + limit]
        return {"invocations": [record.invocation() for record in page], "count": len(page),
                "total": len(calls)}

    async def clear_invocations(self, mock_id: str) -> int:
        """Forget the mock's calls (its request-log entries); returns how many."""
        return self.request_log.clear(mock_id)

    # ================================================================== scenarios
    # ``http.scenario`` state (:mod:`mocks.protocols.http.scenarios`); admin routes in
    # ``mocks/api_scenarios.py``.

    async def scenarios(self, workspace: str | None = None) -> dict[str, Any]:
        """``{scenarios: [{name, state, possibleStates, workspaceId}], count}`` of the
        scenarios the live mocks use (of ``workspace``; None: all)."""
        rows = scenario_overview(self.engine.snapshot.mocks, self.engine.scenarios, workspace)
        return {"scenarios": rows, "count": len(rows)}

    async def set_scenario_state(self, name: str, body: Any,
                                 workspace: str | None = None) -> dict[str, Any]:
        """Put scenario ``name`` in ``body["state"]``; returns the scenario. Raises
        :class:`~mocks.protocols.http.scenarios.ScenarioError` (404 unknown scenario, 400
        unknown or missing state)."""
        return set_scenario_state(self.engine.snapshot.mocks, self.engine.scenarios, name,
                                  body, workspace)

    async def reset_scenarios(self, workspace: str | None = None) -> int:
        """Put every scenario (of ``workspace``; None: all) back in ``Started``; returns how
        many had left it. The table resets of ``/state/reset`` and ``/reset`` call it too."""
        return self.engine.scenarios.reset(workspace)

    # ================================================================== SSE connections
    # Streaming mocks (issue 7). The state lives in ``engine.streams`` (a
    # :class:`~mocks.protocols.streaming.runtime.StreamRuntime`); admin routes in
    # ``mocks/protocols/streaming/api.py``, mirrored routes of this port in
    # ``mocks/protocols/streaming/control.py``. Source: SPEC "Admin API" -> "SSE connections"; behavior notes §1.

    async def sse_connections(self) -> dict[str, Any]:
        """``{connections: [connection], count, stats}`` (open SSE connections, oldest first;
        fields as :meth:`StreamConnection.info`, stats as :meth:`sse_stats`)."""
        streams = self.engine.streams
        connections = [connection.info() for connection in streams.connections()]
        return {"connections": connections, "count": len(connections),
                "stats": streams.stats_document()}

    async def sse_connection(self, connection_id: str) -> dict[str, Any] | None:
        """One open SSE connection, or None."""
        connection = self.engine.streams.get(connection_id)
        return connection.info() if connection is not None else None

    async def close_sse_connection(self, connection_id: str) -> dict[str, Any] | None:
        """Close one SSE connection (its response ends cleanly at once):
        ``{message: "Connection closed", connection}``, or None when there is none."""
        if not self.engine.streams.stop(connection_id, CLOSED_BY_ADMIN):
            return None
        return {"message": "Connection closed", "connection": connection_id}

    async def sse_stats(self) -> dict[str, Any]:
        """``{activeConnections, totalConnections, totalEventsSent, totalBytesSent,
        connectionErrors, connectionsByMock, maxConnections}``."""
        return self.engine.streams.stats_document()

    async def mock_sse_connections(self, mock_id: str) -> dict[str, Any]:
        """``{connections, count, mockId}``: the open SSE connections of one mock."""
        connections = [connection.info()
                       for connection in self.engine.streams.connections(mock_id)]
        return {"connections": connections, "count": len(connections), "mockId": mock_id}

    async def close_mock_sse_connections(self, mock_id: str) -> dict[str, Any]:
        """Close every SSE connection of one mock: ``{message, closed, mockId}``."""
        closed = self.engine.streams.stop_mock(mock_id, CLOSED_BY_ADMIN)
        return {"message": "Connections closed", "closed": closed, "mockId": mock_id}

    async def sse_buffer(self, mock_id: str) -> dict[str, Any]:
        """``{mockId, events: [{id, type?, data, retry?, position, index, timestamp}], count,
        capacity}``: the mock's ``Last-Event-ID`` resumption buffer, oldest first."""
        buffer = self.engine.streams.existing_buffer(mock_id)
        events = buffer.events() if buffer is not None else []
        capacity = buffer.capacity if buffer is not None else _buffer_size_of(
            self.engine.snapshot.mocks, mock_id)
        return {"mockId": mock_id,
                "events": [event.document(index) for index, event in enumerate(events)],
                "count": len(events), "capacity": capacity}

    def stop_streams(self) -> int:
        """End every open stream (SSE, chunked, and the admin request streams) cleanly, e.g.
        when the server stops, so that shutdown neither waits for them nor cancels them;
        returns how many. Call on the engine loop."""
        return self.engine.streams.stop_all() + self.request_log.close_subscribers()

    async def clear_sse_buffer(self, mock_id: str) -> dict[str, Any]:
        """Empty the mock's resumption buffer: ``{message, mockId, cleared}``."""
        cleared = self.engine.streams.clear_buffer(mock_id)
        return {"message": "Buffer cleared", "mockId": mock_id, "cleared": cleared}

    # ================================================================== WebSocket connections
    # ``websocket`` mocks. The state lives in the engine's
    # :class:`~mocks.protocols.websocket.hub.WebSocketHub` (``engine.shared_state``); admin
    # routes in ``mocks/protocols/websocket/api.py``, mirrored routes of this port in
    # ``mocks/protocols/websocket/control.py``. Source: behavior notes §1 ("Connections").

    # The WebSocket handler and admin helpers (with the WebSocket config model) are imported
    # by the methods that use them, so an engine start does not build that model.
    @property
    def _websocket_hub(self) -> WebSocketHub:
        from mocks.protocols.websocket.handler import hub_of

        return hub_of(self.engine.shared_state)

    async def websocket_connections(self) -> dict[str, Any]:
        """``{connections: [connection], count, stats}`` (open WebSocket connections, oldest
        first; fields as :meth:`WebSocketConnection.describe`, stats as
        :meth:`websocket_stats`)."""
        hub = self._websocket_hub
        connections = [connection.describe() for connection in hub.connections.values()]
        return {"connections": connections, "count": len(connections), "stats": hub.stats()}

    async def websocket_connection(self, connection_id: str) -> dict[str, Any] | None:
        """One open WebSocket connection, or None."""
        connection = self._websocket_hub.get(connection_id)
        return connection.describe() if connection is not None else None

    async def close_websocket_connection(self, connection_id: str) -> dict[str, Any] | None:
        """Close one connection with 1000 "closed by admin" (messages still queued are
        dropped): ``{message: "Connection closed", connection}``, or None when there is
        none. A connection already closing answers the same."""
        connection = self._websocket_hub.get(connection_id)
        if connection is None:
            return None
        connection.close(WS_CLOSE_NORMAL, WS_CLOSED_BY_ADMIN)
        return {"message": "Connection closed", "connection": connection_id}

    async def send_websocket_message(self, connection_id: str,
                                     body: Any) -> dict[str, Any] | None:
        """Queue ``body`` (``{type?: text|binary, data}``, binary data base64) to one
        connection: ``{message: "Message sent", connection, type}``, or None when there is no
        such connection. Raises :class:`WebSocketAdminError` 400 for a bad body (naming the
        key), 409 when the connection is closing (or its send queue is full, which closes it
        with 1008)."""
        from mocks.protocols.websocket.control import WebSocketAdminError, outgoing_message

        kind, data = outgoing_message(body)
        connection = self._websocket_hub.get(connection_id)
        if connection is None:
            return None
        if not connection.push(data):
            raise WebSocketAdminError(409, "conflict", (
                f"Connection {connection_id} is closing (code {connection.close_code}): "
                f"nothing was sent"))
        return {"message": "Message sent", "connection": connection_id, "type": kind}

    async def broadcast_websocket(self, body: Any) -> dict[str, Any]:
        """Queue ``body`` (``{type?, data, mockId?}``) to every open connection, or to those
        of ``mockId``: ``{message: "Message broadcast", sent}`` (connections that took it;
        closing ones do not). Raises :class:`WebSocketAdminError` 400 for a bad body, 404
        ``Mock not found`` for an unknown ``mockId``."""
        from mocks.protocols.websocket.control import (WebSocketAdminError, broadcast_target,
                                                       outgoing_message)

        _, data = outgoing_message(body)
        mock_id = broadcast_target(body)
        if mock_id is not None and not await self.has_mock(mock_id):
            raise WebSocketAdminError(404, "not_found", "Mock not found")
        sent = self._websocket_hub.broadcast(data, mock_id)
        return {"message": "Message broadcast", "sent": sent}

    async def websocket_endpoints(self) -> dict[str, Any]:
        """``{endpoints: [{mockId, name?, path, connections, subprotocols, echoMode, matchers,
        scenario?}], count}``: the enabled ``websocket`` mocks of the live snapshot."""
        from mocks.protocols.websocket.control import endpoint_documents

        endpoints = endpoint_documents(self.engine.snapshot.websocket_routes.values(),
                                       self._websocket_hub)
        return {"endpoints": endpoints, "count": len(endpoints)}

    async def websocket_stats(self) -> dict[str, Any]:
        """``{activeConnections, totalConnections, refusedConnections, messagesReceived,
        messagesSent, bytesReceived, bytesSent, connectionsByMock}`` (totals since start)."""
        return self._websocket_hub.stats()

    async def mock_websocket_connections(self, mock_id: str) -> dict[str, Any]:
        """``{connections, count, mockId}``: the open WebSocket connections of one mock."""
        connections = [connection.describe()
                       for connection in self._websocket_hub.of_mock(mock_id)]
        return {"connections": connections, "count": len(connections), "mockId": mock_id}

    async def close_mock_websocket_connections(self, mock_id: str) -> dict[str, Any]:
        """Close every connection of one mock with 1000 "closed by admin":
        ``{message: "Connections closed", closed, mockId}`` (``closed`` counts those that were
        not closing already)."""
        hub = self._websocket_hub
        closed = hub.close_all(hub.of_mock(mock_id), WS_CLOSE_NORMAL, WS_CLOSED_BY_ADMIN)
        return {"message": "Connections closed", "closed": closed, "mockId": mock_id}


# ---------------------------------------------------------------------------- HTTP face

_VERIFY = re.compile(r"^/mocks/([^/]+)/(verify|invocations)$")
_REQUEST = re.compile(r"^/requests/([^/]+)$")


#: Header carrying the engine token (behavior notes §16).
ENGINE_TOKEN_HEADER = b"x-engine-token"

#: Methods whose body a route may read: they must declare ``application/json``.
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})

#: Answers of the gate in front of every engine-control route (behavior notes §16).
ORIGIN_REFUSED = {"error": "origin_refused",
                  "message": "Requests carrying an Origin header are refused: the engine-control "
                             "port is for the mockd admin, not for web pages."}
MISSING_ENGINE_TOKEN = {"error": "missing_engine_token",
                        "message": "Engine token required: send it in the X-Engine-Token header "
                                   "(the engine prints where it is stored at start-up)."}
INVALID_ENGINE_TOKEN = {"error": "invalid_engine_token",
                        "message": "Invalid engine token: use the one the engine was started "
                                   "with (--engine-token, MOCKD_ENGINE_TOKEN or the "
                                   "engine-token file in its data directory)."}
UNSUPPORTED_MEDIA_TYPE = {"error": "unsupported_media_type",
                          "message": "Send request bodies as JSON with "
                                     "Content-Type: application/json."}


def gate_answer(scope: Scope, token: str,
                hosts: HostPolicy = LOOPBACK_ONLY) -> tuple[int, dict[str, str]] | None:
    """Why a request to the engine-control port is refused, or None when it may go on.

    Checks, in this order and before any byte of the body is read (behavior notes §16): a
    ``Host`` that ``hosts`` refuses -> 400 ``host_not_allowed`` (a page on a rebound DNS name,
    :mod:`mocks.engine.hosts`); an ``Origin`` header -> 403 ``origin_refused`` (no web page
    may reach the port); no
    ``X-Engine-Token`` -> 401 ``missing_engine_token``; a different token (compared in constant
    time) -> 401 ``invalid_engine_token``; a POST, PUT or PATCH whose ``Content-Type`` is not
    ``application/json`` (parameters such as ``charset`` allowed) -> 415
    ``unsupported_media_type``. Returns ``(status, {error, message})``.
    """
    refused_host = hosts.refusal(scope.get("headers") or (), "engine-control port")
    if refused_host is not None:
        return 400, refused_host
    presented: bytes | None = None
    content_type = b""
    for name, value in scope.get("headers") or ():
        name = name.lower()
        if name == b"origin":
            return 403, ORIGIN_REFUSED
        if name == ENGINE_TOKEN_HEADER:
            presented = value
        elif name == b"content-type":
            content_type = value
    if not presented:
        return 401, MISSING_ENGINE_TOKEN
    if not hmac.compare_digest(presented.strip(), token.encode("utf-8")):
        return 401, INVALID_ENGINE_TOKEN
    if scope.get("method") in BODY_METHODS:
        media_type = content_type.split(b";", 1)[0].strip().lower()
        if media_type != JSON_TYPE:
            return 415, UNSUPPORTED_MEDIA_TYPE
    return None


#: ``route(control, method, path, query, read_body, answer) -> bool``: the signature of a
#: protocol's engine-control routes (``ProtocolEntry.control_routes``).
ControlRoute = Callable[..., Awaitable[bool]]


def route_owner(path: str) -> str:
    """The protocol label a control path belongs to: its first segment, or the third one
    under ``/mocks/{id}/``, without a ``-suffix`` (``/mqtt-connections/c1`` -> ``mqtt``,
    ``/mocks/m1/websocket/connections`` -> ``websocket``); ``""`` for ``/``."""
    segments = path.strip("/").split("/")
    first = segments[2] if segments[0] == "mocks" and len(segments) >= 3 else segments[0]
    return first.partition("-")[0]


class ProtocolControlRoutes:
    """The engine-control routes of the registered protocols, each imported on first use.

    A path goes to the protocol whose mock type :func:`route_owner` names (``/grpc/...`` to
    ``grpc``); that protocol's ``control_routes`` import string (``"module:function"``) is
    resolved then, and kept. So an engine whose config has no gRPC, MQTT or SOAP mock never
    imports their servers nor grpc, amqtt or lxml, until someone asks those routes.

    Args:
        targets: ``{mock type: "module:function"}``; each function has the
            :data:`ControlRoute` signature and returns False for a path it does not serve.

    Raises :class:`~mocks.protocols.HandlerImportError` (from :meth:`route`) when a target
    cannot be imported. Concurrency: engine event loop only.
    """

    def __init__(self, targets: Mapping[str, str]):
        self._targets = dict(targets)
        self._resolved: dict[str, ControlRoute] = {}

    @classmethod
    def from_registry(cls) -> ProtocolControlRoutes:
        """The routes :data:`mocks.protocols.PROTOCOLS` names (entries with
        ``control_routes``)."""
        return cls({entry.mock_type: entry.control_routes for entry in PROTOCOLS
                    if entry.control_routes})

    @property
    def loaded(self) -> frozenset[str]:
        """The mock types whose routes have been imported."""
        return frozenset(self._resolved)

    async def route(self, control: Any, method: str, path: str, query: dict[str, str],
                    read_body: Callable[[], Awaitable[bytes]],
                    answer: Callable[[int, Any], Awaitable[None]]) -> bool:
        """Answer ``path`` through its protocol's routes; False when no protocol owns it or
        the owner does not serve it."""
        mock_type = route_owner(path)
        if mock_type not in self._targets:
            return False
        function = self._resolved.get(mock_type)
        if function is None:
            from mocks.protocols import resolve_target

            function = self._resolved[mock_type] = resolve_target(self._targets[mock_type],
                                                                  mock_type)
        return await function(control, method, path, query, read_body, answer)


class EngineControlApp:
    """HTTP face of :class:`EngineControl` (bound to loopback; not for clients).

    Every request passes :func:`gate_answer` first: an allowed ``Host``, no ``Origin``
    header, the engine token in ``X-Engine-Token``, JSON bodies only (behavior notes §16).
    Errors use the admin body ``{error, message}``: 400 ``host_not_allowed`` /
    ``invalid_json`` / ``validation_error`` / ``missing_criteria``, 401
    ``missing_engine_token`` / ``invalid_engine_token``, 403 ``origin_refused``, 404
    ``not_found``, 415 ``unsupported_media_type``.

    Args:
        control: the engine's control interface.
        token: the engine token every request must present; must not be empty (raises
            ValueError).
        hosts: the ``Host`` values answered (default: loopback names and IP addresses;
            ``--allowed-host`` adds names).
    """

    def __init__(self, control: EngineControl, token: str, hosts: HostPolicy = LOOPBACK_ONLY):
        if not token:
            raise ValueError("the engine-control port needs a non-empty engine token")
        self.control = control
        self._token = token
        self._hosts = hosts
        self._protocol_routes = ProtocolControlRoutes.from_registry()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await acknowledge_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        refused = gate_answer(scope, self._token, self._hosts)
        if refused is not None:
            await _answer(send, *refused)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        try:
            await self._route(scope["method"], scope["path"], query, receive, send)
        except orjson.JSONDecodeError:
            await _answer(send, 400, {"error": "invalid_json",
                                      "message": "Invalid JSON in request body"})
        except (ConfigError, QueryParameterError) as error:
            await _answer(send, 400, {"error": "validation_error", "message": str(error)})

    async def _route(self, method: str, path: str, query: dict[str, str], receive: Receive,
                     send: Send) -> None:
        control = self.control
        if path == "/health" and method == "GET":
            await _answer(send, 200, await control.health())
        elif path == "/config" and method == "POST":
            document = orjson.loads(await read_body(receive, 64 * 1024 * 1024, None) or b"{}")
            version = parse_int(query, "version", None)  # the admin's config version
            await _answer(send, 200, await control.load_config(document, version))
        elif path == "/config" and method == "GET":
            config = await control.current_config()
            await _answer(send, 200, config.model_dump(mode="json", by_alias=True,
                                                       exclude_none=True))
        elif path == "/mocks" and method == "GET":
            await _answer(send, 200, await control.mocks())
        elif path == "/status" and method == "GET":
            await _answer(send, 200, await control.status())
        elif path == "/traffic" and method == "GET":  # the counters an admin merges
            # The fan-out module (and its HTTP client library) loads only when an admin asks.
            from mocks.engine.remote import traffic_to_json

            await _answer(send, 200, traffic_to_json(await control.traffic()))
        elif path == "/requests" and method == "GET":
            await _answer(send, 200, await control.requests(parse_request_filter(query)))
        elif path == "/requests" and method == "DELETE":
            cleared = await control.clear_requests()
            await _answer(send, 200, {"message": "Request logs cleared", "cleared": cleared})
        elif path == "/requests/stream" and method == "GET":
            await self._stream(receive, send)
        elif path == "/verify" and method == "DELETE":
            cleared = await control.clear_requests()
            await _answer(send, 200, {"message": "All verification data cleared",
                                      "cleared": cleared})
        elif (found := _REQUEST.match(path)) and method == "GET":
            entry = await control.request(found.group(1))
            if entry is None:
                await _answer(send, 404, {"error": "not_found", "message": "Resource not found"})
            else:
                await _answer(send, 200, entry)
        elif found := _VERIFY.match(path):
            await self._verification(found.group(1), found.group(2), method, query, receive,
                                     send)
        elif await route_scenarios(control, method, path, query,  # /scenarios…
                                   lambda: read_body(receive, 1024 * 1024, None),
                                   lambda status, payload: _answer(send, status, payload)):
            pass
        elif await self._state(method, path, query, receive, send):
            pass
        elif await route_sse(control, method, path,  # /sse…, /mocks/{id}/sse/…
                             lambda status, payload: _answer(send, status, payload)):
            pass
        # /websocket/…, /mocks/{id}/websocket/connections, /soap…, /soap-recordings…,
        # /grpc…, /mqtt…, /mqtt-connections…, /mqtt-recordings…: the registry's routes
        elif await self._protocol_routes.route(
                control, method, path, query,
                lambda: read_body(receive, 16 * 1024 * 1024, None),
                lambda status, payload: _answer(send, status, payload)):
            pass
        elif await route_chaos(control, method, path,  # /chaos…
                               lambda: read_body(receive, 1024 * 1024, None),
                               lambda status, payload: _answer(send, status, payload)):
            pass
        else:
            await _answer(send, 404, {"error": "not_found", "message": "Resource not found"})

    async def _state(self, method: str, path: str, query: dict[str, str], receive: Receive,
                     send: Send) -> bool:
        """``/state…`` and ``/reset…`` (:func:`~tables.control.route_state`); resetting every
        table (``POST /state/reset`` without ``resource``, ``POST /reset``) resets the
        scenarios too."""
        if method == "POST" and (path == "/reset" or (path == "/state/reset"
                                                     and not query.get("resource"))):
            # Before the answer, so a client that saw it never meets an old state.
            await self.control.reset_scenarios()
        return await route_state(self.control, method, path, urlencode(query),
                                 lambda: read_body(receive, 16 * 1024 * 1024, None),
                                 lambda status, payload: _answer(send, status, payload))

    async def _verification(self, mock_id: str, what: str, method: str, query: dict[str, str],
                            receive: Receive, send: Send) -> None:
        control = self.control
        if not await control.has_mock(mock_id):
            await _answer(send, 404, {"error": "not_found", "message": "Mock not found"})
        elif what == "verify" and method == "GET":
            await _answer(send, 200, await control.verification(mock_id))
        elif what == "verify" and method == "POST":
            body = orjson.loads(await read_body(receive, 1024 * 1024, None) or b"{}")
            criteria = criteria_from(body)
            if criteria.empty:
                await _answer(send, 400, {"error": "missing_criteria",
                                          "message": MISSING_CRITERIA_MESSAGE})
            else:
                await _answer(send, 200, await control.verify(mock_id, criteria))
        elif what == "invocations" and method == "GET":
            await _answer(send, 200, await control.invocations(
                mock_id, parse_int(query, "limit", 100), parse_int(query, "offset", 0)))
        elif what == "invocations" and method == "DELETE":
            cleared = await control.clear_invocations(mock_id)
            await _answer(send, 200, {"message": "Invocations cleared", "mockId": mock_id,
                                      "cleared": cleared})
        else:
            await _answer(send, 405, {"error": "method_not_allowed",
                                      "message": f"{method} is not allowed here"})

    async def _stream(self, receive: Receive, send: Send) -> None:
        queue = self.control.subscribe()
        try:
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream"),
                                    (b"cache-control", b"no-cache")]})
            await send({"type": "http.response.body", "more_body": True,
                        "body": sse_frame("connected", CONNECTED_MESSAGE)})
            disconnected = asyncio.ensure_future(receive())
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, disconnected},
                                             timeout=STREAM_KEEPALIVE_SECONDS,
                                             return_when=asyncio.FIRST_COMPLETED)
                if disconnected in done:
                    getter.cancel()
                    return
                if getter in done:
                    frame = sse_frame("request", self.control.entry_of(getter.result()))
                else:
                    getter.cancel()
                    frame = b": keepalive\n\n"
                await send({"type": "http.response.body", "body": frame, "more_body": True})
        finally:
            self.control.unsubscribe(queue)


#: The message of 400 ``missing_criteria`` (behavior notes §1 "Verification").
MISSING_CRITERIA_MESSAGE = ("At least one verification criterion is required "
                            "(atLeast, atMost, exactly, or never)")

#: Data of the first request-stream event (behavior notes §1 "Request log").
CONNECTED_MESSAGE = {"message": "Connected to request stream"}


def _buffer_size_of(mocks: Any, mock_id: str) -> int:
    """``resume.bufferSize`` of an SSE mock (the default for any other mock)."""
    for mock in mocks:
        if mock.id == mock_id and mock.http is not None and mock.http.sse is not None:
            return mock.http.sse.resume.buffer_size
    return DEFAULT_BUFFER_SIZE


def criteria_from(body: Any) -> CallCriteria:
    """Read ``{atLeast?, atMost?, exactly?, never?}``; raises :class:`QueryParameterError`
    naming the field when a count is not a non-negative integer or ``never`` not a boolean."""
    if not isinstance(body, dict):
        raise QueryParameterError("body", "must be a JSON object with atLeast, atMost, "
                                          "exactly or never")
    counts: dict[str, int | None] = {}
    for name in ("atLeast", "atMost", "exactly"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 0):
            raise QueryParameterError(name, f"must be a non-negative integer, got {value!r}")
        counts[name] = value
    never = body.get("never")
    if never is not None and not isinstance(never, bool):
        raise QueryParameterError("never", f"must be true or false, got {never!r}")
    return CallCriteria(at_least=counts["atLeast"], at_most=counts["atMost"],
                        exactly=counts["exactly"], never=never)


def sse_frame(event: str, data: Any) -> bytes:
    """One server-sent event: ``event: <name>\\ndata: <json>\\n\\n``."""
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


async def _answer(send: Send, status: int, payload: dict[str, Any]) -> None:
    await send_simple(send, status, [(b"content-type", JSON_TYPE)], orjson.dumps(payload))
