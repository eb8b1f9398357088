"""The bytes a client sends before ``amqtt`` parses them: bounded readers and the CONNECT check.

Every connection of a broker (TCP, TLS or WebSocket) is read through an
:class:`IntakeReader`: a packet whose remaining length exceeds :data:`MAX_PACKET_BYTES` closes
the connection (:class:`NotAcceptable`), and the first packet is read whole and checked by
:func:`check_connect` before the library sees it:

* MQTT 3.1.1 (protocol name ``MQTT``, level 4) passes unchanged;
* MQTT 3.1 (``MQIsdp``, level 3; the two versions differ only in these bytes and in the
  CONNACK flags) is handed to the library as 3.1.1, and :attr:`IntakeReader.version` says
  ``"3.1"`` so the broker sends it a CONNACK without the session-present flag;
* any other level of ``MQTT`` or ``MQIsdp`` (MQTT 5 included) is refused at once with the
  3.1.1 CONNACK return code 1, "unacceptable protocol version" (:data:`CONNACK_BAD_VERSION`),
  which MQTT 5 clients read as "Unsupported protocol version";
* another first packet (not a CONNECT, another protocol name, HTTP) closes the connection
  without an answer.

The WebSocket reader (:class:`WebSocketIntake`) also takes the packets from binary messages
(a text message closes the connection), and never keeps more than one packet plus one message
in memory.

Source: behavior notes §10 (``mqtt`` row); MQTT 3.1.1 §3.1.2.1-2 (protocol name and level),
§3.2.2.3 (return code 1), §6 (MQTT over WebSocket: binary messages, subprotocol ``mqtt``).
Django-free.
"""
from __future__ import annotations

import asyncio
from typing import Any, Awaitable

from amqtt.adapters import ReaderAdapter, WebSocketsWriter

#: The largest MQTT packet a client may send (remaining length), in bytes.
MAX_PACKET_BYTES = 1024 * 1024
#: The CONNACK that refuses a CONNECT with "unacceptable protocol version" (MQTT 3.1.1
#: return code 1, session present 0).
CONNACK_BAD_VERSION = b"\x20\x02\x00\x01"
#: ``(protocol name, level) -> the version name`` of the CONNECTs the broker serves.
ACCEPTED_VERSIONS = {(b"MQTT", 4): "3.1.1", (b"MQIsdp", 3): "3.1"}
_MQTT_311_HEADER = b"\x00\x04MQTT\x04"


class NotAcceptable(Exception):
    """What a client sent cannot be served: a packet over :data:`MAX_PACKET_BYTES`, a first
    packet that is no CONNECT, a text WebSocket message. Its connection is closed (amqtt ends
    the reader loop on an exception it does not know).

    Attributes:
        connack: the bytes to answer before closing (:data:`CONNACK_BAD_VERSION` for a
            protocol version the broker does not speak), or ``b""`` to close at once.
    """

    def __init__(self, message: str, connack: bytes = b""):
        super().__init__(message)
        self.connack = connack


def encode_length(size: int) -> bytes:
    """The MQTT variable-length encoding of ``size`` (0 to 268,435,455)."""
    out = bytearray()
    while True:
        size, digit = divmod(size, 128)
        out.append(digit | (0x80 if size else 0))
        if not size:
            return bytes(out)


def check_connect(body: bytes) -> tuple[str, bytes]:
    """``(version, body as MQTT 3.1.1)`` for the body (after the fixed header) of a CONNECT.

    ``version`` is ``"3.1.1"`` or ``"3.1"`` (see the module docstring); a 3.1 body comes back
    with the 3.1.1 protocol name and level, the rest unchanged. Raises
    :class:`NotAcceptable` with :data:`CONNACK_BAD_VERSION` for another level of ``MQTT`` or
    ``MQIsdp`` (MQTT 5 is level 5), and without a CONNACK for another protocol name or a
    body too short to hold one.
    """
    if len(body) < 3:
        raise NotAcceptable("a CONNECT too short to name its protocol")
    size = int.from_bytes(body[:2], "big")
    name = body[2:2 + size]
    if len(body) < 3 + size:
        raise NotAcceptable("a CONNECT too short to name its protocol")
    level = body[2 + size]
    version = ACCEPTED_VERSIONS.get((name, level))
    if version == "3.1.1":
        return version, body
    if version == "3.1":
        return version, _MQTT_311_HEADER + body[3 + size:]
    if name in (b"MQTT", b"MQIsdp"):
        raise NotAcceptable(f"protocol level {level} of {name.decode()} is not served (MQTT "
                            f"3.1 and 3.1.1 are; 5 is level 5)", CONNACK_BAD_VERSION)
    raise NotAcceptable(f"protocol name {name[:16]!r} is not MQTT")


