"""Custom operations through real ``mockd start`` / ``mockd engine`` processes, with httpx:
the bank-transfer example (``examples/bank-transfer.yaml``) over HTTP, concurrent transfers
that never lose money, every entry point (``statefulOperation``, extend binding ``action:
custom``, the admin ``/state/operations…`` routes, the engine-control port, the CLI) and the
CLI validator's report on a broken operation (SPEC "Custom operation", "Errors"; behavior
notes §1 "State (tables) and custom operations", §6, §19)."""
from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import httpx
import pytest
import yaml

from tests.helpers import free_port, make_config, run_mockd, start_engine, start_server

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bank-transfer.yaml"
SEED_BALANCES = {"acc_alice": 10000, "acc_bob": 2500, "acc_carol": 5000}


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("bank"), EXAMPLE.read_text()) as process:
        yield process


@pytest.fixture(scope="module")
def bank_reset(bank):
    """``POST /state/reset`` on :func:`bank` through one admin client kept for the module
    (building an httpx client costs ~45 ms of CPU; the reset itself is a request per test)."""
    with bank.admin_client() as admin:
        yield lambda: admin.post("/state/reset")


@pytest.fixture(autouse=True)
def fresh_state(request):
    if "bank" in request.fixturenames:
        assert request.getfixturevalue("bank_reset")().status_code == 200
    yield


def balances(client: httpx.Client) -> dict[str, int]:
    return {account["id"]: account["balance"]
            for account in client.get("/accounts").json()["data"]}


def transfer(client: httpx.Client, source: str, target: str, amount, **extra) -> httpx.Response:
    return client.post("/transfers", json={"from": source, "to": target, "amount": amount,
                                           **extra})


# ---------------------------------------------------------------------------- the example


def test_transfer_moves_money_and_records_the_ledger_entry(bank):
    with bank.client() as data:
        answer = transfer(data, "acc_alice", "acc_bob", 2500, memo="rent")
        assert answer.status_code == 201  # the mock's own statusCode applies
        result = answer.json()
        assert result["id"].startswith("tr_")
        assert {key: result[key] for key in ("status", "amount", "currency", "fromBalance",
                                             "toBalance")} == {
            "status": "completed", "amount": 2500, "currency": "EUR", "fromBalance": 7500,
            "toBalance": 5000}
        assert balances(data) == {"acc_alice": 7500, "acc_bob": 5000, "acc_carol": 5000}
        entries = data.get("/transfers").json()["data"]
        assert [(entry["id"], entry["from"], entry["to"], entry["amount"], entry["memo"])
                for entry in entries] == [(result["id"], "acc_alice", "acc_bob", 2500, "rent")]


@pytest.mark.parametrize(("source", "target", "amount", "status", "message"), [
    pytest.param("acc_bob", "acc_alice", 2501, 422, "insufficient funds", id="overdraft"),
    pytest.param("acc_alice", "acc_carol", 10, 409, "currency mismatch", id="currency"),
    pytest.param("acc_alice", "acc_alice", 10, 400, "cannot transfer to the same account",
                 id="same account"),
    pytest.param("acc_alice", "acc_bob", 0, 400, "amount must be a positive number of cents",
                 id="zero amount"),
    pytest.param("acc_alice", "acc_bob", None, 400,
                 "amount must be a positive number of cents", id="missing amount"),
    pytest.param("acc_nobody", "acc_bob", 10, 404,
                 'resource "accounts" item "acc_nobody" not found', id="unknown account"),
])
def test_refused_transfers_change_nothing(bank, source, target, amount, status, message):
    with bank.client() as data:
        answer = transfer(data, source, target, amount)
        assert (answer.status_code, answer.json()["error"]) == (status, message)
        assert balances(data) == SEED_BALANCES
        assert data.get("/transfers").json()["data"] == []


def test_a_rejected_ledger_entry_rolls_back_debit_and_credit(bank):
    with bank.client() as data:
        answer = transfer(data, "acc_alice", "acc_bob", 100, memo="x" * 141)
        assert answer.status_code == 400
        assert answer.json()["error"].startswith("steps[8] (create transfers): validation "
                                                 "failed (memo: ")
        assert balances(data) == SEED_BALANCES  # atomic: the debit and the credit are undone
        assert data.get("/transfers").json()["data"] == []


