"""The ``Host`` check of the admin gateway and of the engine-control port (DNS rebinding), and
the static-path check of the admin gateway.

Source: docs/security.md "The admin port: API key, origins and Host" and "The engine-control
port and its token"; behavior notes §2, §16.
"""
from __future__ import annotations

import asyncio

import httpx
import orjson
import pytest

from mocks.engine.control import EngineControl, EngineControlApp, gate_answer
from mocks.engine.core import Engine
from mocks.engine.hosts import LOOPBACK_ONLY, HostPolicy, host_name
from mockd_project.middleware import AdminGateway, static_path_escapes
from mockd_project.runner import RunOptions, StartupFailure, host_policy

TOKEN = "t0ken"


@pytest.mark.parametrize("value, name", [
    pytest.param("localhost", "localhost", id="bare name"),
    pytest.param("LocalHost:4290", "localhost", id="case and port"),
    pytest.param("localhost.:4290", "localhost", id="trailing dot"),
    pytest.param("[::1]:4290", "::1", id="IPv6 with port"),
    pytest.param("[::1]", "::1", id="IPv6 without port"),
    pytest.param("127.0.0.1:80", "127.0.0.1", id="IPv4 with port"),
    pytest.param("::1", None, id="IPv6 without brackets"),
    pytest.param("[::1", None, id="unclosed bracket"),
    pytest.param("[mock.test]:80", None, id="name in brackets"),
    pytest.param("localhost:http", None, id="port not a number"),
    pytest.param("localhost:1234567", None, id="port too long"),
    pytest.param("a b", None, id="space"),
    pytest.param(":4290", None, id="no name"),
])
def test_host_name_parses_a_host_header(value, name):
    assert host_name(value) == name


@pytest.mark.parametrize("value, allowed", [
    pytest.param("localhost:4290", True, id="localhost"),
    pytest.param("app.localhost:4290", True, id="under .localhost"),
    pytest.param("127.0.0.1:4290", True, id="127.0.0.1"),
    pytest.param("[::1]:4290", True, id="[::1]"),
    pytest.param("127.0.0.2:4290", True, id="another loopback address"),
    pytest.param("192.168.1.5:4290", False, id="a LAN address the server does not listen on"),
    pytest.param(None, True, id="no Host header (HTTP/1.0)"),
    pytest.param("", True, id="empty Host header"),
    pytest.param("attacker.example:4290", False, id="a rebound name"),
    pytest.param("localhost.attacker.example", False, id="localhost as a label"),
    pytest.param("127.0.0.1.nip.io", False, id="a name resolving to loopback"),
    pytest.param("[::1", False, id="malformed"),
])
def test_loopback_policy(value, allowed):
    assert LOOPBACK_ONLY.allows(value) is allowed


def test_policy_adds_allowed_hosts_and_the_bind_name():
    policy = HostPolicy(["Mock.Test:80", "::1", "[::1]"], bind_host="box.lan")
    assert policy.names == {"mock.test", "box.lan", "::1"}
    assert policy.allows("mock.test:4290") and policy.allows("BOX.LAN")
    assert not policy.allows("other.test")
    assert HostPolicy(bind_host="0.0.0.0").names == frozenset()
    assert HostPolicy(bind_host="0.0.0.0").allows("192.168.1.5:4290")
    assert not HostPolicy(bind_host="0.0.0.0").allows("attacker.example")
    assert HostPolicy(bind_host="192.168.1.5").allows("192.168.1.5:4290")
    assert not HostPolicy(bind_host="192.168.1.5").allows("192.168.1.6")
    assert HostPolicy(["10.1.2.3"]).allows("10.1.2.3:80")
    assert HostPolicy(["*"]).allows("anything.example")


def test_policy_refuses_a_malformed_allowed_host():
    with pytest.raises(ValueError, match="'bad name'"):
        HostPolicy(["bad name"])


def test_runner_host_policy_turns_a_bad_allowed_host_into_exit_2():
    with pytest.raises(StartupFailure) as caught:
        host_policy(RunOptions(allowed_hosts=("a/b",)))
    assert caught.value.exit_code == 2 and "a/b" in caught.value.message
    assert host_policy(RunOptions(allowed_hosts=("mock.test",))).allows("mock.test")


def test_every_host_header_counts():
    headers = [(b"host", b"localhost"), (b"host", b"attacker.example")]
    refusal = LOOPBACK_ONLY.refusal(headers, "admin port")
    assert refusal["error"] == "host_not_allowed"
    assert "attacker.example" in refusal["message"] and "--allowed-host" in refusal["message"]


# ---------------------------------------------------------------------------- admin gateway


async def _app(scope, receive, send):
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"reached"})


