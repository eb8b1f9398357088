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


def test_an_open_recording_is_completed_on_shutdown_and_kept(tmp_path):
    data_dir = tmp_path / "data"
    config = make_config(MOCK)
    server = start_server(tmp_path, config, data_dir=data_dir)
    try:
        with server.admin_client() as admin:
            started = admin.post("/stream-recordings/start",
                                 json={"protocol": "websocket", "path": WS_PATH,
                                       "name": "open at shutdown"})
            assert started.status_code == 200, started.text
            recording_id = started.json()["recordingId"]
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
        assert recording["status"] == "complete", recording
        frames = recording["websocket"]["frames"]
        assert [(frame["direction"], frame["data"]) for frame in frames[:2]] == \
            [("c2s", "hello"), ("s2c", "hi")]
    finally:
        restarted.stop()


def test_an_armed_recording_that_saw_no_connection_is_closed_on_shutdown(tmp_path):
    data_dir = tmp_path / "data"
    config = make_config(MOCK)
    server = start_server(tmp_path, config, data_dir=data_dir)
    try:
        with server.admin_client() as admin:
            recording_id = admin.post("/stream-recordings/start", json={
                "protocol": "websocket", "path": WS_PATH, "name": "armed"}).json()["recordingId"]
        assert server.stop() == 0
    finally:
        server.stop()
    restarted = start_server(tmp_path, config, data_dir=data_dir)
    try:
        with restarted.admin_client() as admin:
            recording = admin.get(f"/stream-recordings/{recording_id}").json()
            assert recording["status"] != "recording", recording
            assert admin.get("/stream-recordings/sessions").json()["count"] == 0
    finally:
        restarted.stop()
