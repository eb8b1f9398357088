"""Chaos config, faults, breaker state machine, profiles, seeded dice and the engine-control
routes, without a server (the client-side view is tests/integration/test_chaos.py)."""
from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from chaos.config import FAULT_TYPES, ChaosConfigError, parse_chaos
from chaos.control import ChaosControl, ChaosError, route_chaos
from chaos.decision import ChaosStats
from chaos.faults import FAULT_CLASSES, CircuitBreakerFault, RetryAfterFault, shape_send
from chaos.injector import ChaosInjector, ChaosRuntime, apply_http
from chaos.profiles import PROFILES, UnknownProfile, get_profile, profile_documents
from chaos.startup import ChaosFlags, startup_chaos
from mocks.core.errors import ConfigError
from mocks.loader import validate_config


class FakeClock:
    """A monotonic clock the test moves by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def injector_of(document: dict[str, Any]) -> ChaosInjector:
    return ChaosInjector(parse_chaos(document), ChaosStats())


def rule(*faults: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"enabled": True, "rules": [{"pathPattern": "^/api/", "faults": list(faults),
                                        **extra}]}


# ---------------------------------------------------------------------------- config


def test_config_every_fault_type_has_a_compiled_class():
    assert set(FAULT_CLASSES) == set(FAULT_TYPES)


@pytest.mark.parametrize("document, field", [
    pytest.param({"errorRate": {"probability": 2}}, "errorRate.probability", id="rate over 1"),
    pytest.param({"latency": {"probability": -0.1}}, "latency.probability", id="negative"),
    pytest.param(rule({"type": "latency", "probability": 1.5}), "rules[0].faults[0].probability",
                 id="fault probability"),
    pytest.param({"rules": [{"probability": 3, "faults": []}]}, "rules[0].probability",
                 id="rule probability"),
    pytest.param(rule({"type": "explode"}), "rules[0].faults[0].type", id="unknown type"),
    pytest.param(rule({"probability": 1}), "rules[0].faults[0].type", id="missing type"),
    pytest.param(rule({"type": "latency", "minimum": 3}), "rules[0].faults[0].config.minimum",
                 id="unknown parameter"),
    pytest.param(rule({"type": "corrupt_body", "corruptRate": 2}),
                 "rules[0].faults[0].config.corruptRate", id="corrupt rate"),
    pytest.param(rule({"type": "retry_after", "statusCode": 500}),
                 "rules[0].faults[0].config.statusCode", id="retry-after status"),
    pytest.param({"rules": [{"pathPattern": "(", "faults": []}]}, "rules[0].pathPattern",
                 id="bad regex"),
    pytest.param({"latency": {"min": "1s", "max": "10ms"}}, "latency", id="min above max"),
    pytest.param({"turbo": True}, "turbo", id="unknown key"),
])
def test_config_bad_value_names_the_field(document, field):
    with pytest.raises(ChaosConfigError) as raised:
        parse_chaos(document)
    assert raised.value.field == field, str(raised.value)


def test_config_parameters_flat_named_or_in_config_with_config_winning():
    config = parse_chaos(rule(
        {"type": "circuit_breaker", "failureThreshold": 9,
         "circuitBreaker": {"failureThreshold": 8, "successThreshold": 7},
         "config": {"failureThreshold": 2, "recoveryTimeout": "5s", "tripStatusCode": 502}},
        {"type": "retry_after", "retryAfterSeconds": 3},
        {"type": "progressive_degradation", "errorAfterRequests": 4, "errorStatusCode": 503},
        {"type": "chunked_dribble", "chunkedDribble": {"chunkSize": 3}}))
    breaker, retry, progressive, dribble = (fault.config for fault in config.rules[0].faults)
    assert (breaker.failure_threshold, breaker.success_threshold) == (2, 7)
    assert (breaker.open_duration, breaker.open_status_code) == (5000, 502)
    assert retry.retry_after == 3000  # a plain number is seconds
    assert (progressive.error_after, progressive.error_code) == (4, 503)
    assert (dribble.chunk_size, dribble.chunk_delay) == (3, 500)


def test_config_document_round_trips_with_durations_as_text():
    config = parse_chaos({"enabled": True, "seed": 7,
                          "latency": {"min": "10ms", "max": "2s"},
                          "rules": [{"pathPattern": "^/x", "methods": ["post"],
                                     "faults": [{"type": "timeout", "duration": "1500ms"}]}]})
    document = config.document()
    assert document["latency"] == {"min": "10ms", "max": "2s", "probability": 1.0}
    assert document["rules"][0]["methods"] == ["POST"]
    assert document["rules"][0]["faults"][0]["config"] == {"duration": "1500ms"}
    assert parse_chaos(json.loads(json.dumps(document))) == config


def test_config_file_error_names_the_server_config_key():
    with pytest.raises(ConfigError) as raised:
        validate_config({"serverConfig": {"chaos": {"errorRate": {"probability": 1.5}}}})
    assert "serverConfig.chaos.errorRate.probability" in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        validate_config({"serverConfig": {"chaos": {"rules": [{"faults": [{"type": "boom"}]}]}}})
    assert "serverConfig.chaos.rules[0].faults" in str(raised.value)
    assert "unknown fault type 'boom'" in str(raised.value)


# ---------------------------------------------------------------------------- decisions


def test_rule_matching_path_and_method_gets_its_faults_and_no_global_ones():
    injector = injector_of({"enabled": True, "errorRate": {"probability": 1.0},
                            "rules": [{"pathPattern": "^/slow", "methods": ["GET"],
                                       "faults": [{"type": "latency", "min": 50, "max": 50}]}]})
    slow = injector.decide("GET", "/slow/x")
    assert slow.delay_ms == 50 and slow.status is None
    assert injector.decide("POST", "/slow/x").status == 500  # method not in the rule: global
    assert injector.decide("GET", "/other").status == 500


def test_global_error_first_then_nothing_else():
    injector = injector_of({"enabled": True, "errorRate": {"probability": 1.0,
                                                           "statusCodes": [503]},
                            "latency": {"min": 100, "max": 100},
                            "bandwidth": {"bytesPerSecond": 10}})
    decision = injector.decide("GET", "/")
    assert decision.status == 503 and decision.body == b"Service Unavailable\n"
    assert decision.delay_ms == 0 and not decision.body_shapers
    assert injector.stats.document()["errorsInjected"] == 1


def test_global_latency_and_bandwidth_count_as_latency_and_slow_body():
    injector = injector_of({"enabled": True, "latency": {"min": 10, "max": 20},
                            "bandwidth": {"bytesPerSecond": 100}})
    decision = injector.decide("GET", "/")
    assert 10 <= decision.delay_ms <= 20 and len(decision.body_shapers) == 1
    stats = injector.stats.document()
    assert (stats["latencyInjected"], stats["bandwidthInjected"]) == (1, 1)
    assert stats["faultsByType"]["slow_body"] == 1 and stats["injectedFaults"] == 2


def test_no_rule_and_no_global_fault_decides_nothing():
    injector = injector_of({"enabled": True, "rules": [{"pathPattern": "^/never", "faults": [
        {"type": "error"}]}]})
    assert injector.decide("GET", "/api/x") is None
    assert injector.stats.total_requests == 1


def test_first_answering_fault_ends_the_rule():
    injector = injector_of(rule({"type": "latency", "min": 5, "max": 5}, {"type": "error",
                                                                          "statusCodes": [502]},
                                {"type": "latency", "min": 100, "max": 100}))
    decision = injector.decide("GET", "/api/x")
    assert (decision.status, decision.delay_ms) == (502, 5)
    assert injector.stats.by_type["latency"] == 1


def test_seeded_injectors_give_identical_fault_sequences():
    document = {"enabled": True, "seed": 42,
                "errorRate": {"probability": 0.5, "statusCodes": [500, 502, 503]},
                "latency": {"min": 0, "max": 100, "probability": 0.5}}

    def run() -> list[tuple[int | None, float]]:
        injector = injector_of(document)
        out = []
        for _ in range(50):
            decision = injector.decide("GET", "/x")
            out.append((None, 0.0) if decision is None else (decision.status, decision.delay_ms))
        return out

    first = run()
    assert first == run()
    assert len({status for status, _ in first}) > 2  # errors of several codes and passes
    assert run() != [(None, 0.0)] * 50


# ---------------------------------------------------------------------------- stateful faults


def breaker_of(clock: FakeClock, **params: Any) -> tuple[ChaosInjector, CircuitBreakerFault]:
    injector = injector_of(rule({"type": "circuit_breaker", "config": params}))
    breaker = injector.circuit_breakers["0:0"]
    breaker._clock = clock
    return injector, breaker


def test_breaker_closed_open_half_open_closed_step_by_step():
    clock = FakeClock()
    injector, breaker = breaker_of(clock, closedErrorRate=1.0, failureThreshold=3,
                                   successThreshold=2, openDuration="10s",
                                   halfOpenErrorRate=0.0)
    first = injector.decide("GET", "/api/x")
    assert first.status == 500 and (b"x-circuit-state", b"closed") in first.headers
    assert injector.decide("GET", "/api/x").status == 500
    third = injector.decide("GET", "/api/x")  # the third consecutive 500 opens it after
    assert third.status == 500 and (b"x-circuit-state", b"closed") in third.headers
    assert breaker.state == "open"
    opened = injector.decide("GET", "/api/x")
    assert opened.status == 503
    headers = dict(opened.headers)
    assert headers[b"retry-after"] == b"10" and headers[b"x-circuit-state"] == b"open"
    assert json.loads(opened.body) == {"error": "circuit breaker open", "state": "open",
                                       "retry_after": 10}
    clock.now += 9.9
    assert injector.decide("GET", "/api/x").status == 503
    clock.now += 0.2  # openDuration has passed: half_open
    passing = injector.decide("GET", "/api/x")
    assert passing.status is None and (b"x-circuit-state", b"half_open") in passing.headers
    assert breaker.state == "half_open"
    injector.decide("GET", "/api/x")  # second success closes it
    state = breaker.document()
    assert state["state"] == "closed"
    assert (state["totalTrips"], state["tripCount"], state["requestCount"]) == (1, 1, 7)
    assert state["failureCount"] == 3 and state["totalHalfOpen"] == 2
    assert state["stateChanges"] == 3  # open, half_open, closed


@pytest.mark.parametrize("threshold", [1, 2, 5])
def test_breaker_opens_after_failure_threshold_injected_500s(threshold):
    injector, breaker = breaker_of(FakeClock(), closedErrorRate=1.0,
                                   failureThreshold=threshold)
    statuses = [injector.decide("GET", "/api/x").status for _ in range(threshold + 2)]
    assert statuses == [500] * threshold + [503, 503]
    assert breaker.document()["failureCount"] == threshold


def test_breaker_half_open_failure_answers_500_then_reopens():
    clock = FakeClock()
    injector, breaker = breaker_of(clock, openDuration="1s", halfOpenErrorRate=1.0)
    breaker.trip()
    clock.now += 1.5
    failed = injector.decide("GET", "/api/x")
    assert failed.status == 500 and (b"x-circuit-state", b"half_open") in failed.headers
    assert breaker.state == "open" and breaker.total_trips == 2
    assert injector.decide("GET", "/api/x").status == 503


def test_breaker_trips_at_request_trip_after_and_uses_open_settings():
    clock = FakeClock()
    injector, breaker = breaker_of(clock, tripAfter=3, openStatusCode=502,
                                   openBody='{"down":true}')
    assert [injector.decide("GET", "/api/x").status for _ in range(3)] == [None, None, 502]
    decision = injector.decide("GET", "/api/x")
    assert decision.body == b'{"down":true}' and breaker.document()["openedAt"].endswith("Z")


def test_breaker_manual_trip_and_reset():
    clock = FakeClock()
    injector, breaker = breaker_of(clock)
    breaker.trip()
    assert injector.decide("GET", "/api/x").status == 503
    breaker.reset()
    assert injector.decide("GET", "/api/x").status is None
    assert breaker.document()["state"] == "closed"


def test_retry_after_window_then_one_pass_then_a_new_window():
    clock = FakeClock()
    injector = injector_of(rule({"type": "retry_after", "retryAfter": "10s"}))
    tracker: RetryAfterFault = injector.retry_after_trackers["0:0"]
    tracker._clock = clock
    first = injector.decide("GET", "/api/x")
    assert first.status == 429 and dict(first.headers)[b"retry-after"] == b"10"
    assert json.loads(first.body) == {"error": "Too Many Requests", "retry_after": 10}
    clock.now += 8.5
    assert dict(injector.decide("GET", "/api/x").headers)[b"retry-after"] == b"2"
    clock.now += 2
    assert injector.decide("GET", "/api/x") is None  # the window is over
    assert injector.decide("GET", "/api/x").status == 429
    state = injector.fault_state()["retryAfterTrackers"]["0:0"]
    assert state["isLimited"] and (state["totalLimited"], state["totalPassed"]) == (2, 1)
    assert state["retryAfterMs"] == 10_000 and "limitedAt" in state


def test_progressive_degradation_delays_then_errors_then_resets():
    injector = injector_of(rule({"type": "progressive_degradation", "initialDelay": "10ms",
                                 "delayIncrement": "20ms", "maxDelay": "45ms", "errorAfter": 3,
                                 "resetAfter": 5}))
    decisions = [injector.decide("GET", "/api/x") for _ in range(6)]
    assert [decision.delay_ms for decision in decisions] == [10, 30, 45, 45, 45, 10]
    assert [decision.status for decision in decisions] == [None, None, None, 500, 500, None]
    assert json.loads(decisions[3].body) == {
        "error": "Internal Server Error", "degradation": {"request_count": 4, "delay_ms": 45}}
    state = injector.fault_state()["progressiveDegradation"]["0:0"]
    assert state["currentDelay"] == "10ms" and state["totalResets"] == 1
    assert state["totalErrors"] == 2 and state == injector.fault_state()[
        "progressiveDegradations"]["0:0"]


# ---------------------------------------------------------------------------- applying


def collect() -> tuple[list[dict[str, Any]], Any]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    return sent, send


def body_of(sent: list[dict[str, Any]]) -> bytes:
    return b"".join(message.get("body", b"") for message in sent
                    if message["type"] == "http.response.body")


async def answer_through(send: Any, body: bytes) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def test_corrupt_body_changes_every_byte_at_rate_one_and_keeps_the_length():
    injector = injector_of(rule({"type": "corrupt_body", "corruptRate": 1.0}))
    sent, send = collect()

    async def run() -> None:
        shaped = await apply_http(injector.decide("GET", "/api/x"), send, send)
        await answer_through(shaped, b"hello world")

    asyncio.run(run())
    body = body_of(sent)
    assert len(body) == 11 and all(a != b for a, b in zip(body, b"hello world"))


def test_chunked_dribble_drops_the_length_and_sends_pieces():
    injector = injector_of(rule({"type": "chunked_dribble", "chunkSize": 4, "chunkDelay": 1}))
    sent, send = collect()

    async def run() -> None:
        shaped = await apply_http(injector.decide("GET", "/api/x"), send, send)
        await answer_through(shaped, b"0123456789")

    asyncio.run(run())
    assert sent[0]["headers"] == []
    pieces = [message["body"] for message in sent[1:]]
    assert pieces == [b"0123", b"4567", b"89"] and sent[-1]["more_body"] is False


def test_partial_response_without_a_transport_raises_to_drop_the_connection():
    from chaos.faults import ConnectionDropped, TruncateShaper

    sent, send = collect()
    shaped = shape_send(send, send, [TruncateShaper(4)])
    with pytest.raises(ConnectionDropped):
        asyncio.run(answer_through(shaped, b"0123456789"))
    assert body_of(sent) == b"0123"


# ---------------------------------------------------------------------------- profiles, startup


def test_profiles_ten_sorted_with_the_documented_figures():
    names = [document["name"] for document in profile_documents()]
    assert names == sorted(PROFILES) and len(names) == 10
    overloaded = get_profile("overloaded").config
    assert (overloaded.latency.min, overloaded.latency.max) == (1000, 5000)
    assert overloaded.error_rate.status_codes == [500, 502, 503, 504]
    assert overloaded.bandwidth.bytes_per_second == 102_400
    offline = get_profile("offline").config
    assert offline.error_rate.probability == 1.0 and offline.latency is None
    assert get_profile("timeout").config.latency.min == 30_000
    with pytest.raises(UnknownProfile, match="chaos profile not found: nope"):
        get_profile("nope")


def test_startup_flags_over_the_file_config():
    file_config = parse_chaos({"seed": 3, "errorRate": {"probability": 0.1,
                                                         "statusCodes": [503]}})
    assert startup_chaos(file_config, None) is file_config
    merged = startup_chaos(file_config, ChaosFlags(latency=(10, 100), error_rate=0.5))
    assert merged.enabled and (merged.latency.min, merged.latency.max) == (10, 100)
    assert merged.error_rate.status_codes == [503] and merged.error_rate.probability == 0.5
    profiled = startup_chaos(file_config, ChaosFlags(profile="flaky"))
    assert profiled.enabled and profiled.seed == 3 and profiled.latency.max == 100
    assert startup_chaos(None, ChaosFlags(enabled=True)).enabled


# ---------------------------------------------------------------------------- control


class Holder:
    chaos = None


class Control(ChaosControl):
    def __init__(self) -> None:
        self.engine = Holder()
        self.engine.chaos_runtime = ChaosRuntime(self.engine)


def test_runtime_publishes_the_injector_only_while_enabled():
    control = Control()
    assert control.engine.chaos is None
    asyncio.run(control.set_chaos({"enabled": True, "errorRate": {"probability": 1}}))
    assert control.engine.chaos is not None
    asyncio.run(control.set_chaos({"enabled": False, "errorRate": {"probability": 1}}))
    assert control.engine.chaos is None
    assert asyncio.run(control.chaos_config()) == {"enabled": False}


def call_route(control: Any, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    answers: list[tuple[int, Any]] = []

    async def read_body() -> bytes:
        return json.dumps(body).encode() if body is not None else b""

    async def answer(status: int, payload: Any) -> None:
        answers.append((status, payload))

    assert asyncio.run(route_chaos(control, method, path, read_body, answer))
    return answers[0]


def test_engine_control_routes_mirror_the_admin_api():
    control = Control()
    assert call_route(control, "PUT", "/chaos", {"errorRate": {"probability": 5}})[0] == 400
    status, payload = call_route(control, "PUT", "/chaos", rule({"type": "circuit_breaker"}))
    assert (status, payload) == (200, {"status": "ok"})
    assert call_route(control, "POST", "/chaos/circuit-breakers/0:0/trip") == (
        200, {"message": "circuit breaker tripped", "key": "0:0"})
    faults = call_route(control, "GET", "/chaos/faults")[1]
    assert faults["circuitBreakers"]["0:0"]["state"] == "open"
    assert call_route(control, "POST", "/chaos/circuit-breaker/0:0/reset")[1]["message"] == \
        "circuit breaker reset"
    assert call_route(control, "POST", "/chaos/circuit-breakers/1:0/trip") == (
        404, {"error": "not_found", "message": "circuit breaker not found: 1:0"})
    assert call_route(control, "GET", "/chaos/profiles/nope")[1]["message"] == \
        "chaos profile not found: nope"
    applied = call_route(control, "POST", "/chaos/profiles/offline/apply")[1]
    assert applied == {"status": "ok", "profile": "offline",
                       "message": "chaos profile applied: Service completely down"}
    assert call_route(control, "GET", "/chaos")[1]["errorRate"]["statusCodes"] == [503]
    assert call_route(control, "DELETE", "/chaos/stats")[1] == {"message": "chaos stats reset"}
    assert call_route(control, "PATCH", "/chaos")[0] == 405


def test_chaos_error_from_control_names_the_field():
    with pytest.raises(ChaosError) as raised:
        asyncio.run(Control().set_chaos({"rules": [{"faults": [{"type": "nope"}]}]}))
    assert raised.value.status == 400 and raised.value.code == "validation_error"
    assert raised.value.message.startswith("rules[0].faults[0].type: unknown fault type")
