"""Compiled faults: one small class per fault type, plus the body shapers they install.

Each ``*Fault`` is built once from its :class:`~chaos.config.FaultConfig` when a chaos config
is applied, and :meth:`apply` adds its effect to a :class:`~chaos.decision.ChaosDecision`
for one request: a delay, an answer of its own (status, headers, body), a dropped
connection, a response header, or a body shaper. ``apply`` returns True when the fault
answered (or dropped) the request, so the faults after it in the rule do not run.

The stateful faults (:class:`CircuitBreakerFault`, :class:`RetryAfterFault`,
:class:`ProgressiveDegradationFault`) keep their state on the instance, keyed
``"<ruleIndex>:<faultIndex>"`` by the injector; a new config builds new instances.

Body shapers wrap the ASGI ``send`` of one HTTP response (:func:`shape_send`): they corrupt
bytes, pace the body, cut it and drop the connection, or dribble it out in chunks. Every
wait is an ``asyncio.sleep`` of a configured, bounded length.

Concurrency: everything runs on the engine's event loop; :meth:`apply` never awaits, so a
breaker's transitions are atomic per request.

Source: behavior notes §11 (fault table, circuit breaker, retry-after and progressive
degradation rules, fault-state shapes). Django-free.
"""
from __future__ import annotations

import asyncio
import math
import random
import socket
import struct
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from http import HTTPStatus
from typing import Any, Awaitable, Callable

import orjson

from chaos.config import (CircuitBreakerParams, ChunkedDribbleParams, CorruptBodyParams,
                          ErrorParams, FaultConfig, LatencyParams, PartialResponseParams,
                          ProgressiveDegradationParams, RetryAfterParams, SlowBodyParams,
                          TimeoutParams, format_duration)
from chaos.decision import ChaosDecision, ChaosStats

Send = Callable[[dict[str, Any]], Awaitable[None]]

TEXT_TYPE = b"text/plain; charset=utf-8"
JSON_TYPE = b"application/json"


def reason_phrase(status: int) -> str:
    """The HTTP reason phrase of ``status`` (``503`` -> ``Service Unavailable``)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown Status"


def error_answer(decision: ChaosDecision, status: int) -> None:
    """Make ``decision`` answer ``status`` with the text ``"<Reason Phrase>\\n"``."""
    decision.answer(status, [(b"content-type", TEXT_TYPE)],
                    (reason_phrase(status) + "\n").encode())


def _wall_clock(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    moment = datetime.fromtimestamp(epoch, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Fault:
    """Base of the compiled faults.

    Attributes:
        kind: the fault type (``latency``, ...).
        probability: chance that an ordinary fault fires (stateful faults always run).
        stateful: True for faults that keep state and always run.
    """

    kind = ""
    stateful = False

    def __init__(self, config: FaultConfig):
        self.probability = config.probability

    def apply(self, decision: ChaosDecision, rng: random.Random, stats: ChaosStats) -> bool:
        """Add this fault's effect to ``decision``; True when the request is answered."""
        raise NotImplementedError


class LatencyFault(Fault):
    """Wait a random time in ``min``..``max`` ms before the answer."""

    kind = "latency"

    def __init__(self, config: FaultConfig):
        super().__init__(config)
        params: LatencyParams = config.config
        self.low, self.high = params.min, params.max

    def apply(self, decision: ChaosDecision, rng: random.Random, stats: ChaosStats) -> bool:
        decision.delay_ms += self.low + rng.random() * (self.high - self.low)
        stats.count("latency")
        return False


class ErrorFault(Fault):
    """Answer ``"<Reason Phrase>\\n"`` with a status from ``statusCodes``, else
    ``defaultCode``."""

    kind = "error"

    def __init__(self, config: FaultConfig):
        super().__init__(config)
        params: ErrorParams = config.config
        self.codes = tuple(params.status_codes)
        self.default = params.default_code

    def apply(self, decision: ChaosDecision, rng: random.Random, stats: ChaosStats) -> bool:
        status = self.codes[rng.randrange(len(self.codes))] if self.codes else self.default
        error_answer(decision, status)
        stats.count("error")
        return True


