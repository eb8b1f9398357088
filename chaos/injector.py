"""The chaos stage of the data plane: decide per request, then apply the decision.

:class:`ChaosRuntime` owns the chaos state of one engine (config, statistics, the compiled
:class:`ChaosInjector` with its fault state) and publishes the injector as ``engine.chaos``
only while chaos is enabled, so chaos off costs the hot path one attribute read
(``if engine.chaos is not None``).

Per request: :meth:`ChaosInjector.decide` (synchronous: rules and dice, stateful faults
stepped) returns a :class:`~chaos.decision.ChaosDecision` or None, then :func:`apply_http`
waits, answers, drops the connection or wraps ``send`` with body shapers, and
:func:`admit_websocket` does what makes sense for a WebSocket upgrade (wait; refuse with the
status or a close code; drop). A request no rule matches gets the global faults: error first
(nothing else then), else latency, then bandwidth.

Listeners of other protocols (gRPC, MQTT) use :func:`before_call` with the live injector
(``CompileContext.shared["chaos"]()``, None while chaos is off): it decides and waits
``decision.delay_ms``; the protocol then fails the call with ``decision.status`` mapped to
its own codes, or closes the stream when ``decision.reset``.

Randomness: one ``random.Random`` per applied config, seeded with ``chaos.seed`` (a fresh
seed when absent), drawn in a fixed order, so the same seed and request sequence give the
same faults.

Concurrency: owned by the engine's event loop (ARCHITECTURE seam 5); :meth:`decide` never
awaits.

Source: behavior notes §11 (rule and global precedence, injected error text, stats, fault
state keys ``"<ruleIndex>:<faultIndex>"``). Django-free.
"""
from __future__ import annotations

import asyncio
import random
import re
from typing import Any, Awaitable, Callable

from chaos.config import ChaosConfig, ChaosRule
from chaos.decision import ChaosDecision, ChaosStats
from chaos.faults import (CircuitBreakerFault, ConnectionDropped, Fault, HeaderShaper,
                          ProgressiveDegradationFault, RetryAfterFault, SlowShaper,
                          compile_fault, drop_connection, error_answer, reason_phrase,
                          shape_send)

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


class CompiledRule:
    """A rule ready to test: compiled regex, method set, probability, compiled faults."""

    __slots__ = ("pattern", "methods", "probability", "faults")

    def __init__(self, rule: ChaosRule):
        self.pattern = re.compile(rule.path_pattern) if rule.path_pattern is not None else None
        self.methods = frozenset(rule.methods)
        self.probability = rule.probability
        self.faults: tuple[Fault, ...] = tuple(compile_fault(fault) for fault in rule.faults)

    def matches(self, method: str, path: str) -> bool:
        """Path regex found in ``path`` and ``method`` allowed."""
        if self.pattern is not None and self.pattern.search(path) is None:
            return False
        return not self.methods or method in self.methods


