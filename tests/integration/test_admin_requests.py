"""Request log, verification and the live request stream after real data-plane traffic
(SPEC "Request log", "Verification", "Request stream (admin)"; behavior notes §1)."""
from __future__ import annotations

import queue
import re
import threading
import time

import httpx
import pytest
from httpx_sse import connect_sse

from tests.helpers import http_mock, make_config, start_server

pytestmark = pytest.mark.integration

CONFIG = make_config(http_mock("users", "GET", "/users/{id}", body="user"),
                     http_mock("orders", "POST", "/orders", status=201, body="ok"))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("admin-requests"), CONFIG,
                      extra_args=["--max-log-entries", "50"]) as process:
        yield process


@pytest.fixture
def admin(server):
    with server.admin_client() as client:
        client.delete("/requests")
        yield client


def test_entries_are_logged_newest_first_with_both_spellings(admin, data):
    data.get("/users/1", headers={"X-Trace": "abc"})
    data.post("/orders", content=b'{"n": 1}', params={"src": "test"})
    data.get("/missing")
    log = admin.get("/requests").json()
    assert log["total"] == log["count"] == 3
    missing, order, user = log["requests"]
    assert [missing["path"], order["path"], user["path"]] == ["/missing", "/orders", "/users/1"]
    assert user["matchedMockID"] == user["matchedMockId"] == "users"
    assert order["responseStatus"] == order["statusCode"] == 201
    assert order["body"] == '{"n": 1}' and order["queryString"] == "src=test"
    assert user["headers"]["X-Trace"] == ["abc"]
    assert "matchedMockID" not in missing and missing["statusCode"] == 404
    assert re.fullmatch(r"req-[0-9a-z]+", user["id"])
    assert isinstance(user["durationMs"], float) and user["timestamp"].endswith("Z")
    assert admin.get(f"/requests/{user['id']}").json() == user


def test_filters(admin, data):
    for path in ("/users/1", "/users/2"):
        data.get(path)
    data.post("/orders")
    data.get("/nothing")
    def paths(**params):
        return [entry["path"] for entry in admin.get("/requests", params=params).json()["requests"]]
    assert paths(method="POST") == ["/orders"]
    assert paths(path="/users") == ["/users/2", "/users/1"]
    assert paths(matched="users") == ["/users/2", "/users/1"]
    assert paths(status=404) == ["/nothing"]
    assert paths(unmatchedOnly="true") == ["/nothing"]
    assert paths(limit=1, offset=1) == ["/orders"]
    assert admin.get("/requests", params={"limit": 1}).json()["total"] == 4
    assert admin.get("/requests", params={"limit": -1}).status_code == 400


def test_detail_of_a_missing_entry_is_404(admin):
    answer = admin.get("/requests/req-zzzzzz")
    assert answer.status_code == 404
    assert answer.json() == {"error": "not_found", "message": "Resource not found"}


def test_clearing_the_log(admin, data):
    data.get("/users/9")
    cleared = admin.delete("/requests").json()
    assert cleared == {"message": "Request logs cleared", "cleared": 1}
    assert admin.get("/requests").json()["total"] == 0


def test_log_is_bounded_by_max_log_entries(admin, data):
    for index in range(60):
        data.get(f"/users/{index}")
    log = admin.get("/requests", params={"limit": 1000}).json()
    assert log["total"] == 50 and log["requests"][0]["path"] == "/users/59"


def test_verification_counts_real_traffic(admin, data):
    for _ in range(3):
        data.get("/users/7")
    status = admin.get("/mocks/users/verify").json()
    assert status["mockId"] == "users" and status["callCount"] == 3
    assert status["firstCalledAt"] <= status["lastCalledAt"]
    assert admin.get("/mocks/orders/verify").json() == {"mockId": "orders", "callCount": 0}

    passed = admin.post("/mocks/users/verify", json={"exactly": 3}).json()
    assert passed["success"] is passed["passed"] is True and passed["actual"] == 3
    failed = admin.post("/mocks/users/verify", json={"atLeast": 5}).json()
    assert failed["passed"] is False
    assert failed["message"] == "Verification failed: expected at least 5 call(s) but got 3"
    assert failed["expected"] == "at least 5 time(s)"
    missing = admin.post("/mocks/users/verify", json={})
    assert missing.status_code == 400 and missing.json()["error"] == "missing_criteria"

    invocations = admin.get("/mocks/users/invocations", params={"limit": 2}).json()
    assert invocations["total"] == 3 and invocations["count"] == 2
    assert invocations["invocations"][0]["path"] == "/users/7"
    assert invocations["invocations"][0]["method"] == "GET"

    reset = admin.delete("/mocks/users/invocations").json()
    assert reset == {"message": "Invocations cleared", "mockId": "users", "cleared": 3}
    assert admin.get("/mocks/users/verify").json()["callCount"] == 0


def test_reset_all_verification(admin, data):
    data.get("/users/1")
    data.post("/orders")
    assert admin.delete("/verify").json() == {"message": "All verification data cleared",
                                              "cleared": 2}
    assert admin.get("/mocks/orders/verify").json()["callCount"] == 0


def test_verification_of_an_unknown_mock_is_404(admin):
    for answer in (admin.get("/mocks/nope/verify"), admin.post("/mocks/nope/verify",
                                                              json={"atLeast": 1}),
                   admin.get("/mocks/nope/invocations"), admin.delete("/mocks/nope/invocations")):
        assert answer.status_code == 404
        assert answer.json() == {"error": "not_found", "message": "Mock not found"}


def test_request_stream_pushes_each_new_entry(server, admin, data):
    events: queue.Queue = queue.Queue()
    headers: dict = {}

    def listen() -> None:
        with httpx.Client(base_url=server.admin, trust_env=False,
                          timeout=httpx.Timeout(10, read=10)) as client:
            with connect_sse(client, "GET", "/requests/stream") as source:
                headers.update(source.response.headers)
                for event in source.iter_sse():
                    events.put((time.monotonic(), event))
                    if event.event == "request" and "/users/stream-2" in event.data:
                        return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    _, connected = events.get(timeout=10)
    assert connected.event == "connected"
    assert connected.json() == {"message": "Connected to request stream"}
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["cache-control"] == "no-cache"
    assert headers["connection"] == "keep-alive"
    delays = []
    for index in (1, 2):
        sent = time.monotonic()
        data.get(f"/users/stream-{index}")
        arrived, event = events.get(timeout=10)
        delays.append(arrived - sent)
        assert event.event == "request"
        entry = event.json()
        assert entry["path"] == f"/users/stream-{index}"
        assert entry["matchedMockID"] == "users" and entry["responseStatus"] == 200
    listener.join(timeout=10)
    # pushed as it happens, not picked up by a poll every 0.5 s
    assert max(delays) < 0.4, delays
