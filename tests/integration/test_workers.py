"""``--workers N``: N engine processes on one mock-server port (issue 32 item 1).

One ``mockd start --workers 2`` serves the module: requests on fresh connections land on
both workers (a merged request-log entry of the child carries ``@worker-1`` in its id), a
mock added through the admin is served by both, and the request log, verification counts,
``/status`` and ``GET /engines`` merge them. ``mockd engine --workers 2`` runs show that a
stateful config without a shared state store is refused (exit 2, naming
``--state-store``), that a table on Redis is shared by both workers, and that no worker
outlives its parent (SIGKILL of that engine; Ctrl-C stops the module's server last).
"""
from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import time
from pathlib import Path

import httpx
import pytest

from mockd_project.workers import RESTART_LIMIT, Child, RestartPolicy, Supervisor, refusal
from mocks.control.engines import EngineSet
from mocks.loader import validate_config
from tests.helpers import (free_port, http_mock, make_config, run_mockd, start_engine,
                           start_server, write_config)
from tests.redis_server import start_redis

#: Requests sent on fresh connections; the kernel spreads them over both listeners, so all
#: of them landing on one worker has odds of 2 ** -23.
SPREAD = 24


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    config = make_config(http_mock("hello", "GET", "/hello", body="hi"))
    with start_server(tmp_path_factory.mktemp("workers"), config,
                      extra_args=["--workers", "2"]) as process:
        yield process


def fresh_gets(base: str, path: str, count: int = SPREAD) -> list[int]:
    """Statuses of ``count`` GETs, each on a new connection (http.client: no client set-up
    cost per connection)."""
    port = int(base.rsplit(":", 1)[1])
    statuses = []
    for _ in range(count):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10.0)
        try:
            connection.request("GET", path, headers={"Connection": "close"})
            answer = connection.getresponse()
            answer.read()
            statuses.append(answer.status)
        finally:
            connection.close()
    return statuses


def engine_of(entry_id: str) -> str:
    return entry_id.partition("@")[2] or "local"


def test_requests_land_on_both_workers_and_the_log_merges(server, admin):
    assert admin.delete("/requests").status_code == 200
    assert fresh_gets(server.base, "/hello") == [200] * SPREAD
    log = admin.get("/requests", params={"limit": 100}).json()
    assert log["total"] == SPREAD and log["count"] == SPREAD
    engines = {engine_of(entry["id"]) for entry in log["requests"]}
    assert engines == {"local", "worker-1"}
    stamps = [entry["timestamp"] for entry in log["requests"]]
    assert stamps == sorted(stamps, reverse=True)  # newest first across workers
    remote = next(entry for entry in log["requests"] if "@" in entry["id"])
    assert admin.get(f"/requests/{remote['id']}").json()["path"] == "/hello"
    assert admin.get("/status").json()["requestCount"] >= SPREAD
    verified = admin.get("/mocks/hello/verify").json()
    assert verified["callCount"] == SPREAD
    assert admin.post("/mocks/hello/verify", json={"exactly": SPREAD}).json()["passed"]


def test_a_mock_added_through_the_admin_is_served_by_both(server, admin):
    created = admin.post("/mocks", json={"id": "added", "type": "http", "http": {
        "matcher": {"method": "GET", "path": "/added"},
        "response": {"statusCode": 200, "body": "new"}}})
    assert created.status_code == 201, created.text
    assert admin.delete("/mocks/added/invocations").status_code == 200
    assert fresh_gets(server.base, "/added") == [200] * SPREAD
    calls = admin.get("/mocks/added/invocations", params={"limit": 100}).json()
    assert calls["total"] == SPREAD
    assert {engine_of(call["id"]) for call in calls["invocations"]} == {"local", "worker-1"}
    listed = admin.get("/engines").json()
    assert [row["id"] for row in listed["engines"]] == ["local", "worker-1"]
    assert all(row["healthy"] and row["configVersion"] == listed["configVersion"]
               for row in listed["engines"])
    metrics = admin.get("/metrics", params={"name[]": "mockd_match_hits_total"}).text
    assert f'mockd_match_hits_total{{mock_id="added"}} {SPREAD}.0' in metrics


def test_only_worker_0_serves_the_port_of_an_mqtt_mock(server, admin):
    port = free_port()
    created = admin.post("/mocks", json={"id": "broker", "type": "mqtt",
                                         "mqtt": {"port": port}})
    assert created.status_code == 201, created.text
    deadline = time.monotonic() + 20
    while not any(row["port"] == port and row["running"]
                  for row in admin.get("/mqtt").json()["brokers"]):
        assert time.monotonic() < deadline, "the broker of worker 0 never ran"
        time.sleep(0.05)
    # One more push: worker 1 has reconciled its listeners for the broker by then.
    assert admin.post("/mocks", json=http_mock("after-broker", "GET", "/after")) \
        .status_code == 201
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    log = server.log()
    assert "failed to start" not in log and "already in use" not in log, log
    for mock_id in ("broker", "after-broker"):
        assert admin.delete(f"/mocks/{mock_id}").status_code == 204


