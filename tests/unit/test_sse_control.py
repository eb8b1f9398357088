"""SSE routes of the engine-control port mirror the admin's (behavior notes §1 and §16):
``EngineControl``'s SSE block driven through ``EngineControlApp`` while a stream is live."""
from __future__ import annotations

import asyncio

import httpx

from mocks.engine.app import DataPlaneApp
from mocks.engine.control import EngineControl, EngineControlApp
from mocks.engine.core import Engine
from mocks.loader import validate_config
from tests.helpers import make_config
from tests.unit.sse_client import LIMIT, FakeClient, sse_mock


async def test_engine_control_lists_reads_and_closes_sse_connections_and_buffers():
    engine = Engine()
    engine.load(validate_config(make_config(
        sse_mock("live", "/live", generator={"type": "sequence"}, timing={"fixedDelay": 20}),
        sse_mock("idle", "/idle", events=[{"data": "x"}], resume={"bufferSize": 7}))))
    control = EngineControl(engine, max_log_entries=10)
    transport = httpx.ASGITransport(app=EngineControlApp(control, token="t0ken"))
    app = DataPlaneApp(engine)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost",
                                 headers={"X-Engine-Token": "t0ken",
                                          "Content-Type": "application/json"}) as link:
        client = FakeClient(app, "/live")
        await client.wait_events(3)
        listed = (await link.get("/sse/connections")).json()
        assert listed["count"] == 1 and listed["stats"]["activeConnections"] == 1
        connection = listed["connections"][0]
        assert connection["mockId"] == "live" and connection["clientIp"] == "127.0.0.1:50000"
        assert connection["eventsSent"] >= 3 and connection["lastEventId"].isdigit()
        one = (await link.get(f"/sse/connections/{connection['id']}")).json()
        assert one["id"] == connection["id"]
        assert (await link.get("/mocks/live/sse/connections")).json()["count"] == 1
        buffer = (await link.get("/mocks/live/sse/buffer")).json()
        assert buffer["mockId"] == "live" and buffer["count"] >= 3
        assert buffer["events"][0] | {"timestamp": None} == {
            "id": "1", "data": "1", "position": 0, "index": 0, "timestamp": None}
        assert (await link.get("/mocks/idle/sse/buffer")).json() == {
            "mockId": "idle", "events": [], "count": 0, "capacity": 7}
        stats = (await link.get("/sse/stats")).json()
        assert stats["connectionsByMock"] == {"live": 1} and stats["maxConnections"] == 100
        closed = await link.delete(f"/sse/connections/{connection['id']}")
        assert closed.json() == {"message": "Connection closed", "connection": connection["id"]}
        await asyncio.wait_for(client.task, LIMIT)
        assert client.completed
        assert (await link.get(f"/sse/connections/{connection['id']}")).status_code == 404
        assert (await link.delete("/sse/connections/sse-999")).json() == {
            "error": "not_found", "message": "Connection not found"}
        assert (await link.delete("/mocks/live/sse/connections")).json() == {
            "message": "Connections closed", "closed": 0, "mockId": "live"}
        cleared = (await link.delete("/mocks/live/sse/buffer")).json()
        assert cleared["message"] == "Buffer cleared" and cleared["cleared"] >= 3
        assert (await link.get("/mocks/nope/sse/buffer")).status_code == 404
        assert (await link.post("/sse/connections")).status_code == 405
        stats = (await link.get("/sse/stats")).json()
        assert stats["activeConnections"] == 0 and stats["totalConnections"] == 1
        assert stats["totalEventsSent"] >= 3 and stats["totalBytesSent"] > 0
