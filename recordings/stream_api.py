"""Admin API routes of WebSocket and SSE stream recordings and their replays
(``/stream-recordings*``, ``/replay*``).

==============================================  =============================================
``GET /stream-recordings``                       ``{recordings, total, limit, offset}`` (items
                                                 without frames); query ``protocol``,
                                                 ``path``, ``status``, ``limit`` (100),
                                                 ``offset``, ``sortBy``, ``sortOrder``
``GET /stream-recordings/stats``                 the store's statistics of kind ``stream``
``GET /stream-recordings/sessions``              ``{sessions, count}``: active recording
                                                 sessions
``POST /stream-recordings/start``                ``{protocol, path, name?}`` ->
                                                 ``{sessionId, recordingId, protocol, path}``
``POST /stream-recordings/vacuum``               ``{removed}``
``GET /stream-recordings/{id}``                  the recording (frames so far while recording)
``DELETE /stream-recordings/{id}``               204; soft unless ``?permanent=true``
``POST /stream-recordings/{id}/stop``            ``{recording}`` (status ``complete``)
``POST /stream-recordings/{id}/export``          the recording as a JSON document
``POST /stream-recordings/{id}/convert``         a mock config ``POST /mocks`` accepts
``POST /stream-recordings/{id}/replay``          201 ``{sessionId, status, ...}``
``GET /replay``                                  ``{sessions, count}``
``GET|DELETE /replay/{id}``                      status / stop (the status after stopping)
``POST /replay/{id}/advance|pause|resume``       the status
==============================================  =============================================

Errors: unknown id 404 ``not_found``; bad input 400 ``validation_error`` naming the key; a
replay of a recording still recording, or a path already armed, 409 ``conflict``.

Recording and replay run in the engine of this process (full mode, ``mockd start``): the
registries of :mod:`recordings.stream_registry` and :mod:`recordings.replay` live on the
event loop shared by the admin API and the engine.

Source: SPEC "Stream recordings"; behavior notes §1 "Connections, protocol handlers, stream
recordings".
"""
from __future__ import annotations

from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse
from ninja import Router

from mocks.control import openapi_docs as oa
from mocks.control.errors import AdminError, not_found, validation_error
from recordings import replay, stream_registry
from recordings import store as store_module
from recordings.convert import ConvertError, convert

router = Router(tags=["stream-recordings"])

KIND = "stream"
MAX_LIMIT = 1000
#: ``sortBy`` values and the store's sort keys they use.
SORT_KEYS = {"startTime": "timestamp", "timestamp": "timestamp", "name": "name",
             "path": "path", "protocol": "protocol", "status": "state", "size": "size"}
STATUSES = ("recording", "complete", "incomplete", "corrupted")
_MISSING = "stream recording {} not found"

# What the OpenAPI document shows (docs/stream-recordings.md has the same answers).
_REC_ID = "rec_1f0c9a2b7d4e8a11"
_FRAME = {"direction": "c2s", "type": "text", "data": "hello",
          "timestamp": "2026-11-27T10:00:00.105Z", "relativeMs": 105.2}
_RECORDING = {
    "id": _REC_ID, "version": "1.0", "name": "chat", "protocol": "websocket",
    "status": "complete", "startTime": "2026-11-27T10:00:00.000Z",
    "endTime": "2026-11-27T10:00:01.412Z", "duration": 1412.3,
    "sessionId": "sess_4b1d0e6f2a9c7e55", "timestamp": "2026-11-27T10:00:00.000Z",
    "metadata": {"path": "/ws/chat", "headers": {"host": ["127.0.0.1:4280"]},
                 "query": "room=1", "source": "mock"},
    "stats": {"frameCount": 1, "bytesSent": 0, "bytesReceived": 5, "fileSizeBytes": 640},
    "websocket": {"subprotocol": None, "closeCode": 1000, "closeReason": "",
                  "frames": [_FRAME]}}
_LISTED = {**_RECORDING, "websocket": {"subprotocol": None, "closeCode": 1000,
                                       "closeReason": ""}}
