"""Stream recordings through a real ``mockd start``: record a WebSocket conversation (the
``websockets`` client) and an SSE stream (httpx-sse) on mock paths, list, read, export,
convert, delete and vacuum them, and replay them in each mode.

Timing assertions have wide tolerances (a loaded 2-core machine). Every loop is bounded.

Source: SPEC "Stream recordings", "Admin-side records" (Stream recording); behavior notes §1
"Connections, protocol handlers, stream recordings".
"""
from __future__ import annotations

import json
import time

import httpx
import pytest
from httpx_sse import connect_sse
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.helpers import make_config, run_mockd, start_server

pytestmark = pytest.mark.integration

WS_PATH = "/ws/rec"
SSE_PATH = "/sse/rec"
MOCKS = [
    {"id": "ws-rec", "type": "websocket", "websocket": {
        "path": WS_PATH, "matchers": [
            {"match": {"type": "exact", "value": "hello"},
             "response": {"type": "text", "value": "hi there"}},
            {"match": {"type": "exact", "value": "bye"},
             "response": {"type": "text", "value": "see {{'you'}}", "delay": 300}}]}},
    {"id": "sse-rec", "http": {"matcher": {"method": "GET", "path": SSE_PATH}, "sse": {
        "events": [{"data": "first"}, {"type": "update", "data": "second", "id": "2"},
                   {"data": "third {{x}}".replace("{{x}}", "\\{{x}}")}],
        "timing": {"fixedDelay": 150}}}},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = start_server(tmp_path_factory.mktemp("stream-recordings"), make_config(*MOCKS))
    process.ws = process.base.replace("http://", "ws://")
    yield process
    process.stop()


def wait_for(admin: httpx.Client, url: str, wanted: str) -> dict:
    """The document at ``url`` once its status is ``wanted`` (polled for at most 10 s)."""
    deadline = time.monotonic() + 10
    while True:
        document = admin.get(url).json()
        if document.get("status") == wanted or time.monotonic() > deadline:
            return document
        time.sleep(0.05)


def wait_status(admin: httpx.Client, recording_id: str, wanted: str) -> dict:
    """The recording once its status is ``wanted``."""
    return wait_for(admin, f"/stream-recordings/{recording_id}", wanted)


def wait_replay(admin: httpx.Client, replay_id: str, wanted: str) -> dict:
    """The replay's status once it is ``wanted``."""
    return wait_for(admin, f"/replay/{replay_id}", wanted)


def sse_events(url: str, limit: int = 10) -> list:
    """The events of one SSE stream (at most ``limit``), read with httpx-sse; a block
    without data (the opening ``retry:``) is no event, as browsers treat it."""
    events = []
    with httpx.Client(timeout=10, trust_env=False) as client, \
            connect_sse(client, "GET", url) as source:
        for event in source.iter_sse():
            if event.data == "":
                continue
            events.append(event)
            if len(events) >= limit:
                break
    return events


@pytest.fixture(scope="module")
def ws_recording(server):
    """A recorded WebSocket conversation: hello/hi there, bye/see you (300 ms later)."""
    with server.admin_client() as admin:
        started = admin.post("/stream-recordings/start",
                             json={"protocol": "websocket", "path": WS_PATH, "name": "chat"})
        assert started.status_code == 200, started.text
        ids = started.json()
        sessions = admin.get("/stream-recordings/sessions").json()
        assert [s["sessionId"] for s in sessions["sessions"]] == [ids["sessionId"]]
        with connect(server.ws + WS_PATH + "?room=1", open_timeout=10) as ws:
            ws.send("hello")
            assert ws.recv(timeout=5) == "hi there"
            ws.send("bye")
            assert ws.recv(timeout=5) == "see you"
        document = wait_status(admin, ids["recordingId"], "complete")
        stopped = admin.post(f"/stream-recordings/{ids['recordingId']}/stop")
        assert stopped.status_code == 200
        assert admin.get("/stream-recordings/sessions").json()["count"] == 0
        return {"ids": ids, "document": document, "stopped": stopped.json()["recording"]}


@pytest.fixture(scope="module")
def sse_recording(server):
    with server.admin_client() as admin:
        ids = admin.post("/stream-recordings/start",
                         json={"protocol": "sse", "path": SSE_PATH}).json()
        events = sse_events(server.base + SSE_PATH)
        assert [e.data for e in events] == ["first", "second", "third {{x}}"]
        document = wait_status(admin, ids["recordingId"], "complete")
        admin.post(f"/stream-recordings/{ids['recordingId']}/stop")
        return {"ids": ids, "document": document}


# ---------------------------------------------------------------------- recording

def test_websocket_conversation_is_recorded(ws_recording):
    document = ws_recording["document"]
    assert document["status"] == "complete" and document["version"] == "1.0"
    assert document["protocol"] == "websocket" and document["name"] == "chat"
    assert document["metadata"]["path"] == WS_PATH
    assert document["metadata"]["query"] == "room=1"
    assert document["metadata"]["source"] == "mock"
    frames = [(f["direction"], f["type"], f["data"]) for f in document["websocket"]["frames"]]
    assert frames == [("c2s", "text", "hello"), ("s2c", "text", "hi there"),
                      ("c2s", "text", "bye"), ("s2c", "text", "see you")]
    times = [f["relativeMs"] for f in document["websocket"]["frames"]]
    assert times == sorted(times)
    assert 250 <= times[3] - times[2] < 3000  # the mock's 300 ms delay
    assert document["websocket"]["closeCode"] in (1000, 1005)
    assert document["stats"]["frameCount"] == 4
    assert document["stats"]["bytesReceived"] == len("hello") + len("bye")
    assert document["stats"]["bytesSent"] == len("hi there") + len("see you")
    assert ws_recording["stopped"]["status"] == "complete"


def test_sse_stream_is_recorded(sse_recording):
    document = sse_recording["document"]
    events = [(e["type"], e["data"], e["id"]) for e in document["sse"]["events"]]
    assert events == [("message", "first", None), ("update", "second", "2"),
                      ("message", "third {{x}}", None)]
    gaps = [b["relativeMs"] - a["relativeMs"]
            for a, b in zip(document["sse"]["events"], document["sse"]["events"][1:])]
    assert all(100 <= gap < 3000 for gap in gaps)


def test_list_filters_and_leaves_out_frames(admin, ws_recording, sse_recording):
    listing = admin.get("/stream-recordings", params={"protocol": "websocket"}).json()
    assert set(listing) == {"recordings", "total", "limit", "offset"}
    assert listing["limit"] == 100 and listing["offset"] == 0
    ids = [item["id"] for item in listing["recordings"]]
    assert ws_recording["ids"]["recordingId"] in ids
    assert sse_recording["ids"]["recordingId"] not in ids
    assert all("frames" not in item.get("websocket", {}) for item in listing["recordings"])
    by_path = admin.get("/stream-recordings", params={"path": SSE_PATH,
                                                      "status": "complete"}).json()
    assert [item["id"] for item in by_path["recordings"]] == [
        sse_recording["ids"]["recordingId"]]
    page = admin.get("/stream-recordings", params={"limit": 1, "sortBy": "startTime",
                                                   "sortOrder": "asc"}).json()
    assert len(page["recordings"]) == 1 and page["total"] >= 2


def test_stats_and_export(admin, ws_recording):
    stats = admin.get("/stream-recordings/stats").json()
    assert stats["count"] >= 2 and stats["maxBytes"] > 0 and stats["bytes"] > 0
    recording_id = ws_recording["ids"]["recordingId"]
    exported = admin.post(f"/stream-recordings/{recording_id}/export")
    assert exported.status_code == 200
    assert "attachment" in exported.headers["content-disposition"]
    assert exported.json()["websocket"]["frames"] == ws_recording["document"]["websocket"][
        "frames"]


def test_delete_is_soft_until_vacuum(server, admin):
    ids = admin.post("/stream-recordings/start",
                     json={"protocol": "sse", "path": "/nothing/here"}).json()
    assert admin.post(f"/stream-recordings/{ids['recordingId']}/stop").json()[
        "recording"]["status"] == "complete"
    assert admin.delete(f"/stream-recordings/{ids['recordingId']}").status_code == 204
    assert admin.get(f"/stream-recordings/{ids['recordingId']}").status_code == 404
    assert admin.get("/stream-recordings/stats").json()["deleted"] >= 1
    assert admin.post("/stream-recordings/vacuum").json()["removed"] >= 1
    assert admin.get("/stream-recordings/stats").json()["deleted"] == 0
    other = admin.post("/stream-recordings/start",
                       json={"protocol": "sse", "path": "/nothing/there"}).json()
    admin.post(f"/stream-recordings/{other['recordingId']}/stop")
    gone = admin.delete(f"/stream-recordings/{other['recordingId']}",
                        params={"permanent": "true"})
    assert gone.status_code == 204
    assert admin.get("/stream-recordings/stats").json()["deleted"] == 0


# ---------------------------------------------------------------------- convert

def test_websocket_recording_converts_to_a_working_mock(server, admin, ws_recording):
    recording_id = ws_recording["ids"]["recordingId"]
    mock = admin.post(f"/stream-recordings/{recording_id}/convert",
                      json={"simplifyTiming": True, "maxDelay": 1000}).json()
    steps = mock["websocket"]["scenario"]["steps"]
    assert [s["type"] for s in steps] == ["expect", "send", "expect", "send"]
    assert steps[3]["message"]["delay"] % 100 == 0 and steps[3]["message"]["delay"] >= 200
    mock["id"], mock["websocket"]["path"] = "converted-ws", "/ws/converted"
    created = admin.post("/mocks", json=mock)
    assert created.status_code == 201, created.text
    with connect(server.ws + "/ws/converted", open_timeout=10) as ws:
        ws.send("hello")
        assert ws.recv(timeout=5) == "hi there"
        ws.send("bye")
        assert ws.recv(timeout=5) == "see you"


def test_sse_recording_converts_to_a_working_mock(server, admin, sse_recording):
    recording_id = sse_recording["ids"]["recordingId"]
    mock = admin.post(f"/stream-recordings/{recording_id}/convert",
                      json={"maxDelay": 50}).json()
    assert all(event["delay"] <= 50 for event in mock["http"]["sse"]["events"])
    mock["id"], mock["http"]["matcher"]["path"] = "converted-sse", "/sse/converted"
    assert admin.post("/mocks", json=mock).status_code == 201
    events = sse_events(server.base + "/sse/converted")
    # A client keeps the last event id, so the third event reads id "2" too.
    assert [(e.event, e.data, e.id or None) for e in events] == [
        ("message", "first", None), ("update", "second", "2"), ("message", "third {{x}}", "2")]


# ---------------------------------------------------------------------- replay

def test_pure_replay_sends_server_frames_with_scaled_timing(server, admin, ws_recording):
    recording_id = ws_recording["ids"]["recordingId"]
    started = admin.post(f"/stream-recordings/{recording_id}/replay",
                         json={"mode": "pure", "timingScale": 2.0})
    assert started.status_code == 201, started.text
    session = started.json()
    assert session["status"] == "pending"
    with connect(server.ws + WS_PATH, open_timeout=10) as ws:
        begin = time.monotonic()
        assert ws.recv(timeout=10) == "hi there"
        first = time.monotonic() - begin
        assert ws.recv(timeout=10) == "see you"
        second = time.monotonic() - begin
    assert second - first >= 0.45  # ~300 ms recorded gap (plus the client's turn) × 2
    status = wait_replay(admin, session["sessionId"], "complete")
    assert status["status"] == "complete"
    assert (status["framesSent"], status["totalFrames"]) == (2, 4)


def test_synchronized_replay_waits_for_the_client_and_strict_aborts(server, admin,
                                                                    ws_recording):
    recording_id = ws_recording["ids"]["recordingId"]
    session = admin.post(f"/stream-recordings/{recording_id}/replay",
                         json={"mode": "synchronized", "strictMatching": True}).json()
    with connect(server.ws + WS_PATH, open_timeout=10) as ws:
        with pytest.raises(TimeoutError):
            ws.recv(timeout=0.4)  # nothing before the client's first frame
        assert admin.get(f"/replay/{session['sessionId']}").json()["status"] == "waiting"
        ws.send("hello")
        assert ws.recv(timeout=5) == "hi there"
        ws.send("not bye")
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd.code == 1008
    status = wait_replay(admin, session["sessionId"], "aborted")
    assert status["status"] == "aborted" and status["framesSent"] == 1


def test_triggered_replay_sends_on_advance_and_pauses(server, admin, ws_recording):
    recording_id = ws_recording["ids"]["recordingId"]
    session = admin.post(f"/stream-recordings/{recording_id}/replay",
                         json={"mode": "triggered"}).json()
    replay_id = session["sessionId"]
    with connect(server.ws + WS_PATH, open_timeout=10) as ws:
        with pytest.raises(TimeoutError):
            ws.recv(timeout=0.3)
        assert wait_replay(admin, replay_id, "waiting")["status"] == "waiting"
        assert admin.post(f"/replay/{replay_id}/advance", json={"count": 1}).status_code == 200
        assert ws.recv(timeout=5) == "hi there"
        assert wait_replay(admin, replay_id, "waiting")["status"] == "waiting"
        assert admin.post(f"/replay/{replay_id}/pause").json()["status"] == "paused"
        admin.post(f"/replay/{replay_id}/advance", json={"until": 3})
        with pytest.raises(TimeoutError):
            ws.recv(timeout=0.3)  # paused: the advance waits
        assert admin.post(f"/replay/{replay_id}/resume").status_code == 200
        assert ws.recv(timeout=5) == "see you"
    status = wait_replay(admin, replay_id, "complete")
    assert status["status"] == "complete" and status["currentFrame"] == 4
    assert any(item["id"] == replay_id for item in admin.get("/replay").json()["sessions"])


def test_sse_replay_and_stop(server, admin, sse_recording):
    recording_id = sse_recording["ids"]["recordingId"]
    session = admin.post(f"/stream-recordings/{recording_id}/replay",
                         json={"mode": "pure", "timingScale": 0.5}).json()
    begin = time.monotonic()
    events = sse_events(server.base + SSE_PATH)
    # A client keeps the last event id, so the third event reads id "2" too.
    assert [(e.event, e.data, e.id or None) for e in events] == [
        ("message", "first", None), ("update", "second", "2"), ("message", "third {{x}}", "2")]
    assert time.monotonic() - begin < 5
    assert wait_replay(admin, session["sessionId"], "complete")["framesSent"] == 3
    pending = admin.post(f"/stream-recordings/{recording_id}/replay",
                         json={"mode": "triggered"}).json()
    stopped = admin.delete(f"/replay/{pending['sessionId']}")
    assert stopped.json()["status"] == "aborted"
    # Disarmed: the mock answers the path again.
    assert [e.data for e in sse_events(server.base + SSE_PATH)][:1] == ["first"]


# ---------------------------------------------------------------------- bad input

@pytest.mark.parametrize("body, status, code", [
    pytest.param({"protocol": "mqtt", "path": "/x"}, 400, "validation_error", id="protocol"),
    pytest.param({"protocol": "sse", "path": "x"}, 400, "validation_error", id="path"),
    pytest.param({"protocol": "sse"}, 400, "missing_field", id="missing path"),
    pytest.param({"protocol": "sse", "path": "/x", "extra": 1}, 400, "validation_error",
                 id="unknown key"),
])
def test_start_refuses_bad_input(admin, body, status, code):
    answer = admin.post("/stream-recordings/start", json=body)
    assert (answer.status_code, answer.json()["error"]) == (status, code)


def test_unknown_ids_bad_modes_and_conflicts(admin, ws_recording):
    for method, path in (("get", "/stream-recordings/nope"),
                         ("delete", "/stream-recordings/nope"),
                         ("post", "/stream-recordings/nope/convert"),
                         ("post", "/stream-recordings/nope/replay"),
                         ("get", "/replay/nope"), ("post", "/replay/nope/advance")):
        answer = admin.request(method.upper(), path)
        assert (answer.status_code, answer.json()["error"]) == (404, "not_found"), path
    recording_id = ws_recording["ids"]["recordingId"]
    bad = admin.post(f"/stream-recordings/{recording_id}/replay", json={"mode": "fast"})
    assert (bad.status_code, bad.json()["error"]) == (400, "validation_error")
    assert "mode" in bad.json()["message"]
    bad_scale = admin.post(f"/stream-recordings/{recording_id}/replay",
                           json={"timingScale": -1})
    assert "timingScale" in bad_scale.json()["message"]
    pure = admin.post(f"/stream-recordings/{recording_id}/replay", json={"mode": "pure"}).json()
    advance = admin.post(f"/replay/{pure['sessionId']}/advance", json={})
    assert (advance.status_code, advance.json()["error"]) == (400, "validation_error")
    assert admin.post(f"/replay/{pure['sessionId']}/pause").status_code == 409
    admin.delete(f"/replay/{pure['sessionId']}")
    live = admin.post("/stream-recordings/start",
                      json={"protocol": "websocket", "path": "/ws/live"}).json()
    again = admin.post("/stream-recordings/start",
                       json={"protocol": "websocket", "path": "/ws/live"})
    assert again.status_code == 409
    busy = admin.post(f"/stream-recordings/{live['recordingId']}/replay", json={})
    assert (busy.status_code, busy.json()["error"]) == (409, "conflict")
    admin.post(f"/stream-recordings/{live['recordingId']}/stop")
    convert = admin.post(f"/stream-recordings/{recording_id}/convert", json={"minDelay": "x"})
    assert convert.status_code == 400 and "minDelay" in convert.json()["message"]


# ---------------------------------------------------------------------- CLI

def test_cli_commands(server, tmp_path, ws_recording):
    recording_id = ws_recording["ids"]["recordingId"]
    client = ["--admin-url", server.admin]

    def mockd(*args: str) -> str:
        done = run_mockd(["stream-recordings", *args, *client], tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout

    listing = mockd("list", "--protocol", "websocket")
    assert recording_id in listing and "PROTOCOL" in listing
    assert json.loads(mockd("list", "--json"))["total"] >= 1
    shown = mockd("show", recording_id)
    assert "-> text   hello" in shown and "<- text   see you" in shown
    mockd("export", recording_id, "-o", str(tmp_path / "rec.json"))
    assert json.loads((tmp_path / "rec.json").read_text())["id"] == recording_id
    mock = json.loads(mockd("convert", recording_id, "--simplify-timing", "--min-delay", "10",
                            "--max-delay", "5000"))
    assert mock["type"] == "websocket"
    assert all(step["message"]["delay"] >= 10
               for step in mock["websocket"]["scenario"]["steps"] if step["type"] == "send")
    assert "recordings" in mockd("stats")
    assert json.loads(mockd("sessions", "--json"))["count"] == 0
    assert "No active" in mockd("sessions")
    with server.admin_client() as admin:
        scratch = admin.post("/stream-recordings/start",
                             json={"protocol": "sse", "path": "/cli/scratch"}).json()
        admin.post(f"/stream-recordings/{scratch['recordingId']}/stop")
    assert "until vacuum" in mockd("delete", scratch["recordingId"])
    assert json.loads(mockd("vacuum", "--json"))["removed"] >= 1
    missing = run_mockd(["stream-recordings", "show", "nope", *client], tmp_path)
    assert missing.returncode != 0 and "not found" in missing.stderr