class TimeoutFault(Fault):
    """Wait ``duration`` ms, then answer 504 ``Gateway Timeout``."""

    kind = "timeout"

    def __init__(self, config: FaultConfig):
        super().__init__(config)
        params: TimeoutParams = config.config
        self.duration = params.duration

    def apply(self, decision: ChaosDecision, rng: random.Random, stats: ChaosStats) -> bool:
        decision.delay_ms += self.duration
        error_answer(decision, 504)
        stats.count("timeout")
        return True


class EmptyResponseFault(Fault):
    """Answer 200 with an empty body."""

    kind = "empty_response"

    def apply(self, decision: ChaosDecision, rng: random.Random, stats: ChaosStats) -> bool:
        decision.answer(200, [], b"")
        stats.count(self.kind)
        return True


class ConnectionResetFault(Fault):
    """Drop the connection without an answer (a TCP reset where the server allows it)."""

    kind = "connection_reset"

    def apply(self, decision: ChaosDecision, rng: random.Random, stats: ChaosStats) -> bool:
        decision.reset = True
        stats.count(self.kind)
        return True


class ShapingFault(Fault):
    """Base of the faults that reshape the mock's own answer: :meth:`shaper` gives the body
    shaper (see "body shapers" below) one request gets."""

    def shaper(self, rng: random.Random) -> Any:
        """The shaper for one request."""
        raise NotImplementedError

    def apply(self, decision: ChaosDecision, rng: random.Random, stats: ChaosStats) -> bool:
        decision.body_shapers.append(self.shaper(rng))
        stats.count(self.kind)
        return False


class CorruptBodyFault(ShapingFault):
    """Replace each body byte by another with probability ``corruptRate``."""

    kind = "corrupt_body"

    def __init__(self, config: FaultConfig):
        super().__init__(config)
        params: CorruptBodyParams = config.config
        self.rate = params.corrupt_rate

    def shaper(self, rng: random.Random) -> Any:
        return CorruptShaper(self.rate, rng)


class SlowBodyFault(ShapingFault):
    """Send the body at ``bytesPerSecond``."""

    kind = "slow_body"

    def __init__(self, config: FaultConfig):
        super().__init__(config)
        params: SlowBodyParams = config.config
        self.bytes_per_second = params.bytes_per_second

    def shaper(self, rng: random.Random) -> Any:
        return SlowShaper(self.bytes_per_second)


class PartialResponseFault(ShapingFault):
    """Send the headers and the first ``maxBytes`` body bytes, then drop the connection (a
    body no longer than that goes out whole)."""

    kind = "partial_response"

    def __init__(self, config: FaultConfig):
        super().__init__(config)
        params: PartialResponseParams = config.config
        self.max_bytes = params.max_bytes

    def shaper(self, rng: random.Random) -> Any:
        return TruncateShaper(self.max_bytes)


class ChunkedDribbleFault(ShapingFault):
    """After ``initialDelay``, send the body chunked in ``chunkSize`` pieces ``chunkDelay``
    apart."""

    kind = "chunked_dribble"

    def __init__(self, config: FaultConfig):
        super().__init__(config)
        params: ChunkedDribbleParams = config.config
        self.params = params

    def shaper(self, rng: random.Random) -> Any:
        params = self.params
        return DribbleShaper(params.chunk_size, params.chunk_delay, params.initial_delay)


# ---------------------------------------------------------------------------- stateful faults

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"


