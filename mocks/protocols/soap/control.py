"""The SOAP admin views, on the admin API and mirrored on the engine-control port (split
mode): handlers, status, recording and the recorded exchanges.

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
``POST /soap/{id}/record/start|stop``          ``{id, recordingEnabled, message}``; 404
                                               ``SOAP handler not found``
``GET /soap-recordings``                       query ``endpoint``, ``operation``,
                                               ``soapAction``, ``hasFault`` (true | false),
                                               ``limit`` (1-10000, default 100),
                                               ``offset`` -> ``{recordings, total, limit,
                                               offset}``, oldest first; 400
                                               ``validation_error``
``DELETE /soap-recordings``                    clear: ``{deleted: n}``
``GET /soap-recordings/stats``                 :func:`~mocks.protocols.soap.recordings.
                                               statistics`
``POST /soap-recordings/export``               ``{version, exportedAt, count, dropped,
                                               recordings}`` (every entry, oldest first)
``POST /soap-recordings/convert``              body ``{recordingIds?, endpoint?,
                                               operation?, deduplicate? (false),
                                               includeDelay? (false), preserveFaults?
                                               (false), path?, name?}`` -> ``{mock,
                                               recordingCount, operationCount, skipped}``;
                                               400 ``validation_error`` / ``no_recordings``
``GET /soap-recordings/{id}``                  one entry; 404 ``SOAP recording not found``
``DELETE /soap-recordings/{id}``               ``{message, id}``; 404
``POST /soap-recordings/{id}/convert``         as convert, of that entry only; 404
=============================================  ============================================

Recording entries and conversion: :mod:`mocks.protocols.soap.recordings`. A mock records while
its id is in the hub's ``recording`` set (kept across config reloads; an id whose mock is gone
records nothing). Counts of the status come from the retained request log (like
verification). ``control`` is an ``EngineControl``; these functions read its engine's live
snapshot and SOAP hub on the engine loop.

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration" (SOAP: "list handlers
``{handlers: [{id, path, recordingEnabled}], count}``; status; start and stop recording; list
recordings ...; convert ...; export all"); behavior notes §1 ("SOAP: GET ``/soap`` →
``{handlers:[{id, path, recordingEnabled}], count}``, GET ``/soap/{id}/status``, POST
``/soap/{id}/record/start|stop``", recordings under ``/soap-recordings``). Django-free.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from mocks.core.recordings import (RecordingQueryError, convert_body, hub_routes,
                                   route_recordings)
from mocks.protocols.soap.recordings import convert, hub_of, select, statistics

if TYPE_CHECKING:  # pragma: no cover
    from mocks.protocols.soap.handler import SoapEndpoint

#: The SOAP handler module (its config model and WSDL code): loaded when a SOAP mock
#: compiles, never by these views (no :class:`SoapEndpoint` exists before it is loaded).
HANDLER_MODULE = "mocks.protocols.soap.handler"

_STATUS = re.compile(r"^/soap/([^/]+)/status$")
_RECORD = re.compile(r"^/soap/([^/]+)/record/(start|stop)$")
HANDLER_NOT_FOUND = {"error": "not_found", "message": "SOAP handler not found"}
RECORDING_NOT_FOUND = {"error": "not_found", "message": "SOAP recording not found"}


def utc_timestamp(epoch_seconds: float) -> str:
    """RFC 3339 UTC with milliseconds and ``Z``."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _endpoints(control: Any) -> dict[str, SoapEndpoint]:
    snapshot = control.engine.snapshot
    found: dict[str, SoapEndpoint] = {}
    kind = getattr(sys.modules.get(HANDLER_MODULE), "SoapEndpoint", None)
    if kind is None:
        return found
    for mock_id, entry in snapshot.routed.items():
        for route in entry.output.routes:
            if isinstance(route.action, kind):
                found[mock_id] = route.action
    return found


def _hub(control: Any) -> Any:
    return hub_of(control.engine.shared_state)


