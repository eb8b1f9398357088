"""Recordings armed on mock paths: the process-wide registry the engine's WebSocket and SSE
serving code consults (``POST /stream-recordings/start`` arms one, ``/{id}/stop`` ends it).

An arm is ``(protocol, path)`` -> :class:`Arm`. Arming creates a recording session (kind
``stream``) and its first recording (status ``recording``) at once, so the admin answer can
name both. The next connection to that path (WebSocket upgrade, or SSE stream of a mock
there) is recorded into that recording; further connections while the arm lasts get their
own recordings in the same session. A recording ends when its connection ends (``complete``,
``incomplete`` past the recorder's bounds); stopping the arm ends the session and any
recording still open.

The engine's check when nothing is armed is one truth test of :data:`ARMED` (a dict).
Everything runs on the engine's event loop: in full mode (``mockd start``) the admin API runs
on the same loop and process. ``mockd engine`` alone has no admin API and so no recording
control.

Source: SPEC "Stream recordings", "States and transitions" (Stream recording rows); behavior
notes §1 "Connections, protocol handlers, stream recordings". Django-free.
"""
from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mocks.core.redaction import Redaction
from recordings.streams import PROTOCOLS, StreamRecorder, rfc3339

#: ``(protocol, path)`` -> the arm recording it. Empty when nothing records (the hot check).
ARMED: dict[tuple[str, str], "Arm"] = {}
#: Recordings open right now, by recording id (for GET while recording, and stop).
OPEN: dict[str, StreamRecorder] = {}
#: Most arms at once (each may record many connections).
MAX_ARMS = 100
#: Most connections recorded per arm (each its own recording).
MAX_RECORDINGS_PER_ARM = 1000

_REDACTION = Redaction.from_settings()


class ArmError(Exception):
    """An arm request that cannot be served: ``status`` 400 (bad input), 404, 409 (a recording
    already armed at that path), ``code`` and ``message`` as the admin API renders them."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass
class Arm:
    """One armed recording: where, which session, and the recorders it made.

    Attributes:
        protocol: ``websocket`` or ``sse``.
        path: the mock path recorded (exact request path).
        name: the recording name given at start.
        session: the store's session document (kind ``stream``).
        first: the recorder created at start (claimed by the first connection).
        recorders: every recorder of this arm, the first one first.
    """

    protocol: str
    path: str
    name: str
    session: dict[str, Any]
    first: StreamRecorder
    recorders: list[StreamRecorder] = field(default_factory=list)
    claimed: bool = False
    started: float = field(default_factory=time.time)

    def summary(self) -> dict[str, Any]:
        """The session as ``GET /stream-recordings/sessions`` lists it."""
        return {"id": self.session["id"], "sessionId": self.session["id"],
                "recordingId": self.first.id, "protocol": self.protocol, "path": self.path,
                "name": self.name, "startTime": rfc3339(self.started),
                "connections": len(self.recorders) if self.claimed else 0,
                "recordingIds": [recorder.id for recorder in self.recorders],
                "frameCount": sum(recorder.frame_count for recorder in self.recorders),
                "status": "recording"}


def arm(protocol: Any, path: Any, name: Any = None, *, store: Any = None) -> Arm:
    """Arm recording of the next connection(s) to ``path``. Raises :class:`ArmError`: 400
    ``validation_error`` for a bad ``protocol`` (``websocket`` or ``sse``), ``path`` (must
    start with ``/``) or ``name`` (text), 409 ``conflict`` when that protocol and path are
    already armed or :data:`MAX_ARMS` arms are active."""
    if protocol not in PROTOCOLS:
        raise ArmError(400, "validation_error",
                       f"protocol: must be websocket or sse, not {protocol!r}")
    if not isinstance(path, str) or not path.startswith("/") or len(path) > 2048:
        raise ArmError(400, "validation_error",
                       "path: must be a mock path starting with '/' (at most 2048 characters)")
    if name is not None and (not isinstance(name, str) or len(name) > 200):
        raise ArmError(400, "validation_error", "name: must be text of at most 200 characters")
    path = path.split("?", 1)[0]
    key = (protocol, path)
    if key in ARMED:
        raise ArmError(409, "conflict", f"a {protocol} recording is already armed at {path} "
                                        f"(session {ARMED[key].session['id']}); stop it first")
    if len(ARMED) >= MAX_ARMS:
        raise ArmError(409, "conflict", f"{MAX_ARMS} recordings are already armed; stop one")
    if store is None:
        # Imported here: the engine loads this module at start, the store (sqlite3) only
        # when a recording is armed.
        from recordings import store as store_module

        store = store_module.current()
    label = name or f"{protocol} {path}"
    session = store.create_session(label, kind="stream",
                                   filters={"protocol": protocol, "path": path})
    recorder = StreamRecorder.start(store, protocol=protocol, path=path, name=label,
                                    session_id=session["id"])
    entry = Arm(protocol, path, label, session, recorder, [recorder])
    ARMED[key] = entry
    OPEN[recorder.id] = recorder
    return entry


def _recorded_headers(raw: Any) -> dict[str, list[str]]:
    """ASGI raw headers as ``{name: [values]}``, with the default secrets redacted."""
    headers: dict[str, list[str]] = {}
    for name, value in raw or ():
        text_name = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        text_value = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        headers.setdefault(text_name, []).append(_REDACTION.header(text_name, text_value))
    return headers


def claim(protocol: str, path: str, raw_headers: Any = (), raw_query: bytes | str = b"",
          subprotocol: str | None = None) -> StreamRecorder | None:
    """The recorder for a new connection of ``protocol`` at ``path`` (``raw_headers``: ASGI
    header pairs; ``raw_query``: the query string; secrets in both are redacted), or None
    when no recording is armed there (or the arm recorded :data:`MAX_RECORDINGS_PER_ARM`
    connections already)."""
    entry = ARMED.get((protocol, path))
    if entry is None:
        return None
    query = _REDACTION.query(raw_query.decode("latin-1") if isinstance(raw_query, bytes)
                             else str(raw_query or ""))
    headers = _recorded_headers(raw_headers)
    if not entry.claimed:
        entry.claimed = True
        recorder = entry.first
        metadata = recorder.record["metadata"]
        metadata["headers"], metadata["query"] = headers, query
        if protocol == "websocket":
            recorder.record["websocket"]["subprotocol"] = subprotocol
        return recorder
    if len(entry.recorders) >= MAX_RECORDINGS_PER_ARM:
        return None
    store = entry.first.store
    recorder = StreamRecorder.start(store, protocol=protocol, path=path,
                                    name=f"{entry.name} #{len(entry.recorders) + 1}",
                                    headers=headers, query=query,
                                    session_id=entry.session["id"], subprotocol=subprotocol)
    entry.recorders.append(recorder)
    OPEN[recorder.id] = recorder
    return recorder


def finish(recorder: StreamRecorder, status: str = "complete") -> dict[str, Any]:
    """End one connection's recording (its connection ended) and forget it as open."""
    OPEN.pop(recorder.id, None)
    return recorder.finish(status)


