"""The table store and its one entry point ``execute`` (SPEC "Table", "Extend binding" rule 5,
"States and transitions"; behavior notes §6; STYLE §6). Every test runs twice: on the
in-memory store and on the Redis store (``new_store``)."""
from __future__ import annotations

import pytest

from mocks.core.errors import ConfigError
from tables.config import TableConfig
from tables.store import (OperationRequest, TableDefinition, TableStore, compile_tables)
from tests.redis_server import items_of, new_store, redis_loop, redis_server  # noqa: F401

#: The store factory of the running test (in memory or Redis; set by ``_backend``).
BACKEND = {"new": TableStore}


@pytest.fixture(autouse=True)
def _backend(new_store):  # noqa: F811 - the fixture imported above
    BACKEND["new"] = new_store
    yield
    BACKEND["new"] = TableStore


def definition(**config) -> TableDefinition:
    return TableDefinition(TableConfig.model_validate(config), "tables[0]")


def store_of(*tables: dict) -> TableStore:
    store = BACKEND["new"]()
    store.apply_definitions([definition(**table) for table in tables])
    return store


def run(store: TableStore, action: str, table: str = "users", **fields):
    return store.execute(OperationRequest(action, table, **fields))


@pytest.fixture
def store() -> TableStore:
    return store_of({"name": "users", "seedData": [{"id": "1", "name": "Ada", "role": "admin"},
                                                   {"id": "2", "name": "Bob", "role": "dev"}]})


def test_seed_items_carry_id_first_data_and_timestamps_last(store):
    item = run(store, "get", id="1").item
    assert list(item) == ["id", "name", "role", "createdAt", "updatedAt"]
    assert item["createdAt"] == item["updatedAt"]


def test_seed_timestamps_in_the_seed_data_are_replaced_by_the_service():
    store = store_of({"name": "t", "seedData": [{"id": "a", "createdAt": "1999"}]})
    assert run(store, "get", "t", id="a").item["createdAt"] != "1999"


def test_create_generates_an_id_and_stamps_the_item(store):
    result = run(store, "create", body={"name": "Cy", "createdAt": "ignored", "updatedAt": "x"})
    assert result.ok and result.action == "create"
    item = result.item
    assert item["name"] == "Cy" and len(item["id"]) == 36
    assert item["createdAt"] == item["updatedAt"] != "ignored"
    stored = run(store, "get", id=item["id"]).item
    assert stored is item if not store.remote else stored == item


def test_create_with_existing_id_is_409(store):
    error = run(store, "create", body={"id": "1"}).error
    assert (error.code, error.status, error.message, error.item_id) == (
        "CONFLICT", 409, 'resource "users" item "1" already exists', "1")


def test_create_id_matches_by_text_form(store):
    assert run(store, "create", body={"id": 1}).error.status == 409


@pytest.mark.parametrize("bad_id", [{"a": 1}, [1], True])
def test_create_with_a_non_scalar_id_is_400(store, bad_id):
    assert run(store, "create", body={"id": bad_id}).error.status == 400


def test_create_body_must_be_an_object(store):
    error = run(store, "create", body=[1, 2]).error
    assert error.status == 400 and "expected a JSON object" in error.message


def test_get_missing_item_is_404_with_the_message(store):
    error = run(store, "get", id="9").error
    assert (error.code, error.status) == ("NOT_FOUND", 404)
    assert error.body() == {"error": 'resource "users" item "9" not found', "resource": "users",
                            "id": "9", "statusCode": 404}


def test_unknown_table_is_404_resource_not_found():
    error = run(BACKEND["new"](), "list", "ghosts").error
    assert error.message == 'resource "ghosts" not found' and error.status == 404


@pytest.mark.parametrize("action", ["get", "update", "patch", "delete"])
def test_item_actions_need_an_id(store, action):
    error = run(store, action, id="", body={}).error
    assert error.status == 400 and error.message == f"item ID required for {action}"


def test_update_replaces_data_keeping_id_and_created_at(store):
    before = dict(run(store, "get", id="1").item)
    item = run(store, "update", id="1", body={"id": "other", "name": "Ada L."}).item
    assert item["id"] == "1" and item["name"] == "Ada L." and "role" not in item
    assert item["createdAt"] == before["createdAt"] and item["updatedAt"] > before["updatedAt"]