def test_a_table_without_a_shared_store_is_refused(server, admin, tmp_path):
    answer = admin.post("/state/resources", json={"name": "users"})
    assert answer.status_code == 400
    assert "--state-store redis://" in answer.json()["message"]
    config = make_config(http_mock("list", "GET", "/api/users"), tables=[{"name": "users"}],
                         extend=[{"mock": "list", "table": "users", "action": "list"}])
    done = run_mockd(["engine", "-c", str(write_config(tmp_path / "t.yaml", config)),
                      "--port", "0", "--workers", "2"], tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--state-store redis://" in lines[0] and "tables" in lines[0]


def test_the_refusal_names_each_kind_of_memory_state():
    sequence = validate_config(make_config(http_mock("s", "GET", "/s",
                                                     body="{{sequence('n')}}")))
    assert "sequence() templates" in refusal(2, sequence, None)
    assert refusal(1, sequence, None) is None
    assert refusal(2, sequence, "redis://127.0.0.1:6379/0") is None
    plain = validate_config(make_config(http_mock("p", "GET", "/p")))
    assert refusal(4, plain, None) is None


def test_a_worker_that_keeps_dying_stays_down_and_engines_says_why():
    policy = RestartPolicy()
    assert [policy.delay(at, at - 1) for at in (0, 1, 2, 3)] == [0.5, 1, 2, 4]
    assert policy.delay(4, 3.5) is None  # the fifth death within a minute
    spaced = RestartPolicy()
    assert [spaced.delay(at, at - 20) for at in range(0, 200, 25)][-3:] == [10, 10, 10]
    assert spaced.delay(500, 400) == 0.5  # served a minute first: a new row

    class Dead:
        returncode = -9

        def poll(self):
            return self.returncode

    engines = EngineSet()
    record, _ = engines.add("http://127.0.0.1:9", "t", worker=1)
    supervisor = Supervisor("t", engines=engines)
    child = Child(1, Dead(), "http://127.0.0.1:9")
    due: dict[int, float] = {}
    supervisor._look_after(child, due)
    assert due and record.document()["status"] == "unhealthy"
    assert "restarting in 0.5 s" in record.document()["lastError"]
    child.policy.deaths.extend([time.monotonic()] * (RESTART_LIMIT - 1))
    supervisor._look_after(child, {})
    row = record.document()
    assert row["status"] == "stopped" and not row["healthy"]
    assert f"died {RESTART_LIMIT} times within 60 s" in row["lastError"]
    assert "exit status -9" in row["lastError"]


def _children(pid: int) -> list[int]:
    """The child processes of ``pid``, whichever of its threads started them."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def _gone(pids: list[int], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                with open(f"/proc/{pid}/stat") as stat:
                    if stat.read().split(") ", 1)[1].startswith("Z"):
                        continue  # a zombie is dead; only its parent has not reaped it
                alive.append(pid)
            except (ProcessLookupError, FileNotFoundError):
                pass
        if not alive:
            return True
        time.sleep(0.05)
    return False


def test_two_workers_share_a_table_on_redis_and_die_with_their_parent(tmp_path):
    config = make_config(http_mock("list", "GET", "/api/users"),
                         http_mock("create", "POST", "/api/users", status=201),
                         tables=[{"name": "users", "seedData": [{"id": "u1", "name": "Ada"}]}],
                         extend=[{"mock": "list", "table": "users", "action": "list"},
                                 {"mock": "create", "table": "users", "action": "create"}])
    (tmp_path / "redis").mkdir()
    with start_redis(tmp_path / "redis") as redis:
        control_port = free_port()
        with start_engine(tmp_path, config, extra_args=[
                "--workers", "2", "--state-store", redis.url, "--state-namespace", "workers",
                "--engine-port", str(control_port), "--engine-token", "t"]) as engine:
            with engine.client() as client:
                created = client.post("/api/users", json={"name": "Bob"})
                assert created.status_code == 201, created.text
            port = int(engine.base.rsplit(":", 1)[1])
            counts = set()
            for _ in range(SPREAD):  # fresh connections: both workers answer some
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10.0)
                connection.request("GET", "/api/users", headers={"Connection": "close"})
                counts.add(len(json.loads(connection.getresponse().read())["data"]))
                connection.close()
            assert counts == {2}
            # Both workers answered: the parent's own log holds some of the requests only.
            with httpx.Client(trust_env=False, timeout=10.0) as control:
                own = control.get(f"http://127.0.0.1:{control_port}/requests",
                                  params={"limit": 100}, headers={"X-Engine-Token": "t"})
            assert 0 < own.json()["total"] <= SPREAD
            # No orphan: the worker ends with its parent, even a killed one.
            children = _children(engine.proc.pid)
            assert len(children) == 1
            engine.proc.send_signal(signal.SIGKILL)
            assert _gone(children), f"worker {children} still runs after its parent was killed"


def test_a_killed_worker_comes_back_and_serves_the_latest_mock(server, admin):
    [killed] = _children(server.proc.pid)
    os.kill(killed, signal.SIGKILL)
    created = admin.post("/mocks", json=http_mock("after-restart", "GET", "/after-restart",
                                                  body="back"))
    assert created.status_code == 201, created.text
    deadline = time.monotonic() + 30
    while True:
        listed = admin.get("/engines").json()
        row = listed["engines"][1]
        if row["healthy"] and row["configVersion"] == listed["configVersion"]:
            break
        assert time.monotonic() < deadline, f"worker 1 did not come back: {row}"
        time.sleep(0.05)
    assert row["restarts"] == 1 and row["status"] == "healthy"
    assert _children(server.proc.pid) not in ([], [killed])
    assert fresh_gets(server.base, "/after-restart") == [200] * SPREAD
    calls = admin.get("/mocks/after-restart/invocations", params={"limit": 100}).json()
    assert {engine_of(call["id"]) for call in calls["invocations"]} == {"local", "worker-1"}


def test_ctrl_c_stops_every_worker(server):
    """Last in the module: it stops the module's server (Ctrl-C sends SIGINT)."""
    children = _children(server.proc.pid)
    assert len(children) == 1
    server.proc.send_signal(signal.SIGINT)
    assert server.proc.wait(timeout=20) == 0
    assert _gone(children), f"worker {children} still runs after Ctrl-C"