def test_a_type_error_in_the_input_is_an_execution_failure(bank):
    with bank.client() as data:
        answer = transfer(data, "acc_alice", "acc_bob", "ten")
        assert answer.status_code == 400
        assert answer.json()["error"] == ('steps[0] (validate): condition "(input.amount ?? 0) '
                                          '> 0": invalid operation: string > int (compare '
                                          'numbers with numbers, strings with strings)')


def test_deposit_through_an_extend_binding_takes_the_path_parameter(bank):
    with bank.client() as data:
        answer = data.post("/accounts/acc_bob/deposits", json={"amount": 500})
        assert (answer.status_code, answer.json()) == (200, {"account": "acc_bob",
                                                             "balance": 3000})
        assert data.post("/accounts/ghost/deposits", json={"amount": 5}).status_code == 404


def test_statement_lists_every_transfer_of_an_account(bank):
    with bank.client() as data:
        for target, amount, memo in (("acc_bob", 100, "lunch"), ("acc_bob", 300, ""),
                                     ("acc_bob", 200, "books")):
            assert transfer(data, "acc_alice", target, amount, memo=memo).status_code == 201
        assert transfer(data, "acc_bob", "acc_alice", 50).status_code == 201
        statement = data.get("/accounts/acc_alice/statement").json()
        assert statement == {"account": "acc_alice", "owner": "ALICE", "balance": 9450,
                             "sentTotal": 600, "receivedTotal": 50, "transferCount": 4,
                             "largestSent": 300, "counterparties": ["acc_bob"] * 3,
                             "memos": ["lunch", "books"]}


def test_concurrent_transfers_never_lose_or_create_money(bank):
    accounts = ["acc_alice", "acc_bob"]
    rng = random.Random(7)
    plan = [(rng.choice(accounts), rng.randrange(1, 900)) for _ in range(120)]

    async def fire() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=40)
        async with httpx.AsyncClient(base_url=bank.base, trust_env=False, timeout=20,
                                     limits=limits) as client:
            return await asyncio.gather(*(
                client.post("/transfers", json={
                    "from": source, "to": accounts[1 - accounts.index(source)],
                    "amount": amount}) for source, amount in plan))

    answers = asyncio.run(fire())
    statuses = [answer.status_code for answer in answers]
    assert set(statuses) <= {201, 422}, statuses
    with bank.client() as data:
        final = balances(data)
        ledger = data.get("/transfers", params={"limit": 1000}).json()["data"]
    assert final["acc_alice"] + final["acc_bob"] == 12500  # no money lost or created
    assert min(final.values()) >= 0  # never overdrawn
    assert len(ledger) == statuses.count(201)
    # Every balance is its seed plus what the ledger says it received minus what it sent.
    for account in accounts:
        received = sum(entry["amount"] for entry in ledger if entry["to"] == account)
        sent = sum(entry["amount"] for entry in ledger if entry["from"] == account)
        assert final[account] == SEED_BALANCES[account] + received - sent
    # Each successful run saw a consistent account: its reported balance matches the ledger.
    assert all(answer.json()["fromBalance"] >= 0 for answer in answers
               if answer.status_code == 201)


# ---------------------------------------------------------------------------- admin routes


def test_admin_lists_and_shows_operations(bank):
    with bank.admin_client() as admin:
        listed = admin.get("/state/operations").json()
        assert listed == {"count": 3, "operations": [
            {"name": "transfer", "stepCount": 9, "consistency": "atomic"},
            {"name": "deposit", "stepCount": 3, "consistency": "best_effort"},
            {"name": "statement", "stepCount": 3, "consistency": "best_effort"}]}
        document = admin.get("/state/operations/transfer").json()
        assert document["consistency"] == "atomic"
        assert document["steps"][5] == {"type": "validate",
                                        "condition": "source.balance >= input.amount",
                                        "errorMessage": "insufficient funds",
                                        "errorStatus": 422}
        missing = admin.get("/state/operations/ghost")
        assert (missing.status_code, missing.json()) == (
            404, {"error": "not_found", "message": "Custom operation not found: ghost"})