def test_patch_merges_and_ignores_system_fields(store):
    before = dict(run(store, "get", id="1").item)
    item = run(store, "patch", id="1", body={"role": "owner", "id": "x", "createdAt": "x",
                                             "extra": 1}).item
    assert item["id"] == "1" and item["name"] == "Ada" and item["role"] == "owner"
    assert item["extra"] == 1 and item["createdAt"] == before["createdAt"]
    assert list(item)[-2:] == ["createdAt", "updatedAt"]


@pytest.mark.parametrize("action", ["update", "patch", "delete"])
def test_missing_item_on_writes_is_404(store, action):
    assert run(store, action, id="nope", body={}).error.status == 404


def test_delete_removes_and_returns_the_item(store):
    result = run(store, "delete", id="2")
    assert result.item["name"] == "Bob"
    assert run(store, "get", id="2").error.status == 404


def test_list_default_envelope_facts_and_order(store):
    run(store, "create", body={"id": "3", "name": "Cy"})
    result = run(store, "list")
    assert [item["id"] for item in result.items] == ["3", "2", "1"]
    assert result.meta.as_dict() == {"total": 3, "limit": 100, "offset": 0, "count": 3,
                                     "has_more": False}


def test_list_filters_sort_and_pagination(store):
    result = run(store, "list", query={"role": ["dev"]})
    assert [item["id"] for item in result.items] == ["2"]
    result = run(store, "list", query={"sort": ["name"], "order": ["asc"], "limit": ["1"]})
    assert [item["name"] for item in result.items] == ["Ada"] and result.meta.has_more


def test_max_items_capacity_is_507():
    store = store_of({"name": "t", "maxItems": 1, "seedData": [{"id": "a"}]})
    error = run(store, "create", "t", body={}).error
    assert (error.code, error.status) == ("CAPACITY_EXCEEDED", 507)
    assert error.message == 'resource "t" has reached its maximum capacity of 1 items'


def test_parent_field_is_stored_on_create_and_filters_list_and_get():
    store = store_of({"name": "orders", "parentField": "userId",
                      "seedData": [{"id": "o1", "userId": "1"}, {"id": "o2", "userId": 2}]})
    created = run(store, "create", "orders", body={"userId": "ignored"}, parent={"userId": "2"})
    assert created.item["userId"] == "2"
    listed = run(store, "list", "orders", parent={"userId": "2"})
    assert sorted(item["id"] for item in listed.items) == sorted(["o2", created.item["id"]])
    assert run(store, "get", "orders", id="o1", parent={"userId": "2"}).error.status == 404
    assert run(store, "get", "orders", id="o1").ok


def test_update_keeps_the_parent_field():
    store = store_of({"name": "orders", "parentField": "userId",
                      "seedData": [{"id": "o1", "userId": "1", "n": 1}]})
    assert run(store, "update", "orders", id="o1", body={"n": 2}).item["userId"] == "1"


def store_with_relations() -> TableStore:
    return store_of(
        {"name": "customers", "seedData": [{"id": "cus_1", "name": "Ada", "email": "a@x"}],
         "response": {"fields": {"inject": {"object": "customer"}}}},
        {"name": "charges", "relationships": {"customer": {"table": "customers"},
                                              "email": {"table": "customers",
                                                        "field": "email"},
                                              "ghost": {"table": "nowhere"}},
         "seedData": [{"id": "ch_1", "customer": "cus_1", "email": "a@x", "plain": "cus_1"},
                      {"id": "ch_2", "customer": "cus_404", "email": None, "ghost": "g"},
                      {"id": "ch_3", "customer": ""}]})


def test_expand_inlines_related_items_through_their_table_transform():
    store = store_with_relations()
    item = run(store, "get", "charges", id="ch_1",
               query={"expand[]": ["customer", "email", "plain"]}).item
    assert item["customer"]["name"] == "Ada" and item["customer"]["object"] == "customer"
    assert item["email"]["id"] == "cus_1"
    assert item["plain"] == "cus_1"
    stored = items_of(store, "charges")["ch_1"]
    assert stored["customer"] == "cus_1"


def test_expand_leaves_unresolved_empty_and_null_values():
    store = store_with_relations()
    listed = run(store, "list", "charges", query={"expand": ["customer,email,ghost"],
                                                  "sort": ["id"], "order": ["asc"]}).items
    assert [item["customer"] if isinstance(item["customer"], str) else "expanded"
            for item in listed] == ["expanded", "cus_404", ""]
    assert listed[1]["email"] is None and listed[1]["ghost"] == "g"


