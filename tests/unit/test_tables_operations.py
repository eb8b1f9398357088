"""Custom operations in process: the config schema, load-time checks naming the step, every
step type, both consistency modes with a failure in the last step, the validate defaults,
the registry, the HTTP entry points and the engine-control face (SPEC "Custom operation",
"Errors"; behavior notes §1 "State (tables) and custom operations", §6, §19). Every test
runs twice: on the in-memory store and on the Redis store (``new_store``)."""
from __future__ import annotations

import asyncio

import orjson
import pytest

from mocks.engine.app import DataPlaneApp
from mocks.engine.control import EngineControl
from mocks.engine.core import Engine
from mocks.core.errors import ConfigError
from mocks.loader import validate_config
from tables.control import operation_error_of, route_state
from tables.errors import TableError
from tables.operations import (OperationError, check_operation, compile_operation,
                               operations_of, run_custom_operation)
from tables.operations_config import CustomOperationConfig
from tests.helpers import http_mock, make_config
from tests.redis_server import items_of, new_store, redis_loop, redis_server  # noqa: F401

ACCOUNTS = {"name": "accounts", "seedData": [
    {"id": "a", "owner": "Ann", "balance": 100, "meta": {"tier": "gold"}},
    {"id": "b", "owner": "Bob", "balance": 20, "meta": {"tier": "basic"}},
    {"id": "c", "owner": "Cid", "balance": 0, "meta": {"tier": "gold"}}]}
#: The store factory of the running test (in memory or Redis; set by ``_backend``).
BACKEND: dict = {}


@pytest.fixture(autouse=True)
def _backend(new_store):  # noqa: F811 - the fixture imported above
    BACKEND["new"] = new_store
    yield
    BACKEND.clear()


LEDGER = {"name": "ledger", "idStrategy": "sequence",
          "validation": {"fields": {"note": {"type": "string", "maxLength": 5}}}}


def engine_with(*operations: dict, tables: list | None = None, mocks: tuple = (),
                **extra) -> Engine:
    engine = Engine()
    if BACKEND:
        engine.tables = BACKEND["new"]()
    engine.load(validate_config(make_config(
        *mocks, tables=tables if tables is not None else [ACCOUNTS, LEDGER],
        customOperations=list(operations), **extra)))
    return engine


def run(engine: Engine, name: str, input_value: dict | None = None):
    return run_custom_operation(engine.tables, name, input_value or {})


def failure(engine: Engine, name: str, input_value: dict | None = None) -> OperationError:
    with pytest.raises(TableError) as caught:
        run(engine, name, input_value)
    return caught.value


def items(engine: Engine, table: str) -> dict:
    return {key: dict(item) for key, item in items_of(engine.tables, table).items()}


def balances(engine: Engine) -> dict:
    return {key: item["balance"] for key, item in items_of(engine.tables, "accounts").items()}


def operation(name: str = "op", *steps: dict, **fields) -> dict:
    return {"name": name, "steps": list(steps), **fields}


# ---------------------------------------------------------------------------- schema


@pytest.mark.parametrize(("document", "message"), [
    pytest.param(operation("op", {"type": "read", "resource": "accounts", "as": "x"}),
                 "customOperations[0].steps[0]: a read step needs id", id="read without id"),
    pytest.param(operation("op", {"type": "update", "resource": "accounts", "id": "1"}),
                 "customOperations[0].steps[0]: a update step needs set",
                 id="update without set"),
    pytest.param(operation("op", {"type": "list", "resource": "accounts"}),
                 "customOperations[0].steps[0]: a list step needs as", id="list without as"),
    pytest.param(operation("op", {"type": "set", "var": "x"}),
                 "customOperations[0].steps[0]: a set step needs value", id="set without value"),
    pytest.param(operation("op", {"type": "validate", "condition": "true",
                                  "resource": "accounts"}),
                 "a validate step does not take resource (it takes condition, errorMessage, "
                 "errorStatus)", id="field of another type"),
    pytest.param(operation("op", {"type": "upsert"}), "customOperations[0].steps[0].type",
                 id="unknown step type"),
    pytest.param(operation("op", {"type": "set", "var": "input", "value": "1"}),
                 "'input' is reserved", id="reserved variable"),
    pytest.param(operation("op", {"type": "set", "var": "2x", "value": "1"}),
                 "'2x' is not a usable variable name", id="bad variable name"),
    pytest.param(operation("op", {"type": "validate", "condition": "true",
                                  "errorStatus": 700}),
                 "errorStatus must be an HTTP status", id="status out of range"),
    pytest.param(operation("op", {"type": "set", "var": "x", "value": {"a": 1}}),
                 "an expression must be text", id="map as expression"),
    pytest.param(operation("op", consistency="strict"), "customOperations[0].consistency",
                 id="unknown consistency"),
    pytest.param(operation("op", retries=3), "customOperations[0].retries: unknown key",
                 id="unknown key"),
    pytest.param({"steps": []}, "customOperations[0].name", id="name required"),
])
def test_schema_errors_name_the_key(document, message):
    with pytest.raises(ConfigError) as caught:
        validate_config(make_config(customOperations=[document]))
    assert message in str(caught.value)