_REC_MISSING = oa.not_found(_MISSING.format(_REC_ID))
_REPLAY_ID = "rpl_0123456789abcdef"
_REPLAY = {"id": _REPLAY_ID, "sessionId": _REPLAY_ID, "recordingId": _REC_ID,
           "protocol": "websocket", "path": "/ws/chat", "mode": "triggered",
           "status": "waiting", "currentFrame": 1, "totalFrames": 4, "framesSent": 1,
           "timingScale": 1.0, "strictMatching": False, "timeout": 30000,
           "createdAt": oa.TIMESTAMP, "startedAt": oa.TIMESTAMP, "endedAt": None,
           "message": ""}
_REPLAY_MISSING = oa.not_found(f"replay session {_REPLAY_ID} not found")
_REPLAY_ANSWER = oa.answers({200: _REPLAY, 404: _REPLAY_MISSING,
                             409: oa.error_example("conflict", f"replay {_REPLAY_ID} is "
                                                   "complete")})


def _store() -> Any:
    return store_module.current()


def _body(request: HttpRequest) -> dict[str, Any]:
    """The JSON object body ({} when empty); 400 ``invalid_json`` / ``validation_error``."""
    if not request.body.strip():
        return {}
    try:
        body = orjson.loads(request.body)
    except orjson.JSONDecodeError:
        raise AdminError(400, "invalid_json", "Invalid JSON in request body") from None
    if not isinstance(body, dict):
        raise validation_error("body: must be a JSON object")
    return body


def _int_query(request: HttpRequest, key: str, default: int, high: int) -> int:
    text = request.GET.get(key)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise validation_error(f"{key}: must be an integer from 0 to {high}") from None
    if not 0 <= value <= high:
        raise validation_error(f"{key}: must be an integer from 0 to {high}")
    return value


def _summary(document: dict[str, Any]) -> dict[str, Any]:
    """A list item: the recording without its frames or events."""
    item = {key: value for key, value in document.items() if key not in ("websocket", "sse")}
    part = document.get("websocket")
    if part is not None:
        item["websocket"] = {key: value for key, value in part.items() if key != "frames"}
    return item


def _recording(recording_id: str) -> dict[str, Any]:
    """The recording (a live copy while it records); 404 ``not_found``."""
    recorder = stream_registry.OPEN.get(recording_id)
    if recorder is not None:
        return recorder.snapshot()
    document = _store().get(recording_id, kind=KIND)
    if document is None:
        raise not_found(_MISSING.format(recording_id))
    return document


