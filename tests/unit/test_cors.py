"""Data-plane CORS (behavior notes §4): echo on answers, preflight for unmatched OPTIONS."""
from __future__ import annotations

import asyncio

import pytest

from mocks.engine.app import DataPlaneApp
from mocks.engine.cors import CorsPolicy, is_loopback_origin
from mocks.core.errors import ConfigError
from tests.helpers import engine_with, http_mock


def call(app, method, path, headers=()):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "query_string": b"",
             "headers": [(name.lower().encode(), value.encode()) for name, value in headers],
             "server": ("127.0.0.1", 4280), "client": ("127.0.0.1", 1)}
    asyncio.run(app(scope, receive, send))
    start = sent[0]
    return start["status"], {name.decode(): value.decode() for name, value in start["headers"]}


APP = DataPlaneApp(engine_with(http_mock("hello", "GET", "/hello", body="hi"),
                               http_mock("options", "OPTIONS", "/own-options", body="mine")))


@pytest.mark.parametrize("origin,ok", [
    pytest.param("http://localhost:3000", True, id="localhost any port"),
    pytest.param("http://127.0.0.1:5173", True, id="127.0.0.1"),
    pytest.param("http://[::1]:8080", True, id="ipv6 loopback"),
    pytest.param("https://evil.example", False, id="other host"),
    pytest.param("http://localhost.evil.example", False, id="lookalike"),
])
def test_loopback_origins(origin, ok):
    assert is_loopback_origin(origin) is ok


def test_answer_to_a_loopback_origin_carries_cors_headers():
    status, headers = call(APP, "GET", "/hello", [("Origin", "http://localhost:3000")])
    assert status == 200
    assert headers["access-control-allow-origin"] == "http://localhost:3000"
    assert headers["vary"] == "Origin"


def test_answer_without_origin_or_to_a_foreign_origin_has_no_cors_headers():
    for headers_in in ([], [("Origin", "https://evil.example")]):
        _, headers = call(APP, "GET", "/hello", headers_in)
        assert "access-control-allow-origin" not in headers


def test_static_answers_are_not_changed_in_place_by_cors():
    call(APP, "GET", "/hello", [("Origin", "http://localhost:1")])
    _, headers = call(APP, "GET", "/hello")
    assert "access-control-allow-origin" not in headers


def test_preflight_for_an_allowed_origin_is_200_with_methods_and_max_age():
    status, headers = call(APP, "OPTIONS", "/anything", [("Origin", "http://127.0.0.1:3000"),
                                                         ("Access-Control-Request-Method", "PUT")])
    assert status == 200
    assert headers["access-control-allow-origin"] == "http://127.0.0.1:3000"
    assert "PUT" in headers["access-control-allow-methods"]
    assert headers["access-control-max-age"] == "86400"


@pytest.mark.parametrize("headers_in", [[], [("Origin", "https://evil.example")]],
                         ids=["no origin", "foreign origin"])
def test_preflight_refused_with_403(headers_in):
    assert call(APP, "OPTIONS", "/anything", headers_in)[0] == 403


def test_a_matching_options_mock_answers_itself():
    assert call(APP, "OPTIONS", "/own-options")[0] == 200


def test_configured_origins_replace_the_loopback_default():
    policy = CorsPolicy({"allowOrigins": ["https://app.example"], "allowCredentials": True,
                         "exposeHeaders": ["X-Total"]})
    assert policy.allowed("https://app.example") and not policy.allowed("http://localhost:3")
    headers = dict(policy.headers("https://app.example"))
    assert headers[b"access-control-allow-credentials"] == b"true"
    assert headers[b"access-control-expose-headers"] == b"X-Total"


def test_star_echoes_star_unless_credentials():
    assert dict(CorsPolicy({"allowOrigins": ["*"]}).headers("https://a.example"))[
        b"access-control-allow-origin"] == b"*"


def test_bad_max_age_is_a_config_error():
    with pytest.raises(ConfigError) as caught:
        CorsPolicy({"maxAge": "forever"})
    assert caught.value.path == "serverConfig.cors.maxAge"