def test_yaml_scalars_are_literal_expressions():
    config = CustomOperationConfig.model_validate(operation(
        "op", {"type": "set", "var": "zero", "value": 0},
        {"type": "set", "var": "yes", "value": True},
        {"type": "set", "var": "nothing", "value": None},
        {"type": "set", "var": "half", "value": 0.5},
        response={"all": "[zero, yes, nothing, half]"}))
    assert [step.value for step in config.steps] == ["0", "true", "nil", "0.5"]
    engine = engine_with(config.model_dump(by_alias=True, exclude_none=True))
    assert run(engine, "op") == {"all": [0, True, None, 0.5]}


# ---------------------------------------------------------------------------- load-time checks


@pytest.mark.parametrize(("step", "path", "reason"), [
    pytest.param({"type": "validate", "condition": "frm.balance > 0"},
                 "customOperations[2].steps[1].condition",
                 'expression "frm.balance > 0": unknown name "frm" (known here: first, input)',
                 id="unknown name in a condition"),
    pytest.param({"type": "create", "resource": "ledger", "set": {"note": "first.owner +"}},
                 "customOperations[2].steps[1].set.note",
                 'expression "first.owner +": syntax error: unexpected end of expression',
                 id="syntax error in a set value"),
    pytest.param({"type": "list", "resource": "accounts", "as": "all",
                  "filter": {"owner": "nosuch(1)"}},
                 "customOperations[2].steps[1].filter.owner",
                 'unknown function "nosuch"', id="unknown function in a filter"),
    pytest.param({"type": "delete", "resource": "accounts", "id": "#"},
                 "customOperations[2].steps[1].id",
                 "# and .field only work inside a predicate", id="pointer outside predicate"),
    pytest.param({"type": "set", "var": "later", "value": "laterStill"},
                 "customOperations[2].steps[1].value", 'unknown name "laterStill"',
                 id="a variable of a later step is unknown"),
])
def test_load_names_the_operation_step_field_and_expression(step, path, reason):
    operations = [operation("ok1", {"type": "set", "var": "x", "value": "1"}),
                  operation("ok2"),
                  operation("broken",
                            {"type": "read", "resource": "accounts", "id": "input.id",
                             "as": "first"},
                            step,
                            {"type": "set", "var": "laterStill", "value": "1"})]
    with pytest.raises(ConfigError) as caught:
        engine_with(*operations)
    assert caught.value.path == path
    assert reason in caught.value.reason


def test_response_expressions_are_checked_with_every_variable():
    with pytest.raises(ConfigError) as caught:
        engine_with(operation("op", {"type": "set", "var": "x", "value": "1"},
                              response={"total": "x + y"}))
    assert caught.value.path == "customOperations[0].response.total"
    assert 'unknown name "y" (known here: input, x)' in caught.value.reason


def test_duplicate_operation_names_are_refused():
    with pytest.raises(ConfigError) as caught:
        engine_with(operation("same"), operation("same"))
    assert str(caught.value).startswith('customOperations[1].name: duplicate custom operation '
                                        'name "same" (also customOperations[0])')


def test_a_failed_load_keeps_the_old_operations():
    engine = engine_with(operation("op", response={"v": "1"}))
    with pytest.raises(ConfigError):
        engine.load(validate_config(make_config(customOperations=[
            operation("op", response={"v": "nope"})])))
    assert run(engine, "op") == {"v": 1}


