"""Streaming mocks driven in-process through the data-plane app with a fake ASGI client:
lifecycle ends, resumption, the connection limit, stopping (client disconnect, admin close,
mock change) with no task left behind, keepalive pings, chunked and NDJSON pieces
(behavior notes §9; STYLE §11). Every wait is bounded by ``asyncio.wait_for``."""
from __future__ import annotations

import asyncio

import orjson
import pytest

from mocks.engine.app import DataPlaneApp
from mocks.engine.core import Engine
from mocks.loader import validate_config
from mocks.protocols.streaming.runtime import StreamConnection, StreamRuntime
from mocks.protocols.streaming.sender import StreamClock, StreamStopped
from tests.helpers import engine_with, make_config
from tests.unit.sse_client import LIMIT, FakeClient, sse_mock

#: SSE timing of a stream that must still be open when a test acts on it: the first event at
#: once (``perEventDelays[0]``), then one a second, so the stop, the refusal or the change
#: lands during a wait (a plain ``fixedDelay`` of 1 s made every test wait 1 s for event 1).
FIRST_AT_ONCE_THEN_SLOW = {"perEventDelays": [0], "fixedDelay": 1000}


def app_with(*mocks: dict, runtime: StreamRuntime | None = None) -> tuple[Engine, DataPlaneApp]:
    engine = Engine()
    if runtime is not None:
        engine.streams = runtime
    engine.load(validate_config(make_config(*mocks)))
    return engine, DataPlaneApp(engine)


def other_tasks() -> set[asyncio.Task]:
    return {task for task in asyncio.all_tasks() if task is not asyncio.current_task()}


async def test_sse_response_headers_opening_and_events():
    _, app = app_with(sse_mock("e", "/e", events=[{"type": "update", "data": {"n": 1}, "id": "1"},
                                                  {"data": "two\nlines"}]))
    client = FakeClient(app, "/e")
    await client.finished()
    assert client.status == 200
    assert client.headers == {"content-type": "text/event-stream", "cache-control": "no-cache",
                              "connection": "keep-alive", "x-accel-buffering": "no"}
    assert client.body == (b"retry: 3000\n\nevent: update\nid: 1\ndata: {\"n\":1}\n\n"
                           b"data: two\ndata: lines\n\n")
    assert client.completed


async def test_head_answers_headers_only():
    _, app = app_with(sse_mock("e", "/e", events=[{"data": "x"}]))
    client = FakeClient(app, "/e", method="HEAD")
    await client.finished()
    assert client.status == 200 and client.body == b""


async def test_client_disconnect_stops_the_stream_at_once_and_leaves_no_task():
    engine, app = app_with(sse_mock("forever", "/f", generator={"type": "sequence"},
                                    timing={"fixedDelay": 30}))
    before = other_tasks()
    client = FakeClient(app, "/f")
    await client.wait_events(2)
    assert len(engine.streams.connections()) == 1
    client.disconnect()
    await client.finished()  # returns within LIMIT although the generator is endless
    assert not client.completed  # nothing more is sent to a client that has gone
    assert engine.streams.connections() == []
    await asyncio.sleep(0)
    assert other_tasks() == before  # the disconnect watcher is gone too


async def test_admin_stop_ends_the_response_cleanly():
    engine, app = app_with(sse_mock("forever", "/f", generator={"type": "sequence"},
                                    timing=FIRST_AT_ONCE_THEN_SLOW))
    client = FakeClient(app, "/f")
    await client.wait_events(1)
    [connection] = engine.streams.connections()
    assert connection.info()["status"] == "active"
    assert engine.streams.stop(connection.id)
    await client.finished()
    assert client.completed
    assert engine.streams.get(connection.id) is None


async def test_changing_a_mock_stops_its_streams_and_keeps_the_others():
    changed = sse_mock("changed", "/a", generator={"type": "sequence"}, timing={"fixedDelay": 20})
    kept = sse_mock("kept", "/b", generator={"type": "sequence"}, timing={"fixedDelay": 20})
    engine, app = app_with(changed, kept)
    first, second = FakeClient(app, "/a"), FakeClient(app, "/b")
    await first.wait_events(1)
    await second.wait_events(1)
    edited = sse_mock("changed", "/a", generator={"type": "sequence"}, timing={"fixedDelay": 25})
    engine.load(validate_config(make_config(edited, kept)))
    await first.finished()
    assert first.completed
    assert not second.task.done()
    engine.load(validate_config(make_config(edited)))  # "kept" deleted
    await second.finished()
    assert engine.streams.connections() == []


