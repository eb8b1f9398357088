"""Split mode: ``mockd start --engines-only`` and ``mockd engine --join`` replicas (issue 32
item 3).

One admin without an engine of its own and two engines that join it with the admin API key
serve the module: a mock added on the admin is served by both, ``GET /engines`` shows both
healthy at the admin's config version, the request log merges them; an engine that is down
when a change is pushed shows unhealthy with the error, and catches up by version when it
runs again; registration needs the admin key and a valid URL.
"""
from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from tests.helpers import MOCKD, MockdProcess, free_port, isolated_env

API_KEY = "mk_" + "5" * 64
#: Seconds a replica may take to join, take a push or catch up (a loaded machine).
DEADLINE = 30.0


def wait_for(check: Callable[[], Any], what: str, timeout: float = DEADLINE) -> Any:
    """Poll ``check()`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


class Fleet:
    """The module's admin and replicas."""

    def __init__(self, root: Path):
        self.root = root
        self.admin_port = free_port()
        self.engines: dict[str, MockdProcess] = {}
        self.ports: dict[str, tuple[int, int]] = {}
        self.admin = MockdProcess(
            [MOCKD, "start", "--engines-only", "--admin-port", str(self.admin_port),
             "--data-dir", str(root / "data")],
            isolated_env(root, MOCKD_API_KEY=API_KEY), root, root / "admin.log")
        self.admin.admin = f"http://127.0.0.1:{self.admin_port}"

    def start_engine(self, name: str, wait: bool = True) -> MockdProcess:
        """``mockd engine --join`` on the same data and control ports each time; with
        ``wait`` returns once its ``/health`` answers."""
        if name not in self.ports:
            self.ports[name] = (free_port(), free_port())
        data_port, control_port = self.ports[name]
        process = MockdProcess(
            [MOCKD, "engine", "--join", self.admin.admin, "--api-key", API_KEY,
             "--port", str(data_port), "--engine-port", str(control_port),
             "--engine-token", f"token-{name}"],
            isolated_env(self.root), self.root, self.root / f"engine-{name}.log")
        process.base = f"http://127.0.0.1:{data_port}"
        self.engines[name] = process
        if wait:
            process.wait_healthy(process.base + "/health")
        return process

    def url_of(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name][1]}"

    def client(self) -> httpx.Client:
        return self.admin.admin_client(headers={"X-API-Key": API_KEY})

    def rows(self) -> dict[str, dict[str, Any]]:
        """``GET /engines`` rows by engine-control URL."""
        with self.client() as client:
            listed = client.get("/engines").json()
        return {row["url"]: {**row, "top": listed["configVersion"]}
                for row in listed["engines"]}

    def current(self, name: str) -> dict[str, Any] | None:
        """The row of ``name`` when it is healthy at the admin's version, else None."""
        row = self.rows().get(self.url_of(name))
        return row if row and row["healthy"] and row["configVersion"] == row["top"] else None

    def stop(self) -> None:
        processes = [*self.engines.values(), self.admin]
        for process in processes:  # all at once: each takes about a second to stop
            if process.proc.poll() is None:
                process.proc.send_signal(signal.SIGTERM)
        for process in processes:
            process.stop()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    fleet = Fleet(tmp_path_factory.mktemp("split"))
    try:
        for name in ("a", "b"):  # with the admin: they join once it answers
            fleet.start_engine(name, wait=False)
        fleet.admin.wait_healthy(fleet.admin.admin + "/health")
        for name in ("a", "b"):
            wait_for(lambda: fleet.current(name), f"engine {name} joined")
        yield fleet
    finally:
        fleet.stop()


def add_mock(fleet: Fleet, path: str) -> None:
    with fleet.client() as client:
        created = client.post("/mocks", json={"type": "http", "http": {
            "matcher": {"method": "GET", "path": path},
            "response": {"statusCode": 200, "body": path}}})
    assert created.status_code == 201, created.text


def served(process: MockdProcess, path: str) -> bool:
    try:
        with process.client(timeout=2.0) as client:
            return client.get(path).text == path
    except httpx.HTTPError:
        return False