def find(recording_id: str) -> Arm | None:
    """The arm whose first recording (or session) is ``recording_id``, or None."""
    for entry in ARMED.values():
        if recording_id in (entry.first.id, entry.session["id"]):
            return entry
    return None


def stop(recording_id: str) -> dict[str, Any] | None:
    """Stop the arm of ``recording_id`` (its first recording's id or its session id): disarm
    the path, finish every recording of it still open, end the session. Returns the first
    recording as stored, or None when no arm has that id. A recording that is open but not
    armed (an arm's later connection) is finished alone."""
    entry = find(recording_id)
    if entry is None:
        recorder = OPEN.get(recording_id)
        return finish(recorder) if recorder is not None else None
    ARMED.pop((entry.protocol, entry.path), None)
    result: dict[str, Any] | None = None
    for recorder in entry.recorders:
        document = finish(recorder)
        if recorder is entry.first:
            result = document
    entry.first.store.end_session(entry.session["id"])
    return result


def sessions() -> list[dict[str, Any]]:
    """The active recording sessions (one per arm), oldest first."""
    return [entry.summary() for entry in ARMED.values()]


def stop_all() -> int:
    """Stop every arm (server shutdown, tests); returns how many were stopped."""
    count = 0
    for entry in list(ARMED.values()):
        stop(entry.first.id)
        count += 1
    return count


# ---------------------------------------------------------------------- engine taps

def _record_message(recorder: StreamRecorder, direction: str, message: dict) -> None:
    """Record an ASGI ``websocket.receive`` / ``websocket.send`` message as a text or binary
    frame."""
    text = message.get("text")
    if text is not None:
        recorder.websocket_frame(direction, "text", text)
    else:
        recorder.websocket_frame(direction, "binary", message.get("bytes") or b"")


def websocket_taps(recorder: StreamRecorder, receive: Callable[[], Awaitable[dict]],
                   send: Callable[[dict], Awaitable[None]]) -> tuple[Any, Any]:
    """``receive`` and ``send`` of an ASGI WebSocket connection that also record its frames:
    client text/bytes as ``c2s``, server ``websocket.send`` as ``s2c``, the accepted
    subprotocol, and the close code and reason of whichever side closed first."""

    async def recording_receive() -> dict:
        message = await receive()
        kind = message.get("type")
        if kind == "websocket.receive":
            _record_message(recorder, "c2s", message)
        elif kind == "websocket.disconnect":
            recorder.close(message.get("code", 1005), message.get("reason") or "")
        return message

    async def recording_send(message: dict) -> None:
        await send(message)
        kind = message.get("type")
        if kind == "websocket.send":
            _record_message(recorder, "s2c", message)
        elif kind == "websocket.accept":
            if message.get("subprotocol"):
                recorder.record["websocket"]["subprotocol"] = message["subprotocol"]
        elif kind == "websocket.close":
            code = message.get("code", 1000)
            reason = message.get("reason") or ""
            recorder.websocket_frame("s2c", "close", reason)
            recorder.close(code, reason)

    return recording_receive, recording_send


async def recorded_events(items: AsyncIterator[Any],
                          recorder: StreamRecorder) -> AsyncIterator[Any]:
    """The SSE events of ``items`` (objects with ``type``, ``data``, ``id``), each recorded
    as it goes out; closing this closes ``items``."""
    try:
        async for item in items:
            recorder.sse_event(item.data if item.data is not None else "",
                               event_type=item.type, event_id=item.id)
            yield item
    finally:
        close = getattr(items, "aclose", None)
        if close is not None:
            await close()
