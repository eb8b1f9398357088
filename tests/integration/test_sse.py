"""Streaming mocks through a real ``mockd start`` process, read by real clients: httpx-sse
(as the black-box suite reads streams: a block without data dispatches no event), the
official ``openai`` SDK, raw httpx for chunked and NDJSON framing, the admin SSE routes and
``mockd http add --sse``.

Timing assertions have wide tolerances (a loaded 2-core machine): they check order of
magnitude and ordering, never exact milliseconds. Every loop is bounded in count and time.

Source: SPEC "SSE config", "Chunked config", "Events" → "Mock SSE streams", "Admin API" →
"SSE connections"; behavior notes §9, §15.
"""
from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest
from httpx_sse import connect_sse

from tests.helpers import make_config, run_mockd, start_server

pytestmark = pytest.mark.integration

IDLE = 5.0  # seconds of silence after which a read gives up


def sse(mock_id: str, path: str, method: str = "GET", **block) -> dict:
    return {"id": mock_id, "http": {"matcher": {"method": method, "path": path}, "sse": block}}


MOCKS = [
    sse("fields", "/sse/fields", events=[
        {"type": "update", "data": {"n": 1, "tags": ["a"]}, "id": "e1", "retry": 2500,
         "comment": "first"},
        {"data": "plain text", "id": "e2"},
        {"type": "multi", "data": "line one\nline two"},
        {"comment": "only a comment"},
        {"data": {"id": "$uuid", "roll": "$random(1,6)", "pick": "$pick(x,y)",
                  "at": "$timestamp", "greeting": "{{upper('hi')}}"}},
    ]),
    sse("timed", "/sse/timed", events=[{"data": str(n)} for n in range(4)],
        timing={"initialDelay": 300, "fixedDelay": 150}),
    sse("limited", "/sse/limited", generator={"type": "sequence", "sequence": {"start": 10}},
        timing={"fixedDelay": 20},
        lifecycle={"maxEvents": 3, "termination": {"finalEvent": {"type": "bye", "data": "end"},
                                                   "closeDelay": 200}}),
    sse("abrupt", "/sse/abrupt", events=[{"data": "a"}, {"data": "b"}],
        lifecycle={"termination": {"type": "abrupt"}}),
    sse("expiring", "/sse/expiring", generator={"type": "sequence"}, timing={"fixedDelay": 400},
        lifecycle={"connectionTimeout": 1}),
    sse("resumable", "/sse/resumable", events=[{"data": f"event {n}", "id": str(n)}
                                               for n in range(1, 7)],
        timing={"fixedDelay": 80}),
    sse("keepalive", "/sse/keepalive", events=[{"data": "first"}, {"data": "late", "delay": 6500}],
        lifecycle={"keepaliveInterval": 5}),
    sse("endless", "/sse/endless", generator={"type": "sequence"}, timing={"fixedDelay": 100}),
    sse("crowd", "/sse/crowd", generator={"type": "sequence"}, timing={"fixedDelay": 100}),
    sse("llm", "/v1/chat/completions", "POST", template="llm-chat",
        templateParams={"tokens": ["Mock", "ed", " reply", "!"], "delayPerToken": 10,
                        "model": "gpt-4o-mock"}),
    sse("notes", "/sse/notes", template="notification-stream",
        templateParams={"interval": 10, "includeId": True,
                        "notifications": [{"type": "info", "message": "one"},
                                          {"type": "warn", "message": "two"}]}),
    {"id": "download", "http": {"matcher": {"path": "/chunked/raw"},
                                "chunked": {"data": "abcdefghij", "chunkSize": 4,
                                            "chunkDelay": 150}}},
    {"id": "export", "http": {"matcher": {"path": "/chunked/ndjson"},
                              "chunked": {"ndjsonItems": [{"id": 1}, {"id": 2}, {"id": 3}],
                                          "chunkDelay": 100}}},
]


