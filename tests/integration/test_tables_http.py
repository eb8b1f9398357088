"""Stateful tables through a real ``mockd engine`` subprocess, driven with httpx.

Every row of SPEC "Table" (identifier strategies, seed data, ``parentField``,
``relationships``, ``validation``, ``response``, ``maxItems``), "Extend binding", "Query
behavior of list", "Form-encoded bodies", "Validation" and "Response transform", with the
statuses, error bodies and messages of behavior notes §6–7. The module runs twice: on the
in-memory store and on the Redis state store (``--state-store``).
"""
from __future__ import annotations

import re
import time
from urllib.parse import urlencode

import pytest

from tests.helpers import http_mock, make_config, run_mockd, start_engine
from tests.redis_server import redis_server  # noqa: F401 - module fixture

pytestmark = pytest.mark.integration

ACTION_METHOD = {"list": "GET", "create": "POST", "get": "GET", "update": "PUT",
                 "patch": "PATCH", "delete": "DELETE"}


def crud(table: str, base: str, *, param: str = "id", statuses: dict | None = None,
         response: dict | None = None, actions=tuple(ACTION_METHOD)) -> tuple[list, list]:
    """Mocks and extend bindings for ``table``: collection at ``base``, item at
    ``base/{param}`` (the shape of the conformance harness)."""
    statuses = {"list": 200, "create": 201, "get": 200, "update": 200, "patch": 200,
                "delete": 204, **(statuses or {})}
    mocks, extend = [], []
    for action in actions:
        path = base if action in ("list", "create") else f"{base}/{{{param}}}"
        mocks.append(http_mock(f"{table}-{action}", ACTION_METHOD[action], path,
                               status=statuses[action], body="ignored"))
        binding = {"mock": f"{table}-{action}", "table": table, "action": action}
        if response is not None:
            binding["response"] = response
        extend.append(binding)
    return mocks, extend


PRODUCTS = [
    {"id": "p1", "name": "banana", "price": 10, "category": "fruit", "stock": 5,
     "metadata": {"tier": "gold", "origin": "EC"}, "releasedAt": "2024-03-01T10:00:00+02:00",
     "active": True},
    {"id": "p2", "name": "apple", "price": 9.5, "category": "fruit", "stock": 0,
     "metadata": {"tier": "free", "origin": "NZ"}, "releasedAt": "2024-03-01T09:00:00Z",
     "active": False},
    {"id": "p3", "name": "Carrot", "price": 100, "category": "veg", "stock": 5,
     "metadata": {"tier": "gold", "origin": "NL"}, "releasedAt": "2023-12-31T23:59:59Z",
     "active": True},
    {"id": "p4", "name": "date", "price": 2, "category": "ghost", "stock": 1,
     "metadata": {"tier": "free"}, "releasedAt": "2024-01-15T00:00:00Z", "active": True,
     "limit": "not a filter"},
]