class CircuitBreakerFault(Fault):
    """A circuit breaker: ``closed`` -> ``open`` -> ``half_open`` -> ``closed``.

    * closed: each request fails with an injected 500 with probability ``closedErrorRate``;
      the breaker opens *after* ``failureThreshold`` consecutive failures (that many 500s
      go out; the next request gets the open answer), or at request ``tripAfter`` (counted
      since the breaker last closed; that request gets the open answer).
    * open: every request gets ``openStatusCode`` with ``Retry-After: <openDuration s>``,
      ``X-Circuit-State: open`` and ``openBody`` (default ``{"error": "circuit breaker
      open", "state": "open", "retry_after": N}``); after ``openDuration`` -> half_open.
    * half_open: each request fails with probability ``halfOpenErrorRate``: an injected 500,
      after which the breaker is open again; ``successThreshold`` passes -> closed.

    Passing requests and injected 500s carry ``X-Circuit-State`` with the state they were
    answered in. :meth:`trip` and :meth:`reset` force open and closed.

    Source: behavior notes §11 ("Circuit breaker ``closed`` -> ``open`` after
    ``failureThreshold`` consecutive injected 500s ... ``half_open``: each request fails
    (-> ``open``) with ``halfOpenErrorRate``, ``successThreshold`` passes -> ``closed``").
    """

    kind = "circuit_breaker"
    stateful = True

    def __init__(self, config: FaultConfig, clock: Callable[[], float] = time.monotonic):
        super().__init__(config)
        self.params: CircuitBreakerParams = config.config
        self._clock = clock
        self.state = CLOSED
        self.opened_at: float | None = None  # monotonic
        self.opened_wall: float | None = None  # epoch seconds
        self.requests_since_closed = 0
        self.request_count = 0
        self.failure_count = 0
        self.consecutive_failures = 0
        self.consecutive_successes = 0
        self.total_trips = 0
        self.total_rejected = 0
        self.total_passed = 0
        self.total_half_open = 0
        self.state_changes = 0
        self.retry_after_seconds = max(1, math.ceil(self.params.open_duration / 1000))

    def _refresh(self) -> None:
        """open -> half_open once ``openDuration`` has passed."""
        if (self.state == OPEN and self.opened_at is not None
                and self._clock() - self.opened_at >= self.params.open_duration / 1000):
            self.state = HALF_OPEN
            self.consecutive_successes = 0
            self.state_changes += 1

    def trip(self) -> None:
        """Force the breaker open (now)."""
        self.state = OPEN
        self.opened_at = self._clock()
        self.opened_wall = time.time()
        self.consecutive_failures = 0
        self.consecutive_successes = 0
        self.total_trips += 1
        self.state_changes += 1

    def reset(self) -> None:
        """Force the breaker closed (request counting for ``tripAfter`` starts again)."""
        self.state = CLOSED
        self.consecutive_failures = 0
        self.consecutive_successes = 0
        self.requests_since_closed = 0
        self.state_changes += 1

    def _open_answer(self, decision: ChaosDecision) -> None:
        body = self.params.open_body
        payload = (body.encode() if body is not None else orjson.dumps(
            {"error": "circuit breaker open", "state": self.state,
             "retry_after": self.retry_after_seconds}))
        decision.answer(self.params.open_status_code,
                        [(b"content-type", JSON_TYPE),
                         (b"retry-after", str(self.retry_after_seconds).encode()),
                         (b"x-circuit-state", self.state.encode())], payload)

    def _fail(self, decision: ChaosDecision, stats: ChaosStats) -> None:
        """Answer an injected 500 marked with the current state, and count it."""
        self.failure_count += 1
        self.total_rejected += 1
        stats.count(self.kind)
        error_answer(decision, 500)
        decision.headers.append((b"x-circuit-state", self.state.encode()))

    def apply(self, decision: ChaosDecision, rng: random.Random, stats: ChaosStats) -> bool:
        self.request_count += 1
        self.requests_since_closed += 1
        self._refresh()
        params = self.params
        if self.state == CLOSED:
            if params.trip_after and self.requests_since_closed >= params.trip_after:
                self.trip()
                self.total_rejected += 1
                self._open_answer(decision)
                stats.count(self.kind)
                return True
            if params.closed_error_rate and rng.random() < params.closed_error_rate:
                self.consecutive_failures += 1
                self._fail(decision, stats)
                # The threshold-th 500 still goes out; the breaker opens for the next request.
                if self.consecutive_failures >= params.failure_threshold:
                    self.trip()
                return True
            self.consecutive_failures = 0
            self.total_passed += 1
            decision.headers.append((b"x-circuit-state", CLOSED.encode()))
            return False
        if self.state == OPEN:
            self.total_rejected += 1
            self._open_answer(decision)
            stats.count(self.kind)
            return True
        # half_open
        self.total_half_open += 1
        if rng.random() < params.half_open_error_rate:
            self._fail(decision, stats)  # the failed probe is a 500, like a closed failure
            self.trip()
            return True
        self.consecutive_successes += 1
        self.total_passed += 1
        decision.headers.append((b"x-circuit-state", HALF_OPEN.encode()))
        if self.consecutive_successes >= params.success_threshold:
            self.reset()
        return False

    def document(self) -> dict[str, Any]:
        """``{state, tripCount, requestCount, failureCount, consecutiveFailures,
        consecutiveSuccesses, totalTrips, totalRejected, totalPassed, totalHalfOpen,
        stateChanges, openedAt?}``."""
        self._refresh()
        out: dict[str, Any] = {
            "state": self.state, "tripCount": self.total_trips,
            "requestCount": self.request_count, "failureCount": self.failure_count,
            "consecutiveFailures": self.consecutive_failures,
            "consecutiveSuccesses": self.consecutive_successes,
            "totalTrips": self.total_trips, "totalRejected": self.total_rejected,
            "totalPassed": self.total_passed, "totalHalfOpen": self.total_half_open,
            "stateChanges": self.state_changes}
        if self.opened_wall is not None and self.state != CLOSED:
            out["openedAt"] = _wall_clock(self.opened_wall)
        return out


