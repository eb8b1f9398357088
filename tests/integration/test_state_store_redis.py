"""Engine replicas sharing tables on Redis (issue #32 item 2 and its "Bad input").

One ``redis-server`` and two ``mockd engine`` replicas of the bank example
(``examples/bank-transfer.yaml`` plus a static mock) on the same namespace, started side by
side. A write on one is read on the other, a reset on one (its engine-control port, the way
an admin resets it) restores seed data for both, concurrent custom operations from both lose
no update, a Redis that dies answers 503 ``state_store_unavailable`` on table routes only and
recovers by itself, ``sequence()`` counts across both, and a start with an unreachable or
malformed store exits 2 with one line.
Namespaces and ``serverConfig.stateStore`` are covered at store level
(``tests/unit/test_tables_state_store.py``).
"""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest
import yaml

from tests.helpers import (MOCKD, MockdProcess, free_port, isolated_env, run_mockd,
                           write_config)
from tests.redis_server import redis_server  # noqa: F401 - module fixture

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bank-transfer.yaml"
SEED_BALANCES = {"acc_alice": 10000, "acc_bob": 2500, "acc_carol": 5000}


def bank_config() -> dict:
    config = yaml.safe_load(EXAMPLE.read_text())
    config["mocks"].append({"id": "static", "type": "http", "http": {
        "matcher": {"method": "GET", "path": "/static"},
        "response": {"statusCode": 200, "body": "still here"}}})
    config["mocks"].append({"id": "numbered", "type": "http", "http": {
        "matcher": {"method": "GET", "path": "/next"},
        "response": {"statusCode": 200, "body": "{{sequence('ticket', 100)}}"}}})
    return config


#: Engine token of the replicas' engine-control ports.
TOKEN = "replica-token"


@pytest.fixture(scope="module")
def replicas(tmp_path_factory, redis_server):  # noqa: F811
    """Two ``mockd engine`` processes on one Redis namespace, started at the same time;
    each has ``control`` (its engine-control URL)."""
    processes = []
    try:
        for name in ("one", "two"):
            folder = tmp_path_factory.mktemp(name)
            config = write_config(folder / "bank.yaml", bank_config())
            control_port = free_port()
            process = MockdProcess(
                [MOCKD, "engine", "-c", str(config), "--port", "0", "--print-url",
                 "--engine-port", str(control_port), "--engine-token", TOKEN,
                 "--state-store", redis_server.url, "--state-namespace", "bank"],
                isolated_env(folder), folder, folder / "engine.log")
            process.control = f"http://127.0.0.1:{control_port}"
            processes.append(process)
        for process in processes:
            process.base = process.wait_url_line()
            process.wait_healthy(process.base + "/health")
        yield processes
    finally:
        for process in processes:
            process.stop()


def reset_through(process) -> httpx.Response:
    """``POST /reset`` on a replica's engine-control port (what ``POST /state/reset`` of an
    admin sends its engine)."""
    return httpx.post(process.control + "/reset", headers={"X-Engine-Token": TOKEN}, json={},
                      timeout=10, trust_env=False)


@pytest.fixture(autouse=True)
def fresh_state(replicas):
    assert reset_through(replicas[0]).status_code == 200
    yield


def balances(client: httpx.Client) -> dict[str, int]:
    return {account["id"]: account["balance"]
            for account in client.get("/accounts").json()["data"]}


def test_a_write_on_one_replica_is_read_on_the_other(replicas):
    full, engine = replicas
    with full.client() as one, engine.client() as other:
        made = one.post("/transfers", json={"from": "acc_alice", "to": "acc_bob",
                                            "amount": 500, "memo": "rent"})
        assert made.status_code == 201
        assert balances(other) == {"acc_alice": 9500, "acc_bob": 3000, "acc_carol": 5000}
        ledger = other.get("/transfers").json()["data"]
        assert [(entry["id"], entry["memo"]) for entry in ledger] == [(made.json()["id"],
                                                                        "rent")]
        assert other.post("/accounts/acc_carol/deposits", json={"amount": 7}).json() == {
            "account": "acc_carol", "balance": 5007}
        assert one.get("/accounts/acc_carol").json()["balance"] == 5007
    state = httpx.get(full.control + "/state", headers={"X-Engine-Token": TOKEN},
                      trust_env=False).json()
    assert state["totalItems"] == 4  # three accounts and one transfer, read from Redis


def test_a_reset_on_one_replica_restores_seed_data_for_both(replicas):
    full, engine = replicas
    with full.client() as one, engine.client() as other:
        assert other.post("/transfers", json={"from": "acc_bob", "to": "acc_alice",
                                              "amount": 100}).status_code == 201
        assert reset_through(full).json() == {"status": "reset", "tables": 2}
        assert balances(other) == SEED_BALANCES == balances(one)
        assert other.get("/transfers").json()["data"] == []