async def test_connection_limit_answers_503():
    engine, app = app_with(sse_mock("f", "/f", generator={"type": "sequence"},
                                    timing=FIRST_AT_ONCE_THEN_SLOW),
                           runtime=StreamRuntime(max_connections=1))
    first = FakeClient(app, "/f")
    await first.wait_events(1)
    refused = FakeClient(app, "/f")
    await refused.finished()
    assert refused.status == 503
    assert orjson.loads(refused.body)["error"] == "too_many_connections"
    assert engine.streams.stats_document()["connectionErrors"] == 1
    first.disconnect()
    await first.finished()


async def test_max_events_then_final_event_then_close_delay():
    _, app = app_with(sse_mock("m", "/m", generator={"type": "sequence"}, lifecycle={
        "maxEvents": 3, "termination": {"finalEvent": {"type": "bye", "data": "done"},
                                        "closeDelay": 150}}))
    client = FakeClient(app, "/m")
    await client.finished()
    events = client.events()
    assert [event["data"] for event in events] == ["1", "2", "3", "done"]
    assert events[-1]["event"] == "bye"
    assert client.completed
    assert client.arrivals[-1] - client.arrivals[-2] >= 0.14  # the close delay


@pytest.mark.parametrize(("termination", "last_event"), [
    pytest.param({"type": "abrupt", "finalEvent": {"data": "never sent"}}, "2", id="abrupt"),
    pytest.param({"type": "error"}, '{"error":"stream_error","message":'
                                    '"The stream ended with an error"}', id="error"),
])
async def test_abrupt_and_error_terminations_drop_the_connection(termination, last_event):
    _, app = app_with(sse_mock("t", "/t", events=[{"data": "1"}, {"data": "2"}],
                               lifecycle={"termination": termination}))
    client = FakeClient(app, "/t")
    await client.finished()
    assert client.events()[-1]["data"] == last_event
    assert not client.completed


async def test_simulate_disconnect_drops_after_n_events():
    _, app = app_with(sse_mock("s", "/s", generator={"type": "sequence"},
                               lifecycle={"simulateDisconnect": 2,
                                          "termination": {"finalEvent": {"data": "no"}}}))
    client = FakeClient(app, "/s")
    await client.finished()
    assert [event["data"] for event in client.events()] == ["1", "2"]
    assert not client.completed


async def test_connection_timeout_ends_a_slow_stream_gracefully():
    _, app = app_with(sse_mock("c", "/c", generator={"type": "sequence"},
                               timing={"fixedDelay": 10_000},
                               lifecycle={"connectionTimeout": 1,
                                          "termination": {"finalEvent": {"data": "bye"}}}))
    client = FakeClient(app, "/c")
    started = asyncio.get_running_loop().time()
    await client.finished()
    assert 0.9 <= client.arrivals[-1] - started <= 2.5
    assert [event["data"] for event in client.events()] == ["bye"]
    assert client.completed


async def test_idle_timeout_ends_a_stream_without_events():
    _, app = app_with(sse_mock("i", "/i", events=[{"data": "a"}, {"data": "b", "delay": 10_000}],
                               lifecycle={"timeout": 1}))
    client = FakeClient(app, "/i")
    started = asyncio.get_running_loop().time()
    await client.finished()
    assert [event["data"] for event in client.events()] == ["a"]
    assert 0.9 <= asyncio.get_running_loop().time() - started <= 2.5


async def test_resume_sends_the_buffered_events_after_last_event_id_then_continues():
    mock = sse_mock("r", "/r", events=[{"data": f"e{n}", "id": f"id-{n}"} for n in range(1, 6)])
    engine, app = app_with(mock)
    await FakeClient(app, "/r").finished()
    resumed = FakeClient(app, "/r", headers={"Last-Event-ID": "id-3"})
    await resumed.finished()
    assert [event["id"] for event in resumed.events()] == ["id-4", "id-5"]
    assert engine.streams.existing_buffer("r") is not None
    assert [event.id for event in engine.streams.existing_buffer("r").events()] == [
        f"id-{n}" for n in range(1, 6)]


async def test_resume_from_a_configured_id_that_is_not_buffered():
    _, app = app_with(sse_mock("r", "/r", events=[{"data": n, "id": str(n)} for n in range(4)]))
    resumed = FakeClient(app, "/r", headers={"Last-Event-ID": "1"})
    await resumed.finished()
    assert [event["data"] for event in resumed.events()] == ["2", "3"]


