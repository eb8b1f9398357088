"""Admin API routes of the mocks app (django-ninja routers; STYLE §8: parse, call, return).

Routers (composed in :mod:`mockd_project.api`):

* ``health_router``: ``GET /health``, ``GET /ready``, ``GET /status``, ``GET /ports``;
* ``mocks_router``: ``/mocks`` CRUD, ``/mocks/bulk``, ``/mocks/{id}/toggle``;
* ``verification_router``: ``/mocks/{id}/verify``, ``/mocks/{id}/invocations``, ``/verify``;
* ``config_router``: ``GET``/``POST /config``, ``GET /config/schema``;
* ``requests_router``: ``/requests``, ``/requests/stream``, ``/requests/{id}``;
* ``workspaces_router``: ``/workspaces`` CRUD.

Mock CRUD, config and workspace operations are synchronous (they use the ORM through
:mod:`mocks.control`); request-log and verification operations are async and call
``EngineControl`` directly on the engine loop. Errors are raised as
:class:`~mocks.control.errors.AdminError` and rendered by the one exception handler.

Source: SPEC "Admin API"; behavior notes §1 (routes, shapes, filters), §12 (workspaces).
"""
from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson
import yaml
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from ninja import Query, Router

from mockd_project import __version__
from mockd_project.runtime import runtime
from mocks.control import configuration, errors, mock_changes, workspaces
from mocks.control import openapi_docs as oa
from mocks.config import ConfigFile, Mock as MockConfig
from mocks.control.config_schema import config_json_schema
from mocks.core.yamldoc import DocumentTooLarge, safe_load_bounded
from mocks.engine.control import (CONNECTED_MESSAGE, MISSING_CRITERIA_MESSAGE,
                                  STREAM_KEEPALIVE_SECONDS, criteria_from, sse_frame)
from mocks.engine.core import utc_timestamp
from mocks.core.queryparams import MAX_LIMIT, MAX_QUERY_INTEGER, MAX_STATUS
from mocks.engine.requestlog import QueryParameterError, parse_request_filter
from mocks.protocols import MOCK_TYPES
from mocks.protocols.grpc.port_sharing import merge_into_port_owner
from mocks.protocols.mqtt.port_sharing import merge_into_port_owner as merge_mqtt_into_port_owner
from mocks.control.errors import AdminError, validation_error
from mocks.control.mock_changes import MockFilter

health_router = Router(tags=["health"])
mocks_router = Router(tags=["mocks"])
verification_router = Router(tags=["verification"])
config_router = Router(tags=["configuration"])
requests_router = Router(tags=["request log"])
workspaces_router = Router(tags=["workspaces"])

#: ``error`` code and message of an unparsable body (behavior notes §3).
INVALID_JSON_MESSAGE = "Invalid JSON in request body"


# ---------------------------------------------------------------------------- helpers


def json_body(request: HttpRequest) -> Any:
    """The parsed JSON body; raises 400 ``invalid_json`` when it is empty or not JSON."""
    try:
        return orjson.loads(request.body)
    except orjson.JSONDecodeError:
        raise AdminError(400, "invalid_json", INVALID_JSON_MESSAGE) from None


def engine_control() -> Any:
    """``runtime.control``; raises 503 ``no_engine`` when no engine is connected (notes §1)."""
    control = runtime.control
    if control is None:
        raise AdminError(503, "no_engine", "No engine connected")
    return control


def _schema_of(model: Any) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _json(payload: Any, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(payload), status=status, content_type="application/json")


def _no_content() -> HttpResponse:
    return HttpResponse(status=204)


def _uptime() -> int:
    return int(time.time() - runtime.started_at)


# ---------------------------------------------------------------------------- health


@health_router.get("/health", summary="Liveness (no auth)", openapi_extra=oa.answers({
    200: {"status": "ok", "uptime": 42, "timestamp": oa.TIMESTAMP}}))
def health(request: HttpRequest) -> dict[str, Any]:
    """200 ``{"status": "ok", "uptime": <s>, "timestamp"}`` (SPEC "Health and metrics")."""
    return {"status": "ok", "uptime": _uptime(), "timestamp": utc_timestamp()}


