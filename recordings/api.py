"""Admin API routes of proxy sessions and HTTP recordings (``/sessions*``, ``/recordings*``).

django-ninja ``Router`` (STYLE §8: parse, call, return) over the one recording store
(:func:`recordings.store.current`, kind ``http``); conversion by
:func:`mocks.portability.recordings_http.convert_http_recordings_result`, the mocks created
through the config service (:func:`mocks.control.configuration.import_config`: one
transaction, then the engine).

=============================================  ============================================
``GET /sessions``                              ``[{id, name, startTime, endTime?,
                                               recordingCount}]`` (oldest first)
``POST /sessions`` ``{name, filters?}``        201, the session (``filters`` when given)
``GET /sessions/{id}``                         ``{..., filters?, recordings}``; 404
``DELETE /sessions/{id}``                      204 (its recordings too); 404
``DELETE /sessions``                           ``{deleted: n}``
``GET /recordings``                            query ``session`` (also ``sessionId``),
                                               ``method``, ``path`` (``*`` matches any
                                               text), ``limit`` (1-10000, default 100),
                                               ``offset`` -> ``{recordings, total, limit,
                                               offset}`` (oldest first)
``GET /recordings/{id}``                       the recording; 404
``DELETE /recordings/{id}``                    204; 404
``DELETE /recordings``                         ``{deleted: n}`` (``?session=`` narrows it)
``POST /recordings/convert``                   body ``{recordingIds?, sessionId?,
                                               deduplicate (default true), includeHeaders,
                                               stateful, create (default true)}`` ->
                                               ``{mockIds, count, warnings?}``; with
                                               ``create: false`` nothing is created and the
                                               answer is ``{config, count, warnings?}``
                                               (``config``: a config file, what
                                               ``mockd convert -o`` writes); none -> 400
                                               ``no_recordings``
``POST /recordings/export``                    body ``{format: json|yaml, sessionId?,
                                               recordingIds?}`` -> ``{version: "1.0",
                                               exportedAt, count, recordings}``; yaml as
                                               ``application/x-yaml``
``POST /recordings/{id}/to-mock``              convert that recording (body options as
                                               convert); 404
``POST /recordings/sessions/{id}/to-mocks``    convert the session's recordings; 404
=============================================  ============================================

Unknown ids answer 404 ``not_found``; a bad query value or body key 400 ``validation_error``
naming it; a body that is not JSON 400 ``invalid_json``.

Source: SPEC "Proxy, CA and recordings"; behavior notes §1 "Proxy, CA, sessions, recordings".
"""
from __future__ import annotations

import fnmatch
from typing import Any

import orjson
import yaml
from django.http import HttpRequest, HttpResponse
from ninja import Router

from mocks.api import engine_control
from mocks.control import openapi_docs as oa
from mocks.control.errors import AdminError, not_found, validation_error
from mocks.core.queryparams import MAX_LIMIT, QueryParameterError, parse_int
from mocks.core.recordings import RecordingQueryError, convert_body
from recordings.store import current, utc_now

router = Router(tags=["recordings"])
# The fixed paths (/recordings/convert, /recordings/export) are declared before
# /recordings/{recording_id}: Django resolves the first pattern that matches.

KIND = "http"
#: Recordings one conversion or export reads at the most (the converter's own bound).
MAX_SELECTED = 10_000
SESSION_NOT_FOUND = "Session not found"
RECORDING_NOT_FOUND = "Recording not found"
_FLAGS = {"deduplicate": "deduplicate", "includeHeaders": "include_headers",
          "stateful": "stateful", "create": "create"}


def _json(payload: Any, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(payload), status=status, content_type="application/json")


