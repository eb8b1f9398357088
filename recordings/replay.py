"""Replays of stream recordings on the data plane.

``POST /stream-recordings/{id}/replay`` arms a :class:`ReplaySession` at the recording's path
(status ``pending``). The next client that connects there (a WebSocket upgrade, or a ``GET``
with ``Accept: text/event-stream`` for an SSE recording) is served the recorded server frames
instead of any mock:

* ``pure``: every server frame at its recorded time × ``timingScale`` (0.5 plays twice as
  fast; 0 sends at once); client frames are read and ignored.
* ``synchronized``: before the server frames that followed a recorded client frame, the
  replay waits (status ``waiting``, at most ``timeout`` ms) for the client to send a frame;
  with ``strictMatching`` a frame of another type or text aborts the replay (close 1008).
  The server frames after it keep their recorded gaps × ``timingScale``. An SSE recording has
  no client frames, so it plays as ``pure``.
* ``triggered``: a server frame goes out only when ``POST /replay/{id}/advance`` allows it:
  ``{count: n}`` sends the next n server frames, ``{until: i}`` every server frame up to
  recording frame index i (0-based; ``currentFrame`` counts the same way).

Statuses: ``pending`` (no client yet), ``playing``, ``waiting`` (for a client frame or an
advance), ``paused``, ``complete``, ``aborted`` (stopped, client gone, strict mismatch or
timeout). Pausing holds the timeline; resuming continues where it stopped. Ping and pong
frames are not replayed (an ASGI app cannot send them); a recorded close frame closes the
connection with the recorded code.

All of it runs on the engine's event loop; the data plane's check when nothing is armed is
one truth test of :data:`PENDING`.

Source: behavior notes §1 "Connections, protocol handlers, stream recordings" (replay
routes, statuses); SPEC "Stream recordings". Django-free.
"""
from __future__ import annotations

import asyncio
import base64
import binascii
import secrets
import time
from typing import Any

from mocks.protocols.streaming.framing import SseEvent, encode_sse_event
from recordings.streams import rfc3339

MODES = ("pure", "synchronized", "triggered")
FINISHED = ("complete", "aborted")
#: ``(protocol, path)`` -> the replay waiting for its client. Empty: nothing armed.
PENDING: dict[tuple[str, str], "ReplaySession"] = {}
#: Every replay session by id (finished ones too, the oldest dropped past :data:`MAX_SESSIONS`).
SESSIONS: dict[str, "ReplaySession"] = {}
MAX_SESSIONS = 200
#: Client frames buffered while a replay does not read them (more are dropped).
MAX_QUEUED_CLIENT_FRAMES = 1000
DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 3_600_000
MAX_TIMING_SCALE = 100.0
CLOSE_NORMAL, CLOSE_GOING_AWAY, CLOSE_POLICY_VIOLATION = 1000, 1001, 1008


