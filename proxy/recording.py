"""What the proxy records and how: recording filters, the body cap, redaction, and the parsers
that turn relayed bytes into stream recordings (SSE events, WebSocket frames).

* :class:`Filters`: ``includePaths``, ``excludePaths``, ``includeHosts``, ``excludeHosts``
  (shell-style globs: ``*``, ``?``, ``[...]``; hosts compare case-insensitively, without the
  port). An exchange is recorded when its host and path pass; a ``CONNECT`` to a host that does
  not pass is tunnelled (never decrypted).
* :class:`BodyTap`: keeps at most ``cap`` bytes of a streamed body (the rest is relayed, not
  kept; ``bodyTruncated`` says so).
* :class:`RecordingRedaction`: the request log's :class:`~mocks.core.redaction.Redaction`
  (``filterHeaders``, ``filterQueryParams``, ``filterBodyKeys``, ``redactValue``) applied to a
  recording: header values, the URL's query, form bodies, and JSON bodies (a ``filterBodyKeys``
  name hides that key at any depth; a name starting with ``$`` is a JSONPath).
* :class:`SSEParser` and :class:`WebSocketTap`: incremental parsers fed with relayed bytes.

Source: SPEC "Admin-side records" (HTTP recording, stream recording, redaction defaults),
"Proxy and stream recording"; behavior notes §1 (recording shape).

Django-free; objects are used from the engine loop only.
"""
from __future__ import annotations

import base64
import fnmatch
from dataclasses import dataclass, field
from typing import Any, Iterable

import orjson

from mocks.core.redaction import DEFAULT_REDACTION, Redaction

#: Bytes of each body a recording keeps by default.
DEFAULT_BODY_CAP = 1024 * 1024
#: Patterns per filter list, and characters per pattern.
MAX_PATTERNS, MAX_PATTERN_LENGTH = 200, 1000
FILTER_KEYS = ("includePaths", "excludePaths", "includeHosts", "excludeHosts")


def _patterns(document: dict[str, Any], key: str) -> tuple[str, ...]:
    value = document.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"filters.{key} must be a list of glob strings")
    if len(value) > MAX_PATTERNS:
        raise ValueError(f"filters.{key} has {len(value)} patterns; at most {MAX_PATTERNS}")
    for item in value:
        if not item or len(item) > MAX_PATTERN_LENGTH:
            raise ValueError(f"filters.{key}: a pattern must have 1 to {MAX_PATTERN_LENGTH} "
                             f"characters")
    return tuple(value)