class ChaosInjector:
    """One applied chaos config: compiled rules, global faults, dice and fault state.

    Args:
        config: the validated config.
        stats: the counters to add to (kept by the runtime across configs).

    Attributes:
        config: the config it was built from.
        rng: the dice (seeded with ``config.seed`` when given).
        circuit_breakers, retry_after_trackers, progressive_degradations: stateful faults by
            key ``"<ruleIndex>:<faultIndex>"``.
    """

    def __init__(self, config: ChaosConfig, stats: ChaosStats):
        self.config = config
        self.stats = stats
        self.rng = random.Random(config.seed) if config.seed is not None else random.Random()
        self.rules: tuple[CompiledRule, ...] = tuple(CompiledRule(rule) for rule in config.rules)
        self.circuit_breakers: dict[str, CircuitBreakerFault] = {}
        self.retry_after_trackers: dict[str, RetryAfterFault] = {}
        self.progressive_degradations: dict[str, ProgressiveDegradationFault] = {}
        for rule_index, rule in enumerate(self.rules):
            for fault_index, fault in enumerate(rule.faults):
                key = f"{rule_index}:{fault_index}"
                if isinstance(fault, CircuitBreakerFault):
                    self.circuit_breakers[key] = fault
                elif isinstance(fault, RetryAfterFault):
                    self.retry_after_trackers[key] = fault
                elif isinstance(fault, ProgressiveDegradationFault):
                    self.progressive_degradations[key] = fault
        self.latency = config.latency
        self.error_rate = config.error_rate
        self.bandwidth = config.bandwidth
        self._has_global = any(block is not None for block in
                               (self.latency, self.error_rate, self.bandwidth))

    def decide(self, method: str, path: str) -> ChaosDecision | None:
        """What chaos does to a request of ``method`` at ``path``; None: nothing.

        The first rule whose path regex and methods match decides alone (its faults in
        order; the first one that answers ends the list); a request no rule matches gets
        the global faults. Counts the request and the faults that fire.
        """
        self.stats.total_requests += 1
        for rule in self.rules:
            if rule.matches(method, path):
                return self._rule_decision(rule)
        if self._has_global:
            return self._global_decision()
        return None

    def _rule_decision(self, rule: CompiledRule) -> ChaosDecision | None:
        rng = self.rng
        if rule.probability < 1.0 and rng.random() >= rule.probability:
            return None
        decision = ChaosDecision()
        stats = self.stats
        for fault in rule.faults:
            if (not fault.stateful and fault.probability < 1.0
                    and rng.random() >= fault.probability):
                continue
            if fault.apply(decision, rng, stats):
                break
        if (decision.status is None and not decision.reset and not decision.delay_ms
                and not decision.body_shapers and not decision.headers):
            return None
        return decision

    def _global_decision(self) -> ChaosDecision | None:
        rng, stats = self.rng, self.stats
        error_rate = self.error_rate
        if error_rate is not None and _fires(rng, error_rate.probability):
            decision = ChaosDecision()
            codes = error_rate.status_codes
            status = (codes[rng.randrange(len(codes))] if codes
                      else error_rate.default_code or 500)
            error_answer(decision, status)
            stats.count("error")
            return decision
        decision = None
        latency = self.latency
        if latency is not None and _fires(rng, latency.probability):
            decision = ChaosDecision()
            decision.delay_ms = latency.min + rng.random() * (latency.max - latency.min)
            stats.count("latency")
        bandwidth = self.bandwidth
        if bandwidth is not None and _fires(rng, bandwidth.probability):
            decision = decision or ChaosDecision()
            decision.body_shapers.append(SlowShaper(bandwidth.bytes_per_second))
            stats.count("slow_body")
        return decision

    def fault_state(self) -> dict[str, Any]:
        """``{circuitBreakers, retryAfterTrackers, progressiveDegradation,
        progressiveDegradations}``, each ``{"<rule>:<fault>": state}``."""
        progressive = {key: fault.document()
                       for key, fault in self.progressive_degradations.items()}
        return {"circuitBreakers": {key: breaker.document()
                                    for key, breaker in self.circuit_breakers.items()},
                "retryAfterTrackers": {key: tracker.document()
                                       for key, tracker in self.retry_after_trackers.items()},
                "progressiveDegradation": progressive,
                "progressiveDegradations": progressive}


def _fires(rng: random.Random, probability: float) -> bool:
    """A roll of the dice (always true at 1.0 and false at 0.0 without drawing)."""
    if probability >= 1.0:
        return True
    if probability <= 0.0:
        return False
    return rng.random() < probability


class CircuitBreakerNotFound(LookupError):
    """No circuit breaker has this key; ``str()`` is ``circuit breaker not found: <key>``."""

    def __init__(self, key: str):
        self.key = key
        super().__init__(f"circuit breaker not found: {key}")


class ChaosRuntime:
    """The chaos state of one engine: config, statistics and the compiled injector.

    Args:
        target: the object whose ``chaos`` attribute the data plane reads (the engine);
            set to the injector while chaos is enabled, else None.

    Chaos is global (shared by every workspace) and not persisted.
    """

    def __init__(self, target: Any):
        self._target = target
        self.stats = ChaosStats()
        self.config = ChaosConfig()
        self.injector = ChaosInjector(self.config, self.stats)
        target.chaos = None

    def configure(self, config: ChaosConfig) -> None:
        """Apply ``config``: new rules, dice (reseeded) and fault state; the statistics are
        kept. Enabled -> ``target.chaos`` is the new injector; disabled -> None."""
        injector = ChaosInjector(config, self.stats)
        self.config = config
        self.injector = injector
        self._target.chaos = injector if config.enabled else None

    def disable(self) -> None:
        """Turn chaos off (the rest of the config is kept for the next apply)."""
        self.configure(self.config.model_copy(update={"enabled": False}))

    @property
    def enabled(self) -> bool:
        """Whether faults are being injected."""
        return self.config.enabled

    def document(self) -> dict[str, Any]:
        """The live config as JSON data; ``{"enabled": false}`` while chaos is off."""
        if not self.config.enabled:
            return {"enabled": False}
        return self.config.document()

    def circuit_breaker(self, key: str) -> CircuitBreakerFault:
        """The breaker at ``"<rule>:<fault>"``; raises :class:`CircuitBreakerNotFound`."""
        breaker = self.injector.circuit_breakers.get(key)
        if breaker is None:
            raise CircuitBreakerNotFound(key)
        return breaker