def test_check_operation_collects_every_problem_and_checks_resources():
    config = CustomOperationConfig.model_validate(operation(
        "op", {"type": "read", "resource": "acounts", "id": "input.id", "as": "account"},
        {"type": "validate", "condition": "acount.balance > 0"},
        {"type": "set", "var": "x", "value": "account.balance +"},
        response={"x": "x", "y": "'unterminated"}))
    compiled, problems = check_operation(config, tables={"accounts"})
    assert compiled is None
    assert [str(problem) for problem in problems] == [
        'steps[0].resource (read): no table named "acounts" (tables: accounts)',
        'steps[1].condition (validate): expression "acount.balance > 0": unknown name '
        '"acount" (known here: account, input)',
        'steps[2].value (set): expression "account.balance +": syntax error: unexpected end '
        'of expression',
        "response.y: expression \"'unterminated\": syntax error: unexpected character \"'\" "
        "at column 1"]
    assert problems[1].step == 1 and problems[1].expression == "acount.balance > 0"


# ---------------------------------------------------------------------------- step types


def test_read_into_a_variable_and_missing_item_is_404():
    engine = engine_with(operation(
        "owner", {"type": "read", "resource": "accounts", "id": "input.id", "as": "account"},
        response={"owner": "account.owner", "balance": "account.balance"}))
    assert run(engine, "owner", {"id": "a"}) == {"owner": "Ann", "balance": 100}
    error = failure(engine, "owner", {"id": "zz"})
    assert isinstance(error, OperationError)
    assert (error.kind, error.status, error.message, error.step) == (
        "not_found", 404, 'resource "accounts" item "zz" not found', 0)
    assert error.admin_body() == {"error": "not_found",
                                  "message": 'resource "accounts" item "zz" not found'}


def test_read_of_a_numeric_id_and_read_without_as():
    engine = engine_with(operation(
        "exists", {"type": "read", "resource": "numbers", "id": "input.n"}),
        tables=[{"name": "numbers", "seedData": [{"id": 7}]}])
    assert run(engine, "exists", {"n": 7}) == {"success": True}
    assert run(engine, "exists", {"n": 7.0}) == {"success": True}
    assert failure(engine, "exists", {"n": 8}).status == 404


@pytest.mark.parametrize(("input_value", "message"), [
    pytest.param({}, 'steps[0] (read accounts): id "input.id" is nil; give the item id',
                 id="nil id"),
    pytest.param({"id": ["a"]}, 'id "input.id" must be a string or a number, got array',
                 id="array id"),
])
def test_unusable_ids_fail_the_run(input_value, message):
    engine = engine_with(operation(
        "op", {"type": "read", "resource": "accounts", "id": "input.id", "as": "x"}))
    error = failure(engine, "op", input_value)
    assert error.kind == "execution_failed" and error.status == 400
    assert message in error.message


def test_create_generates_the_id_and_stores_the_set_map():
    engine = engine_with(operation(
        "open", {"type": "create", "resource": "ledger",
                 "set": {"account": "input.account", "amount": "input.amount * 2",
                         "kind": '"credit"'}, "as": "entry"},
        response={"id": "entry.id", "entry": "entry"}))
    result = run(engine, "open", {"account": "a", "amount": 5})
    assert result["id"] == 1
    assert {key: result["entry"][key] for key in ("account", "amount", "kind")} == {
        "account": "a", "amount": 10, "kind": "credit"}
    assert "createdAt" in result["entry"]
    assert items(engine, "ledger")["1"]["amount"] == 10


def test_create_refused_by_table_validation_names_the_step():
    engine = engine_with(operation(
        "note", {"type": "create", "resource": "ledger", "set": {"note": "input.note"}}))
    error = failure(engine, "note", {"note": "far too long"})
    assert error.kind == "execution_failed" and error.status == 400
    assert error.message.startswith("steps[0] (create ledger): validation failed (note: ")


def test_update_merges_the_set_map_and_returns_the_item():
    engine = engine_with(operation(
        "credit", {"type": "read", "resource": "accounts", "id": "input.id", "as": "account"},
        {"type": "update", "resource": "accounts", "id": "account.id",
         "set": {"balance": "account.balance + input.amount"}, "as": "updated"},
        response={"balance": "updated.balance", "owner": "updated.owner"}))
    assert run(engine, "credit", {"id": "b", "amount": 5}) == {"balance": 25, "owner": "Bob"}
    assert items(engine, "accounts")["b"]["meta"] == {"tier": "basic"}