def _replay_call(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except replay.ReplayError as problem:
        raise AdminError(problem.status, problem.code, problem.message) from None


def _replay_action(replay_id: str, action: str) -> dict[str, Any]:
    """Run ``pause`` or ``resume`` on replay ``replay_id``; its status after."""
    session = _replay_call(replay.get, replay_id)
    _replay_call(getattr(session, action))
    return session.to_dict()


# ---------------------------------------------------------------------- fixed paths first

@router.get("/stream-recordings", summary="List stream recordings",
            operation_id="stream_recordings_list", openapi_extra=oa.answers({
                200: {"recordings": [_LISTED], "total": 1, "limit": 100, "offset": 0},
                400: oa.bad_request("validation_error",
                                    "protocol: must be websocket or sse")}))
async def list_recordings(request: HttpRequest) -> dict[str, Any]:
    """``{recordings, total, limit, offset}``; items leave out frames and events."""
    query = request.GET
    filters: dict[str, Any] = {}
    protocol = query.get("protocol")
    if protocol:
        if protocol not in ("websocket", "sse"):
            raise validation_error("protocol: must be websocket or sse")
        filters["protocol"] = protocol
    if query.get("path"):
        filters["path"] = query["path"]
    status = query.get("status")
    if status:
        if status not in STATUSES:
            raise validation_error(f"status: must be one of {', '.join(STATUSES)}")
        filters["state"] = status
    limit = _int_query(request, "limit", 100, MAX_LIMIT)
    offset = _int_query(request, "offset", 0, 10**9)
    sort_by = query.get("sortBy") or "startTime"
    if sort_by not in SORT_KEYS:
        raise validation_error(f"sortBy: must be one of {', '.join(SORT_KEYS)}")
    order = (query.get("sortOrder") or "desc").lower()
    if order not in ("asc", "desc"):
        raise validation_error("sortOrder: must be asc or desc")
    page, total = _store().query(KIND, filters=filters, sort_by=SORT_KEYS[sort_by],
                                 descending=order == "desc", limit=limit, offset=offset)
    return {"recordings": [_summary(document) for document in page], "total": total,
            "limit": limit, "offset": offset}


@router.get("/stream-recordings/stats", summary="Stream recording storage statistics",
            operation_id="stream_recordings_stats", openapi_extra=oa.answers({200: {
                "count": 1, "deleted": 0, "bytes": 1187, "maxBytes": 524288000,
                "warnPercent": 80.0, "usedPercent": 0.0, "warning": False, "dropped": 0,
                "activeSessions": 0, "activeReplays": 0}}))
async def stats(request: HttpRequest) -> dict[str, Any]:
    """The store's statistics of stream recordings, plus the active sessions and replays."""
    result = dict(_store().stats(KIND))
    result["activeSessions"] = len(stream_registry.ARMED)
    result["activeReplays"] = sum(1 for session in replay.SESSIONS.values()
                                  if session.status not in replay.FINISHED)
    return result


@router.get("/stream-recordings/sessions", summary="Active stream recording sessions",
            operation_id="stream_recordings_sessions", openapi_extra=oa.answers({200: {
                "sessions": [{"id": "sess_4b1d0e6f2a9c7e55",
                              "sessionId": "sess_4b1d0e6f2a9c7e55", "recordingId": _REC_ID,
                              "protocol": "websocket", "path": "/ws/chat", "name": "chat",
                              "startTime": "2026-11-27T10:00:00.000Z", "connections": 1,
                              "recordingIds": [_REC_ID], "frameCount": 4,
                              "status": "recording"}],
                "count": 1}}))
async def sessions(request: HttpRequest) -> dict[str, Any]:
    """``{sessions, count}``: one per armed recording."""
    found = stream_registry.sessions()
    return {"sessions": found, "count": len(found)}


@router.post("/stream-recordings/start", summary="Start recording a mock path",
             operation_id="stream_recordings_start", openapi_extra=oa.doc(
                 oa.body({"protocol": "websocket", "path": "/ws/chat", "name": "chat"},
                         {"type": "object", "required": ["protocol", "path"],
                          "additionalProperties": False, "properties": {
                              "protocol": {"type": "string", "enum": ["websocket", "sse"]},
                              "path": {"type": "string"}, "name": {"type": "string"}}}),
                 oa.answers({200: {"sessionId": "sess_4b1d0e6f2a9c7e55", "recordingId": _REC_ID,
                                   "protocol": "websocket", "path": "/ws/chat", "name": "chat"},
                             400: oa.bad_request("missing_field",
                                                 "path: required field is missing")})))
async def start(request: HttpRequest) -> dict[str, Any]:
    """Arm recording of the next connection(s) to ``path``: ``{sessionId, recordingId,
    protocol, path, name}``."""
    body = _body(request)
    for key in ("protocol", "path"):
        if key not in body:
            raise AdminError(400, "missing_field", f"{key}: required field is missing")
    unknown = sorted(set(body) - {"protocol", "path", "name"})
    if unknown:
        raise validation_error(f"{unknown[0]}: unknown key (use protocol, path, name)")
    try:
        entry = stream_registry.arm(body["protocol"], body["path"], body.get("name"))
    except stream_registry.ArmError as problem:
        raise AdminError(problem.status, problem.code, problem.message) from None
    return {"sessionId": entry.session["id"], "recordingId": entry.first.id,
            "protocol": entry.protocol, "path": entry.path, "name": entry.name}


@router.post("/stream-recordings/vacuum", summary="Remove soft-deleted stream recordings",
             operation_id="stream_recordings_vacuum",
             openapi_extra=oa.answers({200: {"removed": 1}}))
async def vacuum(request: HttpRequest) -> dict[str, Any]:
    """``{removed}``: how many soft-deleted recordings were removed for good."""
    return {"removed": _store().vacuum(KIND)}


# ---------------------------------------------------------------------- one recording

@router.get("/stream-recordings/{recording_id}", summary="One stream recording",
            operation_id="stream_recordings_get",
            openapi_extra=oa.answers({200: _RECORDING, 404: _REC_MISSING}))
async def get_recording(request: HttpRequest, recording_id: str) -> dict[str, Any]:
    """The recording with its frames or events."""
    return _recording(recording_id)


@router.delete("/stream-recordings/{recording_id}", summary="Delete a stream recording",
               operation_id="stream_recordings_delete", response={204: None},
               openapi_extra=oa.answers({204: None, 404: _REC_MISSING}))
async def delete_recording(request: HttpRequest, recording_id: str) -> HttpResponse:
    """204; soft (recoverable until vacuum) unless ``?permanent=true``. A recording still
    recording is stopped first."""
    permanent = (request.GET.get("permanent") or "").lower()
    if permanent not in ("", "true", "false", "1", "0"):
        raise validation_error("permanent: must be true or false")
    if recording_id in stream_registry.OPEN or stream_registry.find(recording_id):
        stream_registry.stop(recording_id)
    if not _store().delete(recording_id, soft=permanent not in ("true", "1"), kind=KIND):
        raise not_found(_MISSING.format(recording_id))
    return HttpResponse(status=204)


@router.post("/stream-recordings/{recording_id}/stop", summary="Stop a stream recording",
             operation_id="stream_recordings_stop",
             openapi_extra=oa.answers({200: {"recording": _RECORDING}, 404: _REC_MISSING}))
async def stop_recording(request: HttpRequest, recording_id: str) -> dict[str, Any]:
    """``{recording}``: the recording as stored, status ``complete`` (``incomplete`` when
    its bounds cut frames off). Stopping a finished recording answers it again."""
    document = stream_registry.stop(recording_id)
    if document is None:
        document = _recording(recording_id)
    return {"recording": document}


@router.post("/stream-recordings/{recording_id}/export", summary="Export a stream recording",
             operation_id="stream_recordings_export",
             openapi_extra=oa.answers({200: _RECORDING, 404: _REC_MISSING},
                                      descriptions={200: "The recording as a JSON attachment"}))
async def export_recording(request: HttpRequest, recording_id: str) -> HttpResponse:
    """The recording as a JSON document (an attachment named after its id)."""
    document = _recording(recording_id)
    return HttpResponse(orjson.dumps(document), content_type="application/json", headers={
        "Content-Disposition": f'attachment; filename="stream-recording-{recording_id}.json"'})


@router.post("/stream-recordings/{recording_id}/convert",
             summary="Convert a stream recording to a mock",
             operation_id="stream_recordings_convert", openapi_extra=oa.doc(
                 oa.body({"simplifyTiming": True, "maxDelay": 1000},
                         {"type": "object", "properties": {
                             "simplifyTiming": {"type": "boolean"},
                             "minDelay": {"type": "integer", "description": "ms"},
                             "maxDelay": {"type": "integer", "description": "ms"}}},
                         required=False),
                 oa.answers({200: {
                     "id": "recorded-rec-1f0c9a2b7d4e8a11", "name": "chat (recorded)",
                     "type": "websocket", "websocket": {"path": "/ws/chat", "scenario": {
                         "name": "chat", "steps": [
                             {"type": "expect", "match": {"type": "exact", "value": "hello"},
                              "timeout": 30000},
                             {"type": "send", "message": {"type": "text", "value": "hi there",
                                                          "delay": 0}}]}}},
                     404: _REC_MISSING}, descriptions={200: "A mock config for POST /mocks"})))
async def convert_recording(request: HttpRequest, recording_id: str) -> dict[str, Any]:
    """A ``websocket`` mock (scripted conversation) or an SSE mock config, ready for
    ``POST /mocks``; body ``{simplifyTiming?, minDelay?, maxDelay?}`` (ms)."""
    document = _recording(recording_id)
    try:
        return convert(document, _body(request))
    except ConvertError as problem:
        raise validation_error(str(problem)) from None


@router.post("/stream-recordings/{recording_id}/replay", summary="Replay a stream recording",
             operation_id="stream_recordings_replay", response={201: None}, openapi_extra=oa.doc(
                 oa.body({"mode": "triggered", "timingScale": 1.0, "strictMatching": False,
                          "timeout": 30000},
                         {"type": "object", "properties": {
                             "mode": {"type": "string",
                                      "enum": ["pure", "synchronized", "triggered"]},
                             "timingScale": {"type": "number"},
                             "strictMatching": {"type": "boolean"},
                             "timeout": {"type": "integer", "description": "ms"}}},
                         required=False),
                 oa.answers({201: {**_REPLAY, "status": "pending", "currentFrame": 0,
                                   "framesSent": 0, "startedAt": None},
                             404: _REC_MISSING,
                             409: oa.error_example(
                                 "conflict", f"recording {_REC_ID} is still recording; stop "
                                 f"it first (POST /stream-recordings/{_REC_ID}/stop)")})))
async def start_replay(request: HttpRequest, recording_id: str) -> HttpResponse:
    """201 ``{sessionId, status: pending, ...}``: the next client at the recording's path
    gets the recording; body ``{mode, timingScale?, strictMatching?, timeout? (ms)}``."""
    document = _recording(recording_id)
    session = _replay_call(replay.start, document, _body(request))
    return HttpResponse(orjson.dumps(session.to_dict()), status=201,
                        content_type="application/json")


# ---------------------------------------------------------------------- replays

@router.get("/replay", summary="Replay sessions", operation_id="stream_replay_list",
            openapi_extra=oa.answers({200: {"sessions": [_REPLAY], "count": 1}}))
async def list_replays(request: HttpRequest) -> dict[str, Any]:
    """``{sessions, count}``."""
    found = replay.listing()
    return {"sessions": found, "count": len(found)}


@router.get("/replay/{replay_id}", summary="Replay status", operation_id="stream_replay_get",
            openapi_extra=oa.answers({200: _REPLAY, 404: _REPLAY_MISSING}))
async def get_replay(request: HttpRequest, replay_id: str) -> dict[str, Any]:
    """``{id, recordingId, status, currentFrame, totalFrames, framesSent, ...}``."""
    return _replay_call(replay.get, replay_id).to_dict()


@router.delete("/replay/{replay_id}", summary="Stop a replay", operation_id="stream_replay_stop",
               openapi_extra=oa.answers({200: {**_REPLAY, "status": "aborted",
                                               "endedAt": oa.TIMESTAMP,
                                               "message": "stopped by the admin"},
                                         404: _REPLAY_MISSING}))
async def stop_replay(request: HttpRequest, replay_id: str) -> dict[str, Any]:
    """Stop it (``aborted``; its client is closed); answers the status."""
    session = _replay_call(replay.get, replay_id)
    session.stop()
    return session.to_dict()


@router.post("/replay/{replay_id}/advance", summary="Advance a triggered replay",
             operation_id="stream_replay_advance", openapi_extra=oa.doc(
                 oa.body({"count": 1}, {"type": "object", "additionalProperties": False,
                                        "properties": {"count": {"type": "integer"},
                                                       "until": {"type": "string"}}},
                         required=False), _REPLAY_ANSWER))
async def advance_replay(request: HttpRequest, replay_id: str) -> dict[str, Any]:
    """Body ``{count?, until?}``; triggered replays only (else 400)."""
    session = _replay_call(replay.get, replay_id)
    body = _body(request)
    unknown = sorted(set(body) - {"count", "until"})
    if unknown:
        raise validation_error(f"{unknown[0]}: unknown key (use count, until)")
    _replay_call(session.advance, body.get("count"), body.get("until"))
    return session.to_dict()


@router.post("/replay/{replay_id}/pause", summary="Pause a replay",
             operation_id="stream_replay_pause", openapi_extra=_REPLAY_ANSWER)
async def pause_replay(request: HttpRequest, replay_id: str) -> dict[str, Any]:
    """Hold the replay's timeline; 409 unless playing or waiting."""
    return _replay_action(replay_id, "pause")


@router.post("/replay/{replay_id}/resume", summary="Resume a replay",
             operation_id="stream_replay_resume", openapi_extra=_REPLAY_ANSWER)
async def resume_replay(request: HttpRequest, replay_id: str) -> dict[str, Any]:
    """Continue a paused replay; 409 unless paused."""
    return _replay_action(replay_id, "resume")
