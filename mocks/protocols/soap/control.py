"""The SOAP handler views: ``GET /soap`` and ``GET /soap/{id}/status``, on the admin API and
mirrored on the engine-control port (split mode).

=============================================  ============================================
``GET /soap``                                  ``{handlers: [{id, name?, path, enabled,
                                               recordingEnabled, operations}], count}``
``GET /soap/{id}/status``                      ``{id, name?, path, enabled, running,
                                               recordingEnabled, wsdl, operations:
                                               [{name, soapAction, stateful?}],
                                               requestCount (envelopes),
                                               faultCount, wsdlRequests,
                                               firstRequestAt?, lastRequestAt?}``; 404
                                               ``SOAP handler not found``
=============================================  ============================================

``recordingEnabled`` is always false (SOAP recording is not offered yet). Counts come from
the retained request log (like verification). ``control`` is an ``EngineControl``; these
functions read its engine's live snapshot on the engine loop.

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration" (SOAP: "list handlers
``{handlers: [{id, path, recordingEnabled}], count}``; status"); behavior notes §1 ("SOAP:
GET ``/soap`` → ``{handlers:[{id, path, recordingEnabled}], count}``, GET
``/soap/{id}/status``"). Django-free.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from collections.abc import Awaitable, Callable
from typing import Any

from mocks.protocols.soap.handler import SoapEndpoint

_STATUS = re.compile(r"^/soap/([^/]+)/status$")
HANDLER_NOT_FOUND = {"error": "not_found", "message": "SOAP handler not found"}


def utc_timestamp(epoch_seconds: float) -> str:
    """RFC 3339 UTC with milliseconds and ``Z``."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _endpoints(control: Any) -> dict[str, SoapEndpoint]:
    snapshot = control.engine.snapshot
    found: dict[str, SoapEndpoint] = {}
    for mock_id, entry in snapshot.routed.items():
        for route in entry.output.routes:
            if isinstance(route.action, SoapEndpoint):
                found[mock_id] = route.action
    return found


def _summary(mock: Any, endpoint: SoapEndpoint | None) -> dict[str, Any]:
    config = mock.soap
    out: dict[str, Any] = {"id": mock.id}
    if mock.name:
        out["name"] = mock.name
    out.update(path=config.path, enabled=mock.enabled, recordingEnabled=False,
               operations=sorted(endpoint.operations) if endpoint is not None
               else sorted(config.operations))
    return out


async def soap_handlers(control: Any) -> dict[str, Any]:
    """``{handlers: [...], count}`` of every ``soap`` mock the engine holds, in file order."""
    endpoints = _endpoints(control)
    handlers = [_summary(mock, endpoints.get(mock.id))
                for mock in control.engine.snapshot.mocks if mock.type == "soap"]
    return {"handlers": handlers, "count": len(handlers)}


async def soap_status(control: Any, mock_id: str) -> dict[str, Any] | None:
    """The status of one SOAP handler, or None when no ``soap`` mock has that id."""
    mock = next((mock for mock in control.engine.snapshot.mocks
                 if mock.id == mock_id and mock.type == "soap"), None)
    if mock is None:
        return None
    endpoint = _endpoints(control).get(mock_id)
    status = _summary(mock, endpoint)
    status["running"] = endpoint is not None and mock.enabled
    status["wsdl"] = bool(mock.soap.wsdl or mock.soap.wsdl_file)
    if endpoint is not None:
        status["operations"] = [
            {"name": name, "soapAction": operation.soap_action,
             **({"stateful": {"resource": operation.stateful_resource,
                              "action": operation.stateful_action}}
                if operation.stateful_action else {})}
            for name, operation in endpoint.operations.items()]
    requests = faults = wsdl_requests = 0
    first = last = None
    for record in control.request_log.records():
        event = record.event
        if event.mock_id != mock_id:
            continue
        if event.request.method != "POST":
            wsdl_requests += 1
            continue
        requests += 1
        faults += event.status >= 500
        first = event.received_at if first is None else min(first, event.received_at)
        last = event.received_at if last is None else max(last, event.received_at)
    status.update(requestCount=requests, faultCount=faults, wsdlRequests=wsdl_requests)
    if first is not None:
        status.update(firstRequestAt=utc_timestamp(first), lastRequestAt=utc_timestamp(last))
    return status


async def route_soap(control: Any, method: str, path: str,
                     answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    """Answer a SOAP route of the engine-control port; False when ``path`` is not one."""
    found = _STATUS.match(path)
    if path != "/soap" and found is None:
        return False
    if method != "GET":
        await answer(405, {"error": "method_not_allowed", "message": f"{method} not allowed"})
        return True
    if found is None:
        await answer(200, await soap_handlers(control))
        return True
    status = await soap_status(control, found.group(1))
    await (answer(200, status) if status is not None else answer(404, HANDLER_NOT_FOUND))
    return True