def test_a_mock_added_on_the_admin_is_served_by_both_replicas(fleet):
    add_mock(fleet, "/split/one")
    # The push happens before the admin answers: no waiting.
    assert all(served(fleet.engines[name], "/split/one") for name in ("a", "b"))
    rows = fleet.rows()
    assert {fleet.url_of("a"), fleet.url_of("b")} <= set(rows)
    for name in ("a", "b"):
        row = rows[fleet.url_of(name)]
        assert row["healthy"] and row["status"] == "healthy"
        assert row["configVersion"] == row["top"] and row["lastPushAt"]
    with fleet.client() as client:
        assert client.delete("/requests").status_code == 200
        for name in ("a", "b"):
            with fleet.engines[name].client() as data:
                assert data.get("/split/one").status_code == 200
        log = client.get("/requests").json()
        assert log["total"] == 2
        assert {entry["id"].partition("@")[2] for entry in log["requests"]} == {
            rows[fleet.url_of("a")]["id"], rows[fleet.url_of("b")]["id"]}
        status = client.get("/status").json()
        assert status["mockCount"] >= 1 and status["requestCount"] >= 2
        mock_id = log["requests"][0]["matchedMockId"]
        metrics = client.get("/metrics", params={"name[]": "mockd_match_hits_total"}).text
        # counters outlive DELETE /requests: the two checks above and these two, on two engines
        assert f'mockd_match_hits_total{{mock_id="{mock_id}"}} 4.0' in metrics


def test_a_replica_that_missed_a_push_is_unhealthy_then_catches_up(fleet):
    fleet.engines["b"].stop(signal.SIGKILL)
    add_mock(fleet, "/split/missed")
    row = fleet.rows()[fleet.url_of("b")]
    assert not row["healthy"] and row["status"] == "unhealthy"
    assert row["configVersion"] < row["top"]
    assert fleet.url_of("b").split("//")[1] in row["lastError"] and row["lastErrorAt"]
    assert served(fleet.engines["a"], "/split/missed")
    restarted = fleet.start_engine("b")
    wait_for(lambda: fleet.current("b"), "engine b caught up")
    assert served(restarted, "/split/missed") and served(restarted, "/split/one")
    # the same entry: a replica is known by its engine-control URL
    assert list(fleet.rows()).count(fleet.url_of("b")) == 1


def test_registration_needs_the_admin_key_and_a_valid_url(fleet):
    body = {"url": "http://127.0.0.1:9", "token": "t"}
    with httpx.Client(base_url=fleet.admin.admin, trust_env=False, timeout=10) as anonymous:
        assert anonymous.post("/engines", json=body).status_code == 401
        assert anonymous.get("/engines").status_code == 401
    with fleet.client() as client:
        bad = client.post("/engines", json={"url": "ftp://x", "token": "t"})
        assert bad.status_code == 400 and bad.json()["message"].startswith("url:")
        # A loopback admin calls no engine off loopback without --allow-remote-engines.
        for url in ("http://10.0.0.7:4281", "http://localhost.example.com:1",
                    "file:///etc/passwd"):
            remote = client.post("/engines", json={"url": url, "token": "t"})
            assert remote.status_code == 400 and remote.json()["message"].startswith("url:")
        assert "--allow-remote-engines" in client.post("/engines", json={
            "url": "http://10.0.0.7:4281", "token": "t"}).json()["message"]
        assert client.post("/engines", json={"url": "http://[::1]:1"}).json()["message"] \
            .startswith("token:")
        # A replica nobody runs: registered, push failed, shown unhealthy, then removed.
        ghost = client.post("/engines", json=body)
        assert ghost.status_code == 201 and ghost.json()["healthy"] is False
        assert "token" not in ghost.json() and ghost.json()["lastError"]
        assert client.delete(f"/engines/{ghost.json()['id']}").status_code == 204
        assert client.delete(f"/engines/{ghost.json()['id']}").status_code == 404
        assert client.delete("/engines/local").status_code == 400
        # Routes on one engine's runtime objects need an engine of the admin's own.
        scenarios = client.get("/scenarios")
        assert scenarios.status_code == 503 and scenarios.json()["error"] == "no_engine"


@pytest.mark.parametrize("method, path", [
    ("GET", "/grpc"), ("GET", "/grpc/connections"), ("GET", "/mqtt-connections/stats"),
    ("GET", "/soap-recordings"), ("PUT", "/state/resources/users/items/1")])
def test_routes_on_the_admins_own_engine_answer_503_no_engine(fleet, method, path):
    """gRPC, MQTT, SOAP and table routes reach the admin's own engine: without one they
    answer 503 no_engine like the others, never a 500."""
    with fleet.client() as client:
        answer = client.request(method, path, json={"name": "x"} if method == "PUT" else None)
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"] == "no_engine" and "--engines-only" in \
        answer.json()["message"]
