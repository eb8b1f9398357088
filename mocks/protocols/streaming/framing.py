"""Framing: how the items of a stream become bytes on the wire, one tiny class per format.

Every framing has the same four members, read by the one sender
(:func:`~mocks.protocols.streaming.sender.serve_stream`):

* ``content_type`` — the ``Content-Type`` header value (bytes);
* ``opening()`` — bytes sent right after the headers (``b""`` for none);
* ``frame(item)`` — the bytes of one item;
* ``keepalive`` — the bytes of an idle ping, or ``None`` when the format has none.

Source: STYLE §11 ("Framing per format is a tiny class"); behavior notes §9 (SSE encoding,
``retry: 3000`` opening, keepalive comment; chunked and NDJSON framing).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

#: The SSE stream's first bytes: a reconnection time of 3000 ms (behavior notes §9).
SSE_OPENING = b"retry: 3000\n\n"
#: The idle ping of an SSE stream (a comment: clients dispatch nothing for it).
SSE_KEEPALIVE = b": keepalive\n\n"
#: The last event of every open SSE stream when the server stops (SIGTERM/SIGINT): clients
#: can tell a shutdown from a dropped connection (docs/operations.md).
SSE_SHUTDOWN_EVENT = b"event: shutdown\ndata: server shutting down\n\n"
#: Largest ``data`` payload of one SSE event in bytes (behavior notes §9 and §18: 1 MiB).
MAX_EVENT_PAYLOAD_BYTES = 1024 * 1024

# SSE ends a line at CRLF, LF or CR (WHATWG "event stream interpretation"); str.splitlines()
# would also split at form feeds and Unicode separators, which SSE keeps inside a line.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def payload_text(data: Any) -> str:
    """An event payload as the text of its ``data:`` lines: strings as they are, every other
    JSON value as compact JSON (behavior notes §9 "Encoding")."""
    if isinstance(data, str):
        return data
    return orjson.dumps(data).decode()


@dataclass(slots=True)
class SseEvent:
    """One server-sent event ready to frame.

    Attributes:
        type: the ``event:`` name, or None for the default ``message``.
        data: the payload text (see :func:`payload_text`), or None for no ``data:`` line.
        id: the ``id:`` (``Last-Event-ID`` resumption), or None.
        retry: the ``retry:`` reconnection time in ms, or None.
        comment: text sent as ``: …`` comment lines before the fields, or None.
        position: the event's place in its mock's event sequence (0-based); resumption
            continues after it.
    """

    type: str | None = None
    data: str | None = None
    id: str | None = None
    retry: int | None = None
    comment: str | None = None
    position: int = 0


def encode_sse_event(event: SseEvent) -> bytes:
    """The wire form of one event: ``: comment`` lines, ``event:``, ``id:``, ``retry:``, one
    ``data: `` line per payload line, then a blank line (behavior notes §9 "Encoding")."""
    lines: list[str] = []
    if event.comment is not None:
        lines.extend(f": {line}" for line in _LINE_BREAK.split(event.comment))
    if event.type is not None:
        lines.append(f"event: {event.type}")
    if event.id is not None:
        lines.append(f"id: {event.id}")
    if event.retry is not None:
        lines.append(f"retry: {event.retry}")
    if event.data is not None:
        lines.extend(f"data: {line}" for line in _LINE_BREAK.split(event.data))
    lines.append("\n")
    return "\n".join(lines).encode()


class SseFraming:
    """``text/event-stream``: opens with ``retry: 3000``, frames :class:`SseEvent` items,
    pings with ``: keepalive``.

    ``opening_inline`` moves the opening ``retry: 3000`` line into the first event's block
    instead of a block of its own: the ``llm-chat`` template needs this because the OpenAI
    SDK turns a data-less ``retry`` block into an event and fails to parse its empty data as
    JSON (checked with openai 1.x-3.x ``SSEDecoder``).
    """

    content_type = b"text/event-stream"
    keepalive = SSE_KEEPALIVE
    #: sent before the end of the response when the server stops
    shutdown = SSE_SHUTDOWN_EVENT

    def __init__(self, opening_inline: bool = False):
        self._opening_pending = opening_inline

    def opening(self) -> bytes:
        return b"" if self._opening_pending else SSE_OPENING

    def frame(self, item: SseEvent) -> bytes:
        frame = encode_sse_event(item)
        if self._opening_pending:
            self._opening_pending = False
            return SSE_OPENING[:-1] + frame  # "retry: 3000\n" then the event's lines
        return frame


class ChunkedFraming:
    """``application/octet-stream``: every item is a bytes piece sent as it is."""

    content_type = b"application/octet-stream"
    keepalive = None

    def opening(self) -> bytes:
        return b""

    def frame(self, item: bytes) -> bytes:
        return item


class NdjsonFraming:
    """``application/x-ndjson``: every item is one JSON value on one line (compact JSON; a
    ``bytes`` item is taken as an already written line, e.g. a line of ``chunked.data``)."""

    content_type = b"application/x-ndjson"
    keepalive = None

    def opening(self) -> bytes:
        return b""

    def frame(self, item: Any) -> bytes:
        if isinstance(item, bytes):
            return item + b"\n"
        return orjson.dumps(item) + b"\n"