class RetryAfterFault(Fault):
    """The first request opens a window of ``retryAfter``: inside it every request gets
    ``statusCode`` with ``Retry-After: <seconds left, at least 1>``; the first request after
    it passes, and the next opens a new window."""

    kind = "retry_after"
    stateful = True

    def __init__(self, config: FaultConfig, clock: Callable[[], float] = time.monotonic):
        super().__init__(config)
        self.params: RetryAfterParams = config.config
        self._clock = clock
        self.limited_at: float | None = None
        self.limited_wall: float | None = None
        self.total_limited = 0
        self.total_passed = 0

    @property
    def is_limited(self) -> bool:
        """Whether a window is open now."""
        return (self.limited_at is not None
                and self._clock() - self.limited_at < self.params.retry_after / 1000)

    def apply(self, decision: ChaosDecision, rng: random.Random, stats: ChaosStats) -> bool:
        now = self._clock()
        window = self.params.retry_after / 1000
        if self.limited_at is not None and now - self.limited_at >= window:
            self.limited_at = None  # the window is over: this request passes
            self.total_passed += 1
            return False
        if self.limited_at is None:
            self.limited_at, self.limited_wall = now, time.time()
            self.total_limited += 1
        remaining = max(1, math.ceil(window - (now - self.limited_at)))
        status = self.params.status_code
        body = self.params.body
        payload = (body.encode() if body is not None else orjson.dumps(
            {"error": reason_phrase(status), "retry_after": remaining}))
        decision.answer(status, [(b"content-type", JSON_TYPE),
                                 (b"retry-after", str(remaining).encode())], payload)
        stats.count(self.kind)
        return True

    def document(self) -> dict[str, Any]:
        """``{isLimited, statusCode, retryAfterMs, totalLimited, totalPassed, limitedAt?}``."""
        limited = self.is_limited
        out: dict[str, Any] = {"isLimited": limited, "statusCode": self.params.status_code,
                               "retryAfterMs": self.params.retry_after,
                               "totalLimited": self.total_limited,
                               "totalPassed": self.total_passed}
        if limited:
            out["limitedAt"] = _wall_clock(self.limited_wall)
        return out