def keepalive_stop(out: list[tuple[float, str]]) -> bool:
    return out[-1][1] == ": keepalive"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The module's ``mockd start``. Its keepalive stream is opened at once in a thread
    (``process.keepalive``, a future of :func:`raw_lines`): the comment comes after the 5 s
    minimum interval, and the tests before its own run meanwhile. Tests that count every open
    connection ask for :func:`keepalive_finished` first."""
    directory = tmp_path_factory.mktemp("sse")
    with start_server(directory, make_config(*MOCKS)) as process, \
            ThreadPoolExecutor(1) as pool:
        process.directory = directory
        process.keepalive = pool.submit(raw_lines, process.base, "/sse/keepalive",
                                        stop_when=keepalive_stop, total=9)
        yield process


@pytest.fixture
def keepalive_finished(server):
    """Waits (bounded) until the module's background keepalive stream has ended, so it is not
    among the connections a test counts."""
    server.keepalive.exception(timeout=30)


def read_events(base: str, path: str, *, method: str = "GET", headers: dict | None = None,
                max_events: int = 50, total: float = 20.0, json_body=None):
    """(events, arrival seconds, ended by the server, response) with httpx-sse."""
    events, times = [], []
    started = time.monotonic()
    ended = False
    with httpx.Client(base_url=base, trust_env=False,
                      timeout=httpx.Timeout(total, read=IDLE)) as client:
        try:
            with connect_sse(client, method, path, headers=headers or {},
                             json=json_body) as source:
                response = source.response
                for event in source.iter_sse():
                    if event.data == "":
                        continue  # a block without data dispatches no event (WHATWG)
                    events.append(event)
                    times.append(time.monotonic() - started)
                    if len(events) >= max_events or time.monotonic() - started > total:
                        break
                else:
                    ended = True
        except httpx.RemoteProtocolError:
            ended = True  # the server dropped the connection
    return events, times, ended, response


def raw_lines(base: str, path: str, *, stop_when=None, total: float = 20.0):
    """[(arrival seconds, line)] of a streaming response, read with plain httpx."""
    out = []
    started = time.monotonic()
    with httpx.Client(base_url=base, trust_env=False,
                      timeout=httpx.Timeout(total, read=IDLE + 5)) as client:
        with client.stream("GET", path) as response:
            for line in response.iter_lines():
                out.append((time.monotonic() - started, line))
                if (stop_when and stop_when(out)) or time.monotonic() - started > total:
                    break
    return out


def wait_until(check, timeout: float = 5.0, interval: float = 0.05):
    """Poll ``check()`` until it returns a truthy value (returned) or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def open_connections(admin) -> int:
    return admin.get("/sse/stats").json()["activeConnections"]


def test_every_event_field_reaches_an_sse_client(server):
    events, _, ended, response = read_events(server.base, "/sse/fields")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    assert ended
    first, second, multi, generated = events
    assert (first.event, first.id, first.retry) == ("update", "e1", 2500)
    assert json.loads(first.data) == {"n": 1, "tags": ["a"]}
    assert (second.event, second.data, second.id) == ("message", "plain text", "e2")
    assert (multi.event, multi.data) == ("multi", "line one\nline two")
    values = json.loads(generated.data)
    assert len(values["id"]) == 36 and values["roll"] in range(1, 7)
    assert values["pick"] in ("x", "y") and values["greeting"] == "HI"
    assert values["at"].endswith("Z") and "T" in values["at"]


def test_stream_opens_with_retry_3000_and_sends_comments(server):
    lines = [line for _, line in raw_lines(server.base, "/sse/fields")]
    assert lines[:2] == ["retry: 3000", ""]
    assert ": first" in lines and ": only a comment" in lines


def test_initial_and_fixed_delays_space_the_events(server):
    events, times, ended, _ = read_events(server.base, "/sse/timed")
    assert [event.data for event in events] == ["0", "1", "2", "3"] and ended
    assert times[0] >= 0.28  # initialDelay 300 ms (+ the first fixedDelay)
    # fixedDelay 150 ms: the schedule does not drift, so a late event makes the next gap
    # shorter; check the span and that no gap is wildly off.
    assert times[-1] - times[0] >= 0.40, times
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert all(gap <= 0.8 for gap in gaps), gaps


def test_max_events_then_final_event_then_graceful_close(server):
    events, times, ended, _ = read_events(server.base, "/sse/limited")
    assert [(event.event, event.data) for event in events] == [
        ("message", "10"), ("message", "11"), ("message", "12"), ("bye", "end")]
    assert ended