@health_router.get("/ready", summary="Readiness (no auth)", openapi_extra=oa.answers({
    200: {"status": "ready", "uptime": 42, "timestamp": oa.TIMESTAMP},
    503: {"status": "initializing", "timestamp": oa.TIMESTAMP}}))
def ready(request: HttpRequest) -> Any:
    """200 ``{status: ready, uptime, timestamp}`` once config is loaded, else 503
    ``{status: initializing, timestamp}`` (behavior notes §1)."""
    if not runtime.ready:
        return _json({"status": "initializing", "timestamp": utc_timestamp()}, 503)
    return {"status": "ready", "uptime": _uptime(), "timestamp": utc_timestamp()}


@health_router.get("/status", summary="Server status", openapi_extra=oa.answers({
    200: {"status": "running", "httpPort": 4280, "adminPort": 4290, "uptime": 42,
          "mockCount": 1, "activeMocks": 1, "requestCount": 3, "tlsEnabled": False,
          "version": __version__,
          "protocols": {"http": {"enabled": True, "port": 4280, "status": "running",
                                 "mocks": 1}},
          "startedAt": oa.TIMESTAMP}}, engine=True))
async def status(request: HttpRequest) -> dict[str, Any]:
    """``{status: running, httpPort, httpsPort?, adminPort, uptime, mockCount, activeMocks,
    requestCount, tlsEnabled, version, protocols, startedAt}`` (behavior notes §1 "Health,
    status, ports"); ``httpsPort`` only when the mock server serves HTTPS."""
    engine = await engine_control().status()
    ports = runtime.ports
    answer: dict[str, Any] = {"status": "running", "httpPort": ports.get("data")}
    if "https" in ports:
        answer["httpsPort"] = ports["https"]
    return {**answer, "adminPort": ports.get("admin"),
            "uptime": _uptime(), "mockCount": engine["mockCount"],
            "activeMocks": engine["activeMocks"], "requestCount": engine["requestCount"],
            "tlsEnabled": "https" in ports, "version": __version__,
            "protocols": {"http": {"enabled": True, "port": ports.get("data"),
                                   "status": "running",
                                   "mocks": engine["mocksByType"].get("http", 0)}},
            "startedAt": utc_timestamp(runtime.started_at)}


@health_router.get("/ports", summary="Listening ports", openapi_extra=oa.answers({
    200: {"ports": [{"port": 4290, "protocol": "HTTP", "component": "Admin API",
                     "status": "running"},
                    {"port": 4280, "protocol": "HTTP", "component": "Mock Engine",
                     "status": "running"}]}}))
def ports(request: HttpRequest, verbose: bool = False) -> dict[str, Any]:
    """``{ports: [{port, protocol, component, status, tls?}]}``: the admin API first, then the
    mock engine's HTTP and HTTPS ports (behavior notes §1); listeners serving TLS carry
    ``tls: true`` (an HTTPS admin port says protocol ``HTTPS``); ``?verbose=true`` adds
    ``engineId``/``engineName`` to the engine rows."""
    rows = []
    tls = runtime.tls_listeners
    if "admin" in runtime.ports:
        admin_row: dict[str, Any] = {"port": runtime.ports["admin"], "protocol": "HTTP",
                                     "component": "Admin API", "status": "running"}
        if "admin" in tls:
            admin_row.update(protocol="HTTPS", tls=True)
        rows.append(admin_row)
    for role, protocol in (("data", "HTTP"), ("https", "HTTPS")):
        if role not in runtime.ports:
            continue
        engine_row: dict[str, Any] = {"port": runtime.ports[role], "protocol": protocol,
                                      "component": "Mock Engine", "status": "running"}
        if role in tls:
            engine_row["tls"] = True
        if verbose:
            engine_row.update(engineId="local", engineName="Local Engine")
        rows.append(engine_row)
    control = runtime.control
    if control is not None and hasattr(control, "engine"):
        # gRPC servers (behavior notes §1: after the engine rows); a read-only look.
        from mocks.protocols.grpc.control import grpc_ports  # lists no server before one runs
        from mocks.protocols.mqtt.control import mqtt_ports

        rows += grpc_ports(control)
        rows += mqtt_ports(control)
    return {"ports": rows}


