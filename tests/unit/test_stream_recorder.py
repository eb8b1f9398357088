"""The stream recorder (recordings/streams.py): record shape, bounds, writes to the store.

Source: SPEC "Admin-side records" (Stream recording, WebSocket part, SSE part), "Limits";
behavior notes §1 "Connections, protocol handlers, stream recordings".
"""
from __future__ import annotations

import base64
import time

import pytest

from recordings import streams
from recordings.streams import StreamRecorder

try:
    from recordings.store import RecordingStore
except ImportError:  # the shared store lands separately; its interface is all we use
    RecordingStore = None


class _DictStore:
    """The part of the recording store's interface the recorder uses (add, replace, get)."""

    def __init__(self) -> None:
        self.documents: dict[str, dict] = {}
        self.columns: dict[str, dict] = {}
        self.writes = 0
        self._next = 0

    def add(self, kind, record, *, session_id=None, columns=None):
        assert kind == "stream"
        if "id" not in record:
            self._next += 1
            record["id"] = f"rec-{self._next}"
        record.setdefault("timestamp", "2026-11-27T00:00:00.000Z")
        record["sessionId"] = session_id
        self.documents[record["id"]] = dict(record)
        self.columns[record["id"]] = dict(columns or {})
        self.writes += 1
        return dict(record)

    def replace(self, record_id, record, *, columns=None):
        if record_id not in self.documents:
            return False
        self.documents[record_id] = dict(record)
        self.columns[record_id] = dict(columns or {})
        self.writes += 1
        return True

    def get(self, record_id, *, include_deleted=False):
        return self.documents.get(record_id)


@pytest.fixture
def store():
    if RecordingStore is not None:
        real = RecordingStore()
        yield real
        real.close()
    else:
        yield _DictStore()


def test_websocket_recording_has_the_spec_shape(store):
    recorder = StreamRecorder.start(store, protocol="websocket", path="/ws/chat", name="chat",
                                    headers={"Origin": ["http://localhost"]}, query="room=1",
                                    session_id=None, subprotocol="chat.v1")
    assert recorder.id
    assert store.get(recorder.id)["status"] == "recording"
    recorder.websocket_frame("c2s", "text", "hello")
    time.sleep(0.02)
    recorder.websocket_frame("s2c", "text", "héllo back")
    recorder.websocket_frame("s2c", "binary", b"\x00\x01\xff")
    recorder.websocket_frame("c2s", "ping", b"pi")
    recorder.close(1000, "bye")
    recorder.close(1001, "later calls do not overwrite")
    record = recorder.finish()

    assert record["id"] == recorder.id
    assert record["version"] == "1.0"
    assert record["protocol"] == "websocket"
    assert record["status"] == "complete"
    assert record["name"] == "chat"
    assert record["metadata"] == {"path": "/ws/chat", "headers": {"Origin": ["http://localhost"]},
                                  "query": "room=1", "source": "mock"}
    assert record["startTime"].endswith("Z") and record["endTime"].endswith("Z")
    assert record["duration"] >= 20
    part = record["websocket"]
    assert part["subprotocol"] == "chat.v1"
    assert (part["closeCode"], part["closeReason"]) == (1000, "bye")
    frames = part["frames"]
    assert [(f["direction"], f["type"]) for f in frames] == [
        ("c2s", "text"), ("s2c", "text"), ("s2c", "binary"), ("c2s", "ping")]
    assert frames[0]["data"] == "hello"
    assert frames[1]["data"] == "héllo back"
    assert base64.b64decode(frames[2]["data"]) == b"\x00\x01\xff"
    assert base64.b64decode(frames[3]["data"]) == b"pi"
    assert frames[0]["relativeMs"] < frames[1]["relativeMs"]
    assert frames[1]["relativeMs"] - frames[0]["relativeMs"] >= 15
    stats = record["stats"]
    assert stats["frameCount"] == 4
    assert stats["bytesReceived"] == len(b"hello") + 2
    assert stats["bytesSent"] == len("héllo back".encode()) + 3
    assert stats["fileSizeBytes"] > 200
    assert store.get(recorder.id)["websocket"]["frames"] == frames
    assert store.get(recorder.id)["status"] == "complete"