def build_config() -> dict:
    mocks: list = []
    extend: list = []
    tables: list = []

    def add(table: dict, base: str, **options):
        table_mocks, table_extend = crud(table["name"], base, **options)
        tables.append(table)
        mocks.extend(table_mocks)
        extend.extend(table_extend)

    add({"name": "users", "seedData": [{"id": "u1", "name": "Ada"}, {"id": "u2", "name": "Bob"}]},
        "/api/users")
    add({"name": "categories", "seedData": [{"id": "fruit", "label": "Fruit"},
                                            {"id": "veg", "label": "Vegetables"}],
         "response": {"fields": {"inject": {"object": "category"}}}}, "/api/categories")
    add({"name": "products", "seedData": PRODUCTS,
         "relationships": {"category": {"table": "categories"}}}, "/api/products")
    add({"name": "seq", "idStrategy": "sequence", "seedData": [{"id": 7}, {"id": "3"}]},
        "/api/seq")
    add({"name": "prefixed", "idStrategy": "prefix", "idPrefix": "cus_"}, "/api/prefixed")
    add({"name": "ulids", "idStrategy": "ulid"}, "/api/ulids")
    add({"name": "shorts", "idStrategy": "short"}, "/api/shorts")
    add({"name": "uuids"}, "/api/uuids")
    add({"name": "skus", "idField": "sku", "seedData": [{"sku": "A-1", "name": "a"}]},
        "/api/skus", param="sku")
    add({"name": "forms"}, "/api/forms")
    add({"name": "tiny", "maxItems": 2, "seedData": [{"id": "t1"}]}, "/api/tiny")
    add({"name": "orders", "parentField": "userId",
         "seedData": [{"id": "o1", "userId": "u1", "total": 5},
                      {"id": "o2", "userId": "u2", "total": 7}]},
        "/api/users/{userId}/orders", param="orderId")
    rules = {"name": {"required": True, "type": "string", "minLength": 2},
             "email": {"required": True, "format": "email"},
             "age": {"type": "integer", "min": 0, "max": 150},
             "address.city": {"required": True},
             "items.sku": {"pattern": "^[A-Z]+-[0-9]+$"}}
    for mode in ("strict", "warn", "permissive"):
        add({"name": f"valid_{mode}", "validation": {"mode": mode, "fields": rules}},
            f"/api/valid/{mode}")
    add({"name": "shaped", "seedData": [{"id": "s1", "name": "Ada", "secret": "x",
                                         "lines": [{"n": 1}], "email": "a@x"}],
         "response": {
             "timestamps": {"format": "unix", "fields": {"createdAt": "created"}},
             "fields": {"inject": {"object": "thing", "livemode": False},
                        "hide": ["secret", "updatedAt"], "rename": {"email": "mail"},
                        "wrapAsList": {"lines": {"url": "/v1/things/{{id}}/lines"}}},
             "list": {"dataField": "results", "extraFields": {"object": "list",
                                                              "has_more": False},
                      "metaFields": {"total": "total_count"}},
             "create": {"status": 200},
             "delete": {"status": 200, "body": {"id": "{{item.id}}", "deleted": True}},
             "errors": {"wrap": "error",
                        "fields": {"message": "message", "type": "type", "code": "code"},
                        "typeMap": {"NOT_FOUND": "invalid_request_error",
                                    "CONFLICT": "invalid_request_error"},
                        "codeMap": {"NOT_FOUND": "resource_missing",
                                    "CONFLICT": "resource_exists"}}}}, "/api/shaped")
    add({"name": "timestamps_iso", "seedData": [{"id": "a"}],
         "response": {"timestamps": {"format": "iso8601"}}}, "/api/ts/iso")
    add({"name": "timestamps_none", "seedData": [{"id": "a"}],
         "response": {"timestamps": {"format": "none"}, "list": {"hideMeta": True}}},
        "/api/ts/none")
    add({"name": "preserved", "seedData": [{"id": "keep"}]}, "/api/preserved",
        response={"delete": {"preserve": True, "status": 200,
                             "body": {"gone": "{{item.id}}"}}})
    # Binding by "METHOD /path", statuses from the action defaults (no response on the mock).
    mocks.append({"id": "ref-list", "http": {"matcher": {"method": "GET", "path": "/api/ref"}}})
    mocks.append({"id": "ref-create", "http": {"matcher": {"method": "POST",
                                                           "path": "/api/ref"}}})
    extend += [{"mock": "GET /api/ref", "table": "ref", "action": "list"},
               {"mock": "POST /api/ref", "table": "ref", "action": "create"}]
    tables.append({"name": "ref"})
    # Legacy statefulResources + http.statefulBinding on the mock.
    mocks.append({"id": "legacy-list", "http": {
        "matcher": {"method": "GET", "path": "/api/legacy"},
        "statefulBinding": {"table": "legacy", "action": "list"}}})
    mocks.append({"id": "legacy-get", "http": {
        "matcher": {"method": "GET", "path": "/api/legacy/{key}"},
        "response": {"statusCode": 203, "headers": {"X-Legacy": "{{request.pathParam.key}}"}},
        "statefulBinding": {"table": "legacy", "action": "get"}}})
    config = make_config(*mocks, tables=tables, extend=extend,
                         statefulResources=[{"name": "legacy", "idField": "key",
                                             "seedData": [{"key": "k1", "v": 1}]}])
    return config


@pytest.fixture(scope="module", params=["memory", "redis"])
def engine(request, tmp_path_factory):
    """The engine serving :func:`build_config`: once with the in-memory store, once with
    ``--state-store`` on a module-wide ``redis-server`` (every test runs on both)."""
    extra = []
    if request.param == "redis":
        extra = ["--state-store", request.getfixturevalue("redis_server").url]
    with start_engine(tmp_path_factory.mktemp("tables"), build_config(),
                      extra_args=extra) as process:
        yield process