# ---------------------------------------------------------------------------- mocks


@mocks_router.get("/mocks", summary="List mocks", openapi_extra=oa.answers(
    {200: {"mocks": [oa.MOCK_EXAMPLE], "total": 1, "count": 1},
     400: oa.bad_request("validation_error",
                         "limit: Input should be less than or equal to 10000")},
    {200: {"type": "object", "properties": {"mocks": {"type": "array", "items": oa.MOCK_SCHEMA},
                                            "total": {"type": "integer"},
                                            "count": {"type": "integer"}}}}))
def list_mocks(request: HttpRequest, type: str | None = None, enabled: bool | None = None,
               search: str | None = None,
               workspace_id: str | None = Query(None, alias="workspaceId"),
               parent_id: str | None = Query(None, alias="parentId"),
               folder_id: str | None = Query(None, alias="folderId"),
               limit: int | None = Query(None, ge=0, le=MAX_LIMIT),
               offset: int = Query(0, ge=0, le=MAX_QUERY_INTEGER)) -> HttpResponse:
    """``{mocks, total, count}`` with filters ``type``, ``enabled``, ``search``,
    ``workspaceId``, ``parentId``/``folderId``, ``limit`` (0 to ``MAX_LIMIT``; absent: all),
    ``offset`` (0 to ``MAX_QUERY_INTEGER``); out of bounds or not a number -> 400
    ``validation_error`` naming the parameter (SPEC "Limits").

    Rendered here with orjson into the bytes and content type the API's renderer gives, so
    ninja does not walk the documents again."""
    mocks, total = mock_changes.list_mocks(MockFilter(
        type=type, enabled=enabled, search=search, workspace_id=workspace_id,
        parent_id=parent_id if parent_id is not None else folder_id, limit=limit,
        offset=offset))
    return HttpResponse(orjson.dumps({"mocks": mocks, "total": total, "count": len(mocks)},
                                     option=orjson.OPT_NON_STR_KEYS),
                        content_type="application/json; charset=utf-8")


@mocks_router.post("/mocks", summary="Create a mock", response={200: None, 201: None},
                   openapi_extra=oa.doc(oa.body(oa.HTTP_MOCK_INPUT, _schema_of(MockConfig)),
                                        oa.answers({
    201: {**oa.MOCK_EXAMPLE, "action": "created", "message": "Created http mock",
          "mock": oa.MOCK_EXAMPLE},
    200: {"id": "grpc_0123456789abcdef", "action": "merged",
          "message": "Merged 1 service(s) into gRPC mock 'grpc_0123456789abcdef' on port 50051",
          "targetMockId": "grpc_0123456789abcdef", "mock": {"id": "grpc_0123456789abcdef",
                                                            "type": "grpc"},
          "addedServices": ["shop.Orders"], "totalServices": 2},
    400: oa.bad_request("missing_type", "type is required: one of " + ", ".join(MOCK_TYPES)
                        + " (or give a protocol object such as 'http')"),
    409: oa.error_example("duplicate_id",
                          "Mock with this ID already exists: 'http_a1b2c3d4e5f60718'")},
    descriptions={201: "Created", 200: "Merged into the gRPC/MQTT mock of the same port"})))
def create_mock(request: HttpRequest,
                workspace_id: str | None = Query(None, alias="workspaceId")) -> Any:
    """201 ``{id, action: created, message: "Created <type> mock", mock, ...mock fields}``
    (contract note: the mock's fields are also copied to the top level)."""
    body = json_body(request)
    # A gRPC mock for a port a gRPC mock of its workspace uses joins that mock (SPEC "Mocks").
    merged = merge_into_port_owner(body, workspace_id)
    if merged is None:  # the same for an MQTT mock and the broker of its port
        merged = merge_mqtt_into_port_owner(body, workspace_id)
    if merged is not None:
        return _json(merged, 200)
    document = mock_changes.create_mock(body, workspace_id)
    payload = {**document, "id": document["id"], "action": "created",
               "message": f"Created {document['type']} mock", "mock": document}
    return _json(payload, 201)


