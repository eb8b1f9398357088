"""Admin API routes of the recording proxy and its CA (``/proxy/*``).

=====================================  ===================================================
``POST /proxy/start``                  body ``{port=8888, mode="record", sessionName=
                                       "default", caPath?, filters?, upstreamCa?,
                                       insecureUpstream?, fallthrough?, host?, bodyCap?}``
                                       -> status; 409 ``already_running``, 400
                                       ``port_error``, ``invalid_mode``, ``validation_error``
``POST /proxy/stop``                   -> status (``running: false``); 404 ``not_running``
``PUT /proxy/mode``                    ``{mode}`` -> status; 404 ``not_running``, 400
                                       ``invalid_mode``
``GET /proxy/status``                  ``{running, port?, mode?, sessionId?,
                                       recordingCount?, uptime?, ...}``
``GET|PUT /proxy/filters``             ``{includePaths, excludePaths, includeHosts,
                                       excludeHosts}``
``GET /proxy/ca``                      ``{exists, path?, fingerprint?, expiresAt?,
                                       organization?}``
``POST /proxy/ca``                     ``{caPath}`` (relative to the data dir) -> 201 CA
                                       status; 409 ``ca_exists``, 400 ``validation_error``
``GET /proxy/ca/download``             the CA certificate, ``application/x-pem-file``
                                       attachment; 404 ``no_ca``
``GET /recordings/grpc``               ``{recordings, total, limit, offset}`` (``sessionId``,
                                       ``service``, ``method``, ``limit`` <= 1000,
                                       ``offset``), oldest first
``POST /recordings/grpc/convert``      ``{sessionId?, recordingIds?, port?}`` -> ``{config,
                                       count, warnings?}`` (``grpc`` mocks, protos from the
                                       upstream's reflection); 400 ``validation_error``,
                                       ``no_recordings``; 404 ``not_found`` (session)
=====================================  ===================================================

The proxy runs in the server's event loop (these views are async and run on it); it stops
with the server (a shutdown hook on :data:`mockd_project.runtime.runtime`).

Source: SPEC "Proxy, CA and recordings", "States and transitions" (Proxy); behavior notes §1
"Proxy, CA, sessions, recordings".
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router

from mockd_project.runtime import runtime
from mocks.api import json_body
from mocks.control import openapi_docs as oa
from mocks.control.errors import AdminError
from proxy.manager import ProxyError, manager

router = Router(tags=["proxy"])


def _data_dir() -> Path | None:
    return Path(runtime.data_dir) if runtime.data_dir else None


def _redaction() -> Any:
    log = getattr(runtime.control, "request_log", None)
    return getattr(log, "redaction", None)


def _admin_error(error: ProxyError) -> AdminError:
    return AdminError(error.status, error.code, error.message)


def _body(request: HttpRequest) -> Any:
    return json_body(request) if request.body.strip() else {}


# What the OpenAPI document shows: answers of a running server (docs/proxy.md).
_STATUS = {"running": True, "port": 8888, "host": "127.0.0.1", "mode": "record",
           "sessionId": "sess_2077b4d40139ce59", "sessionName": "checkout",
           "recordingCount": 3, "uptime": 42, "caEnabled": True, "fallthrough": "502"}
_NOT_RUNNING = oa.error_example("not_running", "the proxy is not running; start it with POST "
                                               "/proxy/start")
_FILTERS = {"includePaths": ["/api/*"], "excludePaths": [], "includeHosts": [],
            "excludeHosts": ["telemetry.example.com"]}
_FILTERS_SCHEMA = {"type": "object", "properties": {
    key: {"type": "array", "items": {"type": "string"}} for key in _FILTERS}}
_CA = {"exists": True, "path": "/home/me/.local/share/mockd/ca",
       "fingerprint": "AA:81:80:79:2D:AD:60:7F:4F:A8:3C:6D:35:A2:27:D6:73:AF:F7:BB:5D:2A:AC:B8:"
                      "82:48:4E:CA:A9:28:13:9B",
       "expiresAt": "2036-11-24T04:20:22Z", "organization": "mockd"}


def _add_hook(hook: Any) -> None:
    runtime.shutdown_hooks.append(hook)


def _remove_hook(hook: Any) -> None:
    if hook in runtime.shutdown_hooks:
        runtime.shutdown_hooks.remove(hook)


@router.post("/proxy/start", summary="Start the recording proxy", openapi_extra=oa.doc(
    oa.body({"port": 8888, "mode": "record", "sessionName": "checkout",
             "filters": {"includePaths": ["/api/*"]}},
            {"type": "object", "properties": {
                "port": {"type": "integer", "default": 8888},
                "mode": {"type": "string", "enum": ["record", "passthrough", "playback"],
                         "default": "record"},
                "sessionName": {"type": "string", "default": "default"},
                "caPath": {"type": "string"}, "filters": _FILTERS_SCHEMA,
                "host": {"type": "string", "default": "127.0.0.1"},
                "fallthrough": {"type": "string", "default": "502"},
                "upstreamCa": {"type": "string"}, "insecureUpstream": {"type": "boolean"},
                "bodyCap": {"type": "integer"}}},
            required=False, description="every key is optional"),
    oa.answers({200: {**_STATUS, "recordingCount": 0, "uptime": 0},
                400: oa.bad_request("port_error", "cannot listen on 127.0.0.1:8888: "
                                                  "Address already in use"),
                409: oa.error_example("already_running", "the proxy is already running on "
                                      "port 8888; stop it first (POST /proxy/stop)")})))
async def start_proxy(request: HttpRequest) -> dict[str, Any]:
    """The proxy status once listening; creates the session ``sessionName``."""
    try:
        return await manager.start(_body(request), data_dir=_data_dir(),
                                   redaction=_redaction(), on_started=_add_hook)
    except ProxyError as error:
        raise _admin_error(error) from None


@router.post("/proxy/stop", summary="Stop the recording proxy", openapi_extra=oa.answers(
    {200: {**_STATUS, "running": False}, 404: _NOT_RUNNING}))
async def stop_proxy(request: HttpRequest) -> dict[str, Any]:
    """The final status with ``running: false``; 404 ``not_running``."""
    try:
        return await manager.stop(on_stopped=_remove_hook)
    except ProxyError as error:
        raise _admin_error(error) from None


@router.put("/proxy/mode", summary="Change the proxy mode", openapi_extra=oa.doc(
    oa.body({"mode": "passthrough"}, {"type": "object", "required": ["mode"], "properties": {
        "mode": {"type": "string", "enum": ["record", "passthrough", "playback"]}}}),
    oa.answers({200: {**_STATUS, "mode": "passthrough"},
                400: oa.bad_request("invalid_mode", "mode must be one of record, passthrough, "
                                                    "playback, not 'replay'"),
                404: _NOT_RUNNING})))
async def put_mode(request: HttpRequest) -> dict[str, Any]:
    """``{mode: record|passthrough|playback}`` -> status."""
    body = json_body(request)
    if not isinstance(body, dict) or "mode" not in body:
        raise AdminError(400, "missing_field", "mode is required (record, passthrough or "
                                               "playback)")
    try:
        return manager.set_mode(body["mode"])
    except ProxyError as error:
        raise _admin_error(error) from None


@router.get("/proxy/status", summary="Proxy status", openapi_extra=oa.answers(
    {200: _STATUS}, descriptions={200: "The running proxy; {\"running\": false} while it "
                                       "is stopped"}))
async def proxy_status(request: HttpRequest) -> dict[str, Any]:
    """``{running: false}`` or the running proxy's port, mode, session and counts."""
    return manager.status()


