"""Choosing and keying the shared state store (issue #32 item 2): ``--state-store`` URLs,
``serverConfig.stateStore``, password redaction, namespaces on one Redis, the 503 of a
store that is down, the sync entry point's answer on Redis, and an atomic custom operation
that fails writing nothing."""
from __future__ import annotations

import pytest

from mocks.core.errors import ConfigError
from tables.config import TableConfig
from tables.operations import apply_operations, compile_operation, operation_config_of
from tables.redis_store import RedisTableStore
from tables.state_options import check_url, redacted_url
from tables.store import OperationRequest, TableDefinition
from tests.redis_server import (items_of, redis_loop, redis_server,  # noqa: F401
                                sync_redis_table_store)


@pytest.mark.parametrize(("url", "problem"), [
    ("redis://127.0.0.1:6379/0", None),
    ("redis://cache", None),
    ("rediss://user:pw@cache.internal:6380/2", None),
    ("unix:///run/redis.sock", None),
    ("http://cache/0", "give a redis://host:port/db URL"),
    ("redis:///0", "the URL names no host"),
    ("redis://cache/zero", 'database "zero" is not a number'),
    ("redis://cache:port/0", "not a URL"),
])
def test_check_url(url, problem):
    found = check_url(url)
    assert (found is None) if problem is None else problem in found


def test_redacted_url_hides_the_password_only():
    assert redacted_url("redis://user:hunter2@cache:6380/1") == "redis://user:***@cache:6380/1"
    assert redacted_url("redis://:hunter2@cache/0") == "redis://:***@cache/0"
    assert redacted_url("redis://cache:6379/0") == "redis://cache:6379/0"


def test_server_config_state_store_key_is_checked():
    from mocks.loader import parse_config_text, validate_config

    config = validate_config(parse_config_text(
        "serverConfig:\n  stateStore: redis://127.0.0.1:6379/3\n"))
    assert config.server_config.state_store == "redis://127.0.0.1:6379/3"
    with pytest.raises(ConfigError, match=r"serverConfig\.stateStore.*not a number"):
        validate_config(parse_config_text(
            "serverConfig:\n  stateStore: redis://:pw@127.0.0.1/zero\n"))


def _table(**config) -> TableDefinition:
    return TableDefinition(TableConfig.model_validate(config), "tables[0]")


def test_namespaces_on_one_redis_do_not_see_each_other(redis_server, redis_loop):  # noqa: F811
    redis_server.flush()
    one, same, other = (sync_redis_table_store(redis_server.url, redis_loop, namespace)
                        for namespace in ("one", "one", "two"))
    for store in (one, same, other):
        store.apply_definitions([_table(name="users", seedData=[{"id": "a"}])])
    try:
        assert one.execute(OperationRequest("create", "users", body={"id": "b"})).ok
        assert list(items_of(same, "users")) == ["a", "b"]  # a replica of the same namespace
        assert list(items_of(other, "users")) == ["a"]
        assert same.reset() == 1 and list(items_of(one, "users")) == ["a"]
    finally:
        for store in (one, same, other):
            store.close_now()


def test_a_store_that_is_down_answers_503_and_the_sync_entry_point_refuses(redis_loop):  # noqa: F811
    store = sync_redis_table_store("redis://127.0.0.1:1/0", redis_loop)
    store.apply_definitions([_table(name="users")])
    try:
        error = store.execute(OperationRequest("list", "users")).error
        assert (error.status, error.body()["error"]) == (503, "state_store_unavailable")
        assert "redis://127.0.0.1:1/0" in error.message
        refused = RedisTableStore.execute(store, OperationRequest("list", "users")).error
        assert refused.status == 503 and "cannot use the Redis state store" in refused.message
    finally:
        store.close_now()


def test_a_failed_atomic_operation_writes_nothing(redis_server, redis_loop):  # noqa: F811
    redis_server.flush()
    store = sync_redis_table_store(redis_server.url, redis_loop)
    store.apply_definitions([_table(name="accounts", seedData=[{"id": "a", "balance": 5}]),
                             _table(name="log")])
    apply_operations(store, [compile_operation(operation_config_of({
        "name": "spend", "consistency": "atomic", "steps": [
            {"type": "create", "resource": "log", "set": {"amount": "input.amount"}},
            {"type": "read", "resource": "accounts", "id": '"a"', "as": "account"},
            {"type": "update", "resource": "accounts", "id": '"a"',
             "set": {"balance": "account.balance - input.amount"}},
            {"type": "validate", "condition": "account.balance >= input.amount",
             "errorMessage": "insufficient funds"}]}))])
    try:
        run = OperationRequest("custom", "", body={"amount": 9}, operation="spend")
        assert store.execute(run).error.message.endswith("insufficient funds")
        assert items_of(store, "log") == {} and items_of(store, "accounts")["a"]["balance"] == 5
        assert store.execute(OperationRequest("custom", "", body={"amount": 2},
                                              operation="spend")).ok
        assert items_of(store, "accounts")["a"]["balance"] == 3
        assert len(items_of(store, "log")) == 1
    finally:
        store.close_now()


def test_sequence_counters_are_shared_by_the_replicas_of_a_namespace(redis_server):  # noqa: F811
    from mocks.core.templating import TemplateState
    from tables.redis_store import RedisSequences

    redis_server.flush()
    one, two, other = TemplateState(), TemplateState(), TemplateState()
    one.shared = RedisSequences(redis_server.url, "ns")
    two.shared = RedisSequences(redis_server.url, "ns")
    other.shared = RedisSequences(redis_server.url, "elsewhere")
    assert [one.next_sequence_value("order", 100), two.next_sequence_value("order", 5),
            one.next_sequence_value("order")] == [100, 101, 102]
    assert other.next_sequence_value("order") == 1
    down = TemplateState()
    down.shared = RedisSequences("redis://127.0.0.1:1/0", "ns")
    assert [down.next_sequence_value("n", 7) for _ in range(2)] == [7, 8]  # its own counter