def test_update_of_a_missing_item_is_an_execution_failure_not_a_404():
    engine = engine_with(operation(
        "op", {"type": "update", "resource": "accounts", "id": "input.id",
               "set": {"balance": "0"}}))
    error = failure(engine, "op", {"id": "zz"})
    assert (error.kind, error.status) == ("execution_failed", 400)
    assert error.message == 'steps[0] (update accounts): resource "accounts" item "zz" not found'


def test_delete_removes_the_item_into_a_variable():
    engine = engine_with(operation(
        "close", {"type": "delete", "resource": "accounts", "id": "input.id", "as": "closed"},
        response={"closed": "closed.owner"}))
    assert run(engine, "close", {"id": "c"}) == {"closed": "Cid"}
    assert "c" not in items(engine, "accounts")


def test_set_binds_a_variable_and_can_rebind_it():
    engine = engine_with(operation(
        "op", {"type": "set", "var": "total", "value": "input.a + input.b"},
        {"type": "set", "var": "total", "value": "total * 10"},
        response={"total": "total", "label": "'total: ' + string(total)"}))
    assert run(engine, "op", {"a": 1, "b": 2}) == {"total": 30, "label": "total: 30"}


def test_list_returns_every_match_without_pagination_oldest_first():
    seed = [{"id": f"t{index:03d}", "kind": "even" if index % 2 == 0 else "odd",
             "amount": index, "meta": {"tier": "gold" if index < 10 else "basic"}}
            for index in range(250)]
    engine = engine_with(operation(
        "stats", {"type": "list", "resource": "things", "as": "every"},
        {"type": "list", "resource": "things", "as": "evens", "filter": {"kind": "input.kind"}},
        {"type": "list", "resource": "things", "as": "gold",
         "filter": {"meta.tier": '"gold"', "kind": '"odd"'}},
        {"type": "list", "resource": "things", "as": "numbered", "filter": {"amount": "7"}},
        response={"every": "len(every)", "first": "first(every).id", "evens": "len(evens)",
                  "sum": "sum(evens, .amount)", "gold": "map(gold, .id)",
                  "numbered": "map(numbered, .id)"}),
        tables=[{"name": "things", "seedData": seed}])
    assert run(engine, "stats", {"kind": "even"}) == {
        "every": 250, "first": "t000", "evens": 125, "sum": sum(range(0, 250, 2)),
        "gold": ["t001", "t003", "t005", "t007", "t009"], "numbered": ["t007"]}


def test_list_of_an_empty_table_is_an_empty_array():
    engine = engine_with(operation(
        "op", {"type": "list", "resource": "ledger", "as": "entries"},
        response={"entries": "entries"}))
    assert run(engine, "op") == {"entries": []}


def test_validate_defaults_message_and_status():
    engine = engine_with(operation(
        "op", {"type": "validate", "condition": "input.amount > 0"}))
    error = failure(engine, "op", {"amount": 0})
    assert (error.kind, error.status, error.message, error.step) == (
        "validation_failed", 400, "validation failed: input.amount > 0", 0)
    assert error.code == "VALIDATION_ERROR"
    assert error.admin_body() == {"error": "validation_error",
                                  "message": "validation failed: input.amount > 0"}
    assert run(engine, "op", {"amount": 1}) == {"success": True}


def test_validate_custom_message_and_status_and_nil_fails():
    engine = engine_with(operation(
        "op", {"type": "validate", "condition": "input.approved", "errorMessage": "not approved",
               "errorStatus": 402}))
    for input_value in ({"approved": False}, {}):
        error = failure(engine, "op", input_value)
        assert (error.status, error.message) == (402, "not approved")


def test_validate_of_a_non_boolean_is_an_execution_failure():
    engine = engine_with(operation("op", {"type": "validate", "condition": "input.amount"}))
    error = failure(engine, "op", {"amount": 5})
    assert (error.kind, error.status) == ("execution_failed", 400)
    assert 'condition "input.amount" must be true or false, got int (5)' in error.message


def test_an_expression_error_at_run_time_names_the_step_field_and_expression():
    engine = engine_with(operation(
        "op", {"type": "set", "var": "ok", "value": "1"},
        {"type": "set", "var": "bad", "value": "input.name - 1"}))
    error = failure(engine, "op", {"name": "Ann"})
    assert error.message == ('steps[1] (set): value "input.name - 1": invalid operation: '
                             'string - int')
    assert error.step == 1 and error.operation == "op"