@router.get("/proxy/filters", summary="Recording filters",
            openapi_extra=oa.answers({200: _FILTERS}))
async def get_filters(request: HttpRequest) -> dict[str, Any]:
    """``{includePaths, excludePaths, includeHosts, excludeHosts}``."""
    return manager.filters.document()


@router.put("/proxy/filters", summary="Replace the recording filters", openapi_extra=oa.doc(
    oa.body({"includePaths": ["/api/*"], "excludeHosts": ["telemetry.example.com"]},
            _FILTERS_SCHEMA),
    oa.answers({200: _FILTERS, 400: oa.BAD_JSON})))
async def put_filters(request: HttpRequest) -> dict[str, Any]:
    """The filters as stored; 400 ``validation_error`` naming the key."""
    try:
        return manager.set_filters(json_body(request))
    except ProxyError as error:
        raise _admin_error(error) from None


@router.get("/proxy/ca", summary="Proxy CA status", openapi_extra=oa.answers({200: _CA}))
async def ca_status(request: HttpRequest) -> dict[str, Any]:
    """``{exists, path?, fingerprint?, expiresAt?, organization?}``."""
    return manager.ca_status(_data_dir())


@router.post("/proxy/ca", summary="Generate the proxy CA", response={201: None},
             openapi_extra=oa.doc(
                 oa.body({"caPath": "ca"}, {"type": "object", "properties": {
                     "caPath": {"type": "string", "default": "ca",
                                "description": "relative to the data dir, no '..'"}}},
                         required=False),
                 oa.answers({201: _CA, 409: oa.error_example(
                     "ca_exists", "a CA already exists in /home/me/.local/share/mockd/ca; "
                                  "download it with GET /proxy/ca/download or choose another "
                                  "caPath")})))
