"""The data-plane ASGI app driven in-process, and fuzzed with hypothesis: whatever a client
sends, the engine never answers 500 and never raises (issue "runnable mock server", tests)."""
from __future__ import annotations

import asyncio

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mocks.engine.app import DataPlaneApp
from mocks.engine.core import ServeEvent
from tests.helpers import engine_with, http_mock

MOCKS = [
    http_mock("param", "GET", "/u/{id}", body="user {{request.pathParam.id}} {{request.query.q}}"),
    http_mock("json", "POST", "/j", body={"name": "{{request.body.user.name}}"},
              matcher={"bodyJsonPath": {"$.user.name": {"exists": True}}}),
    http_mock("pattern", None, matcher={"pathPattern": r"(?i)^/p/(?P<x>[^/]+)$"},
              body="{{request.header.X-Thing}}"),
    http_mock("body", "PUT", "/b", body="ok", matcher={"bodyPattern": "(?s)a.*z",
                                                       "headers": {"X-Tag": "*mid*"}}),
    http_mock("glob", "DELETE", "/g/*", status=204),
]
ENGINE = engine_with(*MOCKS)
APP = DataPlaneApp(ENGINE)


async def call(method: str, path: str, query: bytes = b"", headers=(), body: bytes = b"",
               chunks: int = 1):
    sent: list[dict] = []
    pieces = [body[i::chunks] for i in range(chunks)] if chunks > 1 else [body]
    messages = [{"type": "http.request", "body": piece, "more_body": index < len(pieces) - 1}
                for index, piece in enumerate(pieces)]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "query_string": query,
             "headers": list(headers), "scheme": "http", "server": ("127.0.0.1", 4280),
             "client": ("127.0.0.1", 5000)}
    await APP(scope, receive, send)
    start = next(message for message in sent if message["type"] == "http.response.start")
    body_bytes = b"".join(message.get("body", b"") for message in sent
                          if message["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body_bytes


def test_app_serves_template_with_path_and_query():
    status, headers, body = asyncio.run(call("GET", "/u/7", b"q=hi"))
    assert status == 200 and body == b"user 7 hi"
    assert headers[b"content-length"] == b"9"


def test_app_body_split_over_several_messages_is_read_whole():
    status, _, body = asyncio.run(call("PUT", "/b", headers=[(b"x-tag", b"amidz")],
                                      body=b"a" + b"-" * 1000 + b"z", chunks=7))
    assert status == 200 and body == b"ok"


def test_app_declared_length_over_limit_is_refused_before_reading():
    status, _, body = asyncio.run(call("POST", "/j", headers=[(b"content-length", b"99999999999")],
                                       body=b"{}", chunks=2))
    assert status == 413 and orjson.loads(body)["error"] == "body_too_large"


def test_app_notifies_observers_after_the_response():
    events: list[ServeEvent] = []
    ENGINE.add_observer(events.append)
    try:
        asyncio.run(call("GET", "/u/1"))
        asyncio.run(call("GET", "/nothing"))
    finally:
        ENGINE.remove_observer(events.append)
    assert [(event.mock_id, event.status) for event in events] == [("param", 200), (None, 404)]
    assert events[0].path_template == "/u/{id}" and events[0].duration_ms >= 0


def test_app_observer_that_raises_does_not_change_the_answer():
    def broken(event):
        raise RuntimeError("observer bug")

    ENGINE.add_observer(broken)
    try:
        status, _, body = asyncio.run(call("GET", "/u/2"))
    finally:
        ENGINE.remove_observer(broken)
    assert status == 200 and body == b"user 2 "


methods = st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE",
                           "PROPFIND", "get"])
paths = st.one_of(st.sampled_from(["/u/1", "/j", "/p/x", "/b", "/g/a/b", "/", "/health",
                                   "/__mockd/ready", "/ready"]),
                  st.text(min_size=0, max_size=40).map(lambda text: "/" + text))
header_names = st.sampled_from([b"x-thing", b"x-tag", b"content-type", b"content-length",
                                b"x-mockd-seed", b"host", b"authorization"])
header_values = st.binary(max_size=30)
bodies = st.one_of(st.binary(max_size=300),
                   st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text(max_size=10),
                                lambda children: st.lists(children, max_size=3)
                                | st.dictionaries(st.text(max_size=5), children, max_size=3),
                                max_leaves=10).map(lambda value: orjson.dumps({"user": value})))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(method=methods, path=paths, query=st.binary(max_size=40),
       headers=st.lists(st.tuples(header_names, header_values), max_size=5), body=bodies)
def test_app_never_answers_500_for_any_client_input(method, path, query, headers, body):
    status, _, _ = asyncio.run(call(method, path, query, headers, body))
    assert status != 500 and 100 <= status <= 599