async def test_resume_enabled_numbers_events_and_replays_templated_data_exactly():
    mock = sse_mock("n", "/n", events=[{"data": "$uuid"}] * 4, resume={"enabled": True})
    _, app = app_with(mock)
    first = FakeClient(app, "/n")
    await first.finished()
    sent = first.events()
    assert [event["id"] for event in sent] == ["1", "2", "3", "4"]
    resumed = FakeClient(app, "/n", headers={"Last-Event-ID": "2"})
    await resumed.finished()
    assert resumed.events() == sent[2:]  # the very data the buffer kept


async def test_keepalive_pings_on_a_fixed_schedule_during_long_waits():
    pings: list[float] = []
    connection = StreamConnection("sse-x", "sse", "m")

    async def ping() -> None:
        pings.append(asyncio.get_running_loop().time())

    clock = StreamClock(connection, keepalive_seconds=0.1, ping=ping)
    await asyncio.wait_for(clock.sleep(0.35), LIMIT)
    assert len(pings) == 3
    assert [round(moment - clock.started, 1) for moment in pings] == [0.1, 0.2, 0.3]


async def test_clock_raises_stream_stopped_the_moment_the_connection_stops():
    connection = StreamConnection("sse-x", "sse", "m")
    clock = StreamClock(connection)
    sleeper = asyncio.create_task(clock.sleep(30))
    await asyncio.sleep(0.01)
    connection.stop("closed_by_admin")
    with pytest.raises(StreamStopped) as stopped:
        await asyncio.wait_for(sleeper, LIMIT)
    assert stopped.value.reason == "closed_by_admin"


async def test_llm_chat_opens_inline_so_the_first_block_carries_data():
    _, app = app_with(sse_mock("l", "/l", template="llm-chat",
                               templateParams={"tokens": ["a"], "delayPerToken": 0}))
    client = FakeClient(app, "/l")
    await client.finished()
    assert client.body.startswith(b"retry: 3000\ndata: {\"choices\"")
    assert client.body.endswith(b"data: [DONE]\n\n")


async def test_chunked_pieces_by_chunk_size_with_delays(tmp_path):
    (tmp_path / "payload.txt").write_bytes(b"0123456789")
    engine = engine_with(
        {"id": "d", "http": {"matcher": {"path": "/d"},
                             "chunked": {"data": "abcdefghij", "chunkSize": 4,
                                         "chunkDelay": 50}}},
        {"id": "f", "http": {"matcher": {"path": "/f"},
                             "chunked": {"dataFile": "payload.txt", "chunkSize": 3}}},
        {"id": "n", "http": {"matcher": {"path": "/n"},
                             "chunked": {"ndjsonItems": [{"a": 1}, "s", [1]]}}},
        {"id": "missing", "http": {"matcher": {"path": "/missing"},
                                   "chunked": {"dataFile": "nope.txt"}}},
        base_dir=tmp_path)
    app = DataPlaneApp(engine)
    raw = FakeClient(app, "/d")
    await raw.finished()
    assert [message["body"] for message in raw.messages[1:]] == [b"abcd", b"efgh", b"ij", b""]
    assert raw.headers["content-type"] == "application/octet-stream"
    assert raw.headers["cache-control"] == "no-cache"
    assert raw.arrivals[3] - raw.arrivals[1] >= 0.09
    from_file = FakeClient(app, "/f")
    await from_file.finished()
    assert [message["body"] for message in from_file.messages[1:-1]] == [
        b"012", b"345", b"678", b"9"]
    ndjson = FakeClient(app, "/n")
    await ndjson.finished()
    assert ndjson.headers["content-type"] == "application/x-ndjson"
    assert ndjson.body == b'{"a":1}\n"s"\n[1]\n'
    missing = FakeClient(app, "/missing")
    await missing.finished()
    assert missing.status == 502
    assert orjson.loads(missing.body)["error"] == "body_file_error"
    assert engine.streams.connections(kind="chunked") == []


async def test_stopping_the_server_ends_every_stream_cleanly():
    engine, app = app_with(
        sse_mock("forever", "/f", generator={"type": "sequence"}, timing=FIRST_AT_ONCE_THEN_SLOW),
        {"id": "slow", "http": {"matcher": {"path": "/slow"},
                                "chunked": {"data": "abcdef", "chunkSize": 1,
                                            "chunkDelay": 1000}}})
    streams = [FakeClient(app, "/f"), FakeClient(app, "/slow")]
    await streams[0].wait_events(1)
    assert engine.streams.stop_all() == 2
    for client in streams:
        await client.finished()
        assert client.completed