@pytest.fixture(scope="module")
def client(engine):
    """One httpx client per engine, shared by the module's tests: every test still sends its
    own requests to the real engine; only the client object (whose SSL setup costs ~45 ms of
    CPU each time one is built) is reused, and each assertion reads its own response."""
    with engine.client() as http:
        yield http


# ---------------------------------------------------------------------------- crud


def test_headless_engine_serves_a_table_like_the_conformance_sample(client):
    assert [user["id"] for user in client.get("/api/users").json()["data"]] == ["u2", "u1"]
    created = client.post("/api/users", json={"name": "Tom"})
    assert created.status_code == 201
    assert client.get(f"/api/users/{created.json()['id']}").json()["name"] == "Tom"


def test_crud_cycle_statuses_and_bodies(client):
    created = client.post("/api/uuids", json={"name": "x", "createdAt": "ignored"})
    assert created.status_code == 201
    item = created.json()
    assert re.fullmatch(r"[0-9a-f-]{36}", item["id"])
    assert item["createdAt"] == item["updatedAt"] != "ignored"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", item["createdAt"])
    assert created.headers["content-type"] == "application/json"
    url = f"/api/uuids/{item['id']}"
    replaced = client.put(url, json={"other": 1, "id": "ignored"})
    assert replaced.status_code == 200
    body = replaced.json()
    assert body["id"] == item["id"] and "name" not in body and body["other"] == 1
    assert body["createdAt"] == item["createdAt"] and body["updatedAt"] > item["updatedAt"]
    patched = client.patch(url, json={"name": "again", "createdAt": "x"}).json()
    assert patched["other"] == 1 and patched["name"] == "again"
    assert patched["createdAt"] == item["createdAt"]
    deleted = client.delete(url)
    assert deleted.status_code == 204 and deleted.content == b""
    assert client.get(url).status_code == 404


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
def test_missing_item_is_404_with_the_error_body(client, method):
    answer = client.request(method, "/api/users/nobody", json={"a": 1})
    assert answer.status_code == 404
    assert answer.json() == {"error": 'resource "users" item "nobody" not found',
                             "resource": "users", "id": "nobody", "statusCode": 404}


def test_create_with_an_existing_id_is_409(client):
    answer = client.post("/api/users", json={"id": "u1"})
    assert answer.status_code == 409
    assert answer.json() == {"error": 'resource "users" item "u1" already exists',
                             "resource": "users", "id": "u1", "statusCode": 409}


def test_id_in_the_create_body_wins(client):
    assert client.post("/api/prefixed", json={"id": "mine"}).json()["id"] == "mine"