def test_apply_definitions_keeps_items_when_the_data_identity_is_unchanged(store):
    run(store, "create", body={"id": "3"})
    store.apply_definitions([definition(name="users", seedData=[
        {"id": "1", "name": "Ada", "role": "admin"}, {"id": "2", "name": "Bob", "role": "dev"}],
        response={"fields": {"hide": ["role"]}})])
    assert "3" in items_of(store, "users")
    assert store.tables["users"].definition.transform is not None


def test_apply_definitions_restarts_a_changed_table_and_drops_removed_ones(store):
    run(store, "create", body={"id": "3"})
    store.apply_definitions([definition(name="users", seedData=[{"id": "9"}]),
                             definition(name="new")])
    assert list(items_of(store, "users")) == ["9"]
    assert set(store.tables) == {"users", "new"}
    store.apply_definitions([])
    assert store.tables == {}


def test_runtime_registered_tables_survive_config_reloads():
    store = BACKEND["new"]()
    store.register(TableConfig(name="widgets"))
    run(store, "create", "widgets", body={"id": "w"})
    store.apply_definitions([definition(name="other")])
    assert "w" in items_of(store, "widgets")
    assert run(store, "create", "widgets", body={}).ok


def test_register_conflict_and_unregister():
    store = BACKEND["new"]()
    store.register(TableConfig(name="w"))
    with pytest.raises(Exception) as raised:
        store.register(TableConfig(name="w"))
    assert raised.value.status == 409
    assert store.unregister("w") and not store.unregister("w")


def test_reset_restores_seed_data_and_clear_empties(store):
    run(store, "delete", id="1")
    run(store, "create", body={"id": "x"})
    assert store.reset("users") == 1
    assert sorted(items_of(store, "users")) == ["1", "2"]
    assert store.clear("users") == 2 and items_of(store, "users") == {}
    assert store.reset() == 1 and len(items_of(store, "users")) == 2
    with pytest.raises(Exception) as raised:
        store.reset("nope")
    assert raised.value.status == 404


def test_overview_shape(store):
    assert store.overview() == {"resources": [{"name": "users", "itemCount": 2, "seedCount": 2,
                                               "idField": "id"}],
                                "total": 1, "totalItems": 2, "resourceList": ["users"]}


def test_custom_without_a_runner_is_404_and_with_one_runs_it(store):
    error = run(store, "custom", operation="transfer").error
    assert error.status == 404 and error.message == 'custom operation "transfer" not found'
    store.custom_runner = lambda request, owner: {"ran": request.operation,
                                                  "input": request.body}
    result = run(store, "custom", operation="transfer", body={"a": 1})
    assert result.value == {"ran": "transfer", "input": {"a": 1}}


def test_unsupported_action_is_500(store):
    assert run(store, "explode").error.status == 500


def test_custom_id_field():
    store = store_of({"name": "products", "idField": "sku", "seedData": [{"sku": "A-1"}]})
    assert run(store, "get", "products", id="A-1").item == {
        "sku": "A-1", **{key: value for key, value in
                         items_of(store, "products")["A-1"].items() if key != "sku"}}
    created = run(store, "create", "products", body={"name": "x"}).item
    assert "sku" in created and "id" not in created


def test_duplicate_seed_ids_are_a_config_error():
    with pytest.raises(ConfigError, match=r'tables\[0\]\.seedData\[1\]\.id: duplicate id "a"'):
        definition(name="t", seedData=[{"id": "a"}, {"id": "a"}])


def test_duplicate_table_names_are_a_config_error():
    with pytest.raises(ConfigError, match='duplicate table name "t"'):
        compile_tables([(TableConfig(name="t"), "tables[0]"),
                        (TableConfig(name="t"), "statefulResources[0]")])


def test_yaml_dates_in_seed_data_become_rfc3339_text():
    import datetime

    from mocks.loader import parse_config_text, validate_config

    config = validate_config(parse_config_text(
        "tables:\n  - name: t\n    seedData:\n      - {id: a, day: 2024-01-02, "
        "at: 2024-01-02T03:04:05Z}\n"))
    assert isinstance(config.tables[0].seed_data[0]["day"], datetime.date)
    store = BACKEND["new"]()
    store.apply_definitions([TableDefinition(config.tables[0])])
    item = items_of(store, "t")["a"]
    assert (item["day"], item["at"]) == ("2024-01-02", "2024-01-02T03:04:05Z")
    assert run(store, "list", "t", query={"day": ["2024-01-02"]}).items == [item]
