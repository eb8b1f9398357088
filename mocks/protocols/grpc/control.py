"""The gRPC admin views, on the admin API and mirrored on the engine-control port.

=============================================  ============================================
``GET /grpc``                                  ``{mocks, total, count, servers: [{id,
                                               address: ":<port>", port, running, mocks,
                                               services}]}``
``GET /grpc/{id}/status``                      ``{id, name?, port, address, running,
                                               enabled, reflection, services: [{name,
                                               methods: [{name, streamType}]}],
                                               requestCount, errorCount, firstRequestAt?,
                                               lastRequestAt?}``; 404 ``gRPC server not
                                               found``. ``id`` is a mock id or ``grpc:<port>``
``GET /grpc/connections``                      ``{connections: [call], count}``: calls in
                                               progress
``GET /grpc/connections/{id}``                 one call; 404
``DELETE /grpc/connections/{id}``              cancels the call (client sees ``CANCELLED``)
``GET /grpc/stats``                            ``{totalCalls, totalErrors, activeCalls,
                                               servers, byMethod, byStatus}``
=============================================  ============================================

:func:`grpc_ports` gives the ``GET /ports`` rows (``{port, protocol: "gRPC", component:
"gRPC Server", status}``). ``control`` is an ``EngineControl``; everything here reads its
engine's live snapshot, listener supervisor and gRPC hub on the engine loop.

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration" (gRPC: "list servers
``{servers: [{id, address, running}], count}``; server status"); behavior notes §1 ("gRPC
streams: GET ``/grpc/connections``, GET/DELETE ``/grpc/connections/{id}``, GET
``/grpc/stats``. GET ``/grpc`` → ``{mocks, total, count}``; also ``servers``"). Django-free.

The gRPC server module (grpc, protobuf, graphql-core) is imported on the first call that
needs the hub; a view of the servers (``/ports``, ``GET /grpc``) finds none without importing
it while no gRPC mock has compiled (no :class:`GrpcPortService` can exist before its module is
loaded), so an admin API serving HTTP mocks only never loads grpc.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from mocks.protocols.grpc.server import GrpcPortService

SERVER_MODULE = "mocks.protocols.grpc.server"

_STATUS = re.compile(r"^/grpc/([^/]+)/status$")
_CONNECTION = re.compile(r"^/grpc/connections/([^/]+)$")
SERVER_NOT_FOUND = {"error": "not_found", "message": "gRPC server not found"}
CALL_NOT_FOUND = {"error": "not_found", "message": "gRPC connection not found"}


def _server() -> ModuleType:
    """:mod:`mocks.protocols.grpc.server`, imported on first use (it loads grpc)."""
    from mocks.protocols.grpc import server

    return server


def _service_class() -> type | None:
    """:class:`GrpcPortService` when its module is loaded; None before (then no instance
    exists)."""
    module = sys.modules.get(SERVER_MODULE)
    return getattr(module, "GrpcPortService", None)


def _hub(control: Any) -> Any:
    return _server().hub_of(control.engine.shared_state)


def _grpc_mocks(control: Any) -> list[Any]:
    return [mock for mock in control.engine.snapshot.mocks if mock.type == "grpc"]


def _services(control: Any) -> dict[int, GrpcPortService]:
    """Port -> the service the live snapshot wants for it."""
    kind = _service_class()
    if kind is None:
        return {}
    return {service.port: service for service in control.engine.snapshot.services.values()
            if isinstance(service, kind)}


def _running(control: Any, port: int) -> GrpcPortService | None:
    kind = _service_class()
    service = control.engine.listeners.running.get(f"grpc:{port}")
    return service if kind and isinstance(service, kind) and service.running else None


def _server_row(control: Any, port: int, service: GrpcPortService) -> dict[str, Any]:
    running = _running(control, port)
    table = (running or service).table
    row = {"id": f"grpc:{port}", "address": f":{port}", "port": port,
           "running": running is not None, "mocks": list(table.mock_ids),
           "services": list(table.services)}
    failure = control.engine.listeners.failures.get(f"grpc:{port}")
    if failure:
        row["error"] = failure
    return row


async def grpc_overview(control: Any) -> dict[str, Any]:
    """``GET /grpc``: the ``grpc`` mocks and the servers of their ports."""
    mocks = [mock.model_dump(mode="json", by_alias=True, exclude_none=True)
             for mock in _grpc_mocks(control)]
    servers = [_server_row(control, port, service)
               for port, service in sorted(_services(control).items())]
    return {"mocks": mocks, "total": len(mocks), "count": len(mocks), "servers": servers}


async def grpc_status(control: Any, server_id: str) -> dict[str, Any] | None:
    """``GET /grpc/{id}/status`` for a mock id or ``grpc:<port>``; None when unknown."""
    mock = next((mock for mock in _grpc_mocks(control) if mock.id == server_id), None)
    port = None
    if mock is not None:
        port = mock.grpc.port
    elif server_id.startswith("grpc:") and server_id[5:].isdigit():
        port = int(server_id[5:])
    elif server_id.isdigit():
        port = int(server_id)
    if port is None:
        return None
    service = _services(control).get(port)
    if service is None and mock is None:
        return None
    running = _running(control, port)
    out: dict[str, Any] = {"id": server_id}
    if mock is not None and mock.name:
        out["name"] = mock.name
    out.update(port=port, address=f":{port}", running=running is not None,
               enabled=mock.enabled if mock is not None else True)
    table = (running or service).table if (running or service) is not None else None
    mock_ids = {mock.id} if mock is not None else set(table.mock_ids if table else ())
    if table is not None:
        out["reflection"] = table.reflection
        services: dict[str, list[dict[str, str]]] = {}
        for path, method in table.methods.items():
            if method.mock_id in mock_ids:
                services.setdefault(method.info.service, []).append(
                    {"name": method.info.name, "streamType": method.info.kind})
        out["services"] = [{"name": name, "methods": methods}
                           for name, methods in services.items()]
    requests = errors = 0
    first = last = None
    for record in control.request_log.records():
        event = record.event
        if event.protocol != "grpc" or event.mock_id not in mock_ids:
            continue
        requests += 1
        errors += event.status != 0
        first = event.received_at if first is None else first
        last = event.received_at
    out.update(requestCount=requests, errorCount=errors)
    if first is not None:
        out.update(firstRequestAt=_server().timestamp(first),
                   lastRequestAt=_server().timestamp(last))
    return out


async def grpc_connections(control: Any) -> dict[str, Any]:
    """``GET /grpc/connections``: calls in progress."""
    calls = [call.document() for call in _hub(control).calls.values()]
    return {"connections": calls, "count": len(calls)}


async def grpc_connection(control: Any, call_id: str) -> dict[str, Any] | None:
    """One call in progress, or None."""
    call = _hub(control).calls.get(call_id)
    return call.document() if call is not None else None


async def close_grpc_connection(control: Any, call_id: str) -> dict[str, Any] | None:
    """Cancel a call in progress: ``{message, id}``, or None when unknown."""
    if not _hub(control).cancel(call_id):
        return None
    return {"message": "Connection closed", "id": call_id}


async def grpc_stats(control: Any) -> dict[str, Any]:
    """``GET /grpc/stats`` (see :meth:`~mocks.protocols.grpc.server.GrpcHub.stats`)."""
    return _hub(control).stats()


def grpc_ports(control: Any) -> list[dict[str, Any]]:
    """``GET /ports`` rows of the gRPC servers, by port."""
    rows = []
    for port in sorted(_services(control)):
        running = _running(control, port) is not None
        rows.append({"port": port, "protocol": "gRPC", "component": "gRPC Server",
                     "status": "running" if running else "stopped"})
    return rows


async def route_grpc(control: Any, method: str, path: str,
                     answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    """Answer a gRPC route of the engine-control port; False when ``path`` is not one."""
    if path != "/grpc" and not path.startswith("/grpc/"):
        return False
    connection = _CONNECTION.match(path)
    status = _STATUS.match(path)
    if connection is not None and method == "DELETE":
        result = await close_grpc_connection(control, connection.group(1))
        await (answer(200, result) if result is not None else answer(404, CALL_NOT_FOUND))
        return True
    if method != "GET":
        await answer(405, {"error": "method_not_allowed", "message": f"{method} not allowed"})
        return True
    if path == "/grpc":
        await answer(200, await grpc_overview(control))
    elif path == "/grpc/connections":
        await answer(200, await grpc_connections(control))
    elif path == "/grpc/stats":
        await answer(200, await grpc_stats(control))
    elif path == "/grpc/ports":
        await answer(200, {"ports": grpc_ports(control)})
    elif connection is not None:
        found = await grpc_connection(control, connection.group(1))
        await (answer(200, found) if found is not None else answer(404, CALL_NOT_FOUND))
    elif status is not None:
        found = await grpc_status(control, status.group(1))
        await (answer(200, found) if found is not None else answer(404, SERVER_NOT_FOUND))
    else:
        await answer(404, {"error": "not_found", "message": "Resource not found"})
    return True


async def control_routes(control: Any, method: str, path: str, query: dict[str, str],
                         read_body: Callable[[], Awaitable[bytes]],
                         answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    """:func:`route_grpc` with the registry's engine-control signature
    (``ProtocolEntry.control_routes``); ``query`` and ``read_body`` are unused."""
    return await route_grpc(control, method, path, answer)