def test_now_is_one_instant_per_run():
    engine = engine_with(operation(
        "op", {"type": "set", "var": "first", "value": "now()"},
        {"type": "create", "resource": "ledger", "set": {"at": "now()"}, "as": "entry"},
        response={"same": "first == entry.at and first == now()"}))
    assert run(engine, "op") == {"same": True}


def test_the_input_is_never_changed():
    engine = engine_with(operation(
        "op", {"type": "create", "resource": "ledger", "set": {"items": "input.items"}}))
    input_value = {"items": [1, 2]}
    run(engine, "op", input_value)
    assert input_value == {"items": [1, 2]}


# ---------------------------------------------------------------------------- consistency


def busy_operation(consistency: str | None, last_step: dict) -> dict:
    """Writes of every kind (create, update, delete), then ``last_step``."""
    fields = {"consistency": consistency} if consistency else {}
    return operation(
        "busy",
        {"type": "create", "resource": "ledger", "set": {"note": '"new"'}, "as": "entry"},
        {"type": "read", "resource": "accounts", "id": '"a"', "as": "ann"},
        {"type": "update", "resource": "accounts", "id": "ann.id",
         "set": {"balance": "ann.balance - 60"}},
        {"type": "delete", "resource": "accounts", "id": '"b"'},
        {"type": "create", "resource": "accounts", "set": {"id": '"d"', "balance": "60"}},
        last_step, **fields)


FAILING_LAST_STEPS = [
    pytest.param({"type": "validate", "condition": "false", "errorMessage": "stop",
                  "errorStatus": 409}, 409, id="failed validate"),
    pytest.param({"type": "create", "resource": "accounts", "set": {"id": '"a"'}}, 400,
                 id="table conflict"),
    pytest.param({"type": "set", "var": "x", "value": "'a' * 2"}, 400, id="expression error"),
    pytest.param({"type": "read", "resource": "accounts", "id": '"missing"'}, 404,
                 id="missing item"),
]


@pytest.mark.parametrize(("last_step", "status"), FAILING_LAST_STEPS)
def test_best_effort_keeps_the_changes_of_earlier_steps(last_step, status):
    for consistency in (None, "best_effort"):  # best_effort is the default
        engine = engine_with(busy_operation(consistency, last_step))
        assert failure(engine, "busy").status == status
        assert balances(engine) == {"a": 40, "c": 0, "d": 60}
        assert [item["note"] for item in items(engine, "ledger").values()] == ["new"]


@pytest.mark.parametrize(("last_step", "status"), FAILING_LAST_STEPS)
def test_atomic_rolls_back_creates_updates_and_deletes(last_step, status):
    engine = engine_with(busy_operation("atomic", last_step))
    before_accounts = items(engine, "accounts")
    assert failure(engine, "busy").status == status
    after = items(engine, "accounts")
    assert after == before_accounts
    assert list(after) == ["a", "b", "c"]  # the deleted item is back in its place
    assert items(engine, "ledger") == {}
    # The id sequence is restored too: the next ledger entry still gets id 1.
    engine.load(validate_config(make_config(
        tables=[ACCOUNTS, LEDGER], customOperations=[operation(
            "entry", {"type": "create", "resource": "ledger", "set": {}, "as": "e"},
            response={"id": "e.id"})])))
    assert run(engine, "entry") == {"id": 1}


def test_atomic_rolls_back_when_the_response_fails():
    engine = engine_with(operation(
        "op", {"type": "update", "resource": "accounts", "id": '"a"', "set": {"balance": "1"}},
        consistency="atomic", response={"bad": "1 / 0"}))
    error = failure(engine, "op")
    assert error.message.startswith('response.bad "1 / 0": invalid operation')
    assert balances(engine)["a"] == 100


def test_atomic_success_keeps_everything():
    engine = engine_with(busy_operation("atomic", {"type": "set", "var": "x", "value": "1"}))
    assert run(engine, "busy") == {"success": True}
    assert balances(engine) == {"a": 40, "c": 0, "d": 60}


def test_atomic_leaves_other_changes_between_runs_alone():
    engine = engine_with(
        operation("deposit", {"type": "update", "resource": "accounts", "id": '"c"',
                              "set": {"balance": "5"}}),
        busy_operation("atomic", {"type": "validate", "condition": "false"}))
    run(engine, "deposit")
    failure(engine, "busy")
    assert balances(engine)["c"] == 5