def _body(request: HttpRequest) -> dict[str, Any]:
    """The JSON object body (``{}`` when empty); 400 ``invalid_json`` / ``validation_error``."""
    raw = request.body or b""
    if not raw.strip():
        return {}
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise AdminError(400, "invalid_json", "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise validation_error("the body must be a JSON object")
    return body


def session_summary(session: dict[str, Any], *, with_filters: bool = False) -> dict[str, Any]:
    """``{id, name, startTime, endTime?, recordingCount}`` (and ``filters`` when asked and
    set) of a store session."""
    shown = {"id": session["id"], "name": session["name"], "startTime": session["startTime"]}
    if session["endTime"]:
        shown["endTime"] = session["endTime"]
    shown["recordingCount"] = session["recordingCount"]
    if with_filters and session.get("filters") is not None:
        shown["filters"] = session["filters"]
    return shown


def _session(session_id: str) -> dict[str, Any]:
    session = current().get_session(session_id)
    if session is None or session["kind"] != KIND:
        raise not_found(SESSION_NOT_FOUND)
    return session


# ------------------------------------------------------------------------------ sessions

_SESSION_MISSING = oa.not_found(SESSION_NOT_FOUND)
_RECORDING_MISSING = oa.not_found(RECORDING_NOT_FOUND)
_BAD_BODY = oa.error_example("invalid_json", "the body is not valid JSON")
_CONVERT_SCHEMA = {"type": "object", "properties": {
    "recordingIds": {"type": "array", "items": {"type": "string"}},
    "sessionId": {"type": "string"},
    "deduplicate": {"type": "boolean", "default": True},
    "includeHeaders": {"type": "boolean", "default": False},
    "stateful": {"type": "boolean", "default": False},
    "create": {"type": "boolean", "default": True}}}
_CONVERTED = {"mockIds": ["http_a1b2c3d4e5f60718"], "count": 1}
_NO_RECORDINGS = oa.bad_request("no_recordings", "no HTTP recordings to convert: record "
                                "traffic through the proxy first, or check the ids")


def _convert_doc(example: dict[str, Any], missing: dict[str, Any] | None = None
                 ) -> dict[str, Any]:
    """``openapi_extra`` of a convert route: its body options and answers."""
    replies: dict[int, Any] = {200: _CONVERTED, 400: _NO_RECORDINGS}
    if missing is not None:
        replies[404] = missing
    return oa.doc(oa.body(example, {**_CONVERT_SCHEMA, "description": "conversion options "
                                    "(an empty body takes the defaults)"}, required=False),
                  oa.answers(replies, engine=True))


@router.get("/sessions", summary="Proxy recording sessions", openapi_extra=oa.answers(
    {200: [oa.SESSION_EXAMPLE]}))
def list_sessions(request: HttpRequest) -> list[dict[str, Any]]:
    """``[{id, name, startTime, endTime?, recordingCount}]``, oldest first."""
    return [session_summary(session) for session in current().list_sessions(KIND)]


@router.post("/sessions", summary="Create a recording session", response={201: None},
             openapi_extra=oa.doc(
                 oa.body({"name": "checkout-flow", "filters": {"includePaths": ["/api/*"]}},
                         {"type": "object", "required": ["name"], "properties": {
                             "name": {"type": "string", "minLength": 1, "maxLength": 200},
                             "filters": {"type": "object"}}}),
                 oa.answers({201: {"id": "sess_0123456789abcdef", "name": "checkout-flow",
                                   "startTime": oa.TIMESTAMP, "recordingCount": 0,
                                   "filters": {"includePaths": ["/api/*"]}},
                             400: oa.bad_request("validation_error",
                                                 "name: required, a text of 1-200 "
                                                 "characters")})))
def create_session(request: HttpRequest) -> HttpResponse:
    """``{name, filters?}`` -> 201 the session; 400 naming ``name`` / ``filters``."""
    body = _body(request)
    name = body.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise validation_error("name: required, a text of 1-200 characters")
    filters = body.get("filters")
    if filters is not None and not isinstance(filters, dict):
        raise validation_error("filters: must be an object")
    if filters is not None and len(orjson.dumps(filters)) > 64 * 1024:
        raise validation_error("filters: larger than 64 KiB")
    session = current().create_session(name.strip(), kind=KIND, filters=filters)
    return _json(session_summary(session, with_filters=True), 201)


@router.get("/sessions/{session_id}", summary="One recording session with its recordings",
            openapi_extra=oa.answers({200: {**oa.SESSION_EXAMPLE,
                                            "recordings": [oa.RECORDING_EXAMPLE]},
                                      404: _SESSION_MISSING}))
def get_session(request: HttpRequest, session_id: str) -> dict[str, Any]:
    """``{id, name, startTime, endTime?, recordingCount, filters?, recordings}`` (the first
    10,000 recordings, oldest first); 404."""
    shown = session_summary(_session(session_id), with_filters=True)
    shown["recordings"], _ = current().query(KIND, session_id=session_id, limit=MAX_LIMIT)
    return shown


@router.delete("/sessions/{session_id}", summary="Delete a session and its recordings",
               response={204: None}, openapi_extra=oa.answers({204: None,
                                                               404: _SESSION_MISSING}))
def delete_session(request: HttpRequest, session_id: str) -> HttpResponse:
    """204; 404."""
    _session(session_id)
    current().delete_session(session_id)
    return HttpResponse(status=204)


@router.delete("/sessions", summary="Delete every session and their recordings",
               openapi_extra=oa.answers({200: {"deleted": 2}}))
def clear_sessions(request: HttpRequest) -> dict[str, Any]:
    """``{deleted: n}`` (sessions)."""
    return {"deleted": current().clear_sessions(KIND)}


# ---------------------------------------------------------------------------- recordings


@router.get("/recordings", summary="HTTP recordings", openapi_extra=oa.answers({
    200: {"recordings": [oa.RECORDING_EXAMPLE], "total": 1, "limit": 100, "offset": 0},
    400: oa.bad_request("validation_error", "limit: must be between 1 and 10000, got 0")}))
def list_recordings(request: HttpRequest) -> dict[str, Any]:
    """``{recordings, total, limit, offset}`` filtered by ``session`` / ``sessionId``,
    ``method``, ``path`` (``*`` wildcards), oldest first; 400 naming a bad parameter."""
    query = request.GET
    try:
        limit = parse_int(query, "limit", 100, minimum=1, maximum=MAX_LIMIT)
        offset = parse_int(query, "offset", 0)
    except QueryParameterError as problem:
        raise validation_error(str(problem)) from None
    filters: dict[str, Any] = {}
    if query.get("method"):
        filters["method"] = query["method"].upper()
    path = query.get("path") or None
    match = None
    if path is not None and "*" in path:
        def match(record: dict[str, Any]) -> bool:
            return fnmatch.fnmatchcase((record.get("request") or {}).get("path") or "", path)
    elif path is not None:
        filters["path"] = path
    session_id = query.get("session") or query.get("sessionId") or None
    found, total = current().query(KIND, session_id=session_id, filters=filters, match=match,
                                   limit=limit, offset=offset)
    return {"recordings": found, "total": total, "limit": limit, "offset": offset}


@router.delete("/recordings", summary="Delete every HTTP recording",
               openapi_extra=oa.answers({200: {"deleted": 12}}))
def clear_recordings(request: HttpRequest) -> dict[str, Any]:
    """``{deleted: n}``; ``?session=`` (or ``sessionId``) deletes one session's only."""
    session_id = request.GET.get("session") or request.GET.get("sessionId") or None
    return {"deleted": current().clear(KIND, session_id=session_id)}


def select_recordings(recording_ids: list[str] | None,
                      session_id: str | None) -> list[dict[str, Any]]:
    """The recordings named by ``recording_ids`` (unknown ones left out; within
    ``session_id`` when both are given), else those of ``session_id``, else every HTTP
    recording; oldest first, at most :data:`MAX_SELECTED`. 404 for an unknown session, 400
    for more ids than that."""
    store = current()
    if session_id is not None:
        _session(session_id)
    if recording_ids is None:
        return store.query(KIND, session_id=session_id, limit=MAX_SELECTED)[0]
    if len(recording_ids) > MAX_SELECTED:
        raise validation_error(f"recordingIds: at most {MAX_SELECTED} ids")
    found = [store.get(recording_id, kind=KIND) for recording_id in dict.fromkeys(recording_ids)]
    return [record for record in found if record is not None
            and (session_id is None or record.get("sessionId") == session_id)]


@router.post("/recordings/convert", summary="HTTP recordings to mocks",
             openapi_extra=_convert_doc({"sessionId": "sess_0123456789abcdef",
                                         "deduplicate": True, "includeHeaders": False},
                                        _SESSION_MISSING))
def convert_recordings(request: HttpRequest) -> dict[str, Any]:
    """See the module docstring: ``{mockIds, count, warnings?}`` or, with ``create: false``,
    ``{config, count, warnings?}``; 400 ``no_recordings`` when nothing was selected or
    nothing could be converted."""
    return convert(_body(request))


@router.post("/recordings/export", summary="Export HTTP recordings", openapi_extra=oa.doc(
    oa.body({"format": "json", "sessionId": "sess_0123456789abcdef"},
            {"type": "object", "properties": {
                "format": {"type": "string", "enum": ["json", "yaml"], "default": "json"},
                "sessionId": {"type": "string"},
                "recordingIds": {"type": "array", "items": {"type": "string"}}}},
            required=False),
    oa.answers({200: {"version": "1.0", "exportedAt": oa.TIMESTAMP, "count": 1,
                      "recordings": [oa.RECORDING_EXAMPLE]},
                400: oa.bad_request("validation_error", "format: use json or yaml"),
                404: _SESSION_MISSING},
               descriptions={200: "The export (application/x-yaml with format: yaml)"})))
def export_recordings(request: HttpRequest) -> Any:
    """``{version: "1.0", exportedAt, count, recordings}``, as YAML with ``format: yaml``."""
    body = _body(request)
    chosen_format = body.get("format", "json")
    if chosen_format not in ("json", "yaml"):
        raise validation_error("format: use json or yaml")
    options, _ = _options(body)
    found = select_recordings(options["recording_ids"], body.get("sessionId"))
    document = {"version": "1.0", "exportedAt": utc_now(), "count": len(found),
                "recordings": found}
    if chosen_format == "yaml":
        return HttpResponse(yaml.safe_dump(document, sort_keys=False, allow_unicode=True),
                            content_type="application/x-yaml")
    return document


@router.get("/recordings/{recording_id}", summary="One HTTP recording",
            openapi_extra=oa.answers({200: oa.RECORDING_EXAMPLE, 404: _RECORDING_MISSING}))
def get_recording(request: HttpRequest, recording_id: str) -> dict[str, Any]:
    """The recording; 404."""
    found = current().get(recording_id, kind=KIND)
    if found is None:
        raise not_found(RECORDING_NOT_FOUND)
    return found


@router.delete("/recordings/{recording_id}", summary="Delete one HTTP recording",
               response={204: None}, openapi_extra=oa.answers({204: None,
                                                               404: _RECORDING_MISSING}))
def delete_recording(request: HttpRequest, recording_id: str) -> HttpResponse:
    """204; 404."""
    if not current().delete(recording_id, kind=KIND):
        raise not_found(RECORDING_NOT_FOUND)
    return HttpResponse(status=204)


@router.post("/recordings/{recording_id}/to-mock", summary="One HTTP recording to a mock",
             openapi_extra=_convert_doc({"includeHeaders": True}, _RECORDING_MISSING))
def recording_to_mock(request: HttpRequest, recording_id: str) -> dict[str, Any]:
    """As convert, of that recording only; 404."""
    if current().get(recording_id, kind=KIND) is None:
        raise not_found(RECORDING_NOT_FOUND)
    body = _body(request)
    body["recordingIds"], body["sessionId"] = [recording_id], None
    return convert(body)


@router.post("/recordings/sessions/{session_id}/to-mocks",
             summary="A session's HTTP recordings to mocks",
             openapi_extra=_convert_doc({"deduplicate": True, "stateful": True},
                                        _SESSION_MISSING))
def session_to_mocks(request: HttpRequest, session_id: str) -> dict[str, Any]:
    """As convert, of the session's recordings; 404."""
    _session(session_id)
    body = _body(request)
    body["sessionId"], body["recordingIds"] = session_id, None
    return convert(body)


def _options(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        return convert_body(body, _FLAGS, texts=("sessionId", "format"))
    except RecordingQueryError as problem:
        raise validation_error(str(problem)) from None


def convert(body: dict[str, Any]) -> dict[str, Any]:
    """Convert the recordings a convert body selects; create the mocks (and tables and
    bindings) in one transaction unless ``create`` is false. See the module docstring."""
    from mocks.control import configuration
    from mocks.portability.recordings_http import convert_http_recordings_result

    options, body = _options(body)
    create = options.pop("create", True)
    records = select_recordings(options.pop("recording_ids"), body.get("sessionId"))
    if not records:
        raise AdminError(400, "no_recordings", "no HTTP recordings to convert: record traffic "
                                               "through the proxy first, or check the ids")
    result = convert_http_recordings_result(records, **options)
    if not result.mocks:
        raise AdminError(400, "no_recordings",
                         "none of the recordings could be converted: "
                         + "; ".join(result.warnings[:5]))
    document: dict[str, Any] = {"version": "1.0", "mocks": result.mocks}
    for key, items in (("tables", result.tables), ("extend", result.extend)):
        if items:
            document[key] = items
    answer: dict[str, Any]
    if create:
        engine_control()
        config = configuration.parse_config_document(document)
        configuration.import_config(config)
        answer = {"mockIds": [mock.id for mock in config.mocks], "count": len(config.mocks)}
    else:
        answer = {"config": document, "count": len(result.mocks)}
    if result.warnings:
        answer["warnings"] = list(result.warnings)
    return answer
