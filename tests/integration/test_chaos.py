"""Chaos seen from the client: every fault against a real ``mockd start`` with httpx (status,
headers, timing with wide tolerances, corrupted bodies, dropped connections), the circuit
breaker step by step, retry-after and progressive degradation, profiles applied and read
back, stats, seeded runs, the data-plane routes of other protocols (SSE, GraphQL, SOAP,
WebSocket), ``mockd engine`` with flags and the engine-control port, and the CLI."""
from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest
import websockets

from tests.helpers import http_mock, make_config, run_mockd, start_engine, start_server

pytestmark = pytest.mark.integration

HELLO = "hello world"
BIG = "0123456789" * 200  # 2,000 bytes

MOCKS = [
    http_mock("hello", "GET", "/api/hello", body=HELLO),
    http_mock("big", "GET", "/api/big", body=BIG),
    http_mock("create", "POST", "/api/hello", body="created", status=201),
    {"id": "events", "type": "http", "http": {
        "matcher": {"method": "GET", "path": "/events"},
        "sse": {"events": [{"type": "tick", "data": {"n": 1}}]}}},
    {"id": "gql", "type": "graphql", "graphql": {
        "path": "/graphql", "schema": "type Query { hello: String }",
        "resolvers": {"Query.hello": {"response": "hi"}}}},
    {"id": "soap", "type": "soap", "soap": {"path": "/soap/users", "operations": {
        "GetUser": {"soapAction": "urn:users/GetUser",
                    "response": "<GetUserResponse><id>1</id></GetUserResponse>"}}}},
    {"id": "ws", "type": "websocket", "websocket": {"path": "/ws", "echoMode": True}},
]

ENVELOPE = ('<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>'
            '<GetUser><id>1</id></GetUser></soap:Body></soap:Envelope>')


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("chaos"), make_config(*MOCKS)) as process:
        yield process


@pytest.fixture
def chaos(admin):
    """PUT a chaos config (stats reset first); chaos is off again after the test."""
    admin.post("/chaos/stats/reset")

    def put(document: dict[str, Any]) -> None:
        answer = admin.put("/chaos", json=document)
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"status": "ok"}

    yield put
    assert admin.put("/chaos", json={"enabled": False}).status_code == 200


def on_api(*faults: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"enabled": True, "rules": [{"pathPattern": "^/api/", "faults": list(faults),
                                        **extra}]}


def timed(client: httpx.Client, method: str, path: str, **kwargs: Any) -> tuple[httpx.Response,
                                                                                float]:
    started = time.monotonic()
    response = client.request(method, path, **kwargs)
    return response, time.monotonic() - started


# ---------------------------------------------------------------------------- each fault


def test_chaos_off_serves_mocks_and_reads_back_disabled(admin, data):
    assert admin.get("/chaos").json() == {"enabled": False}
    assert data.get("/api/hello").text == HELLO


def test_latency_fault_delays_the_answer(chaos, data):
    chaos(on_api({"type": "latency", "min": "300ms", "max": "300ms"}))
    response, elapsed = timed(data, "GET", "/api/hello")
    assert response.text == HELLO and 0.25 <= elapsed < 5


def test_error_fault_answers_the_reason_phrase(chaos, data):
    chaos(on_api({"type": "error", "statusCodes": [502]}))
    response = data.get("/api/hello")
    assert response.status_code == 502 and response.text == "Bad Gateway\n"
    assert response.headers["content-type"].startswith("text/plain")


def test_timeout_fault_waits_then_answers_504(chaos, data):
    chaos(on_api({"type": "timeout", "duration": "400ms"}))
    response, elapsed = timed(data, "GET", "/api/hello")
    assert response.status_code == 504 and response.text == "Gateway Timeout\n"
    assert 0.35 <= elapsed < 5


def test_corrupt_body_fault_changes_bytes_not_length(chaos, data):
    chaos(on_api({"type": "corrupt_body", "corruptRate": 1.0}))
    response = data.get("/api/hello")
    assert response.status_code == 200 and len(response.content) == len(HELLO)
    assert all(a != b for a, b in zip(response.content, HELLO.encode()))


def test_slow_body_fault_paces_the_body(chaos, data):
    chaos(on_api({"type": "slow_body", "bytesPerSecond": 4000}))
    response, elapsed = timed(data, "GET", "/api/big")
    assert response.text == BIG and 0.4 <= elapsed < 10  # 2,000 bytes at 4,000 B/s


