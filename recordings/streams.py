"""The stream recorder: one WebSocket conversation or one SSE stream, recorded as a stream
recording (kind ``stream`` of the shared recording store).

Used by the engine's WebSocket and SSE serving code (a recording armed on a mock path, see
:mod:`recordings.stream_registry`) and by the recording proxy (``source: "proxy"``). Each
frame or event is an append to an in-memory list (cheap on the event loop); the document is
written to the store when the recorder starts (status ``recording``), every
:data:`FLUSH_EVERY_FRAMES` frames or :data:`FLUSH_EVERY_SECONDS` seconds while it is long,
and on :meth:`StreamRecorder.finish`.

Each recording is bounded: at most ``max_frames`` frames (default :data:`MAX_FRAMES`) and
``max_bytes`` bytes of payload (default :data:`MAX_BYTES`); the first frame beyond either
bound stops the recording of frames and the recording ends ``incomplete``.

Record shape (SPEC "Admin-side records": Stream recording, WebSocket part, SSE part)::

    {id, version: "1.0", name, protocol: "websocket"|"sse",
     status: "recording"|"complete"|"incomplete"|"corrupted",
     startTime, endTime (RFC 3339 UTC), duration (ms),
     metadata: {path, headers, query, source: "mock"|"proxy"},
     stats: {frameCount, bytesSent, bytesReceived, fileSizeBytes},
     websocket: {subprotocol, frames: [{direction: "c2s"|"s2c",
                 type: "text"|"binary"|"ping"|"pong"|"close", data, timestamp, relativeMs}],
                 closeCode, closeReason}
     | sse: {events: [{type, data, id, timestamp, relativeMs}]}}

``bytesSent`` counts what the server sent (``s2c`` frames, SSE events), ``bytesReceived``
what the client sent (``c2s`` frames). Binary, ping and pong payloads are base64 text.
``relativeMs`` is milliseconds since the recording started (float, 0.001 ms resolution).

Source: SPEC "Stream recordings", "Admin-side records", "States and transitions" (Stream
recording), "Limits"; behavior notes §1 "Connections, protocol handlers, stream recordings".
Django-free.
"""
from __future__ import annotations

import base64
import threading
import time
from datetime import datetime, timezone
from typing import Any

import orjson

#: Record format version (SPEC "Versioning").
VERSION = "1.0"
PROTOCOLS = ("websocket", "sse")
DIRECTIONS = ("c2s", "s2c")
FRAME_TYPES = ("text", "binary", "ping", "pong", "close")
STATUSES = ("recording", "complete", "incomplete", "corrupted")
SOURCES = ("mock", "proxy")
#: Default bound of frames (WebSocket) or events (SSE) per recording.
MAX_FRAMES = 100_000
#: Default bound of payload bytes per recording (both directions together).
MAX_BYTES = 64 * 1024 * 1024
#: A long recording is written to the store every this many frames ...
FLUSH_EVERY_FRAMES = 1000
#: ... or when this many seconds passed since the last write (checked on each frame).
FLUSH_EVERY_SECONDS = 10.0