@mocks_router.delete("/mocks", summary="Delete all mocks (or one type)",
                     response={204: None}, openapi_extra=oa.answers({204: None}))
def delete_mocks(request: HttpRequest, type: str | None = None,
                 workspace_id: str | None = Query(None, alias="workspaceId")) -> HttpResponse:
    """204 after deleting every mock (``?type=`` and ``?workspaceId=`` narrow it)."""
    mock_changes.delete_mocks(type, workspace_id)
    return _no_content()


@mocks_router.post("/mocks/bulk", summary="Create many mocks", response={201: None},
                   openapi_extra=oa.doc(
                       oa.body([oa.HTTP_MOCK_INPUT],
                               {"type": "array", "items": _schema_of(MockConfig)}),
                       oa.answers({201: {"created": 1, "mocks": [oa.MOCK_EXAMPLE]},
                                   400: oa.bad_request("duplicate_id",
                                                       "[1].id: duplicate mock id 'users'")})))
def bulk_create(request: HttpRequest, replace: bool = False,
                workspace_id: str | None = Query(None, alias="workspaceId")) -> Any:
    """201 ``{created, mocks}``; ``?replace=true`` swaps the workspace's mocks; a duplicate id
    -> 400 ``duplicate_id``."""
    result = mock_changes.bulk_create(json_body(request), replace=replace,
                                      workspace_id=workspace_id)
    return _json(result, 201)


@mocks_router.get("/mocks/{mock_id}", summary="Get a mock", openapi_extra=oa.answers(
    {200: oa.MOCK_EXAMPLE, 404: oa.not_found("mock not found")}, {200: oa.MOCK_SCHEMA}))