def test_partial_response_fault_drops_the_connection_after_max_bytes(chaos, server):
    chaos(on_api({"type": "partial_response", "maxBytes": 100}))
    received = b""
    with server.client() as client, pytest.raises(httpx.HTTPError):
        with client.stream("GET", "/api/big") as response:
            assert response.headers["content-length"] == "2000"
            for chunk in response.iter_raw():
                received += chunk
    assert received == BIG[:100].encode()


def test_empty_response_fault_answers_200_without_a_body(chaos, data):
    chaos(on_api({"type": "empty_response"}))
    response = data.get("/api/hello")
    assert response.status_code == 200 and response.content == b""


def test_connection_reset_fault_drops_the_connection(chaos, server):
    chaos(on_api({"type": "connection_reset"}))
    with server.client() as client, pytest.raises(httpx.HTTPError) as raised:
        client.get("/api/hello")
    assert isinstance(raised.value, (httpx.ReadError, httpx.RemoteProtocolError,
                                     httpx.ConnectError))
    with server.client() as client:  # the server itself is fine
        assert client.get("/__mockd/health").status_code == 200


def test_chunked_dribble_fault_sends_small_chunks_slowly(chaos, server):
    chaos(on_api({"type": "chunked_dribble", "chunkSize": 500, "chunkDelay": "150ms",
                  "initialDelay": "100ms"}))
    chunks = []
    started = time.monotonic()
    with server.client() as client, client.stream("GET", "/api/big") as response:
        assert "content-length" not in response.headers
        assert response.headers.get("transfer-encoding") == "chunked"
        chunks = list(response.iter_raw())
    elapsed = time.monotonic() - started
    assert b"".join(chunks) == BIG.encode() and 0.5 <= elapsed < 10  # 100 + 3 x 150 ms


def test_rule_methods_and_probability_zero(chaos, data):
    chaos(on_api({"type": "error"}, methods=["POST"]))
    assert data.get("/api/hello").status_code == 200
    assert data.post("/api/hello").status_code == 500
    chaos(on_api({"type": "error", "probability": 0.0}))
    assert data.get("/api/hello").status_code == 200


def test_rule_takes_precedence_over_global_faults(chaos, data):
    chaos({"enabled": True, "errorRate": {"probability": 1.0, "statusCodes": [503]},
           "rules": [{"pathPattern": "^/api/big$", "faults": [
               {"type": "latency", "min": 0, "max": 0}]}]})
    assert data.get("/api/big").status_code == 200
    assert data.get("/api/hello").status_code == 503


def test_builtin_health_routes_are_never_faulted(chaos, data):
    chaos({"enabled": True, "errorRate": {"probability": 1.0}})
    assert data.get("/health").status_code == 200
    assert data.get("/__mockd/health").status_code == 200


# ---------------------------------------------------------------------------- stateful faults


def test_circuit_breaker_trips_half_opens_and_recovers(chaos, admin, data):
    chaos(on_api({"type": "circuit_breaker", "closedErrorRate": 1.0, "failureThreshold": 2,
                  "successThreshold": 2, "openDuration": "400ms", "halfOpenErrorRate": 0.0}))
    for _ in range(2):  # failureThreshold 2: two injected 500s, then open
        failed = data.get("/api/hello")
        assert failed.status_code == 500 and failed.headers["x-circuit-state"] == "closed"
    tripped = data.get("/api/hello")
    assert tripped.status_code == 503 and tripped.headers["x-circuit-state"] == "open"
    assert tripped.headers["retry-after"] == "1"  # whole seconds, rounded up from 400 ms
    assert tripped.json() == {"error": "circuit breaker open", "state": "open", "retry_after": 1}
    assert data.get("/api/hello").status_code == 503
    state = admin.get("/chaos/faults").json()["circuitBreakers"]["0:0"]
    assert state["state"] == "open" and state["tripCount"] == 1 and "openedAt" in state
    time.sleep(0.5)
    half_open = data.get("/api/hello")
    assert half_open.status_code == 200 and half_open.headers["x-circuit-state"] == "half_open"
    assert admin.get("/chaos/faults").json()["circuitBreakers"]["0:0"]["state"] == "half_open"
    assert data.get("/api/hello").text == HELLO  # second success: closed again
    state = admin.get("/chaos/faults").json()["circuitBreakers"]["0:0"]
    assert state["state"] == "closed" and state["requestCount"] == 6
    assert data.get("/api/hello").status_code == 500  # closed, still failing at rate 1.0