def test_sse_recording_keeps_type_data_and_id(store):
    recorder = StreamRecorder.start(store, protocol="sse", path="/events", source="proxy")
    recorder.sse_event("first")
    recorder.sse_event("line 1\nline 2", event_type="update", event_id="7")
    record = recorder.finish()
    assert record["protocol"] == "sse"
    assert record["name"] == "sse /events"
    assert record["metadata"]["source"] == "proxy"
    events = record["sse"]["events"]
    assert [(e["type"], e["data"], e["id"]) for e in events] == [
        ("message", "first", None), ("update", "line 1\nline 2", "7")]
    assert all(isinstance(e["relativeMs"], float) for e in events)
    assert record["stats"]["frameCount"] == 2
    assert record["stats"]["bytesSent"] == len("first") + len("line 1\nline 2")
    assert record["stats"]["bytesReceived"] == 0
    assert "websocket" not in record


def test_frame_bound_ends_the_recording_incomplete(store):
    recorder = StreamRecorder.start(store, protocol="websocket", path="/ws", max_frames=3)
    for index in range(10):
        recorder.websocket_frame("s2c", "text", str(index))
    record = recorder.finish()
    assert record["status"] == "incomplete"
    assert [f["data"] for f in record["websocket"]["frames"]] == ["0", "1", "2"]


def test_byte_bound_ends_the_recording_incomplete(store):
    recorder = StreamRecorder.start(store, protocol="sse", path="/s", max_bytes=10)
    recorder.sse_event("12345")
    recorder.sse_event("123456")  # would make 11 bytes: cut here
    recorder.sse_event("1")       # nothing more after the cut
    record = recorder.finish()
    assert record["status"] == "incomplete"
    assert [e["data"] for e in record["sse"]["events"]] == ["12345"]


def test_long_recordings_are_written_while_they_run(store, monkeypatch):
    monkeypatch.setattr(streams, "FLUSH_EVERY_FRAMES", 5)
    recorder = StreamRecorder.start(store, protocol="websocket", path="/ws")
    for index in range(7):
        recorder.websocket_frame("s2c", "text", str(index))
    stored = store.get(recorder.id)
    assert stored["status"] == "recording"
    assert len(stored["websocket"]["frames"]) == 5


def test_finish_twice_returns_the_same_document_and_frames_after_are_ignored(store):
    recorder = StreamRecorder.start(store, protocol="websocket", path="/ws")
    recorder.websocket_frame("c2s", "text", "a")
    first = recorder.finish("corrupted")
    recorder.websocket_frame("c2s", "text", "late")
    assert recorder.finish() == first
    assert first["status"] == "corrupted"
    assert len(store.get(recorder.id)["websocket"]["frames"]) == 1


@pytest.mark.parametrize("call, message", [
    pytest.param(lambda r: r.websocket_frame("up", "text", "x"), "direction",
                 id="bad direction"),
    pytest.param(lambda r: r.websocket_frame("c2s", "json", "x"), "frame type",
                 id="bad frame type"),
    pytest.param(lambda r: r.sse_event("x"), "sse_event", id="sse event on websocket"),
    pytest.param(lambda r: r.finish("recording"), "status", id="finish as recording"),
])
def test_bad_calls_raise_value_error(store, call, message):
    recorder = StreamRecorder.start(store, protocol="websocket", path="/ws")
    with pytest.raises(ValueError, match=message):
        call(recorder)


def test_unknown_protocol_or_source_is_refused(store):
    with pytest.raises(ValueError, match="protocol"):
        StreamRecorder.start(store, protocol="mqtt", path="/x")
    with pytest.raises(ValueError, match="source"):
        StreamRecorder.start(store, protocol="sse", path="/x", source="elsewhere")


def test_session_id_is_kept(store):
    session_id = None
    if hasattr(store, "create_session"):
        session_id = store.create_session("s", kind="stream")["id"]
    recorder = StreamRecorder.start(store, protocol="sse", path="/s", session_id=session_id)
    assert recorder.finish()["sessionId"] == session_id