# ---------------------------------------------------------------------------- registry


def test_unknown_operation_is_404():
    engine = engine_with()
    error = failure(engine, "ghost")
    assert not isinstance(error, OperationError)
    assert (error.code, error.status, error.message) == (
        "NOT_FOUND", 404, 'custom operation "ghost" not found')


def test_runtime_operations_survive_reloads_unless_the_config_defines_them():
    engine = engine_with(operation("config-op", response={"from": "'config'"}))
    registry = operations_of(engine.tables)
    registry.register(compile_operation(CustomOperationConfig.model_validate(
        operation("runtime-op", response={"from": "'runtime'"}))))
    engine.load(validate_config(make_config(customOperations=[
        operation("config-op", response={"from": "'config 2'"})])))
    assert run(engine, "runtime-op") == {"from": "runtime"}
    assert run(engine, "config-op") == {"from": "config 2"}
    engine.load(validate_config(make_config(customOperations=[
        operation("runtime-op", response={"from": "'config now'"})])))
    assert run(engine, "runtime-op") == {"from": "config now"}
    assert registry.unregister("runtime-op") and not registry.unregister("runtime-op")
    assert failure(engine, "config-op").status == 404


# ---------------------------------------------------------------------------- HTTP entry points


def call(engine: Engine, method: str, path: str, body: bytes = b""
         ) -> tuple[int, dict[str, str], bytes]:
    messages = []
    scope = {"type": "http", "method": method, "path": path, "query_string": b"",
             "headers": [(b"content-type", b"application/json")]}

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        messages.append(message)

    asyncio.run(DataPlaneApp(engine)(scope, receive, send))
    start, answer = messages
    return (start["status"], {name.decode(): value.decode() for name, value in start["headers"]},
            answer["body"])


def http_engine() -> Engine:
    pay = operation(
        "pay", {"type": "read", "resource": "accounts", "id": "input.accountId", "as": "account"},
        {"type": "validate", "condition": "account.balance >= input.amount",
         "errorMessage": "insufficient funds", "errorStatus": 422},
        {"type": "update", "resource": "accounts", "id": "account.id",
         "set": {"balance": "account.balance - input.amount"}, "as": "updated"},
        response={"account": "updated.id", "balance": "updated.balance"})
    touch = operation("touch", {"type": "set", "var": "x", "value": "input.x * 2"})
    mocks = (http_mock("pay", "POST", "/accounts/{accountId}/pay", body="ignored"),
             {"id": "touch", "type": "http", "http": {
                 "matcher": {"method": "POST", "path": "/touch"},
                 "response": {"statusCode": 202, "headers": {"X-Op": "touch"}},
                 "statefulOperation": "touch"}},
             {"id": "ghost", "type": "http", "http": {
                 "matcher": {"method": "POST", "path": "/ghost"},
                 "statefulOperation": "ghost"}})
    return engine_with(pay, touch, mocks=mocks,
                       extend=[{"mock": "pay", "action": "custom", "operation": "pay"}])


def test_extend_binding_custom_merges_path_parameters_into_the_input():
    engine = http_engine()
    status, headers, body = call(engine, "POST", "/accounts/a/pay", b'{"amount": 30}')
    assert (status, orjson.loads(body)) == (200, {"account": "a", "balance": 70})
    assert headers["content-type"] == "application/json"


def test_http_failures_answer_the_step_status_and_message():
    engine = http_engine()
    status, _, body = call(engine, "POST", "/accounts/a/pay", b'{"amount": 1000}')
    assert (status, orjson.loads(body)) == (422, {"error": "insufficient funds",
                                                  "statusCode": 422})
    status, _, body = call(engine, "POST", "/accounts/zz/pay", b'{"amount": 1}')
    assert status == 404
    assert orjson.loads(body)["error"] == 'resource "accounts" item "zz" not found'
    status, _, body = call(engine, "POST", "/accounts/a/pay", b'{"amount": "ten"}')
    assert status == 400
    assert orjson.loads(body)["error"].startswith('steps[1] (validate): condition "account.'
                                                  'balance >= input.amount": invalid operation')


