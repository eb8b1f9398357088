"""``mockd.MockServer`` driven by real clients (httpx, requests) on loopback: mocks added and
removed, verification failures with near misses, the request log, tables, chaos, reset
(and its cost), the async form, start-up errors, and no thread or port left after stop."""
from __future__ import annotations

import asyncio
import socket
import statistics
import subprocess
import sys
import threading
import time

import httpx
import pytest

from mockd import (LoggedRequest, MockConfigError, MockServer, ServerStartError,
                   TableOperationError, VerificationError, http)

CONFIG = {
    "tables": [{"name": "users", "idStrategy": "sequence",
                "seedData": [{"id": "1", "name": "Seed"}]}],
    "mocks": [
        http("GET", "/users/{id}", json={"id": "{{request.pathParam.id}}"}, id="get-user",
             name="One user"),
        http("POST", "/orders", status=201, json={"ok": True}, id="create-order",
             match_headers={"X-Tenant": "acme"}, body_contains="sku"),
    ],
}


@pytest.fixture(scope="module")
def server():
    with MockServer(CONFIG) as running:
        yield running


@pytest.fixture
def fresh(server):
    server.reset()
    return server


def test_serves_the_config_and_added_mocks(fresh):
    with fresh.client() as client:
        assert client.get("/users/42").json() == {"id": "42"}
        ids = fresh.add(http("GET", "/ping", body="pong", id="ping"),
                        http("DELETE", "/users/{id}", status=204))
        assert ids[0] == "ping" and ids[1].startswith("http_")
        assert client.get("/ping").text == "pong"
        assert client.delete("/users/1").status_code == 204
        fresh.remove("ping")
        assert client.get("/ping").status_code == 404
    assert [mock["id"] for mock in fresh.mocks()] == ["get-user", "create-order", ids[1]]
    with pytest.raises(KeyError, match="nope"):
        fresh.remove("nope")


def test_bad_mocks_are_refused_naming_the_key(fresh):
    with pytest.raises(MockConfigError) as caught:
        fresh.add(http("GET", "/a"), {"http": {"matcher": {"method": "FETCH"}}})
    assert caught.value.path == "mocks[1].http.matcher.method"
    assert "FETCH" in str(caught.value)
    with pytest.raises(MockConfigError, match="already served"):
        fresh.add(http("GET", "/b", id="get-user"))
    assert len(fresh.mocks()) == 2  # nothing was added


def test_verify_counts_and_explains_near_misses(fresh):
    with fresh.client() as client:
        client.get("/users/1")
        client.post("/orders", content="sku-1", headers={"X-Tenant": "other"})
        client.post("/order", content="sku-1", headers={"X-Tenant": "acme"})
    assert fresh.verify("get-user") == 1
    assert fresh.verify("get-user", times=1) == 1
    assert fresh.verify("get-user", at_least=1, at_most=3) == 1
    with pytest.raises(VerificationError) as caught:
        fresh.verify("create-order", times=1)
    error = caught.value
    assert isinstance(error, AssertionError)
    assert (error.mock_id, error.expected, error.actual) == ("create-order",
                                                            "exactly 1 time(s)", 0)
    text = str(error)
    assert "'create-order' (POST /orders)" in text
    assert "expected exactly 1 call(s) but got 0" in text
    # Newest first: the wrong path, then the wrong header, each with what differed.
    assert [miss.request for miss in error.near_misses] == ["POST /order", "POST /orders"]
    assert "path: mock expected '/orders', request had '/order'" in text
    header_miss = error.near_misses[1]
    assert header_miss.mismatches == [("headers.X-Tenant", "acme", "other")], header_miss
    assert "headers.X-Tenant: mock expected 'acme', request had 'other'" in text
    with pytest.raises(VerificationError, match="at most 0 call"):
        fresh.verify("get-user", at_most=0)
    with pytest.raises(KeyError, match="no mock with id 'ghost'"):
        fresh.verify("ghost")
    with pytest.raises(ValueError, match="times"):
        fresh.verify("get-user", times=-1)


def test_requests_are_typed_and_filtered(fresh):
    with fresh.client() as client:
        client.get("/users/7?full=1", headers={"X-Trace": "t1"})
        client.post("/orders", content="sku", headers={"X-Tenant": "acme"})
        client.get("/missing")
    every = fresh.requests()
    assert [(entry.method, entry.path) for entry in every] == [
        ("GET", "/users/7"), ("POST", "/orders"), ("GET", "/missing")]
    first = every[0]
    assert isinstance(first, LoggedRequest)
    assert (first.query_string, first.status, first.matched_mock_id) == ("full=1", 200,
                                                                         "get-user")
    assert first.header("x-trace") == "t1" and first.matched
    assert every[1].body == "sku"
    assert [entry.path for entry in fresh.requests(matched=False)] == ["/missing"]
    assert [entry.path for entry in fresh.requests(matched="create-order")] == ["/orders"]
    assert [entry.path for entry in fresh.requests(method="get", path="/users/7")] == [
        "/users/7"]
    assert len(fresh.requests(matched=True)) == 2


def test_tables(fresh):
    users = fresh.table("users")
    assert [item["name"] for item in users.items()] == ["Seed"]
    created = users.insert({"name": "Ada"})
    assert created["name"] == "Ada" and users.get(created["id"])["name"] == "Ada"
    assert len(users) == 2 and users.get("999") is None
    users.reset()
    assert [item["name"] for item in users.items()] == ["Seed"]
    assert users.clear() == 1 and users.items() == []
    with pytest.raises(TableOperationError) as caught:
        fresh.table("nope").items()
    assert caught.value.status == 404 and "nope" in str(caught.value)
    assert fresh.tables() == ["users"]