async def generate_ca(request: HttpRequest) -> HttpResponse:
    """201 with the CA status; 409 ``ca_exists``; 400 for a caPath leaving the data dir."""
    body = _body(request)
    if not isinstance(body, dict):
        raise AdminError(400, "validation_error", "the body must be {\"caPath\": \"...\"}")
    try:
        document = manager.generate(_data_dir(), body.get("caPath"))
    except ProxyError as error:
        raise _admin_error(error) from None
    import orjson

    return HttpResponse(orjson.dumps(document), status=201, content_type="application/json")


@router.get("/proxy/ca/download", summary="Download the proxy CA certificate",
            openapi_extra=oa.answers({
                200: oa.Raw("-----BEGIN CERTIFICATE-----\nMIIBmjCCAT+gAwIBAgIUWFlO9vwchb1b"
                            "...\n-----END CERTIFICATE-----\n", "application/x-pem-file"),
                404: oa.error_example("no_ca", "no proxy CA exists yet; create one with POST "
                                               "/proxy/ca or 'mockd proxy ca generate'")}))
async def download_ca(request: HttpRequest) -> HttpResponse:
    """The CA certificate (PEM) as an attachment; 404 ``no_ca``."""
    try:
        pem = manager.ca_pem(_data_dir())
    except ProxyError as error:
        raise _admin_error(error) from None
    response = HttpResponse(pem, content_type="application/x-pem-file")
    response["Content-Disposition"] = 'attachment; filename="mockd-ca.crt"'
    return response


# ---------------------------------------------------------------------------- gRPC recordings
GRPC_KIND = "grpc"
MAX_GRPC_LIMIT = 1000
MAX_GRPC_SELECTED = 5000


def _query_int(request: HttpRequest, name: str, default: int, maximum: int) -> int:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise AdminError(400, "validation_error", f"{name} must be an integer") from None
    if not 0 <= value <= maximum:
        raise AdminError(400, "validation_error", f"{name} must be 0-{maximum}")
    return value


def _grpc_store() -> Any:
    from recordings.store import current

    return current()


@router.get("/recordings/grpc", summary="gRPC recordings", openapi_extra=oa.answers({
    200: {"recordings": [], "total": 0, "limit": 100, "offset": 0},
    400: oa.bad_request("validation_error", "limit must be 0-1000")}))
async def list_grpc_recordings(request: HttpRequest) -> dict[str, Any]:
    """``{recordings, total, limit, offset}``: gRPC calls recorded through the proxy, oldest
    first; filters ``sessionId`` (or ``session``), ``service``, ``method``; 400
    ``validation_error`` for a bad ``limit`` (1-1000) or ``offset``."""
    limit = _query_int(request, "limit", 100, MAX_GRPC_LIMIT) or 1
    offset = _query_int(request, "offset", 0, 10 ** 9)
    filters: dict[str, Any] = {}
    if request.GET.get("method"):
        filters["method"] = request.GET["method"]
    if request.GET.get("service"):
        filters["name"] = request.GET["service"]
    session_id = request.GET.get("sessionId") or request.GET.get("session") or None
    if manager.server is not None:
        await manager.server.flush()  # the calls relayed so far are listed
    found, total = _grpc_store().query(GRPC_KIND, session_id=session_id, filters=filters,
                                       limit=limit, offset=offset)
    return {"recordings": found, "total": total, "limit": limit, "offset": offset}


