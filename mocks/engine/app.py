"""The data-plane ASGI app: the lean hot path of the mock server.

Pipeline (STYLE §4): read the request (body read once, capped) -> built-in health routes ->
an SSE replay armed at the path (``recordings.replay``; one dict truth test when none) ->
chaos (only while enabled: ``engine.chaos``) -> match against the snapshot -> respond ->
serve event to observers.

Source: ARCHITECTURE "Request flow (data plane)"; behavior notes §4 (order of built-in routes,
``/__mockd/health``, ``/__mockd/ready``, ``/health``, ``/ready``, no-match answer, HEAD
falling back to GET, 413 for large bodies).
"""
from __future__ import annotations

import logging
import time
from typing import Any, Awaitable, Callable

import orjson

from mocks.protocols.streaming.sender import StreamAction
from mocks.engine.core import Engine, ServeEvent, utc_timestamp
from mocks.engine.matching import near_misses
from mocks.core.request import MockRequest
from mocks.core.responses import JSON_TYPE, json_body, send_simple
from recordings import replay
from recordings.replay import PENDING as PENDING_REPLAYS

logger = logging.getLogger("mockd.engine")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class RequestTooLarge(Exception):
    """The request body is over the engine's limit."""


async def read_body(receive: Receive, limit: int, first: dict[str, Any] | None = None) -> bytes:
    """Read the whole body; raises :class:`RequestTooLarge` past ``limit`` bytes.

    ``first`` is an already received first message (the hot path reads it inline).
    """
    chunks: list[bytes] = []
    size = 0
    message = first if first is not None else await receive()
    while True:
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise RequestTooLarge
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
        message = await receive()
    if len(chunks) == 1:
        return chunks[0]
    return b"".join(chunks)


def _declared_length(headers: list[tuple[bytes, bytes]]) -> int:
    """The Content-Length header as an int (0 when absent or not a number)."""
    for name, value in headers:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


_BUILTIN_PATHS = frozenset(("/health", "/__mockd/health", "/__mockd/ready"))