def test_chaos_profiles_configs_and_reset(fresh):
    fresh.chaos({"enabled": True, "errorRate": {"probability": 1.0, "statusCodes": [503]}})
    with fresh.client() as client:
        assert client.get("/users/1").status_code == 503
        fresh.chaos(None)
        assert client.get("/users/1").status_code == 200
        fresh.chaos("offline")
        assert client.get("/users/1").status_code >= 500
        fresh.reset()
        assert client.get("/users/1").status_code == 200
    with pytest.raises(MockConfigError, match="no-such-profile"):
        fresh.chaos("no-such-profile")
    with pytest.raises(MockConfigError, match="probability"):
        fresh.chaos({"enabled": True, "errorRate": {"probability": 7}})


def test_reset_restores_everything_quickly(fresh):
    fresh.add(http("GET", "/extra", body="x", id="extra"))
    fresh.table("users").insert({"name": "Temp"})
    with fresh.client() as client:
        client.get("/extra")
    fresh.reset()
    assert [mock["id"] for mock in fresh.mocks()] == ["get-user", "create-order"]
    assert fresh.requests() == [] and fresh.calls("extra") == 0
    assert [item["name"] for item in fresh.table("users").items()] == ["Seed"]
    with fresh.client() as client:
        assert client.get("/extra").status_code == 404
    timings = []
    for _ in range(30):
        fresh.add(http("GET", "/extra", id="extra"))
        started = time.perf_counter()
        fresh.reset()
        timings.append(time.perf_counter() - started)
    # Well under 5 ms on an idle machine; the bound leaves room for a loaded one.
    assert statistics.median(timings) < 0.015, timings


def test_requests_session_goes_to_the_server(fresh):
    with fresh.requests_session() as session:
        assert session.get("/users/3").json() == {"id": "3"}
        assert session.get(f"{fresh.url}/users/4").json() == {"id": "4"}


def test_async_form_does_not_block_the_loop():
    async def main() -> None:
        phase = "starting"
        ticks = {"starting": 0, "serving": 0, "stopping": 0, "stopped": 0}

        async def tick() -> None:
            while True:
                ticks[phase] += 1
                # sleep(0): ready again at the loop's next turn, so any await of the server
                # that yields to the loop lets it tick (a stop takes ~0.5 ms, less than a
                # 1 ms timer).
                await asyncio.sleep(0)

        # The ticker first runs at main's first await: inside the server's start when that
        # start waits on a thread, only after it when the start blocks the loop.
        ticker = asyncio.create_task(tick())
        server = MockServer(mocks=[http("GET", "/a", body="async")])
        async with server:
            phase = "serving"
            async with server.async_client() as client:
                assert (await client.get("/a")).text == "async"
            phase = "stopping"
        phase = "stopped"
        await asyncio.sleep(0.01)
        ticker.cancel()
        assert ticks["starting"] >= 1, ticks  # the loop ran while the server started
        assert ticks["stopping"] >= 1, ticks  # and while it stopped

    asyncio.run(asyncio.wait_for(main(), 30))


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_stop_leaves_no_thread_or_port_and_is_idempotent():
    before = set(threading.enumerate())
    for _ in range(3):
        server = MockServer(mocks=[http("GET", "/a", body="a")]).start()
        port = server.port
        with httpx.Client() as client:
            assert client.get(f"{server.url}/a").text == "a"
        started = time.perf_counter()
        server.stop()
        assert time.perf_counter() - started < 5
        server.stop()
        assert not server.running
        assert _port_is_free(port)
    deadline = time.monotonic() + 5
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [thread.name for thread in set(threading.enumerate()) - before
                if thread.name.startswith("mockd-server")]


def test_start_errors_propagate_with_the_reason():
    before = set(threading.enumerate())
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        server = MockServer(port=port)
        with pytest.raises(ServerStartError, match=f"127.0.0.1:{port}"):
            server.start()
        assert not server.running
    assert set(threading.enumerate()) - before == set()


def test_config_file_and_fixed_port(tmp_path):
    (tmp_path / "hello.txt").write_text("from a file")
    path = tmp_path / "mockd.yaml"
    path.write_text("mocks:\n  - id: f\n    http:\n      matcher: {path: /f}\n"
                    "      response: {bodyFile: hello.txt}\n")
    with MockServer(path) as server, server.client() as client:
        assert client.get("/f").text == "from a file"


def test_a_running_server_loads_no_django():
    code = ("import sys\nfrom mockd import MockServer, http\n"
            "with MockServer(mocks=[http('GET', '/a', body='a')]) as s:\n"
            "    import httpx; assert httpx.get(s.url + '/a').text == 'a'\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('django', 'ninja', 'channels', 'daphne'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == ""


def test_mocks_added_to_a_config_keep_what_was_left_unset():
    """A bound mock whose response gives only headers answers with its action's status
    (201 on create) whether it comes alone or beside a config: merging the two must not
    turn the response's defaults (statusCode 200) into written values."""
    create = {"id": "books-create", "type": "http", "http": {
        "matcher": {"method": "POST", "path": "/books"},
        "response": {"headers": {"X-Shelf": "a"}},
        "statefulBinding": {"table": "books", "action": "create"}}}
    with MockServer(config={"tables": [{"name": "books"}]}, mocks=[create]) as server:
        created = httpx.post(server.url + "/books", json={"title": "Dune"}, trust_env=False)
    assert created.status_code == 201, created.text
    assert created.headers["X-Shelf"] == "a" and created.json()["title"] == "Dune"