def _gateway_call(gateway: AdminGateway, path: str, host: bytes | None,
                  method: str = "GET") -> tuple[int, dict[bytes, bytes], bytes]:
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    headers = [(b"host", host)] if host is not None else []
    scope = {"type": "http", "method": method, "path": path, "query_string": b"",
             "headers": headers, "client": ("127.0.0.1", 1)}
    asyncio.run(gateway(scope, receive, send))
    return (sent[0]["status"], dict(sent[0]["headers"]),
            b"".join(message.get("body", b"") for message in sent[1:]))


@pytest.fixture
def no_auth_gateway() -> AdminGateway:
    """The gateway as ``--no-auth --allowed-host mock.test`` builds it."""
    return AdminGateway(_app, auth_enabled=False, rate_per_second=0,
                        static_prefix="/static/", hosts=HostPolicy(["mock.test"]))


@pytest.mark.parametrize("host, status", [
    pytest.param(b"attacker.example:4290", 400, id="rebound name"),
    pytest.param(b"localhost:4290", 200, id="localhost"),
    pytest.param(b"[::1]:4290", 200, id="[::1]"),
    pytest.param(b"127.0.0.1:4290", 200, id="127.0.0.1"),
    pytest.param(b"mock.test:4290", 200, id="--allowed-host"),
    pytest.param(None, 200, id="no Host header"),
])
def test_gateway_with_no_auth_answers_loopback_and_allowed_hosts_only(no_auth_gateway, host,
                                                                      status):
    answer_status, headers, body = _gateway_call(no_auth_gateway, "/requests", host)
    assert answer_status == status
    if status == 400:
        assert headers[b"content-type"] == b"application/json"
        assert headers[b"x-content-type-options"] == b"nosniff"
        assert set(orjson.loads(body)) == {"error", "message"}
        assert orjson.loads(body)["error"] == "host_not_allowed"
    else:
        assert body == b"reached"


def test_gateway_checks_host_before_the_api_key():
    gateway = AdminGateway(_app, auth_enabled=True, rate_per_second=0)
    status, _, body = _gateway_call(gateway, "/mocks", b"attacker.example", "POST")
    assert (status, orjson.loads(body)["error"]) == (400, "host_not_allowed")


@pytest.mark.parametrize("path", [
    pytest.param("/static/../x", id="dot dot"),
    pytest.param("/static/admin/../../manage.py", id="dot dot deeper"),
    pytest.param("/static/./x", id="dot"),
    pytest.param("/static/%2e%2e/x", id="percent-encoded once more"),
    pytest.param("/static/..%2fx", id="encoded slash"),
    pytest.param("/static/..\\x", id="backslash"),
    pytest.param("/static/\x00", id="NUL"),
])
def test_gateway_answers_404_to_static_traversal_without_reaching_the_app(no_auth_gateway,
                                                                          path):
    assert static_path_escapes(path)
    status, _, body = _gateway_call(no_auth_gateway, path, b"localhost")
    assert (status, orjson.loads(body)["error"]) == (404, "not_found")


@pytest.mark.parametrize("path", ["/static/admin/css/base.css", "/static/a..b.js",
                                  "/static/.well-known-ish"])
def test_static_paths_without_dot_segments_go_through(no_auth_gateway, path):
    assert not static_path_escapes(path)
    assert _gateway_call(no_auth_gateway, path, b"localhost")[0] == 200


# ---------------------------------------------------------------------------- engine control


def _control_ask(host: str, hosts: HostPolicy = LOOPBACK_ONLY) -> httpx.Response:
    app = EngineControlApp(EngineControl(Engine()), TOKEN, hosts)

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://127.0.0.1") as client:
            return await client.get("/health", headers={"Host": host, "X-Engine-Token": TOKEN})

    return asyncio.run(go())


@pytest.mark.parametrize("host, status", [
    pytest.param("attacker.example:4281", 400, id="rebound name"),
    pytest.param("localhost:4281", 200, id="localhost"),
    pytest.param("[::1]:4281", 200, id="[::1]"),
    pytest.param("127.0.0.1:4281", 200, id="127.0.0.1"),
])
def test_engine_control_answers_loopback_hosts_only(host, status):
    answer = _control_ask(host)
    assert answer.status_code == status
    if status == 400:
        assert answer.json()["error"] == "host_not_allowed"
        assert "engine-control port" in answer.json()["message"]


def test_engine_control_allowed_host_lets_a_name_in():
    assert _control_ask("mock.test:4281", HostPolicy(["mock.test"])).status_code == 200


def test_engine_control_gate_checks_host_before_origin_and_token():
    scope = {"type": "http", "method": "GET",
             "headers": [(b"host", b"attacker.example"), (b"origin", b"http://x")]}
    assert gate_answer(scope, TOKEN)[0] == 400
    assert gate_answer({**scope, "headers": scope["headers"][1:]}, TOKEN)[0] == 403