def rfc3339(epoch: float) -> str:
    """``epoch`` (seconds) as RFC 3339 UTC text with milliseconds: ``2026-11-27T10:00:00.123Z``."""
    moment = datetime.fromtimestamp(epoch, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _payload(frame_type: str, data: str | bytes) -> tuple[str, int]:
    """The recorded ``data`` of a frame and its size in bytes: text stays text (UTF-8 size),
    bytes of a text or close frame are decoded, other bytes become base64."""
    if isinstance(data, str):
        if frame_type in ("binary", "ping", "pong"):
            raw = data.encode("utf-8")
            return base64.b64encode(raw).decode("ascii"), len(raw)
        return data, len(data.encode("utf-8"))
    raw = bytes(data)
    if frame_type in ("text", "close"):
        return raw.decode("utf-8", errors="replace"), len(raw)
    return base64.b64encode(raw).decode("ascii"), len(raw)


class StreamRecorder:
    """One stream recording being made (see the module docstring for the record shape).

    Start one with :meth:`start`; feed it :meth:`websocket_frame` or :meth:`sse_event` calls
    (safe from any thread; each is an append under a lock); end it with :meth:`finish`, which
    writes the final document and returns it. Calls after :meth:`finish` are ignored.
    """

    id: str

    def __init__(self, store: Any, record: dict[str, Any], *, max_frames: int = MAX_FRAMES,
                 max_bytes: int = MAX_BYTES) -> None:
        """Use :meth:`start`; ``record`` is the stored document (with its ``id``)."""
        self.store = store
        self.record = record
        self.id = record["id"]
        self.protocol: str = record["protocol"]
        self.max_frames = max_frames
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._started_epoch = time.time()
        self._items: list[dict[str, Any]] = (record["websocket"]["frames"]
                                             if self.protocol == "websocket"
                                             else record["sse"]["events"])
        self._payload_bytes = 0
        self._unflushed = 0
        self._last_flush = self._started
        self.truncated = False
        self.finished = False

    # ------------------------------------------------------------------ start

    @classmethod
    def start(cls, store: Any, *, protocol: str, path: str, name: str | None = None,
              headers: dict | None = None, query: str = "", source: str = "mock",
              session_id: str | None = None, subprotocol: str | None = None,
              max_frames: int = MAX_FRAMES, max_bytes: int = MAX_BYTES) -> "StreamRecorder":
        """Create the recording (status ``recording``) in ``store`` and return its recorder.

        ``protocol``: ``websocket`` or ``sse``; ``path``: the request path; ``headers``: the
        request headers as recorded (redact before passing them); ``query``: the raw query
        string; ``source``: ``mock`` or ``proxy``; ``session_id``: the recording session (kind
        ``stream``) or proxy session the recording belongs to. Raises ``ValueError`` for an
        unknown protocol or source.
        """
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
        if source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
        now = time.time()
        record: dict[str, Any] = {
            "version": VERSION,
            "name": name or f"{protocol} {path}",
            "protocol": protocol,
            "status": "recording",
            "startTime": rfc3339(now),
            "endTime": None,
            "duration": 0,
            "metadata": {"path": path, "headers": dict(headers or {}), "query": query or "",
                         "source": source},
            "stats": {"frameCount": 0, "bytesSent": 0, "bytesReceived": 0,
                      "fileSizeBytes": 0},
        }
        if protocol == "websocket":
            record["websocket"] = {"subprotocol": subprotocol, "frames": [],
                                   "closeCode": None, "closeReason": ""}
        else:
            record["sse"] = {"events": []}
        stored = store.add("stream", record, session_id=session_id,
                           columns=cls._columns(record))
        record.update({key: stored[key] for key in ("id", "timestamp", "sessionId")
                       if key in stored})
        recorder = cls(store, record, max_frames=max_frames, max_bytes=max_bytes)
        recorder._started_epoch = now
        return recorder

    @staticmethod
    def _columns(record: dict[str, Any]) -> dict[str, Any]:
        """The store's indexed columns of a stream recording."""
        return {"protocol": record["protocol"], "path": record["metadata"]["path"],
                "name": record["name"], "state": record["status"]}

    # ------------------------------------------------------------------ frames

    def _relative(self) -> tuple[float, str]:
        elapsed = time.monotonic() - self._started
        return round(elapsed * 1000.0, 3), rfc3339(self._started_epoch + elapsed)

    def _admit(self, size: int) -> bool:
        """Whether one more item of ``size`` bytes fits; marks the recording truncated if not.
        Called under the lock."""
        if self.finished or self.truncated:
            return False
        if (len(self._items) >= self.max_frames
                or self._payload_bytes + size > self.max_bytes):
            self.truncated = True
            return False
        self._payload_bytes += size
        return True

    def websocket_frame(self, direction: str, frame_type: str, data: str | bytes) -> None:
        """Record one WebSocket frame: ``direction`` ``c2s`` or ``s2c``; ``frame_type`` one of
        ``text``, ``binary``, ``ping``, ``pong``, ``close``; ``data`` text or bytes (binary,
        ping and pong payloads are stored as base64). Raises ``ValueError`` for an unknown
        direction or type, or on an SSE recorder."""
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be c2s or s2c, not {direction!r}")
        if frame_type not in FRAME_TYPES:
            raise ValueError(f"frame type must be one of {', '.join(FRAME_TYPES)}, "
                             f"not {frame_type!r}")
        if self.protocol != "websocket":
            raise ValueError("websocket_frame() on an SSE recording")
        text, size = _payload(frame_type, data if data is not None else "")
        with self._lock:
            if not self._admit(size):
                return
            relative, stamp = self._relative()
            self._items.append({"direction": direction, "type": frame_type, "data": text,
                                "timestamp": stamp, "relativeMs": relative})
            stats = self.record["stats"]
            stats["frameCount"] += 1
            stats["bytesSent" if direction == "s2c" else "bytesReceived"] += size
            self._unflushed += 1
        self._maybe_flush()

    def sse_event(self, data: str, *, event_type: str | None = None,
                  event_id: str | None = None) -> None:
        """Record one SSE event as the client received it: ``data`` (the lines joined by
        ``\\n``), ``event_type`` (``message`` when absent), ``event_id`` (None when absent).
        Raises ``ValueError`` on a WebSocket recorder."""
        if self.protocol != "sse":
            raise ValueError("sse_event() on a WebSocket recording")
        text = data if isinstance(data, str) else bytes(data).decode("utf-8", errors="replace")
        size = len(text.encode("utf-8"))
        with self._lock:
            if not self._admit(size):
                return
            relative, stamp = self._relative()
            self._items.append({"type": event_type or "message", "data": text,
                                "id": event_id, "timestamp": stamp, "relativeMs": relative})
            stats = self.record["stats"]
            stats["frameCount"] += 1
            stats["bytesSent"] += size
            self._unflushed += 1
        self._maybe_flush()

    def close(self, code: int | None = None, reason: str = "") -> None:
        """Keep the WebSocket close code and reason (the first call wins; later calls with a
        code fill in a missing one)."""
        if self.protocol != "websocket":
            return
        with self._lock:
            part = self.record["websocket"]
            if part["closeCode"] is None and code is not None:
                part["closeCode"] = int(code)
                part["closeReason"] = reason or ""

    # ------------------------------------------------------------------ writing

    @property
    def frame_count(self) -> int:
        """Frames (or events) recorded so far."""
        return len(self._items)

    def snapshot(self) -> dict[str, Any]:
        """A copy of the document as it is now (frames so far; ``duration`` up to now)."""
        with self._lock:
            document = orjson.loads(orjson.dumps(self.record))
        if not self.finished:
            document["duration"] = round((time.monotonic() - self._started) * 1000.0, 3)
        return document

    def _maybe_flush(self) -> None:
        if self._unflushed >= FLUSH_EVERY_FRAMES or (
                self._unflushed and time.monotonic() - self._last_flush >= FLUSH_EVERY_SECONDS):
            self._write()

    def _write(self) -> dict[str, Any]:
        """Write the document as it is now to the store (re-adding it under its id when the
        store dropped it meanwhile) and return the written copy."""
        with self._lock:
            self._unflushed = 0
            self._last_flush = time.monotonic()
            self.record["stats"]["fileSizeBytes"] = 0
            size = len(orjson.dumps(self.record))
            self.record["stats"]["fileSizeBytes"] = size
            document = orjson.loads(orjson.dumps(self.record))
        columns = self._columns(document)
        if not self.store.replace(self.id, document, columns=columns):
            self.store.add("stream", document, session_id=document.get("sessionId"),
                           columns=columns)
        return document

    def finish(self, status: str = "complete") -> dict[str, Any]:
        """End the recording: set ``endTime``, ``duration`` (ms) and ``status`` (``complete``
        unless given; ``incomplete`` whenever a bound cut frames off), write it and return the
        stored document. A second call returns the document again without writing."""
        if status not in STATUSES or status == "recording":
            raise ValueError(f"status must be complete, incomplete or corrupted, not {status!r}")
        with self._lock:
            if self.finished:
                return orjson.loads(orjson.dumps(self.record))
            self.finished = True
            elapsed = time.monotonic() - self._started
            self.record["endTime"] = rfc3339(self._started_epoch + elapsed)
            self.record["duration"] = round(elapsed * 1000.0, 3)
            self.record["status"] = "incomplete" if (self.truncated
                                                     and status == "complete") else status
        return self._write()