@router.post("/recordings/grpc/convert", summary="gRPC recordings to grpc mocks",
             openapi_extra=oa.doc(
                 oa.body({"sessionId": "sess_2077b4d40139ce59", "port": 50051},
                         {"type": "object", "additionalProperties": False, "properties": {
                             "sessionId": {"type": "string"},
                             "recordingIds": {"type": "array", "items": {"type": "string"}},
                             "port": {"type": "integer", "minimum": 1, "maximum": 65535}}},
                         required=False),
                 oa.answers({200: {"config": {"mocks": [{
                                 "id": "grpc-127-0-0-1-50051", "name": "gRPC 127.0.0.1:50051",
                                 "type": "grpc", "grpc": {
                                     "port": 50051,
                                     "protoSources": {"shop.proto": 'syntax = "proto3";\n'
                                                                    "package shop;\n..."},
                                     "reflection": True,
                                     "services": {"shop.Orders": {"methods": {"GetOrder": {
                                         "response": {"id": "o-1"}}}}},
                                     "protoFile": "shop.proto"}}]},
                                   "count": 1},
                             400: oa.bad_request("no_recordings",
                                                 "no gRPC recordings were selected"),
                             404: oa.not_found("no session 'sess_2077b4d40139ce59'")})))
async def convert_grpc_recordings(request: HttpRequest) -> dict[str, Any]:
    """``{sessionId?, recordingIds?, port?}`` -> ``{config: {mocks}, count (mocks),
    warnings?}``:
    the chosen gRPC recordings (default: every one, oldest first) as ``grpc`` mocks whose
    protos come from each upstream's reflection (see
    :mod:`mocks.portability.recordings_grpc`). 400 ``validation_error`` naming the key,
    400 ``no_recordings`` when nothing was selected or converted, 404 ``not_found`` for an
    unknown session."""
    import asyncio

    from mocks.portability.recordings_grpc import convert_grpc_recordings as convert

    body = _body(request)
    if not isinstance(body, dict):
        raise AdminError(400, "validation_error", "the body must be a JSON object")
    unknown = sorted(set(body) - {"sessionId", "recordingIds", "port"})
    if unknown:
        raise AdminError(400, "validation_error", f"{unknown[0]} is not an option; use "
                                                  f"sessionId, recordingIds, port")
    session_id = body.get("sessionId")
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        raise AdminError(400, "validation_error", "sessionId must be a session id")
    ids = body.get("recordingIds")
    if ids is not None and (not isinstance(ids, list) or len(ids) > MAX_GRPC_SELECTED or
                            not all(isinstance(item, str) for item in ids)):
        raise AdminError(400, "validation_error", f"recordingIds must be a list of at most "
                                                  f"{MAX_GRPC_SELECTED} recording ids")
    port = body.get("port")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)
                             or not 1 <= port <= 65535):
        raise AdminError(400, "validation_error", "port must be an integer 1-65535")
    store = _grpc_store()
    if session_id is not None and store.get_session(session_id) is None:
        raise AdminError(404, "not_found", f"no session {session_id!r}")
    if manager.server is not None:
        await manager.server.flush()
    if ids is None:
        records = store.query(GRPC_KIND, session_id=session_id, limit=MAX_GRPC_SELECTED)[0]
    else:
        found = [store.get(item, kind=GRPC_KIND) for item in dict.fromkeys(ids)]
        records = [record for record in found if record is not None and
                   (session_id is None or record.get("sessionId") == session_id)]
    if not records:
        raise AdminError(400, "no_recordings", "no gRPC recordings were selected")
    config, warnings = await asyncio.to_thread(convert, records, port=port)
    count = len(config["mocks"])
    if not count:
        raise AdminError(400, "no_recordings", "no gRPC recording could be converted: "
                                               + "; ".join(warnings[:5]))
    answer: dict[str, Any] = {"config": config, "count": count}
    if warnings:
        answer["warnings"] = warnings
    return answer