@pytest.mark.parametrize(("body", "status", "payload"), [
    pytest.param({"from": "acc_alice", "to": "acc_bob", "amount": 1}, 200,
                 {"status": "completed", "fromBalance": 9999}, id="success"),
    pytest.param({"from": "acc_bob", "to": "acc_alice", "amount": 99999}, 422,
                 {"error": "validation_error", "message": "insufficient funds"},
                 id="failed validate"),
    pytest.param({"from": "acc_zed", "to": "acc_alice", "amount": 1}, 404,
                 {"error": "not_found",
                  "message": 'resource "accounts" item "acc_zed" not found'},
                 id="missing item of a read"),
    pytest.param({"from": "acc_alice", "to": "acc_bob", "amount": "x"}, 400,
                 {"error": "execution_failed"}, id="anything else"),
])
def test_admin_execute(bank, body, status, payload):
    with bank.admin_client() as admin:
        answer = admin.post("/state/operations/transfer/execute", json=body)
        assert answer.status_code == status
        assert {key: answer.json()[key] for key in payload} == payload


def test_admin_execute_with_an_empty_body_and_an_unknown_operation(bank):
    with bank.admin_client() as admin:
        answer = admin.post("/state/operations/transfer/execute")
        assert (answer.status_code, answer.json()["message"]) == (
            400, "amount must be a positive number of cents")
        ghost = admin.post("/state/operations/ghost/execute", json={})
        assert ghost.status_code == 404


def test_admin_registers_replaces_runs_and_deletes_an_operation(bank):
    operation = {"name": "fee", "steps": [
        {"type": "read", "resource": "accounts", "id": "input.account", "as": "account"},
        {"type": "update", "resource": "accounts", "id": "account.id",
         "set": {"balance": "account.balance - 100"}, "as": "charged"}],
        "response": {"balance": "charged.balance"}}
    with bank.admin_client() as admin, bank.client() as data:
        created = admin.post("/state/operations", json=operation)
        assert (created.status_code, created.json()) == (
            201, {"name": "fee", "message": "Custom operation registered"})
        run = admin.post("/state/operations/fee/execute", json={"account": "acc_carol"})
        assert run.json() == {"balance": 4900}
        operation["response"] = {"charged": "charged.balance", "was": "account.balance"}
        assert admin.post("/state/operations", json=operation).status_code == 201
        assert admin.post("/state/operations/fee/execute",
                          json={"account": "acc_carol"}).json() == {"charged": 4800,
                                                                     "was": 4900}
        assert admin.get("/state/operations").json()["count"] == 4
        assert "fee" in admin.get("/config").text  # exported with the configuration
        deleted = admin.delete("/state/operations/fee")
        assert deleted.json() == {"deleted": True, "name": "fee",
                                  "message": "Custom operation deleted"}
        assert admin.delete("/state/operations/fee").status_code == 404
        assert admin.post("/state/operations/fee/execute", json={}).status_code == 404
        assert data.get("/accounts/acc_carol").json()["balance"] == 4800


@pytest.mark.parametrize(("operation", "message"), [
    pytest.param({"name": "bad", "steps": [{"type": "validate",
                                            "condition": "acount.balance > 0"}]},
                 'steps[0].condition: expression "acount.balance > 0": unknown name "acount" '
                 "(known here: input)", id="unknown name"),
    pytest.param({"name": "bad", "steps": [{"type": "read", "resource": "accounts"}]},
                 "steps[0]: a read step needs id", id="missing field"),
    pytest.param({"name": "bad", "steps": [], "response": {"x": "1 +"}},
                 'response.x: expression "1 +": syntax error: unexpected end of expression',
                 id="syntax error"),
])
def test_admin_refuses_a_broken_operation_naming_the_step(bank, operation, message):
    with bank.admin_client() as admin:
        answer = admin.post("/state/operations", json=operation)
        assert (answer.status_code, answer.json()) == (400, {"error": "validation_error",
                                                             "message": message})
        assert admin.get("/state/operations/bad").status_code == 404


# ---------------------------------------------------------------------------- CLI


BROKEN = """
name: payout
consistency: atomic
steps:
  - {type: read, resource: acounts, id: input.account, as: account}
  - {type: validate, condition: "acount.balance >= input.amount"}
  - {type: update, resource: accounts, id: account.id,
     set: {balance: "account.balance - input.amount +"}}
response:
  status: succeeded
"""


