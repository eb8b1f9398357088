"""The engine-control HTTP face mirrors the admin routes (behavior notes §16), driven as an
ASGI app with httpx (no sockets)."""
from __future__ import annotations

import asyncio

import httpx

from mocks.engine.app import DataPlaneApp
from mocks.engine.control import EngineControl, EngineControlApp
from mocks.engine.core import Engine
from tests.helpers import http_mock, make_config


async def _scenario() -> dict:
    engine = Engine()
    control = EngineControl(engine, max_log_entries=10)
    control_transport = httpx.ASGITransport(app=EngineControlApp(control, token="t0ken"))
    data_transport = httpx.ASGITransport(app=DataPlaneApp(engine))
    results: dict = {}
    async with httpx.AsyncClient(transport=control_transport, base_url="http://localhost",
                                 headers={"X-Engine-Token": "t0ken",
                                          "Content-Type": "application/json"}) as link, \
            httpx.AsyncClient(transport=data_transport, base_url="http://data") as data:
        results["health"] = (await link.get("/health")).json()
        results["load"] = (await link.post("/config", json=make_config(
            http_mock("ping", "GET", "/ping", body="pong")))).json()
        results["bad load"] = await link.post("/config", json={"version": "1.0", "mocks": [
            {"type": "http", "http": {"matcher": {"path": "x"}}}]})
        results["served"] = (await data.get("/ping")).text
        await data.get("/ping")
        await data.get("/nothing")
        results["mocks"] = (await link.get("/mocks")).json()
        results["requests"] = (await link.get("/requests", params={"matched": "ping"})).json()
        results["bad filter"] = await link.get("/requests", params={"limit": "-3"})
        first_id = results["requests"]["requests"][0]["id"]
        results["one"] = (await link.get(f"/requests/{first_id}")).json()
        results["verify"] = (await link.get("/mocks/ping/verify")).json()
        results["verify post"] = (await link.post("/mocks/ping/verify",
                                                  json={"atMost": 1})).json()
        results["no criteria"] = await link.post("/mocks/ping/verify", json={})
        results["invocations"] = (await link.get("/mocks/ping/invocations")).json()
        results["unknown mock"] = await link.get("/mocks/nope/verify")
        results["status"] = (await link.get("/status")).json()
        results["reset one"] = (await link.delete("/mocks/ping/invocations")).json()
        results["reset all"] = (await link.delete("/verify")).json()
        results["missing"] = await link.get("/requests/req-zz")
    return results


def test_engine_control_routes_mirror_the_admin_routes():
    results = asyncio.run(_scenario())
    assert results["health"]["status"] == "healthy"
    assert results["load"] == {"message": "Configuration loaded", "mocks": 1}
    assert results["bad load"].status_code == 400
    assert results["bad load"].json()["error"] == "validation_error"
    assert results["served"] == "pong"
    assert [mock["id"] for mock in results["mocks"]["mocks"]] == ["ping"]
    assert results["requests"]["total"] == 2
    assert results["requests"]["requests"][0]["matchedMockID"] == "ping"
    assert results["bad filter"].status_code == 400
    assert results["one"]["path"] == "/ping"
    assert results["verify"]["callCount"] == 2
    assert results["verify post"]["passed"] is False
    assert results["no criteria"].json()["error"] == "missing_criteria"
    assert results["invocations"]["total"] == 2
    assert results["unknown mock"].status_code == 404
    assert results["status"]["requestCount"] == 3 and results["status"]["mockCount"] == 1
    assert results["reset one"] == {"message": "Invocations cleared", "mockId": "ping",
                                    "cleared": 2}
    assert results["reset all"] == {"message": "All verification data cleared", "cleared": 1}
    assert results["missing"].status_code == 404