class ProgressiveDegradationFault(Fault):
    """Request n waits ``initialDelay + (n-1)·delayIncrement`` (at most ``maxDelay``); past
    ``errorAfter`` requests it answers ``errorCode`` with ``{"error": "<Reason>",
    "degradation": {"request_count": n, "delay_ms": d}}``; ``resetAfter`` restarts the count."""

    kind = "progressive_degradation"
    stateful = True

    def __init__(self, config: FaultConfig):
        super().__init__(config)
        self.params: ProgressiveDegradationParams = config.config
        self.request_count = 0
        self.error_count = 0
        self.total_errors = 0
        self.total_resets = 0

    def _delay_of(self, count: int) -> int:
        params = self.params
        if count <= 0:
            return 0
        return min(params.max_delay,
                   params.initial_delay + (count - 1) * params.delay_increment)

    @property
    def is_erroring(self) -> bool:
        """Whether the next request gets the error answer."""
        return bool(self.params.error_after) and self.request_count >= self.params.error_after

    def apply(self, decision: ChaosDecision, rng: random.Random, stats: ChaosStats) -> bool:
        params = self.params
        if params.reset_after and self.request_count >= params.reset_after:
            self.request_count = 0
            self.error_count = 0
            self.total_resets += 1
        self.request_count += 1
        count = self.request_count
        delay = self._delay_of(count)
        decision.delay_ms += delay
        stats.count(self.kind)
        if params.error_after and count > params.error_after:
            self.error_count += 1
            self.total_errors += 1
            status = params.error_code
            decision.answer(status, [(b"content-type", JSON_TYPE)], orjson.dumps(
                {"error": reason_phrase(status),
                 "degradation": {"request_count": count, "delay_ms": delay}}))
            return True
        return False

    def document(self) -> dict[str, Any]:
        """``{currentDelay: "150ms", requestCount, errorCount, currentDelayMs, maxDelayMs,
        errorAfter, resetAfter, totalErrors, totalResets, isErroring}``."""
        current = self._delay_of(self.request_count)
        return {"currentDelay": format_duration(current), "requestCount": self.request_count,
                "errorCount": self.error_count, "currentDelayMs": current,
                "maxDelayMs": self.params.max_delay, "errorAfter": self.params.error_after,
                "resetAfter": self.params.reset_after, "totalErrors": self.total_errors,
                "totalResets": self.total_resets, "isErroring": self.is_erroring}


#: Compiled fault class of each fault type (the registry the docs' fault table follows).
FAULT_CLASSES: dict[str, type[Fault]] = {cls.kind: cls for cls in (
    LatencyFault, ErrorFault, TimeoutFault, CorruptBodyFault, SlowBodyFault,
    PartialResponseFault, EmptyResponseFault, ConnectionResetFault, CircuitBreakerFault,
    RetryAfterFault, ProgressiveDegradationFault, ChunkedDribbleFault)}


def compile_fault(config: FaultConfig) -> Fault:
    """The compiled fault of ``config`` (its class from :data:`FAULT_CLASSES`)."""
    return FAULT_CLASSES[config.type](config)


# ---------------------------------------------------------------------------- body shapers