def test_circuit_breaker_half_open_failure_answers_500_then_reopens(chaos, admin, data):
    chaos(on_api({"type": "circuit_breaker", "tripAfter": 1, "openDuration": "300ms",
                  "halfOpenErrorRate": 1.0}))
    assert data.get("/api/hello").status_code == 503  # tripAfter 1: open at the first request
    time.sleep(0.4)
    probe = data.get("/api/hello")
    assert probe.status_code == 500 and probe.headers["x-circuit-state"] == "half_open"
    reopened = data.get("/api/hello")
    assert reopened.status_code == 503 and reopened.headers["x-circuit-state"] == "open"
    assert admin.get("/chaos/faults").json()["circuitBreakers"]["0:0"]["tripCount"] == 2


def test_circuit_breaker_manual_trip_reset_and_unknown_key(chaos, admin, data):
    chaos(on_api({"type": "latency", "max": 0},
                 {"type": "circuit_breaker", "openStatusCode": 502, "openBody": "down"}))
    assert admin.post("/chaos/circuit-breakers/0:1/trip").json() == {
        "message": "circuit breaker tripped", "key": "0:1"}
    response = data.get("/api/hello")
    assert (response.status_code, response.text) == (502, "down")
    assert response.headers["retry-after"] == "30"
    assert admin.post("/chaos/circuit-breaker/0:1/reset").json()["message"] == \
        "circuit breaker reset"
    assert data.get("/api/hello").headers["x-circuit-state"] == "closed"
    missing = admin.post("/chaos/circuit-breakers/0:0/trip")
    assert missing.status_code == 404
    assert missing.json() == {"error": "not_found", "message": "circuit breaker not found: 0:0"}


def test_retry_after_fault_limits_then_recovers(chaos, admin, data):
    chaos(on_api({"type": "retry_after", "retryAfter": 1, "statusCode": 503}))
    limited = data.get("/api/hello")
    assert limited.status_code == 503 and limited.headers["retry-after"] == "1"
    assert limited.json() == {"error": "Service Unavailable", "retry_after": 1}
    assert data.get("/api/hello").status_code == 503
    tracker = admin.get("/chaos/faults").json()["retryAfterTrackers"]["0:0"]
    assert tracker["isLimited"] and tracker["statusCode"] == 503
    time.sleep(1.1)
    assert data.get("/api/hello").text == HELLO
    assert data.get("/api/hello").status_code == 503  # a new window


def test_progressive_degradation_slows_then_fails(chaos, admin, data):
    chaos(on_api({"type": "progressive_degradation", "initialDelay": "0ms",
                  "delayIncrement": "150ms", "errorAfter": 3, "errorCode": 503}))
    timings = [timed(data, "GET", "/api/hello") for _ in range(4)]
    assert [response.status_code for response, _ in timings] == [200, 200, 200, 503]
    assert timings[2][1] >= 0.25 and timings[3][1] >= 0.4
    assert timings[3][0].json() == {"error": "Service Unavailable",
                                    "degradation": {"request_count": 4, "delay_ms": 450}}
    state = admin.get("/chaos/faults").json()["progressiveDegradation"]["0:0"]
    assert state["currentDelay"] == "450ms" and state["requestCount"] == 4
    assert state["isErroring"] and state["totalErrors"] == 1


# ---------------------------------------------------------------------------- admin, stats, seed


def test_stats_count_requests_and_faults_and_reset(chaos, admin, data):
    chaos({"enabled": True, "errorRate": {"probability": 1.0}, "rules": [
        {"pathPattern": "^/api/big$", "faults": [{"type": "latency", "min": 0, "max": 0}]}]})
    for _ in range(3):
        data.get("/api/hello")
    data.get("/api/big")
    stats = admin.get("/chaos/stats").json()
    assert stats["totalRequests"] == 4 and stats["injectedFaults"] == 4
    assert (stats["errorsInjected"], stats["latencyInjected"]) == (3, 1)
    assert stats["faultsByType"]["error"] == 3 and stats["faultsByType"]["latency"] == 1
    assert admin.delete("/chaos/stats").json() == {"message": "chaos stats reset"}
    assert admin.get("/chaos/stats").json()["totalRequests"] == 0


def test_same_seed_gives_the_same_fault_sequence(chaos, data):
    config = {"enabled": True, "seed": 1234,
              "errorRate": {"probability": 0.5, "statusCodes": [500, 502, 503]}}

    def run() -> list[int]:
        chaos(config)  # applying a config reseeds the dice
        return [data.get("/api/hello").status_code for _ in range(24)]

    first = run()
    assert first == run()
    assert 200 in first and len(set(first)) >= 3
    config["seed"] = 99
    assert run() != first