def _soap_mock(control: Any, mock_id: str) -> Any:
    """The ``soap`` mock of that id in the live snapshot, or None."""
    return next((mock for mock in control.engine.snapshot.mocks
                 if mock.id == mock_id and mock.type == "soap"), None)


def _summary(mock: Any, endpoint: SoapEndpoint | None, recording: set[str]) -> dict[str, Any]:
    config = mock.soap
    out: dict[str, Any] = {"id": mock.id}
    if mock.name:
        out["name"] = mock.name
    out.update(path=config.path, enabled=mock.enabled, recordingEnabled=mock.id in recording,
               operations=sorted(endpoint.operations) if endpoint is not None
               else sorted(config.operations))
    return out


async def soap_handlers(control: Any) -> dict[str, Any]:
    """``{handlers: [...], count}`` of every ``soap`` mock the engine holds, in file order."""
    endpoints = _endpoints(control)
    recording = _hub(control).recording
    handlers = [_summary(mock, endpoints.get(mock.id), recording)
                for mock in control.engine.snapshot.mocks if mock.type == "soap"]
    return {"handlers": handlers, "count": len(handlers)}


async def soap_status(control: Any, mock_id: str) -> dict[str, Any] | None:
    """The status of one SOAP handler, or None when no ``soap`` mock has that id."""
    mock = _soap_mock(control, mock_id)
    if mock is None:
        return None
    endpoint = _endpoints(control).get(mock_id)
    status = _summary(mock, endpoint, _hub(control).recording)
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


# ------------------------------------------------------------------------------ recording

async def set_recording(control: Any, mock_id: str, enabled: bool) -> dict[str, Any] | None:
    """``POST /soap/{id}/record/start|stop``: ``{id, recordingEnabled, message}``; None when
    no ``soap`` mock has that id."""
    if _soap_mock(control, mock_id) is None:
        return None
    recording = _hub(control).recording
    if enabled:
        recording.add(mock_id)
    else:
        recording.discard(mock_id)
    return {"id": mock_id, "recordingEnabled": enabled,
            "message": "Recording started" if enabled else "Recording stopped"}


def _convert_options(body: Any) -> dict[str, Any]:
    """The keyword options of :func:`~mocks.protocols.soap.recordings.convert` from a JSON
    body; raises :class:`RecordingQueryError` naming the bad key."""
    texts = ("endpoint", "operation", "path", "name")
    options, body = convert_body(body, {"deduplicate": "deduplicate",
                                        "includeDelay": "include_delay",
                                        "preserveFaults": "preserve_faults"}, texts)
    path = body.get("path")
    if path and not path.startswith("/"):
        raise RecordingQueryError("path must start with /")
    options.update({key: body.get(key) or None for key in texts})
    return options


#: The ``/soap-recordings…`` operations: the engine-control port (:func:`route_soap`)
#: and the admin API (:mod:`mocks.protocols.soap.api`).
RECORDING_ROUTES = hub_routes("/soap-recordings", RECORDING_NOT_FOUND, _hub, select,
                              statistics, _convert_options, convert, utc_timestamp)


async def route_soap(control: Any, method: str, path: str, query: dict[str, str],
                     body: Callable[[], Awaitable[bytes]],
                     answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    """Answer a SOAP route of the engine-control port; False when ``path`` is not one.
    ``query`` is the decoded query string, ``body`` reads the request body."""
    if await route_recordings(RECORDING_ROUTES, control, method, path, query, body, answer):
        return True
    record = _RECORD.match(path)
    if record is not None and method == "POST":
        result = await set_recording(control, record.group(1), record.group(2) == "start")
        await (answer(200, result) if result is not None else answer(404, HANDLER_NOT_FOUND))
        return True
    found = _STATUS.match(path)
    if path != "/soap" and found is None and record is None:
        return False
    if method != "GET" or record is not None:
        await answer(405, {"error": "method_not_allowed", "message": f"{method} not allowed"})
        return True
    if found is None:
        await answer(200, await soap_handlers(control))
        return True
    status = await soap_status(control, found.group(1))
    await (answer(200, status) if status is not None else answer(404, HANDLER_NOT_FOUND))
    return True