def test_abrupt_termination_drops_the_connection(server):
    with httpx.Client(base_url=server.base, trust_env=False, timeout=IDLE) as client:
        with client.stream("GET", "/sse/abrupt") as response:
            with pytest.raises(httpx.RemoteProtocolError):
                b"".join(response.iter_bytes())


def test_connection_timeout_ends_an_endless_stream(server):
    started = time.monotonic()
    events, _, ended, _ = read_events(server.base, "/sse/expiring")
    assert ended and 1 <= len(events) <= 3
    assert time.monotonic() - started < 4


def test_last_event_id_resumes_after_the_event_the_client_saw(server):
    seen, _, _, _ = read_events(server.base, "/sse/resumable", max_events=2)
    assert [event.id for event in seen] == ["1", "2"]
    resumed, _, ended, _ = read_events(server.base, "/sse/resumable",
                                       headers={"Last-Event-ID": seen[-1].id})
    assert [event.id for event in resumed] == ["3", "4", "5", "6"] and ended
    assert [event.data for event in resumed] == [f"event {n}" for n in range(3, 7)]


def test_keepalive_comment_arrives_after_the_interval(server):
    lines = server.keepalive.result(timeout=30)  # opened when the server started
    arrival, line = lines[-1]
    assert line == ": keepalive"
    assert 4.5 <= arrival <= 6.5


def test_openai_sdk_reads_an_llm_chat_stream(server):
    client = openai.OpenAI(base_url=server.base + "/v1", api_key="x", max_retries=0,
                           timeout=10)
    stream = client.chat.completions.create(model="anything", stream=True,
                                            messages=[{"role": "user", "content": "hi"}])
    chunks = list(stream)
    assert "".join(chunk.choices[0].delta.content or "" for chunk in chunks) == "Mocked reply!"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert {chunk.id for chunk in chunks} == {chunks[0].id}
    assert chunks[0].id.startswith("chatcmpl-") and chunks[0].model == "gpt-4o-mock"
    assert chunks[0].object == "chat.completion.chunk"


def test_llm_chat_wire_format_ends_with_done(server):
    events, _, ended, _ = read_events(server.base, "/v1/chat/completions", method="POST",
                                      json_body={"messages": []})
    assert events[-1].data == "[DONE]" and ended
    assert [event.event for event in events] == ["message"] * 5  # no event: lines


def test_notification_stream_sends_type_message_and_ids(server):
    events, _, _, _ = read_events(server.base, "/sse/notes")
    assert [(event.event, event.id, json.loads(event.data)) for event in events] == [
        ("notification", "1", {"type": "info", "message": "one", "id": "1"}),
        ("notification", "2", {"type": "warn", "message": "two", "id": "2"})]


