"""Identifier strategies and item timestamps (SPEC "Table", "Identifier strategies"); the
store tests run on the in-memory store and on the Redis store (``new_store``)."""
from __future__ import annotations

import re

import pytest

from tables.config import TableConfig
from tables.ids import (Clock, UlidGenerator, format_nanoseconds, id_key, new_prefixed,
                        new_short, new_uuid, numeric_id, value_text)
from tables.store import OperationRequest, TableDefinition, TableStore
from tests.redis_server import items_of, new_store, redis_loop, redis_server  # noqa: F401

CROCKFORD = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}\Z")


#: The store factory of the running store test (in memory or Redis; set by ``backend``).
BACKEND = {"new": TableStore}


@pytest.fixture
def backend(new_store):  # noqa: F811 - the fixture imported above
    BACKEND["new"] = new_store
    yield
    BACKEND["new"] = TableStore


def store_with(**table) -> TableStore:
    store = BACKEND["new"]()
    store.apply_definitions([TableDefinition(TableConfig.model_validate(table), "tables[0]")])
    return store


def create(store: TableStore, table: str, body: dict | None = None) -> dict:
    result = store.execute(OperationRequest("create", table, body=body or {}))
    assert result.ok, result.error and result.error.body()
    return result.item


def test_uuid_is_version_4_text():
    value = new_uuid()
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                        value)


def test_prefix_is_prefix_plus_16_hex():
    assert re.fullmatch(r"cus_[0-9a-f]{16}", new_prefixed("cus_"))


def test_short_is_16_hex():
    assert re.fullmatch(r"[0-9a-f]{16}", new_short())


def test_ulid_is_26_crockford_characters_and_sorts_in_creation_order():
    generator = UlidGenerator()
    values = [generator.new() for _ in range(2000)]
    assert all(CROCKFORD.match(value) for value in values)
    assert values == sorted(values)
    assert len(set(values)) == len(values)


def test_ulid_within_one_millisecond_increments_the_random_part():
    generator = UlidGenerator()
    first, second = generator.new(1_700_000_000_000), generator.new(1_700_000_000_000)
    assert first[:10] == second[:10] and second > first


def test_ulid_time_part_encodes_milliseconds():
    value = UlidGenerator().new(0)
    assert value[:10] == "0000000000"


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param("42", "42", id="string stays"),
    pytest.param(42, "42", id="integer"),
    pytest.param(42.0, "42", id="whole float as integer text"),
    pytest.param(0.5, "0.5", id="float"),
    pytest.param(True, "true", id="boolean"),
    pytest.param(None, "null", id="null"),
    pytest.param({"a": 1}, '{"a":1}', id="object as compact JSON"),
])
def test_id_key_and_value_text(value, expected):
    assert id_key(value) == expected
    assert value_text(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    (7, 7), ("7", 7), (7.0, 7), ("a7", None), (7.5, None), (True, None), ("", None),
    ("٣", None)])
def test_numeric_id(value, expected):
    assert numeric_id(value) == expected


def test_clock_is_strictly_increasing_and_fixed_width():
    clock = Clock()
    stamps = [clock.now() for _ in range(1000)]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", stamp) for stamp in stamps)


def test_format_nanoseconds_known_instant():
    assert format_nanoseconds(1_700_000_000_123_456_789) == "2023-11-14T22:13:20.123456789Z"


@pytest.mark.parametrize(("strategy", "extra", "pattern"), [
    pytest.param("uuid", {}, r"[0-9a-f-]{36}", id="uuid"),
    pytest.param("prefix", {"idPrefix": "cus_"}, r"cus_[0-9a-f]{16}", id="prefix"),
    pytest.param("ulid", {}, r"[0-9A-Z]{26}", id="ulid"),
    pytest.param("short", {}, r"[0-9a-f]{16}", id="short"),
])
@pytest.mark.usefixtures("backend")
def test_table_generates_ids_of_its_strategy(strategy, extra, pattern):
    store = store_with(name="t", idStrategy=strategy, **extra)
    assert re.fullmatch(pattern, create(store, "t")["id"])


@pytest.mark.usefixtures("backend")
def test_sequence_starts_after_highest_numeric_seed_and_resets_to_it():
    store = store_with(name="t", idStrategy="sequence",
                       seedData=[{"id": 3, "n": "a"}, {"id": "10", "n": "b"}, {"id": "x"}])
    assert [create(store, "t")["id"] for _ in range(2)] == [11, 12]
    store.reset("t")
    assert create(store, "t")["id"] == 11


@pytest.mark.usefixtures("backend")
def test_sequence_without_seed_ids_numbers_the_seeds_then_continues():
    store = store_with(name="t", idStrategy="sequence", seedData=[{"n": "a"}, {"n": "b"}])
    assert sorted(items_of(store, "t")) == ["1", "2"]
    assert create(store, "t")["id"] == 3


@pytest.mark.usefixtures("backend")
def test_sequence_without_seeds_starts_at_one_and_reset_restarts_it():
    store = store_with(name="t", idStrategy="sequence")
    assert [create(store, "t")["id"] for _ in range(3)] == [1, 2, 3]
    store.reset()
    assert create(store, "t")["id"] == 1


@pytest.mark.usefixtures("backend")
def test_sequence_skips_an_id_taken_by_an_explicit_create():
    store = store_with(name="t", idStrategy="sequence")
    create(store, "t", {"id": 1})
    assert create(store, "t")["id"] == 2


@pytest.mark.usefixtures("backend")
def test_id_in_create_body_wins_over_every_strategy():
    store = store_with(name="t", idStrategy="prefix", idPrefix="cus_")
    assert create(store, "t", {"id": "mine"})["id"] == "mine"


@pytest.mark.usefixtures("backend")
def test_seed_ids_generated_once_stay_stable_across_resets():
    store = store_with(name="t", seedData=[{"name": "a"}])
    before = list(items_of(store, "t"))
    store.reset("t")
    assert list(items_of(store, "t")) == before