def test_bad_chaos_configs_are_400_naming_the_field(admin):
    answer = admin.put("/chaos", json={"enabled": True, "errorRate": {"probability": 1.5}})
    assert answer.status_code == 400 and answer.json()["error"] == "validation_error"
    assert answer.json()["message"].startswith("errorRate.probability:")
    answer = admin.put("/chaos", json={"enabled": True, "rules": [
        {"faults": [{"type": "meteor_strike"}]}]})
    assert answer.status_code == 400
    assert answer.json()["message"].startswith("rules[0].faults[0].type: unknown fault type")
    answer = admin.put("/chaos", json={"rules": [{"faults": [{"type": "latency",
                                                              "probability": -1}]}]})
    assert answer.json()["message"].startswith("rules[0].faults[0].probability:")
    assert admin.get("/chaos").json() == {"enabled": False}  # nothing applied


def test_profiles_listed_read_and_applied(admin, data):
    listed = admin.get("/chaos/profiles").json()
    assert [profile["name"] for profile in listed] == sorted(profile["name"]
                                                             for profile in listed)
    assert len(listed) == 10
    by_name = {profile["name"]: profile for profile in listed}
    assert by_name["mobile-3g"]["description"] == "Mobile 3G network conditions"
    assert by_name["mobile-3g"]["config"]["bandwidth"] == {"bytesPerSecond": 51200,
                                                           "probability": 1.0}
    for name, profile in by_name.items():
        applied = admin.post(f"/chaos/profiles/{name}/apply").json()
        assert applied == {"status": "ok", "profile": name,
                           "message": f"chaos profile applied: {profile['description']}"}
        assert admin.get("/chaos").json() == profile["config"]
        assert admin.get(f"/chaos/profiles/{name}").json() == profile
    admin.post("/chaos/profiles/offline/apply")
    assert data.get("/api/hello").status_code == 503
    missing = admin.post("/chaos/profiles/nope/apply")
    assert missing.status_code == 404 and missing.json()["message"] == \
        "chaos profile not found: nope"
    assert admin.get("/chaos/profiles/nope").status_code == 404
    admin.put("/chaos", json={"enabled": False})
    assert data.get("/api/hello").text == HELLO


# ---------------------------------------------------------------------------- other protocols


def test_chaos_applies_to_sse_graphql_and_soap_routes(chaos, data):
    chaos({"enabled": True, "rules": [{"pathPattern": "^/(events|graphql|soap/)", "faults": [
        {"type": "error", "statusCodes": [503]}]}]})
    assert data.get("/events").status_code == 503
    assert data.post("/graphql", json={"query": "{ hello }"}).status_code == 503
    assert data.post("/soap/users", content=ENVELOPE, headers={
        "Content-Type": "text/xml", "SOAPAction": '"urn:users/GetUser"'}).status_code == 503
    chaos({"enabled": True, "rules": [{"pathPattern": "^/(events|graphql|soap/)", "faults": [
        {"type": "latency", "min": "200ms", "max": "200ms"}]}]})
    response, elapsed = timed(data, "POST", "/graphql", json={"query": "{ hello }"})
    assert response.json() == {"data": {"hello": "hi"}} and elapsed >= 0.15
    response, elapsed = timed(data, "GET", "/events")
    assert "event: tick" in response.text and elapsed >= 0.15


def test_websocket_upgrade_gets_latency_and_refusal(chaos, server):
    url = server.base.replace("http://", "ws://") + "/ws"

    async def echo() -> tuple[str, float]:
        started = time.monotonic()
        async with websockets.connect(url, open_timeout=10, proxy=None) as socket:
            elapsed = time.monotonic() - started
            await socket.send("ping")
            return await asyncio.wait_for(socket.recv(), 10), elapsed

    chaos({"enabled": True, "rules": [{"pathPattern": "^/ws$", "faults": [
        {"type": "latency", "min": "300ms", "max": "300ms"}]}]})
    reply, elapsed = asyncio.run(echo())
    assert reply == "ping" and elapsed >= 0.25

    chaos({"enabled": True, "rules": [{"pathPattern": "^/ws$", "faults": [
        {"type": "error", "statusCodes": [503]}]}]})
    with pytest.raises(Exception) as raised:
        asyncio.run(echo())
    error = raised.value
    status = getattr(getattr(error, "response", None), "status_code", None)
    close_code = getattr(getattr(error, "rcvd", None), "code", None)
    assert status == 503 or close_code == 1013, repr(error)


