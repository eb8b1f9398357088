"""Data-plane CORS through a real ``mockd engine`` (behavior notes §4)."""
from __future__ import annotations

import pytest

from tests.helpers import http_mock, make_config, start_engine

pytestmark = pytest.mark.integration


def test_default_policy_echoes_loopback_origins_and_refuses_foreign_preflight(tmp_path):
    with start_engine(tmp_path, make_config(http_mock("hi", "GET", "/hi", body="hi"))) as engine:
        with engine.client() as client:
            answer = client.get("/hi", headers={"Origin": "http://localhost:5173"})
            preflight = client.options("/hi", headers={"Origin": "http://localhost:5173",
                                                       "Access-Control-Request-Method": "GET"})
            foreign = client.options("/hi", headers={"Origin": "https://evil.example"})
    assert answer.headers["access-control-allow-origin"] == "http://localhost:5173"
    assert preflight.status_code == 200
    assert "GET" in preflight.headers["access-control-allow-methods"]
    assert foreign.status_code == 403 and foreign.json()["error"] == "cors_forbidden"


def test_configured_origins_and_disabled_cors(tmp_path):
    config = make_config(http_mock("hi", "GET", "/hi", body="hi"),
                         serverConfig={"cors": {"allowOrigins": ["https://app.example"]}})
    with start_engine(tmp_path, config) as engine:
        with engine.client() as client:
            allowed = client.get("/hi", headers={"Origin": "https://app.example"})
            loopback = client.get("/hi", headers={"Origin": "http://localhost:3000"})
    assert allowed.headers["access-control-allow-origin"] == "https://app.example"
    assert "access-control-allow-origin" not in loopback.headers

    off = make_config(http_mock("hi", "GET", "/hi", body="hi"),
                      serverConfig={"cors": {"enabled": False}})
    off_dir = tmp_path / "off"
    off_dir.mkdir()
    with start_engine(off_dir, off) as engine:
        with engine.client() as client:
            answer = client.get("/hi", headers={"Origin": "http://localhost:3000"})
            options = client.options("/hi")
    assert "access-control-allow-origin" not in answer.headers
    assert options.status_code == 404


def test_cors_origins_flag_overrides_the_config(tmp_path):
    config = make_config(http_mock("hi", "GET", "/hi", body="hi"))
    with start_engine(tmp_path, config, extra_args=["--cors-origins", "*"]) as engine:
        with engine.client() as client:
            answer = client.get("/hi", headers={"Origin": "https://anywhere.example"})
    assert answer.headers["access-control-allow-origin"] == "*"