@dataclass(frozen=True)
class Filters:
    """Recording filters (see the module docstring). Empty include lists include everything."""

    include_paths: tuple[str, ...] = ()
    exclude_paths: tuple[str, ...] = ()
    include_hosts: tuple[str, ...] = ()
    exclude_hosts: tuple[str, ...] = ()

    @classmethod
    def from_document(cls, document: Any) -> "Filters":
        """Filters from ``{includePaths?, excludePaths?, includeHosts?, excludeHosts?}``
        (None: no filters). Raises :class:`ValueError` naming the key for a bad value or an
        unknown key."""
        if document is None:
            return cls()
        if not isinstance(document, dict):
            raise ValueError("filters must be an object with includePaths, excludePaths, "
                             "includeHosts, excludeHosts")
        unknown = sorted(set(document) - set(FILTER_KEYS))
        if unknown:
            raise ValueError(f"filters.{unknown[0]} is not a filter; use one of "
                             f"{', '.join(FILTER_KEYS)}")
        return cls(_patterns(document, "includePaths"), _patterns(document, "excludePaths"),
                   tuple(p.lower() for p in _patterns(document, "includeHosts")),
                   tuple(p.lower() for p in _patterns(document, "excludeHosts")))

    def document(self) -> dict[str, list[str]]:
        """``{includePaths, excludePaths, includeHosts, excludeHosts}`` (lists, maybe empty)."""
        return {"includePaths": list(self.include_paths),
                "excludePaths": list(self.exclude_paths),
                "includeHosts": list(self.include_hosts),
                "excludeHosts": list(self.exclude_hosts)}

    @staticmethod
    def _passes(value: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> bool:
        if include and not any(fnmatch.fnmatchcase(value, pattern) for pattern in include):
            return False
        return not any(fnmatch.fnmatchcase(value, pattern) for pattern in exclude)

    def host_passes(self, host: str) -> bool:
        """Whether traffic to ``host`` (a host name or address, no port) may be recorded."""
        return self._passes(host.lower(), self.include_hosts, self.exclude_hosts)

    def records(self, host: str, path: str) -> bool:
        """Whether an exchange with ``host`` (no port) on ``path`` (no query) is recorded."""
        return self.host_passes(host) and self._passes(path, self.include_paths,
                                                        self.exclude_paths)


class BodyTap:
    """The first ``cap`` bytes of a body seen chunk by chunk (see the module docstring).

    Attributes:
        size: bytes seen in all.
        truncated: True once more than ``cap`` bytes were seen.
    """

    __slots__ = ("cap", "_parts", "_kept", "size", "truncated")

    def __init__(self, cap: int = DEFAULT_BODY_CAP):
        self.cap = cap
        self._parts: list[bytes] = []
        self._kept = 0
        self.size = 0
        self.truncated = False

    def feed(self, chunk: bytes) -> None:
        """Count ``chunk`` and keep what fits under the cap."""
        self.size += len(chunk)
        room = self.cap - self._kept
        if room <= 0:
            self.truncated = self.truncated or bool(chunk)
            return
        if len(chunk) > room:
            self.truncated = True
            chunk = chunk[:room]
        self._parts.append(bytes(chunk))
        self._kept += len(chunk)

    def value(self) -> bytes:
        """The kept bytes."""
        return b"".join(self._parts)


def header_lists(headers: Iterable[tuple[bytes, bytes]]) -> dict[str, list[str]]:
    """``{name: [values]}`` of raw header pairs, names as sent, values decoded as Latin-1."""
    result: dict[str, list[str]] = {}
    for name, value in headers:
        result.setdefault(name.decode("latin-1"), []).append(value.decode("latin-1"))
    return result


def _content_type(headers: dict[str, list[str]]) -> str:
    for name, values in headers.items():
        if name.lower() == "content-type" and values:
            return values[0].lower()
    return ""


class RecordingRedaction:
    """Redaction of HTTP recordings (see the module docstring).

    Args:
        redaction: the request log's compiled settings (default: the SPEC defaults).
    """

    def __init__(self, redaction: Redaction = DEFAULT_REDACTION):
        self.redaction = redaction
        names = redaction.body_keys.names
        self._paths = []
        for name in names:
            if name.startswith("$"):
                try:
                    from jsonpath_ng.ext import parse

                    self._paths.append(parse(name))
                except Exception:  # noqa: BLE001 - a bad path hides nothing, never breaks
                    continue

    def headers(self, headers: dict[str, list[str]]) -> dict[str, list[str]]:
        """``headers`` with listed values hidden (the scheme / cookie names kept)."""
        header = self.redaction.header
        return {name: [header(name, value) for value in values]
                for name, values in headers.items()}

    def url(self, url: str) -> str:
        """``url`` with listed query parameters hidden."""
        base, separator, query = url.partition("?")
        return base + separator + self.redaction.query(query) if separator else url

    def body(self, body: bytes, headers: dict[str, list[str]], truncated: bool) -> bytes:
        """``body`` with listed fields of a form or JSON body hidden (other bodies, and a
        truncated JSON body that cannot be parsed, come back unchanged)."""
        if not body:
            return body
        content_type = _content_type(headers)
        if "x-www-form-urlencoded" in content_type:
            return self.redaction.form(body.decode("latin-1")).encode("latin-1")
        if "json" in content_type and not truncated:
            try:
                document = orjson.loads(body)
            except orjson.JSONDecodeError:
                return body
            changed = self._json(document)
            for path in self._paths:
                try:
                    if path.find(document):
                        path.update(document, self.redaction.value)
                        changed = True
                except Exception:  # noqa: BLE001 - see __init__
                    continue
            return orjson.dumps(document) if changed else body
        return body

    def _json(self, node: Any) -> bool:
        keys = self.redaction.body_keys
        changed = False
        if isinstance(node, dict):
            for key, value in node.items():
                if key in keys:
                    node[key] = self.redaction.value
                    changed = True
                else:
                    changed = self._json(value) or changed
        elif isinstance(node, list):
            for item in node:
                changed = self._json(item) or changed
        return changed


def b64(data: bytes) -> str:
    """``data`` as a base64 string (bodies of recordings)."""
    return base64.b64encode(data).decode("ascii")


@dataclass
class SSEParser:
    """An incremental ``text/event-stream`` parser (WHATWG "event stream interpretation"):
    :meth:`feed` takes relayed bytes and returns the events completed by them as
    ``(type, data, id)``. Lines longer than ``max_line`` are cut (the stream is relayed
    whole; only the recording is bounded)."""

    max_line: int = 1024 * 1024
    _buffer: bytes = b""
    _data: list[str] = field(default_factory=list)
    _type: str | None = None
    _id: str | None = None

    def feed(self, chunk: bytes) -> list[tuple[str | None, str, str | None]]:
        """Events completed by ``chunk``."""
        events: list[tuple[str | None, str, str | None]] = []
        buffer = self._buffer + chunk
        buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        *lines, rest = buffer.split(b"\n")
        self._buffer = rest[: self.max_line]
        for raw in lines:
            line = raw[: self.max_line].decode("utf-8", "replace")
            if not line:
                if self._data:
                    events.append((self._type, "\n".join(self._data), self._id))
                self._data, self._type = [], None
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._type = value or None
            elif name == "id":
                self._id = value
        return events


class WebSocketTap:
    """Feeds relayed WebSocket bytes of one direction to a stream recorder, frame by frame.

    ``direction`` is ``c2s`` (masked frames from the client) or ``s2c``. A fragmented
    message is recorded once, when its last fragment arrives; control frames (ping, pong,
    close) as they come. Bytes that do not parse stop the tap (the relay goes on) and mark
    the recording ``corrupted``.

    Args:
        recorder: a :class:`recordings.streams.StreamRecorder` (``websocket_frame``,
            ``close``).
        direction: ``c2s`` or ``s2c``.
        max_message: bytes of one message kept (longer messages are cut).
    """

    def __init__(self, recorder: Any, direction: str, max_message: int = DEFAULT_BODY_CAP):
        from wsproto.frame_protocol import FrameProtocol

        self.recorder = recorder
        self.direction = direction
        self.max_message = max_message
        self.failed = False
        self.closed = False
        self._protocol = FrameProtocol(client=direction == "s2c", extensions=[])
        self._parts: list[Any] = []
        self._size = 0

    def feed(self, data: bytes) -> None:
        """Parse ``data`` and record the frames it completes."""
        if self.failed or self.closed:
            return
        from wsproto.frame_protocol import Opcode, ParseFailed

        try:
            self._protocol.receive_bytes(data)
            for frame in self._protocol.received_frames():
                opcode = frame.opcode
                if opcode is Opcode.CLOSE:
                    code, reason = frame.payload  # type: ignore[misc]
                    self.recorder.websocket_frame(self.direction, "close",
                                                  f"{int(code)} {reason}".strip())
                    self.recorder.close(int(code), reason)
                    self.closed = True
                    return
                if opcode in (Opcode.PING, Opcode.PONG):
                    self.recorder.websocket_frame(self.direction, opcode.name.lower(),
                                                  bytes(frame.payload))  # type: ignore[arg-type]
                    continue
                if self._size < self.max_message:
                    payload = frame.payload
                    self._parts.append(payload)
                    self._size += len(payload)  # type: ignore[arg-type]
                if frame.message_finished:
                    if opcode is Opcode.TEXT or (self._parts and isinstance(self._parts[0], str)):
                        text = "".join(self._parts)[: self.max_message]
                        self.recorder.websocket_frame(self.direction, "text", text)
                    else:
                        blob = b"".join(bytes(p) for p in self._parts)[: self.max_message]
                        self.recorder.websocket_frame(self.direction, "binary", blob)
                    self._parts, self._size = [], 0
        except (ParseFailed, ValueError, TypeError):
            self.failed = True