class DataPlaneApp:
    """ASGI app answering HTTP requests from an :class:`Engine`'s current snapshot.

    Handles ``http`` scopes; a ``lifespan`` scope is acknowledged (startup happens in the
    runner before the listener binds, so there is nothing left to do here).
    """

    def __init__(self, engine: Engine):
        self.engine = engine

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope_type = scope["type"]
        if scope_type == "http":
            await self.handle_http(scope, receive, send)
        elif scope_type == "lifespan":
            await acknowledge_lifespan(receive, send)

    async def handle_http(self, scope: Scope, receive: Receive, send: Send) -> None:
        engine = self.engine
        started = time.perf_counter()
        # The common case is one body message; read it inline and only loop for more.
        message = await receive()
        request = MockRequest.from_scope(scope)
        try:
            if message.get("more_body"):
                if _declared_length(scope["headers"]) > engine.max_body_size:
                    raise RequestTooLarge  # refuse before reading megabytes we will not use
                request.body = await read_body(receive, engine.max_body_size, message)
            else:
                request.body = message.get("body", b"")
                if len(request.body) > engine.max_body_size:
                    raise RequestTooLarge
        except RequestTooLarge:
            body = json_body({"error": "body_too_large",
                              "message": f"Request body exceeds {engine.max_body_size} bytes"})
            await send_simple(send, 413, [(b"content-type", JSON_TYPE),
                                          (b"connection", b"close")], body)
            self._observe(request, started, 413, error="body_too_large")
            return

        cors = engine.cors
        raw_send = send
        origin = request.origin_header if cors.enabled else None
        if origin is not None and cors.allowed(origin):
            send = cors.wrap(send, origin)
        else:
            origin = None

        if request.path in _BUILTIN_PATHS:
            builtin = self._builtin(request)
            if builtin is not None:
                await send_simple(send, 200, [(b"content-type", JSON_TYPE)], builtin,
                                  head=request.method == "HEAD")
                return

        if PENDING_REPLAYS and request.method == "GET" and "text/event-stream" in (
                request.headers.get("accept") or ""):
            # An SSE replay of a stream recording armed at this path serves this client.
            session = replay.take("sse", request.path)
            if session is not None:
                await session.serve_sse(receive, send)
                self._observe(request, started, 200)
                return

        if engine.chaos is not None:
            # Chaos stage (behavior notes §11), before matching; the built-in health routes
            # above stay truthful so supervisors see the server alive.
            decision = engine.chaos.decide(request.method, request.path)
            if decision is not None:
                from chaos.injector import apply_http  # loaded: chaos is on

                chaos_send = await apply_http(decision, send, raw_send)
                if chaos_send is None:
                    self._observe(request, started, decision.status or 0, error="chaos")
                    return
                send = chaos_send

        snapshot = engine.snapshot
        if snapshot.routes:
            route = snapshot.routes.get(request.path)
            if route is not None and (not route.methods or request.method in route.methods):
                await self._respond(route.action, route.mock_id, route.path, request, {},
                                    send, started)
                return
        match = snapshot.index.find(request)
        if match is None and request.method == "HEAD":
            # Behavior notes §4: "HEAD without a match is retried as GET".
            request.method = "GET"
            match = snapshot.index.find(request)
            request.method = "HEAD"
        if match is None:
            for route in snapshot.prefix_routes:
                if request.path.startswith(route.path) and (
                        request.path[len(route.path):len(route.path) + 1] in ("/", "")):
                    await self._respond(route.action, route.mock_id, route.path, request, {},
                                        send, started)
                    return
            if request.method == "OPTIONS" and cors.enabled:
                await self._preflight(request, origin, send, started)
                return
            if request.path == "/ready" and request.method in ("GET", "HEAD"):
                await send_simple(send, 200, [(b"content-type", JSON_TYPE)],
                                  self._ready_body(), head=request.method == "HEAD")
                return
            await self._no_match(request, snapshot, send, started)
            return
        candidate = match.candidate
        await self._respond(candidate.action, candidate.mock_id, candidate.path_template,
                            request, match.path_params, send, started, receive)

    async def _respond(self, action: Any, mock_id: str, path_template: str,
                       request: MockRequest, path_params: dict[str, str], send: Send,
                       started: float, receive: Receive | None = None) -> None:
        """Run the winning mock's action, then tell the observers."""
        engine = self.engine
        try:
            if receive is not None and isinstance(action, StreamAction):
                # A stream (SSE, chunked) watches `receive` to stop on a client disconnect.
                status = await action.stream(request, path_params, mock_id, engine, receive,
                                             send)
            else:
                status = await action.respond(request, path_params, engine.template_state, send)
        except Exception:  # noqa: BLE001 - a bug must cost one answer, never the server
            logger.exception("mock %s failed to answer %s %s", mock_id, request.method,
                             request.path)
            status = 500
            await _send_safely(send, 500, {"error": "internal_error",
                                           "message": "The mock failed to render its response; "
                                                      "see the server log"})
        if engine.observers:
            now = time.perf_counter()
            # A protocol action (GraphQL) names its protocol and may leave request-log fields
            # for this request in ``request.log_details`` (a dict).
            engine.notify(ServeEvent(request, time.time() - (now - started),
                                     (now - started) * 1e3, status, mock_id, path_template,
                                     protocol=getattr(action, "protocol", "http"),
                                     details=request.__dict__.get("log_details")))

    async def _preflight(self, request: MockRequest, origin: str | None, send: Send,
                         started: float) -> None:
        """An ``OPTIONS`` no mock answered: 200 with the preflight headers for an allowed
        origin, else 403 (also without ``Origin``) (behavior notes §4)."""
        if origin is not None:
            # `send` already adds the origin headers; the preflight adds methods and headers.
            await send_simple(send, 200, self.engine.cors.preflight_headers(), b"")
            self._observe(request, started, 200)
            return
        body = json_body({"error": "cors_forbidden",
                          "message": "CORS preflight refused: the Origin is missing or not "
                                     "allowed (serverConfig.cors.allowOrigins)"})
        await send_simple(send, 403, [(b"content-type", JSON_TYPE)], body)
        self._observe(request, started, 403, error="cors_forbidden")

    def _builtin(self, request: MockRequest) -> bytes | None:
        """Bodies of the built-in routes answered before matching, or None."""
        path = request.path
        if request.method not in ("GET", "HEAD"):
            return None
        if path == "/health":
            return orjson.dumps({"status": "ok", "timestamp": utc_timestamp()})
        if path == "/__mockd/health":
            return orjson.dumps({"status": "healthy", "timestamp": utc_timestamp()})
        if path == "/__mockd/ready":
            return self._ready_body()
        return None

    def _ready_body(self) -> bytes:
        return orjson.dumps({"status": "ready" if self.engine.ready else "initializing",
                             "checks": {"mocks": {"count": self.engine.snapshot.mock_count,
                                                  "status": "ok"}}})

    async def _no_match(self, request: MockRequest, snapshot: Any, send: Send,
                        started: float) -> None:
        misses = near_misses(snapshot.candidates, request)
        payload: dict[str, Any] = {"error": "no_match", "message": "No mock matched the request",
                                   "path": request.path, "method": request.method}
        if misses:
            payload["nearMisses"] = misses
        body = orjson.dumps(payload)
        await send_simple(send, 404, [(b"content-type", JSON_TYPE),
                                      (b"x-mockd-near-misses", str(len(misses)).encode())],
                          body, head=request.method == "HEAD")
        self._observe(request, started, 404, near=misses, response_body=body)

    def _observe(self, request: MockRequest, started: float, status: int,
                 *, error: str | None = None, near: list | None = None,
                 response_body: bytes | None = None) -> None:
        if self.engine.observers:
            elapsed = time.perf_counter() - started
            self.engine.notify(ServeEvent(request, time.time() - elapsed, elapsed * 1e3, status,
                                          near_misses=near, error=error,
                                          response_body=response_body))


async def _send_safely(send: Send, status: int, payload: dict[str, Any]) -> None:
    try:
        await send_simple(send, status, [(b"content-type", JSON_TYPE)], orjson.dumps(payload))
    except Exception:  # noqa: BLE001 - the response may already have started
        pass


async def acknowledge_lifespan(receive: Receive, send: Send) -> None:
    """Answer ASGI lifespan startup/shutdown (the runner does the real startup work)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
