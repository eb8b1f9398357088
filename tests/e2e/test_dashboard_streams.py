"""The Streams area (``#/streams``) in Chromium: an open WebSocket connection to a real
WebSocket mock shows up, a text sent from the page reaches the client, and closing it from the
page ends the client's socket; the gRPC server and MQTT broker of mocks made through the admin
API are listed as running."""
from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
import websockets
from playwright.sync_api import expect

from tests.e2e.conftest import WAIT_MS, screenshot
from tests.helpers import free_port

GREETER = (Path(__file__).resolve().parents[2] / "examples" / "greeter.proto").read_text()


@pytest.fixture(scope="module")
def mocks(admin_api):
    """A WebSocket mock, a gRPC mock and an MQTT mock on the module's server."""
    grpc_port, mqtt_port = free_port(), free_port()
    created = [
        {"id": "streams-ws", "type": "websocket", "websocket": {"path": "/streams-ws"}},
        {"id": "streams-grpc", "type": "grpc", "grpc": {
            "port": grpc_port, "protoContent": GREETER,
            "services": {"helloworld.Greeter": {"methods": {"SayHello": {
                "response": {"message": "hi"}}}}}}},
        {"id": "streams-mqtt", "type": "mqtt", "mqtt": {"port": mqtt_port,
                                                        "topics": [{"topic": "s/t"}]}},
    ]
    for mock in created:
        answer = admin_api.post("/mocks", json=mock)
        assert answer.status_code == 201, answer.text
    return {"grpc": grpc_port, "mqtt": mqtt_port}


class WebSocketClient:
    """A WebSocket client on its own thread and loop: connects, collects what it receives and
    notes when the server closes it."""

    def __init__(self, url: str):
        self.url = url
        self.received: list[str] = []
        self.closed = threading.Event()
        self.connected = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_until_complete,
                                       args=(self._run(),), daemon=True)
        self.thread.start()
        assert self.connected.wait(10), "the WebSocket client did not connect"

    async def _run(self) -> None:
        try:
            async with websockets.connect(self.url, open_timeout=10) as socket:
                self.socket = socket
                self.connected.set()
                async for message in socket:
                    self.received.append(message)
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed.set()

    def wait_for(self, text: str, seconds: float = 10) -> bool:
        """Whether ``text`` arrives within ``seconds`` (polled every 50 ms)."""
        for _ in range(int(seconds / 0.05)):
            if text in self.received:
                return True
            self.closed.wait(0.05)
        return text in self.received

    def stop(self) -> None:
        if not self.closed.is_set():
            asyncio.run_coroutine_threadsafe(self.socket.close(), self.loop)
        self.closed.wait(10)
        self.thread.join(10)


def test_streams_page_shows_sends_to_and_closes_a_websocket_connection(
        page, dashboard_server, admin_api, mocks):
    ws_url = dashboard_server.base.replace("http://", "ws://") + "/streams-ws"
    client = WebSocketClient(ws_url)
    try:
        connection_id = admin_api.get("/websocket/connections").json()["connections"][0]["id"]
        page.goto(dashboard_server.admin + "/#/streams")
        row = page.locator("[data-testid=ws-connections] tr", has_text=connection_id)
        expect(row).to_be_visible(timeout=WAIT_MS)
        expect(row).to_contain_text("streams-ws")
        # gRPC server and MQTT broker listed as running
        expect(page.locator("[data-testid=grpc-servers] tr",
                            has_text=f"grpc:{mocks['grpc']}")).to_contain_text("running")
        expect(page.locator("[data-testid=mqtt-brokers] tr",
                            has_text="streams-mqtt")).to_contain_text("running")

        page.get_by_test_id(f"ws-send-{connection_id}").click()
        page.fill("#ws-send-text", "hello from the dashboard")
        page.get_by_test_id("ws-send-submit").click()
        expect(page.locator("#toasts")).to_contain_text(f"Sent to {connection_id}")
        assert client.wait_for("hello from the dashboard"), client.received
        screenshot(page, "streams")

        page.get_by_test_id(f"ws-close-{connection_id}").click()
        assert client.closed.wait(WAIT_MS / 1000), "the server did not close the socket"
        expect(page.locator("[data-testid=ws-connections]")).to_contain_text(
            "No open WebSocket connections.", timeout=WAIT_MS)
    finally:
        client.stop()