class ReplayError(Exception):
    """A replay request that cannot be served: ``status`` (400, 404, 409), ``code``
    (``validation_error``, ``not_found``, ``conflict``) and ``message``."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class _Stopped(Exception):
    """The replay was stopped (admin, client gone, mismatch, timeout); ``reason`` says why."""

    def __init__(self, reason: str, close_code: int = CLOSE_NORMAL):
        super().__init__(reason)
        self.reason = reason
        self.close_code = close_code


def _number(options: dict[str, Any], key: str, default: float, low: float,
            high: float) -> float:
    value = options.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            low <= value <= high):
        raise ReplayError(400, "validation_error",
                          f"{key}: must be a number from {low:g} to {high:g}")
    return float(value)


class ReplaySession:
    """One replay of one recording (see the module docstring).

    Attributes:
        id: the replay session id (``rpl_…``).
        recording: the stored recording document being replayed.
        mode, timing_scale, strict, timeout_seconds: the options given at start.
        status: see the module docstring.
        current_frame: index (into the recording's frames or events) of the next frame.
        frames_sent: server frames (or events) sent so far.
    """

    def __init__(self, recording: dict[str, Any], mode: str, timing_scale: float,
                 strict: bool, timeout_ms: float):
        self.id = "rpl_" + secrets.token_hex(8)
        self.recording = recording
        self.protocol: str = recording["protocol"]
        self.path: str = recording["metadata"]["path"]
        part = recording.get(self.protocol) or {}
        self.frames: list[dict[str, Any]] = list(
            part.get("frames" if self.protocol == "websocket" else "events") or [])
        self.mode = mode
        self.timing_scale = timing_scale
        self.strict = strict
        self.timeout_ms = timeout_ms
        self.status = "pending"
        self.current_frame = 0
        self.frames_sent = 0
        self.message = ""
        self.created_at = time.time()
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self._changed = asyncio.Event()
        self._stop: _Stopped | None = None
        self._paused_from: str | None = None
        self._pause_started = 0.0
        self._origin = 0.0
        self._credits = 0
        self._until = -1
        self._client_frames: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(
            MAX_QUEUED_CLIENT_FRAMES)

    # ------------------------------------------------------------------ status
    def to_dict(self) -> dict[str, Any]:
        """The status document of ``GET /replay/{id}``."""
        return {"id": self.id, "sessionId": self.id, "recordingId": self.recording["id"],
                "protocol": self.protocol, "path": self.path, "mode": self.mode,
                "status": self.status, "currentFrame": self.current_frame,
                "totalFrames": len(self.frames), "framesSent": self.frames_sent,
                "timingScale": self.timing_scale, "strictMatching": self.strict,
                "timeout": int(self.timeout_ms), "createdAt": rfc3339(self.created_at),
                "startedAt": rfc3339(self.started_at) if self.started_at else None,
                "endedAt": rfc3339(self.ended_at) if self.ended_at else None,
                "message": self.message}

    def _end(self, status: str, message: str = "") -> None:
        self.status = status
        self.message = message
        self.ended_at = time.time()
        if PENDING.get((self.protocol, self.path)) is self:
            del PENDING[(self.protocol, self.path)]

    # ------------------------------------------------------------------ admin actions
    def stop(self, reason: str = "stopped by the admin") -> None:
        """Abort the replay (a pending one is disarmed; a playing one closes its client)."""
        if self.status in FINISHED:
            return
        if self.status == "pending":
            self._end("aborted", reason)
            return
        self._stop = _Stopped(reason)
        self._changed.set()

    def pause(self) -> None:
        """Hold the timeline. Raises :class:`ReplayError` 409 unless playing or waiting."""
        if self.status not in ("playing", "waiting"):
            raise ReplayError(409, "conflict", f"replay {self.id} is {self.status}; only a "
                                               f"playing or waiting replay can be paused")
        self._paused_from = self.status
        self._pause_started = asyncio.get_running_loop().time()
        self.status = "paused"
        self._changed.set()

    def resume(self) -> None:
        """Continue a paused replay where it stopped. Raises :class:`ReplayError` 409 unless
        paused."""
        if self.status != "paused":
            raise ReplayError(409, "conflict", f"replay {self.id} is {self.status}, not "
                                               f"paused")
        self._origin += asyncio.get_running_loop().time() - self._pause_started
        self.status = self._paused_from or "playing"
        self._paused_from = None
        self._changed.set()

    def advance(self, count: Any = None, until: Any = None) -> None:
        """Allow more server frames of a ``triggered`` replay: ``count`` more (default 1), or
        every one up to frame index ``until``. Raises :class:`ReplayError` 400 for another
        mode or bad values, 409 for a finished replay."""
        if self.mode != "triggered":
            raise ReplayError(400, "validation_error",
                              f"advance works on triggered replays only; this one is "
                              f"{self.mode}")
        if self.status in FINISHED:
            raise ReplayError(409, "conflict", f"replay {self.id} is {self.status}")
        if until is not None:
            if isinstance(until, bool) or not isinstance(until, int) or until < 0:
                raise ReplayError(400, "validation_error",
                                  "until: must be a frame index (an integer, 0 or more)")
            self._until = max(self._until, until)
        if count is not None or until is None:
            count = 1 if count is None else count
            if isinstance(count, bool) or not isinstance(count, int) or not (
                    1 <= count <= 1_000_000):
                raise ReplayError(400, "validation_error",
                                  "count: must be an integer from 1 to 1000000")
            self._credits += count
        self._changed.set()

    # ------------------------------------------------------------------ timeline
    def _check(self) -> None:
        if self._stop is not None:
            raise self._stop

    async def _wait_change(self, seconds: float | None) -> None:
        self._changed.clear()
        try:
            async with asyncio.timeout(seconds):
                await self._changed.wait()
        except TimeoutError:
            pass

    async def _hold_while_paused(self) -> None:
        while self.status == "paused":
            self._check()
            await self._wait_change(None)
        self._check()

    async def _sleep_until(self, offset_seconds: float) -> None:
        """Wait until ``offset_seconds`` after the timeline's origin (paused time excluded)."""
        loop = asyncio.get_running_loop()
        while True:
            await self._hold_while_paused()
            remaining = self._origin + offset_seconds - loop.time()
            if remaining <= 0:
                return
            await self._wait_change(remaining)

    async def _wait_for_trigger(self, index: int) -> None:
        while not (self._credits > 0 or index <= self._until):
            self._check()
            if self.status != "paused":
                self.status = "waiting"
            await self._wait_change(None)
        await self._hold_while_paused()
        if index > self._until:
            self._credits -= 1
        self.status = "playing"

    async def _expect_client_frame(self, frame: dict[str, Any]) -> None:
        """Wait for the client's frame matching recorded ``frame`` (synchronized mode)."""
        self.status = "waiting"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_ms / 1000.0
        while self._client_frames.empty():
            self._check()
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise _Stopped(f"no client frame within {int(self.timeout_ms)} ms "
                               f"(recorded frame {self.current_frame})", CLOSE_GOING_AWAY)
            await self._wait_change(remaining)
        received = self._client_frames.get_nowait()
        if received is None:
            raise _Stopped("the client disconnected")
        if self.strict and (received["type"] != frame.get("type")
                            or received["data"] != frame.get("data")):
            raise _Stopped(f"unexpected client frame at recorded frame {self.current_frame}",
                           CLOSE_POLICY_VIOLATION)
        await self._hold_while_paused()
        self.status = "playing"

    async def _play(self, emit: Any) -> None:
        """Send the recorded server frames through ``emit(frame)`` as the mode says."""
        loop = asyncio.get_running_loop()
        self.status = "playing"
        self.started_at = time.time()
        self._origin = loop.time()
        base_ms = 0.0
        for index, frame in enumerate(self.frames):
            self.current_frame = index
            relative_ms = float(frame.get("relativeMs") or 0.0)
            if frame.get("direction") == "c2s":
                if self.mode == "synchronized" and frame.get("type") in ("text", "binary"):
                    await self._expect_client_frame(frame)
                    self._origin, base_ms = loop.time(), relative_ms
                continue
            if self.mode == "triggered":
                await self._wait_for_trigger(index)
            else:
                await self._sleep_until(max(0.0, relative_ms - base_ms) / 1000.0
                                        * self.timing_scale)
            if await emit(frame) is False:
                self.current_frame = index + 1
                return
            self.frames_sent += 1
        self.current_frame = len(self.frames)

    def _client_frame(self, frame: dict[str, Any] | None) -> None:
        """A frame from the client (None: it disconnected), for synchronized waits."""
        if frame is None:
            self._stop = self._stop or _Stopped("the client disconnected")
        if not self._client_frames.full():
            self._client_frames.put_nowait(frame)
        self._changed.set()

    # ------------------------------------------------------------------ serving
    async def serve_websocket(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Serve one WebSocket connection (ASGI) from the recording."""
        first = await receive()
        if first.get("type") != "websocket.connect":
            self._end("aborted", "the client left before the handshake")
            return
        recorded_subprotocol = (self.recording.get("websocket") or {}).get("subprotocol")
        offered = [str(name) for name in scope.get("subprotocols") or ()]
        await send({"type": "websocket.accept",
                    "subprotocol": recorded_subprotocol if recorded_subprotocol in offered
                    else None})
        closed = False

        async def read() -> None:
            while True:
                message = await receive()
                kind = message.get("type")
                if kind == "websocket.disconnect":
                    self._client_frame(None)
                    return
                if kind == "websocket.receive":
                    text = message.get("text")
                    self._client_frame({"type": "text", "data": text} if text is not None else
                                       {"type": "binary", "data": base64.b64encode(
                                           message.get("bytes") or b"").decode("ascii")})

        async def emit(frame: dict[str, Any]) -> bool:
            nonlocal closed
            kind, data = frame.get("type"), frame.get("data") or ""
            if kind == "text":
                await send({"type": "websocket.send", "text": data})
            elif kind == "binary":
                try:
                    payload = base64.b64decode(data, validate=True)
                except (binascii.Error, ValueError):
                    payload = data.encode()
                await send({"type": "websocket.send", "bytes": payload})
            elif kind == "close":
                part = self.recording.get("websocket") or {}
                await send({"type": "websocket.close",
                            "code": int(part.get("closeCode") or CLOSE_NORMAL),
                            "reason": (part.get("closeReason") or data)[:120]})
                closed = True
                return False
            return True

        reader = asyncio.ensure_future(read())
        try:
            await self._play(emit)
            self._end("complete")
            if not closed:
                part = self.recording.get("websocket") or {}
                code = part.get("closeCode")
                await send({"type": "websocket.close",
                            "code": int(code) if code and 1000 <= int(code) < 5000
                            and int(code) not in (1005, 1006) else CLOSE_NORMAL,
                            "reason": "replay complete"})
        except _Stopped as stopped:
            self._end("aborted", stopped.reason)
            if stopped.reason != "the client disconnected":
                try:
                    await send({"type": "websocket.close", "code": stopped.close_code,
                                "reason": stopped.reason[:120]})
                except Exception:  # noqa: BLE001 - the client may be gone already
                    pass
        except Exception as error:  # noqa: BLE001 - a send to a gone client ends the replay
            self._end("aborted", f"connection failed: {type(error).__name__}")
        finally:
            if not reader.done():
                # Wait (bounded) for the client's close so the handshake completes.
                try:
                    async with asyncio.timeout(5):
                        await asyncio.shield(reader)
                except (TimeoutError, Exception):  # noqa: BLE001
                    reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)

    async def serve_sse(self, receive: Any, send: Any) -> None:
        """Serve one SSE request (ASGI ``http``; its body already read) from the recording."""
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"),
                                (b"cache-control", b"no-cache"),
                                (b"x-accel-buffering", b"no")]})

        async def read() -> None:
            while True:
                message = await receive()
                if message.get("type") == "http.disconnect":
                    self._client_frame(None)
                    return

        async def emit(event: dict[str, Any]) -> bool:
            kind = event.get("type")
            await send({"type": "http.response.body", "more_body": True,
                        "body": encode_sse_event(SseEvent(
                            type=None if kind in (None, "message") else kind,
                            data=event.get("data"), id=event.get("id")))})
            return True

        reader = asyncio.ensure_future(read())
        complete = True
        try:
            await self._play(emit)
            self._end("complete")
        except _Stopped as stopped:
            self._end("aborted", stopped.reason)
            complete = stopped.reason != "the client disconnected"
        except Exception as error:  # noqa: BLE001 - a send to a gone client ends the replay
            self._end("aborted", f"connection failed: {type(error).__name__}")
            complete = False
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        if complete:
            try:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            except Exception:  # noqa: BLE001
                pass


# ---------------------------------------------------------------------- registry

def start(recording: dict[str, Any], options: dict[str, Any]) -> ReplaySession:
    """Arm a replay of ``recording`` (a stored stream recording) with ``options``
    ``{mode, timingScale?, strictMatching?, timeout? (ms)}``. Raises :class:`ReplayError`:
    400 ``validation_error`` naming the key, 409 ``conflict`` when the recording is still
    recording, another replay already waits at its path, or :data:`MAX_SESSIONS` are active."""
    if not isinstance(options, dict):
        raise ReplayError(400, "validation_error", "body: must be a JSON object")
    mode = options.get("mode", "pure")
    if mode not in MODES:
        raise ReplayError(400, "validation_error",
                          f"mode: must be pure, synchronized or triggered, not {mode!r}")
    scale = _number(options, "timingScale", 1.0, 0.0, MAX_TIMING_SCALE)
    timeout_ms = _number(options, "timeout", DEFAULT_TIMEOUT_MS, 1, MAX_TIMEOUT_MS)
    strict = options.get("strictMatching", False)
    if not isinstance(strict, bool):
        raise ReplayError(400, "validation_error", "strictMatching: must be true or false")
    unknown = sorted(set(options) - {"mode", "timingScale", "strictMatching", "timeout"})
    if unknown:
        raise ReplayError(400, "validation_error", f"{unknown[0]}: unknown key")
    if recording.get("status") == "recording":
        raise ReplayError(409, "conflict", f"recording {recording['id']} is still recording; "
                                           f"stop it first (POST /stream-recordings/"
                                           f"{recording['id']}/stop)")
    session = ReplaySession(recording, mode, scale, strict, timeout_ms)
    key = (session.protocol, session.path)
    waiting = PENDING.get(key)
    if waiting is not None:
        raise ReplayError(409, "conflict", f"replay {waiting.id} already waits for a client at "
                                           f"{session.path}; stop it first (DELETE /replay/"
                                           f"{waiting.id})")
    if len(SESSIONS) >= MAX_SESSIONS:
        for old_id, old in list(SESSIONS.items()):
            if old.status in FINISHED:
                del SESSIONS[old_id]
                break
        else:
            raise ReplayError(409, "conflict", f"{MAX_SESSIONS} replays are active; stop one")
    SESSIONS[session.id] = session
    PENDING[key] = session
    return session


def take(protocol: str, path: str) -> ReplaySession | None:
    """The replay waiting at ``path`` for a ``protocol`` client, taken out of
    :data:`PENDING` (None when there is none)."""
    return PENDING.pop((protocol, path), None)


def put_back(session: ReplaySession) -> None:
    """Arm a taken replay again (its client was refused before the replay began)."""
    PENDING.setdefault((session.protocol, session.path), session)


def get(replay_id: str) -> ReplaySession:
    """The replay ``replay_id``. Raises :class:`ReplayError` 404 ``not_found``."""
    session = SESSIONS.get(replay_id)
    if session is None:
        raise ReplayError(404, "not_found", f"replay session {replay_id} not found")
    return session


def listing() -> list[dict[str, Any]]:
    """Every replay session's status, oldest first."""
    return [session.to_dict() for session in SESSIONS.values()]


def stop_all() -> None:
    """Stop every replay (server shutdown, tests)."""
    for session in list(SESSIONS.values()):
        session.stop("server stopping")
