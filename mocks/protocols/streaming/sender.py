"""The one sender of every streaming response, and the clock its sources wait on.

A stream is an async *source* of items (SSE events, byte pieces, NDJSON values) plus a
*framing* (:mod:`~mocks.protocols.streaming.framing`). A source never sleeps on its own: it
awaits :meth:`StreamClock.sleep`, which

* wakes up at the deadline (``loop.call_at`` on a plain future: no task per wait),
* sends the framing's keepalive ping whenever one falls due during a wait,
* raises :class:`StreamStopped` the moment the connection is stopped: the client
  disconnected (``http.disconnect``, watched by one task per stream), the admin closed it, or
  its mock changed.

:func:`serve_stream` sends the headers and the opening, frames and sends every item the
source yields, counts them on the connection, and ends the response cleanly, or not at all
(client gone, or a source asking for an abrupt end with :class:`StreamAbort`). Whatever
happens, the disconnect watcher is cancelled and awaited and the source is closed before it
returns: no task is left behind.

Concurrency: everything runs on the engine's event loop; a stream is driven by the request's
own task plus its one watcher task.

Source: STYLE §11 ("one async chunk source and one sender that stops on ``http.disconnect``");
behavior notes §9 (keepalive, termination).
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson

from mocks.core.responses import JSON_TYPE, send_simple

from mocks.protocols.streaming.runtime import (CLIENT_DISCONNECTED, SERVER_STOPPING,
                                               StreamConnection, StreamRuntime,
                                               abrupt_close_requested)

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


class StreamStopped(Exception):
    """The connection was stopped while the source waited; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class StreamAbort(Exception):
    """Raised by a source to drop the connection without a clean end of the response
    (``termination: abrupt`` / ``error``, ``simulateDisconnect``)."""


class StreamAction:
    """Base of the compiled answers that stream (SSE, chunked, NDJSON).

    The data-plane app calls :meth:`stream` instead of the usual
    ``respond(request, path_params, template_state, send)``, because a stream needs the ASGI
    ``receive`` (to notice a client disconnect) and the engine (its
    :class:`~mocks.protocols.streaming.runtime.StreamRuntime` and template state).

    Attributes:
        kind: ``sse`` or ``chunked`` (the runtime's connection kind).
    """

    kind = ""

    async def stream(self, request: Any, path_params: dict[str, str], mock_id: str,
                     engine: Any, receive: Receive, send: Send) -> int:
        """Serve one request to the end of its stream; returns the status sent."""
        raise NotImplementedError


async def refuse(send: Send, limit: int) -> int:
    """Answer 503 ``too_many_connections`` (the SSE connection limit); returns 503."""
    body = orjson.dumps({"error": "too_many_connections",
                         "message": f"The server already has {limit} open SSE connections (its "
                                    f"limit); close one (DELETE /sse/connections/{{id}}) or "
                                    f"retry later"})
    await send_simple(send, 503, [(b"content-type", JSON_TYPE), (b"retry-after", b"1")], body)
    return 503


def _wake(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)