def test_stateful_operation_runs_instead_of_a_static_response():
    engine = http_engine()
    status, headers, body = call(engine, "POST", "/touch", b'{"x": 2}')
    assert (status, orjson.loads(body)) == (202, {"success": True})
    assert headers["x-op"] == "touch"
    status, _, body = call(engine, "POST", "/ghost", b"{}")
    assert (status, orjson.loads(body)["error"]) == (404, 'custom operation "ghost" not found')


# ---------------------------------------------------------------------------- engine control


def test_engine_control_lists_registers_runs_and_deletes_operations():
    engine = http_engine()
    control = EngineControl(engine)

    async def scenario():
        listed = await control.custom_operations()
        assert listed == {"count": 2, "operations": [
            {"name": "pay", "stepCount": 3, "consistency": "best_effort"},
            {"name": "touch", "stepCount": 1, "consistency": "best_effort"}]}
        document = await control.custom_operation("touch")
        assert document["steps"] == [{"type": "set", "var": "x", "value": "input.x * 2"}]
        assert await control.custom_operation("nope") is None
        answer = await control.register_custom_operation(
            operation("echo", response={"echo": "input"}))
        assert answer == {"name": "echo", "message": "Custom operation registered"}
        assert await control.execute_custom_operation("echo", {"a": 1}) == {"echo": {"a": 1}}
        with pytest.raises(TableError) as caught:
            await control.register_custom_operation(operation(
                "bad", {"type": "validate", "condition": "nope > 1"}))
        assert caught.value.message.startswith(
            'steps[0].condition: expression "nope > 1": unknown name "nope"')
        with pytest.raises(TableError) as caught:
            await control.register_custom_operation({"name": "bad", "steps": [{"type": "read"}]})
        assert caught.value.message == "steps[0]: a read step needs resource, id"
        assert await control.unregister_custom_operation("echo")
        assert not await control.unregister_custom_operation("echo")

    asyncio.run(scenario())


@pytest.mark.parametrize(("input_value", "status", "payload"), [
    pytest.param({"accountId": "a", "amount": 500}, 422,
                 {"error": "validation_error", "message": "insufficient funds"},
                 id="failed validate"),
    pytest.param({"accountId": "zz", "amount": 1}, 404,
                 {"error": "not_found", "message": 'resource "accounts" item "zz" not found'},
                 id="missing item of a read"),
    pytest.param({"accountId": "a", "amount": "x"}, 400, {"error": "execution_failed"},
                 id="anything else"),
])
def test_execute_errors_on_the_admin_surfaces(input_value, status, payload):
    engine = http_engine()
    with pytest.raises(TableError) as caught:
        run(engine, "pay", input_value)
    got_status, got_payload = operation_error_of(caught.value, "pay")
    assert got_status == status
    assert {key: got_payload[key] for key in payload} == payload


def test_engine_control_routes():
    engine = http_engine()
    control = EngineControl(engine)
    answers = []

    async def answer(status, payload):
        answers.append((status, payload))

    def request(method, path, body=b""):
        async def read():
            return body
        assert asyncio.run(route_state(control, method, path, "", read, answer))
        return answers[-1]

    assert request("GET", "/state/operations")[1]["count"] == 2
    assert request("GET", "/state/operations/touch")[1]["name"] == "touch"
    assert request("GET", "/state/operations/nope") == (
        404, {"error": "not_found", "message": "Custom operation not found: nope"})
    assert request("POST", "/state/operations",
                   orjson.dumps(operation("echo", response={"e": "input.e"})))[0] == 201
    assert request("POST", "/state/operations/echo/execute", b'{"e": 5}') == (200, {"e": 5})
    assert request("POST", "/state/operations/touch/execute", b"") == (
        400, {"error": "execution_failed",
              "message": 'steps[0] (set): value "input.x * 2": invalid operation: nil * int'})
    assert request("POST", "/state/operations/pay/execute",
                   b'{"accountId": "a", "amount": 1000}') == (
        422, {"error": "validation_error", "message": "insufficient funds"})
    assert request("POST", "/state/operations/nope/execute") == (
        404, {"error": "not_found", "message": "Custom operation not found: nope"})
    assert request("POST", "/state/operations", b'{"name": "x", "steps": [{"type": "set"}]}'
                   ) == (400, {"error": "validation_error",
                               "message": "steps[0]: a set step needs var, value"})
    assert request("DELETE", "/state/operations/echo")[1]["deleted"] is True
    assert request("DELETE", "/state/operations/echo")[0] == 404
    assert request("PUT", "/state/operations")[0] == 405