# ---------------------------------------------------------------------------- engine mode, CLI


def test_engine_flags_profile_and_engine_control_routes(tmp_path):
    config = make_config(http_mock("hello", "GET", "/api/hello", body=HELLO))
    with start_engine(tmp_path, config, extra_args=["--chaos-profile", "offline",
                                                    "--engine-token", "tok"]) as engine:
        with engine.client() as data:
            assert data.get("/api/hello").status_code == 503
        control_port = int(engine.log().split("Engine control on http://127.0.0.1:")[1]
                           .split(",")[0])
        headers = {"X-Engine-Token": "tok"}
        with httpx.Client(base_url=f"http://127.0.0.1:{control_port}", headers=headers,
                          trust_env=False, timeout=10) as control:
            assert control.get("/chaos").json()["errorRate"]["statusCodes"] == [503]
            assert control.get("/chaos/stats").json()["errorsInjected"] == 1
            assert control.put("/chaos", json={"errorRate": {"probability": 7}}).status_code \
                == 400
            assert control.put("/chaos", json={"enabled": False}).json() == {"status": "ok"}
            with engine.client() as data:
                assert data.get("/api/hello").text == HELLO
            assert control.post("/chaos/profiles/flaky/apply", json={}).json()["profile"] == "flaky"
            assert len(control.get("/chaos/profiles").json()) == 10


def test_engine_reads_server_config_chaos_and_latency_flag(tmp_path):
    config = make_config(http_mock("hello", "GET", "/api/hello", body=HELLO), serverConfig={
        "chaos": {"enabled": False, "seed": 5, "rules": [
            {"pathPattern": "^/api/", "faults": [{"type": "error", "statusCodes": [418]}]}]}})
    with start_engine(tmp_path, config, extra_args=["--chaos-latency", "200ms-200ms"]) as engine:
        with engine.client() as data:
            response, elapsed = timed(data, "GET", "/api/hello")
            assert response.status_code == 418 and elapsed < 5  # the rule wins over globals
            response, elapsed = timed(data, "GET", "/other")
            assert response.status_code == 404 and elapsed >= 0.15


def test_bad_chaos_in_file_or_flags_exits_2(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text(json.dumps(make_config(serverConfig={"chaos": {"errorRate": {
        "probability": 2}}})))
    result = run_mockd(["engine", "-c", str(config), "--port", "0"], tmp_path)
    assert result.returncode == 2 and "serverConfig.chaos.errorRate.probability" in result.stderr
    good = tmp_path / "good.yaml"
    good.write_text(json.dumps(make_config()))
    result = run_mockd(["engine", "-c", str(good), "--chaos-profile", "nope"], tmp_path)
    assert result.returncode == 2 and "chaos profile not found: nope" in result.stderr
    result = run_mockd(["engine", "-c", str(good), "--chaos-profile", "flaky",
                        "--chaos-error-rate", "0.5"], tmp_path)
    assert result.returncode == 2 and "cannot be combined" in result.stderr
    result = run_mockd(["engine", "-c", str(good), "--chaos-latency", "fast"], tmp_path)
    assert result.returncode == 2 and "--chaos-latency" in result.stderr


def test_cli_chaos_status_apply_off(server, data):
    args = ["--admin-url", server.admin]
    applied = run_mockd(["chaos", "apply", "dns-flaky", *args], server.log_path.parent)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.strip() == \
        "chaos profile applied: Intermittent DNS resolution failures"
    status = run_mockd(["chaos", "status", *args], server.log_path.parent)
    assert status.returncode == 0 and "Chaos: enabled" in status.stdout
    assert "Error rate: 0.1 503" in status.stdout
    as_json = json.loads(run_mockd(["chaos", "status", "--json", *args],
                                   server.log_path.parent).stdout)
    assert as_json["config"]["errorRate"]["probability"] == 0.1
    off = run_mockd(["chaos", "off", *args], server.log_path.parent)
    assert off.returncode == 0 and off.stdout.strip() == "Chaos disabled"
    assert "Chaos: disabled" in run_mockd(["chaos", "status", *args],
                                          server.log_path.parent).stdout
    unknown = run_mockd(["chaos", "apply", "nope", *args], server.log_path.parent)
    assert unknown.returncode == 1
    assert "chaos profile not found: nope (HTTP 404)" in unknown.stderr
    assert data.get("/api/hello").text == HELLO
