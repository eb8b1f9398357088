"""Stream recordings when ``mockd start`` stops (SIGTERM): one with an open connection is
written as ``complete`` with the frames seen so far, one armed with no connection yet is closed
too (never left ``recording``), and both are there after a restart on the same data dir."""
from __future__ import annotations

import time

import pytest
from websockets.sync.client import connect

from tests.helpers import make_config, start_server

pytestmark = pytest.mark.integration

WS_PATH = "/ws/shutdown"
MOCK = {"id": "ws-shutdown", "type": "websocket", "websocket": {
    "path": WS_PATH, "matchers": [{"match": {"type": "exact", "value": "hello"},
                                   "response": {"type": "text", "value": "hi"}}]}}
ARMED_PATH = "/ws/armed"
ARMED_MOCK = {"id": "ws-armed", "type": "websocket", "websocket": {
    "path": ARMED_PATH, "matchers": [{"match": {"type": "exact", "value": "hello"},
                                      "response": {"type": "text", "value": "hi"}}]}}


def test_open_and_armed_recordings_are_closed_on_shutdown_and_kept(tmp_path):
    """One recording with an open connection at SIGTERM and one armed on another path that saw
    no connection: after a restart on the same data dir the first is ``complete`` with the
    frames seen, the second is not left ``recording``, and no session is active."""
    data_dir = tmp_path / "data"
    config = make_config(MOCK, ARMED_MOCK)
    server = start_server(tmp_path, config, data_dir=data_dir)
    try:
        with server.admin_client() as admin:
            started = admin.post("/stream-recordings/start",
                                 json={"protocol": "websocket", "path": WS_PATH,
                                       "name": "open at shutdown"})
            assert started.status_code == 200, started.text
            recording_id = started.json()["recordingId"]
            armed = admin.post("/stream-recordings/start", json={
                "protocol": "websocket", "path": ARMED_PATH, "name": "armed"})
            assert armed.status_code == 200, armed.text
            armed_id = armed.json()["recordingId"]
        with connect(server.base.replace("http://", "ws://") + WS_PATH,
                     open_timeout=10) as client:
            client.send("hello")
            assert client.recv(timeout=10) == "hi"
            assert server.stop() == 0
    finally:
        server.stop()
    restarted = start_server(tmp_path, config, data_dir=data_dir)
    try:
        with restarted.admin_client() as admin:
            deadline = time.monotonic() + 10
            recording = admin.get(f"/stream-recordings/{recording_id}").json()
            while recording.get("status") == "recording" and time.monotonic() < deadline:
                time.sleep(0.2)
                recording = admin.get(f"/stream-recordings/{recording_id}").json()
            armed_recording = admin.get(f"/stream-recordings/{armed_id}").json()
            sessions = admin.get("/stream-recordings/sessions").json()
        assert recording["status"] == "complete", recording
        frames = recording["websocket"]["frames"]
        assert [(frame["direction"], frame["data"]) for frame in frames[:2]] == \
            [("c2s", "hello"), ("s2c", "hi")]
        assert armed_recording["id"] == armed_id, armed_recording
        assert armed_recording["status"] != "recording", armed_recording
        assert sessions["count"] == 0
    finally:
        restarted.stop()