def drop_connection(send: Send) -> bool:
    """Close the client's connection at once, with a TCP reset where possible.

    ``send`` must be the server's own ASGI ``send`` (uvicorn's bound method, whose owner
    holds the transport). Sets ``SO_LINGER`` 0 so closing sends RST, aborts the transport,
    and marks the request cycle disconnected so the server neither answers 500 nor logs an
    incomplete response. Returns False when the transport cannot be reached (then the
    caller ends the response some other way).
    """
    cycle = getattr(send, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is None:
        return False
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except (OSError, AttributeError):
            pass  # a plain close is still a dropped connection
    transport.abort()
    if hasattr(cycle, "disconnected"):
        cycle.disconnected = True
    return True


class ConnectionDropped(Exception):
    """Raised to end a response whose connection could not be dropped directly: the
    server then closes the connection itself."""


def _body_of(message: dict[str, Any]) -> tuple[bytes, bool]:
    return message.get("body", b""), message.get("more_body", False)


class CorruptShaper:
    """Replaces each body byte, with probability ``rate``, by a different byte."""

    def __init__(self, rate: float, rng: random.Random):
        self.rate = rate
        self.rng = rng

    def wrap(self, send: Send, raw_send: Send) -> Send:
        rate, rng = self.rate, self.rng

        async def corrupting(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body" and message.get("body") and rate > 0:
                data = bytearray(message["body"])
                for index in range(len(data)):
                    if rng.random() < rate:
                        data[index] ^= rng.randrange(1, 256)
                message = {**message, "body": bytes(data)}
            await send(message)

        return corrupting


#: Seconds between two pieces of a paced body.
PACE_TICK_SECONDS = 0.05


class SlowShaper:
    """Sends the body at ``bytes_per_second``: pieces of a twentieth of a second's worth."""

    def __init__(self, bytes_per_second: int):
        self.bytes_per_second = bytes_per_second

    def wrap(self, send: Send, raw_send: Send) -> Send:
        rate = self.bytes_per_second
        piece = max(1, int(rate * PACE_TICK_SECONDS))

        async def pacing(message: dict[str, Any]) -> None:
            if message["type"] != "http.response.body":
                await send(message)
                return
            body, more = _body_of(message)
            if not body:
                await send(message)
                return
            for start in range(0, len(body), piece):
                chunk = body[start:start + piece]
                await asyncio.sleep(len(chunk) / rate)
                last = start + piece >= len(body)
                await send({"type": "http.response.body", "body": chunk,
                            "more_body": more or not last})

        return pacing


class TruncateShaper:
    """Lets ``max_bytes`` body bytes through, then drops the connection."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes

    def wrap(self, send: Send, raw_send: Send) -> Send:
        left = self.max_bytes
        dropped = False

        async def truncating(message: dict[str, Any]) -> None:
            nonlocal left, dropped
            if dropped:
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            body, more = _body_of(message)
            if len(body) <= left:
                left -= len(body)
                await send(message)
                return
            if left:
                await send({"type": "http.response.body", "body": body[:left],
                            "more_body": True})
            left = 0
            dropped = True
            if not drop_connection(raw_send):
                raise ConnectionDropped("partial_response")

        return truncating


def _without_length(message: dict[str, Any]) -> dict[str, Any]:
    headers = [(name, value) for name, value in message.get("headers", [])
               if name.lower() != b"content-length"]
    return {**message, "headers": headers}


class DribbleShaper:
    """Sends the body without ``Content-Length`` (chunked), ``chunk_size`` bytes at a time,
    ``chunk_delay`` ms apart, after ``initial_delay`` ms."""

    def __init__(self, chunk_size: int, chunk_delay: int, initial_delay: int):
        self.chunk_size = chunk_size
        self.chunk_delay = chunk_delay / 1000
        self.initial_delay = initial_delay / 1000

    def wrap(self, send: Send, raw_send: Send) -> Send:
        size, delay, initial = self.chunk_size, self.chunk_delay, self.initial_delay
        started = False

        async def dribbling(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                await send(_without_length(message))
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            body, more = _body_of(message)
            if not body:
                await send(message)
                return
            for start in range(0, len(body), size):
                await asyncio.sleep(delay if started else initial)
                started = True
                last = start + size >= len(body)
                await send({"type": "http.response.body", "body": body[start:start + size],
                            "more_body": more or not last})

        return dribbling


@dataclass
class HeaderShaper:
    """Adds ``headers`` to the response's start message."""

    headers: list[tuple[bytes, bytes]]

    def wrap(self, send: Send, raw_send: Send) -> Send:
        extra = self.headers

        async def adding(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        return adding


def shape_send(send: Send, raw_send: Send, shapers: list[Any]) -> Send:
    """``send`` wrapped by every shaper, the first shaper seeing each message first."""
    for shaper in reversed(shapers):
        send = shaper.wrap(send, raw_send)
    return send