def test_cli_validate_reports_each_broken_step_expression_and_reason(tmp_path):
    (tmp_path / "payout.yaml").write_text(BROKEN)
    result = run_mockd(["stateful", "custom", "validate", "--file", "payout.yaml",
                        "--fixtures-file", str(EXAMPLE), "--check-resources"], tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "✗ payout: 4 problems",
        '    steps[0].resource (read): no table named "acounts" (tables: accounts, transfers)',
        '    steps[1].condition (validate): expression "acount.balance >= input.amount": '
        'unknown name "acount" (known here: account, input)',
        '    steps[2].set.balance (update): expression "account.balance - input.amount +": '
        "syntax error: unexpected end of expression",
        '    response.status: expression "succeeded": unknown name "succeeded" (known here: '
        'account, input) (a string literal needs inner quotes: \'"text"\')',
        "1 of 1 custom operation invalid"]
    as_json = run_mockd(["stateful", "custom", "validate", "--file", "payout.yaml", "--json"],
                        tmp_path)
    report = json.loads(as_json.stdout)
    assert report["valid"] is False
    problem = report["operations"][0]["problems"][0]
    assert problem == {"location": "steps[1].condition", "step": 1, "stepType": "validate",
                       "expression": "acount.balance >= input.amount",
                       "reason": 'unknown name "acount" (known here: account, input)',
                       "message": 'steps[1].condition (validate): expression "acount.balance '
                                  '>= input.amount": unknown name "acount" (known here: '
                                  'account, input)'}