class IntakeReader(ReaderAdapter):
    """A bounded reader of one connection (see the module docstring).

    :meth:`take_connect` reads the first packet whole and keeps it, checked and maybe
    rewritten, for the library's next reads; :meth:`read` refuses more than
    :data:`MAX_PACKET_BYTES` at once. Subclasses give :meth:`_read_exactly` (bytes, fewer
    only at the end of the stream).

    Attributes:
        version: ``"3.1.1"`` or ``"3.1"`` once the CONNECT is taken.
        transport: ``"tcp"`` or ``"websocket"``.
    """

    version = ""
    transport = "tcp"

    def __init__(self) -> None:
        self._pending = b""

    async def _read_exactly(self, n: int) -> bytes:
        raise NotImplementedError

    def read(self, n: int = -1) -> Awaitable[bytes]:
        """Up to ``n`` bytes (exactly ``n`` unless the stream ends). Raises
        :class:`NotAcceptable` when ``n`` exceeds :data:`MAX_PACKET_BYTES`."""
        if n > MAX_PACKET_BYTES:
            raise NotAcceptable(f"packet of {n} bytes (limit {MAX_PACKET_BYTES})")
        if self._pending:
            return self._from_pending(n)
        return self._read_exactly(n)

    async def _from_pending(self, n: int) -> bytes:
        if n < 0:
            n = len(self._pending)
        data, self._pending = self._pending[:n], self._pending[n:]
        if len(data) < n:
            data += await self._read_exactly(n - len(data))
        return data

    async def take_connect(self) -> str:
        """Read and check the first packet (:func:`check_connect`); returns the version.
        Raises :class:`NotAcceptable` (with the CONNACK to send, if any) or
        :class:`asyncio.IncompleteReadError` when the client goes away first."""
        first = await self._exactly(1)
        if first != b"\x10":
            raise NotAcceptable("the first packet is not a CONNECT")
        size = 0
        for shift in range(0, 28, 7):
            digit = (await self._exactly(1))[0]
            size |= (digit & 0x7F) << shift
            if not digit & 0x80:
                break
        else:
            raise NotAcceptable("a CONNECT whose length takes more than 4 bytes")
        if size > MAX_PACKET_BYTES:
            raise NotAcceptable(f"CONNECT of {size} bytes (limit {MAX_PACKET_BYTES})")
        self.version, body = check_connect(await self._exactly(size))
        self._pending = b"\x10" + encode_length(len(body)) + body
        return self.version

    async def _exactly(self, n: int) -> bytes:
        data = await self._read_exactly(n)
        if len(data) < n:
            raise asyncio.IncompleteReadError(data, n)
        return data


class StreamIntake(IntakeReader):
    """:class:`IntakeReader` of a TCP (or TLS) connection's :class:`asyncio.StreamReader`.

    After the CONNECT, :meth:`read` hands back the stream's own awaitable, so each read of
    each packet costs no extra coroutine frame."""

    def __init__(self, reader: asyncio.StreamReader):
        super().__init__()
        self._reader = reader

    def _read_exactly(self, n: int) -> Awaitable[bytes]:  # type: ignore[override]
        return self._reader.readexactly(n) if n != -1 else self._reader.read(n)

    def feed_eof(self) -> None:
        """Mark the end of the stream."""
        self._reader.feed_eof()


class WebSocketIntake(IntakeReader):
    """:class:`IntakeReader` of a :mod:`websockets` server connection: the bytes of its
    binary messages, in order. A text message raises :class:`NotAcceptable` (MQTT over
    WebSocket is binary only); the end of the connection ends the stream."""

    transport = "websocket"

    def __init__(self, connection: Any):
        super().__init__()
        self._connection = connection
        self._buffer = bytearray()

    async def _read_exactly(self, n: int) -> bytes:
        from websockets.exceptions import ConnectionClosed

        if n < 0:
            n = max(len(self._buffer), 1)
        while len(self._buffer) < n:
            try:
                message = await self._connection.recv()
            except ConnectionClosed:
                break
            if isinstance(message, str):
                raise NotAcceptable("a text WebSocket message (MQTT is sent in binary ones)")
            self._buffer += message
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data

    def feed_eof(self) -> None:
        """Nothing to do: the WebSocket connection says when it ends."""


class WebSocketWriter(WebSocketsWriter):
    """amqtt's WebSocket writer, whose flush on a closed connection raises
    :class:`ConnectionResetError` (which the library handles as a lost client) instead of
    the :mod:`websockets` exception."""

    async def drain(self) -> None:
        """Send what was written as one binary message."""
        from websockets.exceptions import ConnectionClosed

        try:
            await super().drain()
        except ConnectionClosed:
            raise ConnectionResetError("the WebSocket connection is closed") from None
