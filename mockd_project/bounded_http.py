"""A bound on the request head (request line plus headers) of every HTTP listener.

httptools (llhttp) reads a head of any size, and the request log keeps what it read, so one
client could make the server hold gigabytes. A head over :data:`MAX_HEAD_BYTES` is answered
``431 {"error":"header_too_large",...}`` and the connection closed; nothing of that request
reaches the app or the log. Django-free: the engine start path uses it.
"""
from __future__ import annotations

from typing import Any

#: Request line plus header names and values, per request (bytes). The recording proxy
#: bounds its heads the same way.
MAX_HEAD_BYTES = 64 * 1024

_BODY = (b'{"error":"header_too_large","message":"the request line and headers are over '
         + str(MAX_HEAD_BYTES).encode() + b' bytes"}')
RESPONSE_431 = (b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                b"content-type: application/json\r\nconnection: close\r\n"
                b"content-length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY)

_bounded: dict[type, type] = {}


def bounded_head(protocol_class: type) -> type:
    """A subclass of uvicorn's httptools ``protocol_class`` (``HttpToolsProtocol`` or one
    derived from it) that counts each request's head as httptools parses it and, past
    :data:`MAX_HEAD_BYTES`, writes the 431 answer, closes the connection and ignores the rest
    of the request (no app call, no log entry). Cached per class."""
    bounded = _bounded.get(protocol_class)
    if bounded is not None:
        return bounded

    class BoundedHeadProtocol(protocol_class):  # type: ignore[misc, valid-type]
        _head_bytes = 0
        _refused = False

        def on_message_begin(self) -> None:
            self._head_bytes = 0
            super().on_message_begin()

        def _within_bound(self, size: int) -> bool:
            if self._refused:
                return False
            self._head_bytes += size
            if self._head_bytes <= MAX_HEAD_BYTES:
                return True
            self._refused = True
            self.transport.write(RESPONSE_431)
            self.transport.close()
            return False

        def on_url(self, url: bytes) -> None:
            if self._within_bound(len(url)):
                super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            if self._within_bound(len(name) + len(value) + 4):
                super().on_header(name, value)

        def on_headers_complete(self) -> None:
            if not self._refused:
                super().on_headers_complete()

        def on_body(self, body: bytes) -> None:
            if not self._refused:
                super().on_body(body)

        def on_message_complete(self) -> None:
            if not self._refused:
                super().on_message_complete()

        def data_received(self, data: bytes) -> None:
            if not self._refused:
                super().data_received(data)

    BoundedHeadProtocol.__name__ = BoundedHeadProtocol.__qualname__ = (
        f"BoundedHead{protocol_class.__name__}")
    _bounded[protocol_class] = BoundedHeadProtocol
    return BoundedHeadProtocol


def bounded_httptools() -> Any:
    """uvicorn's plain httptools protocol with the head bound (:func:`bounded_head`)."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    return bounded_head(HttpToolsProtocol)