def test_cli_validate_runs_the_example_with_input_and_fixtures(tmp_path):
    fixtures = tmp_path / "fixtures.yaml"
    fixtures.write_text(yaml.safe_dump({
        "accounts": [{"id": "x", "owner": "Xi", "currency": "EUR", "balance": 10},
                     {"id": "y", "owner": "Yu", "currency": "EUR", "balance": 0}],
        "transfers": []}))
    result = run_mockd(["stateful", "custom", "validate", "--file", str(EXAMPLE),
                        "--fixtures-file", str(fixtures), "--check-resources",
                        "--check-expressions-runtime",
                        "--input", '{"from": "x", "to": "y", "amount": 25, "accountId": "x"}'],
                       tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "✓ transfer: valid (9 steps, atomic)"
    assert lines[1] == "    run: stopped (validation_failed, HTTP 422): insufficient funds"
    assert lines[-1] == "3 custom operations valid"
    # --input alone reports fields the operation reads that the input lacks.
    warned = run_mockd(["stateful", "custom", "validate", "--file", str(EXAMPLE),
                        "--input", '{"amount": 1}'], tmp_path)
    assert warned.returncode == 0
    assert '    warning: input has no field "from" (read by steps[1].condition, ' \
           'steps[2].id); it reads as nil' in warned.stdout


def test_cli_validate_runtime_check_catches_type_errors(tmp_path):
    (tmp_path / "op.json").write_text(json.dumps({
        "name": "typed", "steps": [{"type": "set", "var": "x", "value": "input.a - 1"}]}))
    result = run_mockd(["stateful", "custom", "validate", "--file", "op.json",
                        "--check-expressions-runtime", "--input", '{"a": "text"}'], tmp_path)
    assert result.returncode == 1
    assert '    run failed: steps[0] (set): value "input.a - 1": invalid operation: string - ' \
           'int' in result.stdout
    bad_input = run_mockd(["stateful", "custom", "validate", "--file", "op.json",
                           "--input", "{nope"], tmp_path)
    assert bad_input.returncode == 2 and "--input" in bad_input.stderr


def test_cli_validate_check_resources_asks_the_server_without_fixtures(bank, tmp_path):
    (tmp_path / "payout.yaml").write_text(BROKEN)
    result = run_mockd(["stateful", "custom", "validate", "--file", "payout.yaml",
                        "--check-resources", "--admin-url", bank.admin], tmp_path)
    assert 'no table named "acounts" (tables: accounts, transfers)' in result.stdout


def test_cli_add_run_list_and_delete(bank, tmp_path):
    (tmp_path / "ops.yaml").write_text(yaml.safe_dump([
        {"name": "balance", "steps": [{"type": "read", "resource": "accounts",
                                        "id": "input.account", "as": "account"}],
         "response": {"balance": "account.balance"}},
        {"name": "ping", "steps": []}]))
    admin = ["--admin-url", bank.admin]
    added = run_mockd(["stateful", "custom", "add", "--file", "ops.yaml", *admin], tmp_path)
    assert added.returncode == 0, added.stderr
    assert added.stdout.splitlines() == ["Registered custom operation: balance",
                                         "Registered custom operation: ping"]
    ran = run_mockd(["stateful", "custom", "run", "balance", "--input",
                     '{"account": "acc_bob"}', *admin], tmp_path)
    assert ran.returncode == 0 and json.loads(ran.stdout) == {"balance": 2500}
    assert json.loads(run_mockd(["stateful", "custom", "run", "ping", *admin],
                                tmp_path).stdout) == {"success": True}
    refused = run_mockd(["stateful", "custom", "run", "transfer", "--input",
                         '{"from": "acc_bob", "to": "acc_alice", "amount": 999999}', *admin],
                        tmp_path)
    assert refused.returncode == 1
    assert refused.stderr.strip() == "Error: insufficient funds (HTTP 422)"
    listed = run_mockd(["stateful", "custom", "list", *admin], tmp_path)
    assert "balance  steps: 1  consistency: best_effort" in listed.stdout
    for name in ("balance", "ping"):
        assert run_mockd(["stateful", "custom", "delete", name, *admin],
                         tmp_path).returncode == 0


# ---------------------------------------------------------------------------- persistence, engine


def test_registered_operations_persist_across_a_restart(tmp_path):
    data_dir = tmp_path / "data"
    config = make_config(tables=[{"name": "counters", "seedData": [{"id": "c", "n": 0}]}])
    operation = {"name": "bump", "consistency": "atomic", "steps": [
        {"type": "read", "resource": "counters", "id": '"c"', "as": "counter"},
        {"type": "update", "resource": "counters", "id": '"c"',
         "set": {"n": "counter.n + 1"}, "as": "bumped"}], "response": {"n": "bumped.n"}}
    with start_server(tmp_path, config, data_dir=data_dir) as first:
        with first.admin_client() as admin:
            assert admin.post("/state/operations", json=operation).status_code == 201
            assert admin.post("/state/operations/bump/execute").json() == {"n": 1}
    restart = tmp_path / "again"
    restart.mkdir()
    with start_server(restart, None, data_dir=data_dir) as second:
        with second.admin_client() as admin:
            assert admin.get("/state/operations").json()["operations"] == [
                {"name": "bump", "stepCount": 2, "consistency": "atomic"}]
            # Runtime items reset to seed data; the definition stayed.
            assert admin.post("/state/operations/bump/execute").json() == {"n": 1}


def test_headless_engine_serves_operations_and_its_control_port(tmp_path):
    port = free_port()
    with start_engine(tmp_path, EXAMPLE.read_text(),
                      extra_args=["--engine-port", str(port),
                                  "--engine-token", "test-token"]) as engine:
        control = httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False,
                               timeout=10, headers={"X-Engine-Token": "test-token",
                                                    "Content-Type": "application/json"})
        with control, engine.client() as data:
            assert transfer(data, "acc_alice", "acc_bob", 1000).status_code == 201
            assert control.get("/state/operations").json()["count"] == 3
            executed = control.post("/state/operations/deposit/execute",
                                    json={"accountId": "acc_bob", "amount": 1})
            assert executed.json() == {"account": "acc_bob", "balance": 3501}
            refused = control.post("/state/operations/transfer/execute",
                                   json={"from": "acc_bob", "to": "acc_alice", "amount": 10**9})
            assert (refused.status_code, refused.json()) == (
                422, {"error": "validation_error", "message": "insufficient funds"})
            registered = control.post("/state/operations", json={
                "name": "total", "steps": [{"type": "list", "resource": "accounts",
                                            "as": "all"}],
                "response": {"total": "sum(filter(all, .currency == 'EUR'), .balance)"}})
            assert registered.status_code == 201
            assert control.post("/state/operations/total/execute").json() == {"total": 12501}
            assert control.delete("/state/operations/total").json()["deleted"] is True
