"""What chaos decided for one request (:class:`ChaosDecision`) and the counters of it
(:class:`ChaosStats`).

A :class:`ChaosDecision` is plain data, so any listener can act on it in its own protocol:
the HTTP data plane and WebSocket upgrades do (:mod:`chaos.injector`), and a gRPC or MQTT
listener asks the same way (``engine.chaos.decide(method, path)``) and maps ``status`` to
its own error (a gRPC status, an MQTT disconnect), ``delay_ms`` to a wait and ``reset`` to
closing the stream or connection. Body shapers only mean something to HTTP.

Source: behavior notes §11 (stats shape; global bandwidth counts as ``slow_body``).
Django-free.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chaos.config import FAULT_TYPES


@dataclass(slots=True)
class ChaosDecision:
    """The effect of chaos on one request.

    Attributes:
        delay_ms: milliseconds to wait before answering (or before passing the request on).
        status: a status code chaos answers instead of the mock, or None (the mock answers).
        headers: headers of chaos' own answer, or (when ``status`` is None) headers added to
            the mock's answer (``X-Circuit-State`` of a breaker the request passed).
        body: the body of chaos' own answer (bytes).
        reset: drop the connection without an answer.
        body_shapers: HTTP body shapers (corrupt, pace, cut, dribble) applied to the mock's
            answer, in order (see :mod:`chaos.faults`).
    """

    delay_ms: float = 0.0
    status: int | None = None
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""
    reset: bool = False
    body_shapers: list[Any] = field(default_factory=list)

    def answer(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        """Make chaos answer ``status`` with ``headers`` (after any added so far) and
        ``body``."""
        self.status = status
        self.headers = [*headers, *self.headers]
        self.body = body

    @property
    def answers(self) -> bool:
        """True when chaos answers (or drops) the request itself."""
        return self.status is not None or self.reset


class ChaosStats:
    """Counters of injected faults since start or the last reset.

    Attributes:
        total_requests: requests chaos looked at (while enabled).
        injected_faults: faults that fired.
        latency_injected, errors_injected, timeouts_injected, bandwidth_injected: faults
            of those kinds (``error`` faults and the global error rate; ``timeout``;
            ``latency`` faults and the global latency; ``slow_body`` faults and the global
            bandwidth).
        by_type: faults fired per fault type.
    """

    __slots__ = ("total_requests", "injected_faults", "latency_injected", "errors_injected",
                 "timeouts_injected", "bandwidth_injected", "by_type")

    _KIND_COUNTERS = {"latency": "latency_injected", "error": "errors_injected",
                      "timeout": "timeouts_injected", "slow_body": "bandwidth_injected"}

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Every counter back to 0."""
        self.total_requests = 0
        self.injected_faults = 0
        self.latency_injected = 0
        self.errors_injected = 0
        self.timeouts_injected = 0
        self.bandwidth_injected = 0
        self.by_type: dict[str, int] = dict.fromkeys(FAULT_TYPES, 0)

    def count(self, kind: str) -> None:
        """One fault of type ``kind`` fired."""
        self.injected_faults += 1
        self.by_type[kind] = self.by_type.get(kind, 0) + 1
        counter = self._KIND_COUNTERS.get(kind)
        if counter is not None:
            setattr(self, counter, getattr(self, counter) + 1)

    def document(self) -> dict[str, Any]:
        """``{totalRequests, injectedFaults, latencyInjected, errorsInjected,
        timeoutsInjected, bandwidthInjected, faultsByType: {latency, error, slow_body, ...}}``."""
        return {"totalRequests": self.total_requests, "injectedFaults": self.injected_faults,
                "latencyInjected": self.latency_injected,
                "errorsInjected": self.errors_injected,
                "timeoutsInjected": self.timeouts_injected,
                "bandwidthInjected": self.bandwidth_injected,
                "faultsByType": dict(self.by_type)}