def raw_http_response(base: str, path: str) -> bytes:
    """The raw bytes of one HTTP/1.1 response (``Connection: close``), chunk framing and all."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=IDLE) as connection:
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n"
                           f"Connection: close\r\n\r\n".encode())
        received = b""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            piece = connection.recv(65536)
            if not piece:
                break
            received += piece
    return received


def test_chunked_response_is_framed_in_chunks_of_chunk_size(server):
    head, _, body = raw_http_response(server.base, "/chunked/raw").partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower()
    assert b"content-length" not in head.lower()
    assert body == b"4\r\nabcd\r\n4\r\nefgh\r\n2\r\nij\r\n0\r\n\r\n"


def test_chunked_pieces_arrive_chunk_delay_apart(server):
    pieces = []
    started = time.monotonic()
    with httpx.Client(base_url=server.base, trust_env=False, timeout=IDLE) as client:
        with client.stream("GET", "/chunked/raw") as response:
            assert response.headers["content-type"] == "application/octet-stream"
            assert response.headers["cache-control"] == "no-cache"
            for piece in response.iter_raw():
                pieces.append((time.monotonic() - started, piece))
    assert b"".join(piece for _, piece in pieces) == b"abcdefghij"
    assert len(pieces) >= 2 and pieces[-1][0] - pieces[0][0] >= 0.25  # 2 × 150 ms


def test_ndjson_response_is_one_json_object_per_line(server):
    with httpx.Client(base_url=server.base, trust_env=False, timeout=IDLE) as client:
        with client.stream("GET", "/chunked/ndjson") as response:
            assert response.headers["content-type"] == "application/x-ndjson"
            assert response.headers["transfer-encoding"] == "chunked"
            lines = list(response.iter_lines())
    assert [json.loads(line) for line in lines] == [{"id": 1}, {"id": 2}, {"id": 3}]


def test_client_disconnect_ends_the_server_side_stream(server, admin, keepalive_finished):
    events, _, _, _ = read_events(server.base, "/sse/endless", max_events=2)
    assert len(events) == 2
    assert wait_until(lambda: open_connections(admin) == 0), admin.get("/sse/connections").json()


def test_admin_lists_gets_and_closes_a_live_connection(server, admin, keepalive_finished):
    received: list[str] = []
    finished = threading.Event()

    def listen() -> None:
        try:
            events, _, _, _ = read_events(server.base, "/sse/endless", max_events=200)
            received.extend(event.data for event in events)
        finally:
            finished.set()

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    listed = wait_until(lambda: [connection for connection
                                 in admin.get("/sse/connections").json()["connections"]
                                 if connection["eventsSent"] >= 1])
    assert len(listed) == 1
    connection = listed[0]
    assert connection["mockId"] == "endless" and connection["path"] == "/sse/endless"
    assert connection["status"] == "active" and connection["id"].startswith("sse-")
    assert admin.get(f"/sse/connections/{connection['id']}").json()["id"] == connection["id"]
    by_mock = admin.get("/mocks/endless/sse/connections").json()
    assert by_mock["count"] == 1 and by_mock["mockId"] == "endless"
    stats = admin.get("/sse/stats").json()
    assert stats["activeConnections"] == 1 and stats["connectionsByMock"] == {"endless": 1}
    assert 'mockd_active_connections{protocol="sse"} 1.0' in admin.get("/metrics").text
    closed = admin.delete(f"/sse/connections/{connection['id']}")
    assert closed.status_code == 200
    assert closed.json() == {"message": "Connection closed", "connection": connection["id"]}
    assert finished.wait(5), "the stream did not end after the admin closed it"
    assert 1 <= len(received) < 200
    assert admin.get(f"/sse/connections/{connection['id']}").status_code == 404
    assert admin.delete(f"/sse/connections/{connection['id']}").json()["error"] == "not_found"
    reader.join(5)


def test_admin_buffer_of_a_mock_can_be_read_and_cleared(server, admin):
    read_events(server.base, "/sse/resumable")
    buffer = admin.get("/mocks/resumable/sse/buffer").json()
    assert buffer["mockId"] == "resumable" and buffer["capacity"] == 100
    assert [event["id"] for event in buffer["events"]] == [str(n) for n in range(1, 7)]
    assert buffer["events"][0]["data"] == "event 1"
    cleared = admin.delete("/mocks/resumable/sse/buffer").json()
    assert cleared == {"message": "Buffer cleared", "mockId": "resumable", "cleared": 6}
    assert admin.get("/mocks/resumable/sse/buffer").json()["count"] == 0
    assert admin.get("/mocks/nope/sse/buffer").status_code == 404
    assert admin.get("/mocks/nope/sse/connections").json() == {"error": "not_found",
                                                              "message": "Mock not found"}


def test_closing_all_connections_of_a_mock(server, admin):
    finished = threading.Event()
    reader = threading.Thread(target=lambda: (read_events(server.base, "/sse/endless",
                                                          max_events=200), finished.set()),
                              daemon=True)
    reader.start()
    assert wait_until(lambda: admin.get("/mocks/endless/sse/connections").json()["count"] == 1)
    closed = admin.delete("/mocks/endless/sse/connections").json()
    assert closed == {"message": "Connections closed", "closed": 1, "mockId": "endless"}
    assert finished.wait(5)
    reader.join(5)


def test_changing_a_mock_closes_its_open_streams(server, admin):
    created = admin.post("/mocks", json=sse("editable", "/sse/editable",
                                            generator={"type": "sequence"},
                                            timing={"fixedDelay": 100}))
    assert created.status_code == 201, created.text
    finished = threading.Event()
    reader = threading.Thread(target=lambda: (read_events(server.base, "/sse/editable",
                                                          max_events=200), finished.set()),
                              daemon=True)
    reader.start()
    assert wait_until(lambda: admin.get("/mocks/editable/sse/connections").json()["count"])
    edited = sse("editable", "/sse/editable", generator={"type": "sequence"},
                 timing={"fixedDelay": 50})
    assert admin.put("/mocks/editable", json=edited).status_code == 200
    assert finished.wait(5), "a changed mock kept its stream open"
    reader.join(5)
    assert admin.delete("/mocks/editable").status_code == 204


def test_one_hundred_concurrent_clients_are_served_and_the_next_one_gets_503(
        server, admin, keepalive_finished):
    assert wait_until(lambda: open_connections(admin) == 0)

    async def crowd() -> tuple[list[tuple[int, list[str]]], int]:
        all_open, checked = asyncio.Event(), asyncio.Event()
        first_seen = 0
        limits = httpx.Limits(max_connections=150, max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=server.base, trust_env=False, limits=limits,
                                     timeout=httpx.Timeout(30, read=15)) as client:

            async def one() -> tuple[int, list[str]]:
                nonlocal first_seen
                data: list[str] = []
                async with client.stream("GET", "/sse/crowd") as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data: "):
                            data.append(line[6:])
                            if len(data) == 1:
                                # Hold every stream open until the 101st request was tried.
                                first_seen += 1
                                if first_seen == 100:
                                    all_open.set()
                                await checked.wait()
                            if len(data) == 5:
                                break
                    return response.status_code, data

            tasks = [asyncio.create_task(one()) for _ in range(100)]
            try:
                await asyncio.wait_for(all_open.wait(), 20)
                refused = await client.get("/sse/crowd")
            finally:
                checked.set()
            results = await asyncio.wait_for(asyncio.gather(*tasks), 20)
        return results, refused.status_code

    results, refused_status = asyncio.run(crowd())
    assert refused_status == 503
    assert all(result == (200, ["1", "2", "3", "4", "5"]) for result in results), results
    stats = admin.get("/sse/stats").json()
    assert stats["connectionErrors"] >= 1 and stats["totalConnections"] >= 100
    assert wait_until(lambda: open_connections(admin) == 0)


def test_cli_http_add_sse_creates_a_streaming_mock(server, admin):
    added = run_mockd(["http", "add", "--admin-url", server.admin, "--path", "/sse/cli",
                       "--sse", "--sse-event", 'tick:{"n":1}', "--sse-event", "plain text",
                       "--sse-delay", "10", "--sse-repeat", "2", "--sse-keepalive", "5"],
                      server.directory)
    assert added.returncode == 0, added.stderr
    assert "Created mock:" in added.stdout
    events, _, ended, _ = read_events(server.base, "/sse/cli")
    assert [(event.event, event.data) for event in events] == [
        ("tick", '{"n":1}'), ("message", "plain text")] * 2
    assert ended
    stored = [mock for mock in admin.get("/mocks").json()["mocks"]
              if mock["http"]["matcher"].get("path") == "/sse/cli"][0]
    assert stored["http"]["sse"]["lifecycle"]["keepaliveInterval"] == 5
    assert "response" not in stored["http"]
    too_short = run_mockd(["http", "add", "--admin-url", server.admin, "--path", "/sse/bad",
                           "--sse", "--sse-keepalive", "3"], server.directory)
    assert too_short.returncode != 0 and "at least 5" in too_short.stderr


def test_cli_sse_defaults_and_endless_repeat(server):
    added = run_mockd(["http", "add", "--admin-url", server.admin, "--path", "/sse/cli-default",
                       "--sse", "--sse-delay", "10", "--sse-repeat", "0"], server.directory)
    assert added.returncode == 0, added.stderr
    events, _, ended, _ = read_events(server.base, "/sse/cli-default", max_events=5)
    assert [json.loads(event.data) for event in events] == [{"status": "connected"}] * 5
    assert not ended  # endless: we stopped reading