def test_concurrent_operations_from_both_replicas_lose_no_update(replicas):
    """2 x 50 concurrent deposits of 1 cent (one engine each) and 2 x 30 concurrent atomic
    transfers: every deposit counts, and no transfer loses or creates money."""
    urls = [process.base for process in replicas]

    async def fire() -> tuple[list[httpx.Response], list[httpx.Response]]:
        limits = httpx.Limits(max_connections=25)
        clients = [httpx.AsyncClient(base_url=url, trust_env=False, timeout=30, limits=limits)
                   for url in urls]
        try:
            deposits = [client.post("/accounts/acc_carol/deposits", json={"amount": 1})
                        for client in clients for _ in range(50)]
            transfers = [client.post("/transfers", json={
                "from": source, "to": "acc_bob" if source == "acc_alice" else "acc_alice",
                "amount": 300 + index}) for client in clients
                for index, source in enumerate(["acc_alice", "acc_bob"] * 15)]
            answers = await asyncio.gather(*deposits, *transfers)
            return answers[:100], answers[100:]
        finally:
            for client in clients:
                await client.aclose()

    deposits, transfers = asyncio.run(fire())
    assert {answer.status_code for answer in deposits} == {200}
    assert set(answer.status_code for answer in transfers) <= {201, 422}
    with replicas[1].client() as data:
        final = balances(data)
        ledger = data.get("/transfers", params={"limit": 1000}).json()["data"]
    assert final["acc_carol"] == SEED_BALANCES["acc_carol"] + 100
    assert final["acc_alice"] + final["acc_bob"] == 12500 and min(final.values()) >= 0
    assert len(ledger) == sum(answer.status_code == 201 for answer in transfers)
    for account in ("acc_alice", "acc_bob"):
        received = sum(entry["amount"] for entry in ledger if entry["to"] == account)
        sent = sum(entry["amount"] for entry in ledger if entry["from"] == account)
        assert final[account] == SEED_BALANCES[account] + received - sent


def test_sequence_counters_count_across_replicas(replicas):
    clients = [process.client() for process in replicas]
    try:
        numbers = [int(clients[index % 2].get("/next").text) for index in range(6)]
    finally:
        for client in clients:
            client.close()
    assert numbers == list(range(numbers[0], numbers[0] + 6))


def test_redis_lost_then_back(replicas, redis_server):  # noqa: F811
    """Table routes answer 503 while Redis is down (static mocks keep serving), and serve
    again, seeded, once it is back on the same port; nothing is half-written."""
    full, engine = replicas
    with engine.client() as data:
        assert data.post("/accounts/acc_bob/deposits", json={"amount": 5}).status_code == 200
        redis_server.kill()
        try:
            for process in replicas:
                with process.client() as client:
                    down = client.get("/accounts")
                    assert down.status_code == 503
                    body = down.json()
                    assert body["error"] == "state_store_unavailable"
                    assert redis_server.url in body["message"]
                    assert client.post("/transfers", json={
                        "from": "acc_alice", "to": "acc_bob", "amount": 1}).status_code == 503
                    assert client.get("/static").text == "still here"
            answer = httpx.get(full.control + "/state/resources/accounts/items",
                               headers={"X-Engine-Token": TOKEN}, trust_env=False)
            assert answer.status_code == 503
            assert answer.json()["error"] == "state_store_unavailable"
        finally:
            redis_server.start()
        deadline = time.monotonic() + 10
        while (answer := data.get("/accounts")).status_code != 200 \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        # The restarted Redis kept nothing (no persistence): the tables start from seed data.
        assert answer.status_code == 200 and balances(data) == SEED_BALANCES
        with full.client() as other:
            assert other.post("/transfers", json={"from": "acc_alice", "to": "acc_bob",
                                                  "amount": 1}).status_code == 201
        assert balances(data)["acc_bob"] == SEED_BALANCES["acc_bob"] + 1


def test_start_with_an_unusable_state_store_exits_2_with_one_line(tmp_path, redis_server):  # noqa: F811
    config = tmp_path / "bank.yaml"
    config.write_text(yaml.safe_dump(bank_config()))
    closed = redis_server.url.replace(str(redis_server.port), "1")  # nothing listens on 1
    secret = closed.replace("redis://", "redis://user:hunter2@")
    result = run_mockd(["engine", "-c", str(config), "--port", "0", "--state-store", secret],
                       tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "cannot reach the state store at redis://user:***@127.0.0.1:1/0 (ConnectionError)"]
    assert "hunter2" not in result.stderr + result.stdout
    result = run_mockd(["engine", "-c", str(config), "--port", "0",
                        "--state-store", "http://127.0.0.1/0"], tmp_path)
    assert result.returncode == 2 and "'--state-store'" in result.stderr
    assert "Traceback" not in result.stderr