# ---------------------------------------------------------------------------- applying


async def apply_http(decision: ChaosDecision, send: Send, raw_send: Send) -> Send | None:
    """Carry out ``decision`` for an HTTP request.

    Waits ``delay_ms``; then answers chaos' own response or drops the connection and returns
    None, or returns the ``send`` the mock must answer through (``send`` wrapped by the
    decision's headers and body shapers). ``raw_send`` is the server's own ``send`` (needed
    to reach the connection). Raises :class:`~chaos.faults.ConnectionDropped` when a reset
    cannot reach the transport (the server then closes the connection).
    """
    if decision.delay_ms > 0:
        await asyncio.sleep(decision.delay_ms / 1000)
    if decision.reset:
        if not drop_connection(raw_send):
            raise ConnectionDropped("connection_reset")
        return None
    if decision.status is not None:
        headers = decision.headers
        body = decision.body
        await send({"type": "http.response.start", "status": decision.status,
                    "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
        return None
    shapers = decision.body_shapers
    if decision.headers:
        shapers = [HeaderShaper(decision.headers), *shapers]
    if shapers:
        return shape_send(send, raw_send, shapers)
    return send


async def before_call(injector: ChaosInjector | None, method: str,
                      path: str) -> ChaosDecision | None:
    """Chaos for one call of a listener protocol (gRPC, MQTT): decide for ``method`` and
    ``path`` (the rules' regex and methods see them as for HTTP), wait the decision's
    ``delay_ms``, and return the decision when chaos ends the call itself (``status`` or
    ``reset``: the protocol maps them to its own error), else None. Body shapers do not
    apply to such calls. ``injector`` None (chaos off): None at once."""
    if injector is None:
        return None
    decision = injector.decide(method, path)
    if decision is None:
        return None
    if decision.delay_ms > 0:
        await asyncio.sleep(decision.delay_ms / 1000)
    return decision if decision.answers else None


#: Close codes of a refused WebSocket upgrade when the server cannot answer an HTTP status:
#: 1013 (try again later) for 429 and 503, else 1011 (internal error).
WS_TRY_AGAIN_LATER = 1013
WS_INTERNAL_ERROR = 1011


async def admit_websocket(injector: ChaosInjector, scope: dict[str, Any], receive: Receive,
                          send: Send) -> bool:
    """Apply chaos to a WebSocket upgrade; True when the handshake may go on.

    Latency (and the wait of timeout or progressive faults) delays the handshake. A status
    answer refuses it: with the ASGI ``websocket.http.response`` extension the client gets
    that HTTP status and body; otherwise the connection is accepted and closed at once with
    1013 (429, 503) or 1011 (other codes). A reset refuses the handshake without a status
    (the server answers 403). Body faults do not apply to WebSocket messages.
    """
    decision = injector.decide("GET", scope.get("path", ""))
    if decision is None:
        return True
    if decision.delay_ms > 0:
        await asyncio.sleep(decision.delay_ms / 1000)
    if not decision.answers:
        return True
    message = await receive()
    if message.get("type") != "websocket.connect":
        return False
    if decision.reset:
        await send({"type": "websocket.close", "code": 1008})
        return False
    status = decision.status or 500
    if "websocket.http.response" in (scope.get("extensions") or {}):
        await send({"type": "websocket.http.response.start", "status": status,
                    "headers": decision.headers})
        await send({"type": "websocket.http.response.body", "body": decision.body})
        return False
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.close",
                "code": WS_TRY_AGAIN_LATER if status in (429, 503) else WS_INTERNAL_ERROR,
                "reason": reason_phrase(status)})
    return False