@pytest.mark.parametrize(("base", "pattern"), [
    ("/api/prefixed", r"cus_[0-9a-f]{16}"), ("/api/ulids", r"[0-9A-HJKMNP-TV-Z]{26}"),
    ("/api/shorts", r"[0-9a-f]{16}"),
    ("/api/uuids", r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")])
def test_id_strategies(client, base, pattern):
    ids = [client.post(base, json={}).json()["id"] for _ in range(3)]
    assert all(re.fullmatch(pattern, value) for value in ids), ids
    if base == "/api/ulids":
        assert ids == sorted(ids)


def test_sequence_continues_after_the_highest_numeric_seed(client):
    assert [client.post("/api/seq", json={}).json()["id"] for _ in range(2)] == [8, 9]
    assert client.get("/api/seq/8").json()["id"] == 8


def test_custom_id_field_and_resource_named_path_parameter(client):
    assert client.get("/api/skus/A-1").json()["name"] == "a"
    created = client.post("/api/skus", json={"name": "b"}).json()
    assert "sku" in created and "id" not in created
    assert client.delete(f"/api/skus/{created['sku']}").status_code == 204


def test_max_items_answers_507(client):
    assert client.post("/api/tiny", json={}).status_code == 201
    answer = client.post("/api/tiny", json={})
    assert answer.status_code == 507
    assert answer.json()["error"] == 'resource "tiny" has reached its maximum capacity of 2 items'


def test_parent_field_stores_the_parent_and_filters_list(client):
    created = client.post("/api/users/u1/orders", json={"total": 9, "userId": "evil"}).json()
    assert created["userId"] == "u1"
    u1 = client.get("/api/users/u1/orders").json()
    assert sorted(order["id"] for order in u1["data"]) == sorted(["o1", created["id"]])
    assert [order["id"] for order in client.get("/api/users/u2/orders").json()["data"]] == ["o2"]
    assert client.get("/api/users/u2/orders/o1").status_code == 404
    assert client.get("/api/users/u1/orders/o1").json()["total"] == 5


def test_binding_resolved_by_method_and_path_uses_action_defaults(client):
    created = client.post("/api/ref", json={"n": 1})
    assert created.status_code == 201
    assert created.json()["id"] in [item["id"] for item in client.get("/api/ref").json()["data"]]


def test_legacy_stateful_resources_with_stateful_binding(client):
    assert client.get("/api/legacy").json()["data"][0]["key"] == "k1"
    answer = client.get("/api/legacy/k1")
    assert answer.status_code == 203 and answer.headers["x-legacy"] == "k1"
    assert answer.json()["v"] == 1


def test_bodies_other_than_json(client):
    answer = client.post("/api/users", content=b"{oops",
                         headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("invalid JSON body: ")
    answer = client.post("/api/users", content=b"plain", headers={"Content-Type": "text/plain"})
    assert answer.status_code == 400
    assert answer.json()["error"] == ('unsupported Content-Type "text/plain" and body is not '
                                      'valid JSON')
    assert client.post("/api/users", content=b'{"name":"no type"}').status_code == 201
    answer = client.post("/api/users", json={"blob": "x" * (1024 * 1024 + 1)})
    assert answer.status_code == 413
    assert answer.json()["hint"] == "Reduce request body size to under 1MB"


# ---------------------------------------------------------------------------- list queries


def ids(answer) -> list[str]:
    return [item["id"] for item in answer.json()["data"]]


def test_default_list_envelope(client):
    body = client.get("/api/products").json()
    assert set(body) == {"data", "meta"}
    assert body["meta"] == {"total": 4, "limit": 100, "offset": 0, "count": 4, "has_more": False}
    assert ids(client.get("/api/products")) == ["p4", "p3", "p2", "p1"]


@pytest.mark.parametrize(("params", "expected"), [
    pytest.param({"category": "fruit"}, ["p1", "p2"], id="exact filter"),
    pytest.param({"category": "fruit", "stock": "5"}, ["p1"], id="filters AND"),
    pytest.param({"active": "false"}, ["p2"], id="boolean as text"),
    pytest.param({"price": "9.5"}, ["p2"], id="number as text"),
    pytest.param({"metadata[tier]": "gold"}, ["p1", "p3"], id="nested field"),
    pytest.param({"metadata[origin]": "NL", "metadata[tier]": "gold"}, ["p3"],
                 id="two nested fields"),
    pytest.param({"category": "none"}, [], id="no match"),
    pytest.param({"missing": "x"}, [], id="missing field never matches"),
])
def test_filters(client, params, expected):
    assert sorted(ids(client.get("/api/products", params=params))) == expected


@pytest.mark.parametrize("name", [
    "limit", "offset", "page", "per_page", "starting_after", "ending_before", "cursor",
    "page_size", "page_token", "sort", "order", "sort_by", "order_by", "expand", "expand[]",
    "fields", "include", "exclude", "select", "format", "pretty", "api_version",
    "idempotency_key", "request_id"])
def test_reserved_names_are_never_filters(client, name):
    value = "p4" if name in ("starting_after", "ending_before") else "not a filter"
    answer = client.get("/api/products", params={name: value})
    assert answer.status_code == 200
    assert answer.json()["meta"]["total"] == 4


@pytest.mark.parametrize(("params", "expected"), [
    pytest.param({"sort": "name", "order": "asc"}, ["p3", "p2", "p1", "p4"], id="strings"),
    pytest.param({"sort": "price", "order": "asc"}, ["p4", "p2", "p1", "p3"], id="numbers"),
    pytest.param({"sort": "price"}, ["p3", "p1", "p2", "p4"], id="order defaults to desc"),
    pytest.param({"sort": "releasedAt", "order": "asc"}, ["p3", "p4", "p1", "p2"],
                 id="times across offsets"),
    pytest.param({"sort": "id", "order": "asc"}, ["p1", "p2", "p3", "p4"], id="id"),
    pytest.param({"sort": "createdAt", "order": "asc"}, ["p1", "p2", "p3", "p4"],
                 id="createdAt"),
    pytest.param({"sort": "updatedAt", "order": "desc"}, ["p4", "p3", "p2", "p1"],
                 id="updatedAt"),
])
def test_sort_and_order(client, params, expected):
    assert ids(client.get("/api/products", params=params)) == expected


def test_limit_and_offset(client):
    answer = client.get("/api/products", params={"limit": 2, "offset": 1, "sort": "id",
                                                 "order": "asc"})
    assert ids(answer) == ["p2", "p3"]
    assert answer.json()["meta"] == {"total": 4, "limit": 2, "offset": 1, "count": 2,
                                     "has_more": True}
    last = client.get("/api/products", params={"limit": 2, "offset": 2})
    assert last.json()["meta"]["has_more"] is False


def test_starting_after_and_ending_before_ignore_offset(client):
    params = {"sort": "id", "order": "asc", "limit": 2, "offset": 3}
    after = client.get("/api/products", params={**params, "starting_after": "p1"})
    assert ids(after) == ["p2", "p3"] and after.json()["meta"]["offset"] == 0
    assert after.json()["meta"]["has_more"] is True
    before = client.get("/api/products", params={**params, "ending_before": "p4"})
    assert ids(before) == ["p2", "p3"] and before.json()["meta"]["has_more"] is True


def test_cursor_walk_visits_every_item_once(client):
    seen, cursor = [], None
    while True:
        params = {"limit": 1, **({"starting_after": cursor} if cursor else {})}
        body = client.get("/api/products", params=params).json()
        seen += [item["id"] for item in body["data"]]
        if not body["meta"]["has_more"]:
            break
        cursor = body["data"][-1]["id"]
    assert seen == ["p4", "p3", "p2", "p1"]


@pytest.mark.parametrize("params", [
    pytest.param([("expand[]", "category")], id="expand[]"),
    pytest.param([("expand", "category,nothing")], id="comma list"),
    pytest.param([("expand[]", "data.category")], id="data. prefix"),
])
def test_expand_on_list(client, params):
    body = client.get("/api/products", params=params + [("sort", "id"), ("order", "asc")]).json()
    categories = [item["category"] for item in body["data"]]
    assert categories[0] == {"id": "fruit", "label": "Fruit", "object": "category",
                             "createdAt": categories[0]["createdAt"],
                             "updatedAt": categories[0]["updatedAt"]}
    assert categories[3] == "ghost"


def test_expand_on_get_and_unrelated_field_stays(client):
    item = client.get("/api/products/p3", params=[("expand[]", "category"),
                                                  ("expand[]", "name")]).json()
    assert item["category"]["label"] == "Vegetables" and item["name"] == "Carrot"
    assert client.get("/api/products/p3").json()["category"] == "veg"


# ---------------------------------------------------------------------------- forms


def test_form_encoded_body_conversion(client):
    form = [("active", "true"), ("off", "false"), ("count", "42"), ("ratio", "1.5"),
            ("nothing", "null"), ("phone", "+15551234567"), ("name", "Ada Lovelace"),
            ("metadata[tier]", "gold"), ("tags[0]", "a"), ("tags[1]", "b"),
            ("lines[0][sku]", "A-1"), ("lines[0][qty]", "2"), ("lines[1][sku]", "B-2"),
            ("forever", "inf")]
    answer = client.post("/api/forms", content=urlencode(form),
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    item = answer.json()
    assert answer.status_code == 201
    assert {key: item[key] for key in ("active", "off", "count", "ratio", "nothing", "phone",
                                       "name", "metadata", "tags", "lines", "forever")} == {
        "active": True, "off": False, "count": 42, "ratio": 1.5, "nothing": None,
        "phone": "+15551234567", "name": "Ada Lovelace", "metadata": {"tier": "gold"},
        "tags": ["a", "b"], "lines": [{"sku": "A-1", "qty": 2}, {"sku": "B-2"}],
        "forever": None}


def test_form_encoded_patch(client):
    created = client.post("/api/forms", json={"n": 1}).json()
    answer = client.patch(f"/api/forms/{created['id']}", content=b"n=2&flag=true",
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert answer.json()["n"] == 2 and answer.json()["flag"] is True


# ---------------------------------------------------------------------------- validation

VALID = {"name": "Ada", "email": "ada@example.com", "age": 36, "address": {"city": "London"},
         "items": [{"sku": "AB-1"}]}


def test_strict_validation_accepts_a_valid_body_and_rejects_any_issue(client):
    assert client.post("/api/valid/strict", json=VALID).status_code == 201
    for bad in ({**VALID, "email": "nope"}, {**VALID, "age": 3.5}, {**VALID, "name": "A"},
                {**VALID, "address": {}}, {**VALID, "items": [{"sku": "AB-1"}, {"sku": "x"}]},
                {key: value for key, value in VALID.items() if key != "name"}):
        answer = client.post("/api/valid/strict", json=bad)
        assert answer.status_code == 400, bad
        body = answer.json()
        assert (body["error"], body["resource"], body["statusCode"]) == (
            "validation failed", "valid_strict", 400)
        assert body["errors"][0]["location"] == "body"


def test_strict_validation_on_update_and_partial_patch(client):
    created = client.post("/api/valid/strict", json=VALID).json()
    url = f"/api/valid/strict/{created['id']}"
    assert client.put(url, json={"name": "Ada"}).status_code == 400
    assert client.patch(url, json={"age": 40}).status_code == 200
    assert client.patch(url, json={"age": -1}).status_code == 400


def test_warn_mode_never_rejects_and_reports_in_a_header(client):
    answer = client.post("/api/valid/warn", json={"name": "A", "email": "x"})
    assert answer.status_code == 201
    warnings = answer.headers["x-mockd-validation-warnings"]
    assert "name must be at least 2 characters" in warnings and "address.city" in warnings


def test_permissive_mode_rejects_only_missing_required_fields(client):
    answer = client.post("/api/valid/permissive", json={**VALID, "email": "not-an-email"})
    assert answer.status_code == 201
    answer = client.post("/api/valid/permissive", json={"name": "Ada", "email": "a@b.co"})
    assert answer.status_code == 400
    assert answer.json()["errors"] == [{"field": "address.city", "location": "body",
                                        "code": "required",
                                        "message": "address.city is required"}]


# ---------------------------------------------------------------------------- transforms


def test_item_transform_order_and_every_fields_key(client):
    item = client.get("/api/shaped/s1").json()
    assert "secret" not in item and "updatedAt" not in item and "email" not in item
    assert item["mail"] == "a@x" and item["object"] == "thing" and item["livemode"] is False
    assert isinstance(item["created"], int) and abs(item["created"] - time.time()) < 600
    assert item["lines"] == {"object": "list", "data": [{"n": 1}], "has_more": False,
                             "url": "/v1/things/s1/lines"}


def test_list_transform_envelope(client):
    body = client.get("/api/shaped", params={"limit": 1}).json()
    assert body["object"] == "list" and body["has_more"] is False
    assert body["total_count"] == 1 and body["limit"] == 1 and body["count"] == 1
    assert "meta" not in body and body["results"][0]["id"] == "s1"


def test_create_and_delete_transforms(client):
    created = client.post("/api/shaped", json={"name": "x"})
    assert created.status_code == 200 and created.json()["object"] == "thing"
    deleted = client.delete(f"/api/shaped/{created.json()['id']}")
    assert deleted.status_code == 200
    assert deleted.json() == {"id": created.json()["id"], "deleted": True}


def test_error_transform(client):
    answer = client.get("/api/shaped/nope")
    assert answer.status_code == 404
    assert answer.json() == {"error": {"message": 'resource "shaped" item "nope" not found',
                                       "type": "invalid_request_error",
                                       "code": "resource_missing"}}
    assert client.post("/api/shaped", json={"id": "s1"}).json()["error"]["code"] == \
        "resource_exists"


def test_timestamp_formats_iso8601_and_none(client):
    item = client.get("/api/ts/iso/a").json()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", item["createdAt"])
    body = client.get("/api/ts/none").json()
    assert set(body) == {"data"} and set(body["data"][0]) == {"id"}


def test_delete_preserve_answers_but_keeps_the_item(client):
    answer = client.delete("/api/preserved/keep")
    assert answer.status_code == 200 and answer.json() == {"gone": "keep"}
    assert client.get("/api/preserved/keep").status_code == 200


# ---------------------------------------------------------------------------- startup


def test_unknown_extend_mock_is_a_one_line_config_error(tmp_path):
    config = make_config(http_mock("m", "GET", "/m"),
                         extend=[{"mock": "ghost", "table": "t", "action": "list"}])
    (tmp_path / "bad.yaml").write_text(__import__("yaml").safe_dump(config))
    result = run_mockd(["engine", "-c", str(tmp_path / "bad.yaml"), "--port", "0"], tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and 'extend "ghost": mock not found' in lines[0]
