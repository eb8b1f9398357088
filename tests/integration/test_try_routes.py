"""The admin routes of the dashboard's "Try it" area, against ``mockd start``:
``GET /grpc/{id}/describe`` (services, methods and message fields of a gRPC mock) and
``POST /grpc/{id}/call`` (a call made with grpcio on the mock's port, answered as NDJSON:
each reply as it arrives, then the status), for all four call kinds, with their 400/404s."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import orjson
import pytest

pytest.importorskip("grpc")

from tests.helpers import free_port, start_server  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grpc"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("try-routes")
    shutil.copy(FIXTURES / "users.proto", folder / "users.proto")
    config = {"version": "1.0", "mocks": [
        {"id": "users", "type": "grpc", "grpc": {
            "port": free_port(), "protoFile": "users.proto",
            "services": {"demo.v1.Users": {"methods": {
                "GetUser": {"response": {"id": "{{request.id}}", "name": "User {{request.id}}"},
                            "variants": [{"match": {"request": {"id": "404"}},
                                          "error": {"code": "NOT_FOUND",
                                                    "message": "no user 404"}}]},
                "ListUsers": {"responses": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
                              "streamDelay": "300ms"},
                "UploadUsers": {"response": {"count": "{{request.count}}"}},
                "Chat": {"response": {"text": "echo {{request.text}}", "user": "bot"}},
            }}}}},
        {"id": "plain", "type": "http", "http": {"matcher": {"path": "/x"},
                                                 "response": {"body": "x"}}},
    ]}
    with start_server(folder, config) as process:
        yield process


def lines(answer) -> list[dict]:
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/x-ndjson")
    return [orjson.loads(line) for line in answer.text.splitlines() if line]


def test_describe_lists_methods_with_their_fields(admin):
    answer = admin.get("/grpc/users/describe")
    assert answer.status_code == 200, answer.text
    described = answer.json()
    assert described["running"] is True
    [service] = described["services"]
    assert service["name"] == "demo.v1.Users"
    methods = {method["name"]: method for method in service["methods"]}
    assert methods["ListUsers"]["streamType"] == "server_stream"
    assert methods["Chat"]["streamType"] == "bidi"
    assert methods["GetUser"]["path"] == "/demo.v1.Users/GetUser"
    fields = {field["name"]: field for field in methods["GetUser"]["input"]["fields"]}
    assert fields["id"]["type"] == "string"
    output = {field["name"]: field for field in methods["GetUser"]["output"]["fields"]}
    assert {"id", "name", "email"} <= set(output)


def test_unary_call_answers_the_reply_and_ok(admin):
    result = lines(admin.post("/grpc/users/call", json={
        "method": "/demo.v1.Users/GetUser", "message": {"id": "7"}}))
    assert result[0]["message"]["name"] == "User 7"
    assert result[-1]["status"]["name"] == "OK"


def test_error_status_is_the_last_line(admin):
    result = lines(admin.post("/grpc/users/call", json={"method": "GetUser",
                                                         "message": {"id": "404"}}))
    assert result == [result[-1]]
    assert result[-1]["status"] == {"code": 5, "name": "NOT_FOUND", "message": "no user 404"}


def test_server_stream_lines_arrive_as_the_replies_do(admin):
    started = time.monotonic()
    arrivals = []
    with admin.stream("POST", "/grpc/users/call",
                      json={"method": "demo.v1.Users/ListUsers", "message": {}}) as answer:
        assert answer.status_code == 200
        for line in answer.iter_lines():
            if line:
                arrivals.append((time.monotonic() - started, orjson.loads(line)))
    assert [item["message"]["id"] for _, item in arrivals[:3]] == ["a", "b", "c"]
    assert arrivals[-1][1]["status"]["name"] == "OK"
    # 300 ms between replies: the first line came well before the last (wide tolerance)
    assert arrivals[2][0] - arrivals[0][0] > 0.3


def test_client_and_bidi_streams_send_every_message(admin):
    upload = lines(admin.post("/grpc/users/call", json={
        "method": "UploadUsers", "messages": [{"id": "1"}, {"id": "2"}, {"id": "3"}]}))
    assert upload[0]["message"]["count"] == 3
    chat = lines(admin.post("/grpc/users/call", json={
        "method": "Chat", "messages": [{"text": "hi"}, {"text": "there"}]}))
    assert [item["message"]["text"] for item in chat[:-1]] == ["echo hi", "echo there"]
    assert chat[-1]["status"]["name"] == "OK"


def test_a_message_that_does_not_fit_ends_with_invalid_argument(admin):
    result = lines(admin.post("/grpc/users/call", json={"method": "GetUser",
                                                         "message": {"nope": 1}}))
    assert result[-1]["status"]["name"] == "INVALID_ARGUMENT"
    assert "nope" in result[-1]["status"]["message"]


@pytest.mark.parametrize("body, key", [
    ([], "body"),
    ({}, "method"),
    ({"method": "Missing"}, "method"),
    ({"method": "GetUser", "messages": [{}, {}]}, "messages"),
    ({"method": "Chat", "messages": []}, "messages"),
    ({"method": "GetUser", "metadata": {"x": 1}}, "metadata"),
    ({"method": "GetUser", "timeoutMs": 0}, "timeoutMs"),
])
def test_bad_call_bodies_are_400_naming_the_key(admin, body, key):
    answer = admin.post("/grpc/users/call", json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "validation_error"
    assert answer.json()["message"].startswith(key)


def test_unknown_or_other_mocks_are_404_or_400(admin):
    assert admin.get("/grpc/nope/describe").status_code == 404
    assert admin.post("/grpc/nope/call", json={"method": "GetUser"}).status_code == 404
    other = admin.get("/grpc/plain/describe")
    assert other.status_code == 400 and "not grpc" in other.json()["message"]