def get_mock(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """The mock; 404 ``not_found`` "mock not found"."""
    return mock_changes.get_mock(mock_id)


_UPDATED = oa.answers({200: {"id": oa.MOCK_EXAMPLE["id"], "action": "updated",
                              "message": "Updated http mock", "mock": oa.MOCK_EXAMPLE},
                        400: oa.BAD_JSON, 404: oa.not_found("mock not found")})


def _updated(document: dict[str, Any]) -> dict[str, Any]:
    return {"id": document["id"], "action": "updated",
            "message": f"Updated {document['type']} mock", "mock": document}


@mocks_router.put("/mocks/{mock_id}", summary="Replace a mock",
                  openapi_extra=oa.doc(oa.body(oa.HTTP_MOCK_INPUT, _schema_of(MockConfig)),
                                       _UPDATED))
def replace_mock(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """Full replace -> ``{id, action: updated, message, mock}``; 404 when missing."""
    return _updated(mock_changes.replace_mock(mock_id, json_body(request)))


@mocks_router.patch("/mocks/{mock_id}", summary="Patch a mock",
                    openapi_extra=oa.doc(oa.body(
                        {"name": "List users (v2)", "enabled": False,
                         "http": {"response": {"statusCode": 503}}}), _UPDATED))
def patch_mock(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """Partial update (behavior notes §1 "PATCH") -> answer as PUT."""
    return _updated(mock_changes.patch_mock(mock_id, json_body(request)))


@mocks_router.delete("/mocks/{mock_id}", summary="Delete a mock", response={204: None},
                     openapi_extra=oa.answers({204: None, 404: oa.not_found("mock not found")}))
def delete_mock(request: HttpRequest, mock_id: str) -> HttpResponse:
    """204; 404 when missing."""
    mock_changes.delete_mock(mock_id)
    return _no_content()


@mocks_router.post("/mocks/{mock_id}/toggle", summary="Enable or disable a mock",
                   openapi_extra=oa.answers({
                       200: {"id": oa.MOCK_EXAMPLE["id"], "action": "toggled",
                             "message": "Mock disabled",
                             "mock": {**oa.MOCK_EXAMPLE, "enabled": False}},
                       404: oa.not_found("mock not found")}))
def toggle_mock(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """Flip ``enabled`` -> ``{id, action: toggled, message: "Mock enabled"|"Mock disabled",
    mock}``."""
    document = mock_changes.toggle_mock(mock_id)
    return {"id": document["id"], "action": "toggled",
            "message": "Mock enabled" if document["enabled"] else "Mock disabled",
            "mock": document}


# ---------------------------------------------------------------------------- verification


async def _require_mock(control: Any, mock_id: str) -> None:
    if not await control.has_mock(mock_id):
        raise errors.not_found("Mock not found")


@verification_router.get("/mocks/{mock_id}/verify", summary="Call count of a mock",
                         openapi_extra=oa.answers({
                             200: {"mockId": oa.MOCK_EXAMPLE["id"], "callCount": 2,
                                   "firstCalledAt": oa.TIMESTAMP, "lastCalledAt": oa.TIMESTAMP},
                             404: oa.not_found("Mock not found")}, engine=True))
async def verification_status(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{mockId, callCount, firstCalledAt?, lastCalledAt?}``; 404 "Mock not found"."""
    control = engine_control()
    await _require_mock(control, mock_id)
    return await control.verification(mock_id)


@verification_router.post("/mocks/{mock_id}/verify", summary="Verify a mock's call count",
                          openapi_extra=oa.doc(oa.body({"atLeast": 1, "atMost": 3}, {
                              "type": "object", "properties": {
                                  "atLeast": {"type": "integer", "minimum": 0},
                                  "atMost": {"type": "integer", "minimum": 0},
                                  "exactly": {"type": "integer", "minimum": 0},
                                  "never": {"type": "boolean"}}}), oa.answers({
                              200: {"success": True, "passed": True, "actual": 2,
                                    "expected": "at least 1 time(s) and at most 3 time(s)",
                                    "message": "Mock was called 2 time(s), matching "
                                               "expectations"},
                              400: oa.bad_request("missing_criteria", MISSING_CRITERIA_MESSAGE),
                              404: oa.not_found("Mock not found")}, engine=True)))
async def verify_mock(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{atLeast?, atMost?, exactly?, never?}`` -> ``{success, passed, actual, expected?,
    message}``; no criterion -> 400 ``missing_criteria``."""
    control = engine_control()
    await _require_mock(control, mock_id)
    try:
        criteria = criteria_from(json_body(request))
    except QueryParameterError as error:
        raise validation_error(str(error)) from None
    if criteria.empty:
        raise AdminError(400, "missing_criteria", MISSING_CRITERIA_MESSAGE)
    return await control.verify(mock_id, criteria)


@verification_router.get("/mocks/{mock_id}/invocations", summary="Calls of a mock",
                         openapi_extra=oa.answers({
                             200: {"invocations": [{"id": "req-1", "timestamp": oa.TIMESTAMP,
                                                    "method": "GET", "path": "/api/users",
                                                    "headers": {"Accept": "*/*"}}],
                                   "count": 1, "total": 1},
                             404: oa.not_found("Mock not found")}, engine=True))
async def list_invocations(request: HttpRequest, mock_id: str,
                           limit: int = Query(100, ge=0, le=MAX_LIMIT),
                           offset: int = Query(0, ge=0, le=MAX_QUERY_INTEGER)
                           ) -> dict[str, Any]:
    """``{invocations: [{id, timestamp, method, path, headers?, body?}], count, total}``;
    ``limit``/``offset`` bounded as on ``GET /mocks`` (400 ``validation_error``)."""
    control = engine_control()
    await _require_mock(control, mock_id)
    return await control.invocations(mock_id, limit, offset)


@verification_router.delete("/mocks/{mock_id}/invocations", summary="Reset one mock",
                            openapi_extra=oa.answers({
                                200: {"message": "Invocations cleared",
                                      "mockId": oa.MOCK_EXAMPLE["id"], "cleared": 2},
                                404: oa.not_found("Mock not found")}, engine=True))
async def clear_invocations(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{"message": "Invocations cleared", "mockId", "cleared": n}``."""
    control = engine_control()
    await _require_mock(control, mock_id)
    cleared = await control.clear_invocations(mock_id)
    return {"message": "Invocations cleared", "mockId": mock_id, "cleared": cleared}


@verification_router.delete("/verify", summary="Reset all verification data",
                            openapi_extra=oa.answers({
                                200: {"message": "All verification data cleared",
                                      "cleared": 12}}, engine=True))
async def clear_verification(request: HttpRequest) -> dict[str, Any]:
    """``{"message": "All verification data cleared", "cleared": n}``."""
    cleared = await engine_control().clear_requests()
    return {"message": "All verification data cleared", "cleared": cleared}


# ---------------------------------------------------------------------------- configuration


@config_router.get("/config", summary="Export the configuration", openapi_extra=oa.answers(
    {200: {"version": "1.0", "kind": "MockCollection", "name": "mockd-export",
           "metadata": {"name": "mockd-export"}, "mocks": [oa.MOCK_EXAMPLE]},
     400: oa.bad_request("validation_error", "format: use json or yaml, got 'xml'")}))
def export_config(request: HttpRequest, format: str = "json", name: str | None = None,
                  workspace_id: str | None = Query(None, alias="workspaceId")) -> Any:
    """``{version: "1.0", kind: MockCollection, name, metadata: {name}, mocks, ...}``;
    ``?format=yaml`` answers ``application/x-yaml``."""
    document = configuration.export_config(workspace_id, name)
    if format.lower() in ("yaml", "yml"):
        return HttpResponse(yaml.safe_dump(document, sort_keys=False, allow_unicode=True),
                            content_type="application/x-yaml")
    if format.lower() != "json":
        raise validation_error(f"format: use json or yaml, got {format!r}")
    return document


@config_router.get("/config/schema", summary="JSON Schema of the config file",
                   openapi_extra=oa.answers({200: {
                       "$schema": "https://json-schema.org/draft/2020-12/schema",
                       "title": "mockd configuration file",
                       "description": "A mockd configuration file (YAML or JSON): mocks, "
                                      "tables, extend bindings, imports, custom operations "
                                      "and server settings.",
                       "additionalProperties": False, "type": "object",
                       "properties": {"version": {"type": "string"}}, "$defs": {}}},
                       {200: {"type": "object", "description": "a JSON Schema"}}))
def config_schema(request: HttpRequest) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a config file, built from the config models at run
    time: the document ``mockd schema`` prints
    (:func:`~mocks.control.config_schema.config_json_schema`).
    Needs the admin key like every admin route; no engine needed."""
    return config_json_schema()


_CONFIG_KEYS = ("version", "mocks", "tables", "extend", "statefulResources",
                "customOperations", "imports", "serverConfig")


@config_router.post("/config", summary="Import a configuration",
                    openapi_extra=oa.doc(oa.body(
                        {"config": {"version": "1.0", "mocks": [oa.HTTP_MOCK_INPUT]},
                         "replace": False},
                        {"type": "object", "properties": {
                            "config": _schema_of(ConfigFile), "replace": {"type": "boolean"}},
                         "description": "or the bare collection"},
                        also={"application/x-yaml": oa.Raw(
                            "version: '1.0'\nmocks:\n- type: http\n  http:\n    matcher: "
                            "{method: GET, path: /api/users}\n    response: "
                            "{statusCode: 200}\n", "application/x-yaml")}),
                        oa.answers({
                            200: {"message": "Configuration imported successfully",
                                  "imported": 1, "total": 1},
                            400: oa.bad_request("missing_config",
                                                "config is required: send {\"config\": "
                                                "{\"version\": \"1.0\", \"mocks\": [...]}} "
                                                "or the collection itself")}, engine=True)))
def import_config(request: HttpRequest, replace: bool | None = None,
                  dry_run: bool = Query(False, alias="dryRun"),
                  workspace_id: str | None = Query(None, alias="workspaceId")) -> dict[str, Any]:
    """``{config, replace?}`` or a bare collection (YAML when Content-Type says yaml) ->
    ``{message, imported, total, statefulResources?}``; ``?dryRun=true`` -> ``{dryRun: true,
    mocks, statefulResources?}``; 400 ``missing_config`` / ``invalid_yaml``."""
    engine_control()
    if "yaml" in (request.content_type or "").lower():
        try:
            body = safe_load_bounded(request.body or b"")
        except DocumentTooLarge as error:
            raise AdminError(400, "invalid_yaml", f"YAML request body refused: {error}") \
                from None
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            raise AdminError(400, "invalid_yaml", f"Invalid YAML in request body{where}") \
                from None
    else:
        body = json_body(request)
    body_replace = None
    if isinstance(body, dict) and "config" in body:
        body_replace = body.get("replace")
        document = body["config"]
    elif isinstance(body, dict) and any(key in body for key in _CONFIG_KEYS):
        document = body
    else:
        document = None
    if document is None:
        raise AdminError(400, "missing_config",
                         "config is required: send {\"config\": {\"version\": \"1.0\", "
                         "\"mocks\": [...]}} or the collection itself")
    if body_replace is not None and not isinstance(body_replace, bool):
        raise validation_error("replace: must be true or false")
    config = configuration.parse_config_document(document)
    if dry_run:
        result: dict[str, Any] = {"dryRun": True, "mocks": len(config.mocks)}
        if config.stateful_resources:
            result["statefulResources"] = len(config.stateful_resources)
        return result
    return configuration.import_config(config, replace=bool(replace or body_replace),
                                       workspace_id=workspace_id)


# ---------------------------------------------------------------------------- request log


@requests_router.get("/requests", summary="Request log", openapi_extra=oa.answers({
    200: {"requests": [oa.REQUEST_EXAMPLE], "count": 1, "total": 1},
    400: oa.bad_request("validation_error", "limit: Input should be less than or equal to "
                                            "10000")},
    engine=True))
async def list_requests(
        request: HttpRequest, limit: int = Query(100, ge=0, le=MAX_LIMIT),
        offset: int = Query(0, ge=0, le=MAX_QUERY_INTEGER),
        method: str | None = None, path: str | None = None, matched: str | None = None,
        status: int | None = Query(None, ge=0, le=MAX_STATUS), protocol: str | None = None,
        has_error: bool | None = Query(None, alias="hasError"),
        unmatched_only: bool | None = Query(None, alias="unmatchedOnly"),
        workspace_id: str | None = Query(None, alias="workspaceId")) -> dict[str, Any]:
    """``{requests, count, total}``, newest first, with every filter of behavior notes §1."""
    control = engine_control()
    try:
        filters = parse_request_filter(request.GET)
    except QueryParameterError as error:
        raise validation_error(str(error)) from None
    return await control.requests(filters)


@requests_router.delete("/requests", summary="Clear the request log",
                        openapi_extra=oa.answers({
                            200: {"message": "Request logs cleared", "cleared": 12}},
                            engine=True))
async def clear_requests(request: HttpRequest) -> dict[str, Any]:
    """``{"message": "Request logs cleared", "cleared": n}``."""
    cleared = await engine_control().clear_requests()
    return {"message": "Request logs cleared", "cleared": cleared}


@requests_router.get("/requests/stream", summary="Live request stream (SSE)",
                     openapi_extra=oa.answers({200: oa.Raw(
                         'event: connected\ndata: {"message": "Connected to request stream"}'
                         '\n\nevent: request\ndata: {"id": "req-1", "method": "GET", '
                         '"path": "/api/users", "statusCode": 200}\n\n',
                         "text/event-stream")}, engine=True))
async def request_stream(request: HttpRequest) -> StreamingHttpResponse:
    """SSE: ``event: connected`` then one ``event: request`` per new entry, pushed by the
    engine's request log as it happens (a comment every 15 s keeps idle streams alive)."""
    control = engine_control()
    queue = control.subscribe()

    async def frames():
        try:
            yield sse_frame("connected", CONNECTED_MESSAGE)
            while True:
                try:
                    record = await asyncio.wait_for(queue.get(), STREAM_KEEPALIVE_SECONDS)
                except asyncio.TimeoutError:
                    yield b": keepalive\n\n"
                    continue
                if record is None:
                    return  # the server is stopping
                yield sse_frame("request", control.entry_of(record))
        finally:
            control.unsubscribe(queue)

    response = StreamingHttpResponse(frames(), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["Connection"] = "keep-alive"
    response["X-Accel-Buffering"] = "no"
    return response


@requests_router.get("/requests/{entry_id}", summary="One request-log entry",
                     openapi_extra=oa.answers({200: oa.REQUEST_EXAMPLE,
                                               404: oa.not_found()}, engine=True))
async def get_request(request: HttpRequest, entry_id: str) -> dict[str, Any]:
    """The entry; 404 ``not_found`` "Resource not found"."""
    entry = await engine_control().request(entry_id)
    if entry is None:
        raise errors.not_found("Resource not found")
    return entry


# ---------------------------------------------------------------------------- workspaces

_WORKSPACE_BODY = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string"}, "type": {"type": "string", "enum": ["local"]},
    "description": {"type": "string"}, "basePath": {"type": "string"}}}


@workspaces_router.get("/workspaces", summary="List workspaces", openapi_extra=oa.answers({
    200: {"workspaces": [{"id": "local", "name": "Default", "type": "local", "basePath": "",
                          "createdAt": oa.TIMESTAMP, "updatedAt": oa.TIMESTAMP},
                         oa.WORKSPACE_EXAMPLE], "count": 2}}))
def list_workspaces(request: HttpRequest) -> dict[str, Any]:
    """``{workspaces, count}``, the default workspace first."""
    listed = workspaces.list_workspaces()
    return {"workspaces": listed, "count": len(listed)}


@workspaces_router.post("/workspaces", summary="Create a workspace", response={201: None},
                        openapi_extra=oa.doc(
                            oa.body({"name": "Payments", "description": "Payment provider twins",
                                     "basePath": "/payments"}, _WORKSPACE_BODY),
                            oa.answers({201: oa.WORKSPACE_EXAMPLE,
                                        409: oa.error_example(
                                            "already_exists",
                                            "A workspace named 'Payments' already exists",
                                            existingId="ws_0123456789abcdef")})))
def create_workspace(request: HttpRequest) -> Any:
    """201 with the workspace; duplicate name -> 409 ``already_exists`` (``details.existingId``)."""
    return _json(workspaces.create_workspace(json_body(request)), 201)


@workspaces_router.get("/workspaces/{workspace_id}", summary="Get a workspace",
                       openapi_extra=oa.answers({200: oa.WORKSPACE_EXAMPLE,
                                                 404: oa.not_found("Workspace not found")}))
def get_workspace(request: HttpRequest, workspace_id: str) -> dict[str, Any]:
    """The workspace; 404 "Workspace not found"."""
    return workspaces.get_workspace(workspace_id)


@workspaces_router.put("/workspaces/{workspace_id}", summary="Update a workspace",
                       openapi_extra=oa.doc(
                           oa.body({"description": "Stripe and PayPal twins"},
                                   {**_WORKSPACE_BODY, "required": []}),
                           oa.answers({200: {**oa.WORKSPACE_EXAMPLE,
                                             "description": "Stripe and PayPal twins"},
                                       400: oa.bad_request("validation_error",
                                                           "cannot modify the default workspace"),
                                       404: oa.not_found("Workspace not found")})))
def update_workspace(request: HttpRequest, workspace_id: str) -> dict[str, Any]:
    """The updated workspace; the default workspace -> 400."""
    return workspaces.update_workspace(workspace_id, json_body(request))


@workspaces_router.delete("/workspaces/{workspace_id}", summary="Delete a workspace",
                          response={204: None}, openapi_extra=oa.answers({
                              204: None,
                              400: oa.bad_request("validation_error",
                                                  "cannot delete the default workspace"),
                              404: oa.not_found("Workspace not found")}))
def delete_workspace(request: HttpRequest, workspace_id: str) -> HttpResponse:
    """204; the default workspace -> 400; 404 when missing."""
    workspaces.delete_workspace(workspace_id)
    return _no_content()