class StreamClock:
    """Interruptible waits for one stream, with keepalive pings during long waits.

    Args:
        connection: the stream's connection (its :meth:`~StreamConnection.stop` wakes us).
        keepalive_seconds: seconds between pings (0 = none); pings fall on a fixed schedule
            from the start of the stream.
        ping: coroutine function sending one ping (set by :func:`serve_stream`).
    """

    __slots__ = ("loop", "connection", "keepalive_seconds", "next_keepalive", "ping", "started")

    def __init__(self, connection: StreamConnection, keepalive_seconds: float = 0.0,
                 ping: Callable[[], Awaitable[None]] | None = None):
        self.loop = asyncio.get_running_loop()
        self.connection = connection
        self.started = self.loop.time()
        self.keepalive_seconds = keepalive_seconds if ping is not None else 0.0
        self.next_keepalive = (self.started + keepalive_seconds
                               if self.keepalive_seconds > 0 else None)
        self.ping = ping

    def now(self) -> float:
        """The loop clock in seconds (deadlines are on this clock)."""
        return self.loop.time()

    def check(self) -> None:
        """Raise :class:`StreamStopped` if the connection has been stopped."""
        reason = self.connection.stop_reason
        if reason is not None:
            raise StreamStopped(reason)

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (≤ 0: only check for a stop). Raises :class:`StreamStopped`."""
        await self.sleep_until(self.loop.time() + seconds)

    async def sleep_until(self, deadline: float) -> None:
        """Wait until ``deadline`` on :meth:`now`'s clock, sending keepalive pings that fall
        due meanwhile. Raises :class:`StreamStopped` as soon as the connection is stopped."""
        loop = self.loop
        connection = self.connection
        while True:
            self.check()
            ping_due = self.next_keepalive is not None and self.next_keepalive < deadline
            target = self.next_keepalive if ping_due else deadline
            if target > loop.time():
                future = loop.create_future()
                connection.wakeup = future
                handle = loop.call_at(target, _wake, future)
                try:
                    await future
                finally:
                    handle.cancel()
                    connection.wakeup = None
                self.check()
            if not ping_due:
                return
            await self.ping()
            # Skip pings that a slow send made us miss instead of sending them in a burst.
            while self.next_keepalive <= loop.time():
                self.next_keepalive += self.keepalive_seconds


async def _watch_disconnect(receive: Receive, connection: StreamConnection) -> None:
    """Wait for ``http.disconnect`` and stop the stream (the request body is already read)."""
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            connection.stop(CLIENT_DISCONNECTED)
            return


async def serve_stream(send: Send, receive: Receive, *, runtime: StreamRuntime,
                       connection: StreamConnection, framing: Any,
                       source: Callable[[StreamClock], AsyncIterator[Any]],
                       headers: list[tuple[bytes, bytes]], keepalive_seconds: float = 0.0,
                       event_id_of: Callable[[Any], str | None] | None = None) -> int:
    """Send one streaming response; returns the status sent (200).

    Args:
        runtime: where the connection is registered (closed here when the stream ends).
        connection: the registered connection (stopping it ends the stream).
        framing: the format (``content_type``, ``opening()``, ``frame(item)``, ``keepalive``).
        source: ``source(clock)`` gives the async iterator of items; it must wait only
            through the clock. It may raise :class:`StreamAbort` to drop the connection.
        headers: response headers besides ``content-type``.
        keepalive_seconds: seconds between keepalive pings (0 = none; needs a framing with a
            ``keepalive``).
        event_id_of: the event id of an item, for the connection's ``lastEventId``.
    """
    loop = asyncio.get_running_loop()
    watcher = loop.create_task(_watch_disconnect(receive, connection))

    async def write(data: bytes, is_event: bool, event_id: str | None = None) -> None:
        await send({"type": "http.response.body", "body": data, "more_body": True})
        runtime.record_send(connection, len(data), is_event, event_id)

    keepalive = framing.keepalive
    clock = StreamClock(connection, keepalive_seconds,
                        (lambda: write(keepalive, False)) if keepalive else None)
    items = source(clock)
    complete = True
    try:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", framing.content_type), *headers]})
        opening = framing.opening()
        if opening:
            await write(opening, False)
        async for item in items:
            await write(framing.frame(item), True,
                        event_id_of(item) if event_id_of is not None else None)
            # A stop that arrived while we were sending ends the stream before the next item.
            clock.check()
    except StreamStopped as stopped:
        # Nothing can reach a client that has gone; everyone else gets a clean end.
        complete = stopped.reason != CLIENT_DISCONNECTED
        final = getattr(framing, "shutdown", None)
        if final and stopped.reason == SERVER_STOPPING:
            try:  # the format's last event (SSE ``event: shutdown``) before the end
                await write(final, True)
            except Exception:  # noqa: BLE001 - a client gone meanwhile gets no end at all
                complete = False
    except StreamAbort:
        complete = False
        abrupt_close_requested.set(True)
    finally:
        runtime.close(connection)
        await _close_quietly(items)
        watcher.cancel()
        try:
            await watcher
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # our own task is being cancelled (server shutdown): let it go on
        except Exception:  # noqa: BLE001 - a failing receive() must not hide the stream's end
            pass
    if complete:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    return 200


async def _close_quietly(items: Any) -> None:
    """Close an async generator source so its ``finally`` blocks run now, not at GC."""
    close = getattr(items, "aclose", None)
    if close is not None:
        try:
            await close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
