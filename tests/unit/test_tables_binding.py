"""The HTTP adapter of tables, in process: config errors, mock resolution, the item-id rule,
bodies, statuses and headers (SPEC "Extend binding"; behavior notes §6)."""
from __future__ import annotations

import asyncio

import orjson
import pytest

from mocks.config import Matcher
from mocks.engine.app import DataPlaneApp
from mocks.engine.core import Engine
from mocks.core.errors import ConfigError
from mocks.loader import validate_config
from tables.binding import item_id_parameter, read_write_body, resolve_mock_reference
from tables.errors import TableError
from tests.helpers import http_mock, make_config, make_request


def engine_of(*mocks: dict, **extra) -> Engine:
    engine = Engine()
    engine.load(validate_config(make_config(*mocks, **extra)))
    return engine


def call(engine: Engine, method: str, path: str, body: bytes = b"", query: str = "",
         headers: dict | None = None) -> tuple[int, dict[str, str], bytes]:
    messages = []
    scope = {"type": "http", "method": method, "path": path, "query_string": query.encode(),
             "headers": [(name.lower().encode(), value.encode())
                         for name, value in (headers or {}).items()]}

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        messages.append(message)

    asyncio.run(DataPlaneApp(engine)(scope, receive, send))
    start, answer = messages
    return (start["status"], {name.decode(): value.decode() for name, value in start["headers"]},
            answer["body"])


# ---------------------------------------------------------------------------- config


@pytest.mark.parametrize(("extra", "message"), [
    pytest.param({"extend": [{"mock": "nope", "table": "t", "action": "list"}]},
                 'extend[0].mock: extend "nope": mock not found', id="unknown mock"),
    pytest.param({"tables": [{"name": "t", "idStrategy": "prefix"}]},
                 "tables[0]: idStrategy 'prefix' needs idPrefix", id="prefix without idPrefix"),
    pytest.param({"tables": [{"name": "t", "seedData": [{"id": 1}, {"id": "1"}]}]},
                 'tables[0].seedData[1].id: duplicate id "1"', id="duplicate seed id"),
    pytest.param({"tables": [{"name": "t"}], "statefulResources": [{"name": "t"}]},
                 'statefulResources[0].name: duplicate table name "t"', id="duplicate table"),
    pytest.param({"extend": [{"mock": "m", "table": "t", "action": "custom"}]},
                 "extend[0]: action 'custom' needs operation", id="custom without operation"),
    pytest.param({"extend": [{"mock": "m", "table": "t", "action": "upsert"}]},
                 "extend[0].action", id="unknown action"),
    pytest.param({"tables": [{"name": "t", "idStrategy": "random"}]},
                 "tables[0].idStrategy", id="unknown strategy"),
    pytest.param({"tables": [{"name": "t", "colour": "red"}]}, "tables[0].colour: unknown key",
                 id="unknown key"),
    pytest.param({"tables": [{"name": "t", "response": {"create": {"status": 99}}}]},
                 "tables[0].response.create.status", id="bad status"),
])
def test_config_errors_name_the_key(extra, message):
    with pytest.raises(ConfigError) as raised:
        engine_of(http_mock("m", "GET", "/m"), **extra)
    assert message in str(raised.value)


def test_a_failed_load_keeps_the_old_snapshot_and_tables():
    engine = engine_of(http_mock("m", "GET", "/m"), tables=[{"name": "t"}],
                       extend=[{"mock": "m", "table": "t", "action": "list"}])
    with pytest.raises(ConfigError):
        engine.load(validate_config(make_config(http_mock("m", "GET", "/m"),
                                                extend=[{"mock": "x", "table": "t",
                                                         "action": "list"}])))
    assert "t" in engine.tables.tables and call(engine, "GET", "/m")[0] == 200


def mocks_for_resolution():
    config = validate_config(make_config(
        http_mock("by-id", "GET", "/a"), http_mock("other", "POST", "/v1/customers"),
        http_mock("POST /v1/customers", "GET", "/tricky")))
    return config.mocks


@pytest.mark.parametrize(("reference", "index"), [
    pytest.param("by-id", 0, id="mock id"),
    pytest.param("POST /v1/customers", 2, id="id wins over METHOD /path"),
    pytest.param("post /a", None, id="method must match"),
    pytest.param("GET /a", 0, id="METHOD /path"),
    pytest.param("GET /v1/customers", None, id="unknown"),
])
def test_resolve_mock_reference(reference, index):
    assert resolve_mock_reference(reference, mocks_for_resolution()) == index


@pytest.mark.parametrize(("matcher", "name"), [
    pytest.param({"path": "/users/{id}"}, "id", id="id"),
    pytest.param({"path": "/v1/customers/{customer}"}, "customer", id="resource name"),
    pytest.param({"path": "/users/{userId}/orders/{orderId}"}, "orderId", id="last wins"),
    pytest.param({"path": "/sessions/{sid}.json"}, "sid", id="inside a segment"),
    pytest.param({"path": "/files/{rest:.*}"}, "rest", id="greedy"),
    pytest.param({"path": "/users"}, None, id="none"),
    pytest.param({"pathPattern": r"^/o/(?P<order>\d+)$"}, "order", id="pattern group"),
])
def test_item_id_parameter(matcher, name):
    assert item_id_parameter(Matcher.model_validate(matcher)) == name


@pytest.mark.parametrize(("content_type", "body", "expected"), [
    pytest.param(None, b'{"a":1}', {"a": 1}, id="no content type is JSON"),
    pytest.param("application/json; charset=utf-8", b'{"a":1}', {"a": 1}, id="json"),
    pytest.param("application/merge-patch+json", b'{"a":1}', {"a": 1}, id="+json"),
    pytest.param("application/x-www-form-urlencoded", b"a=1&b[c]=true", {"a": 1,
                                                                         "b": {"c": True}},
                 id="form"),
    pytest.param("application/x-www-form-urlencoded", b'{"a":1}', {"a": 1},
                 id="JSON sent with curl's default form type"),
    pytest.param("text/plain", b'{"a":1}', {"a": 1}, id="other type that parses"),
    pytest.param("application/json", b"  ", {}, id="empty body"),
])
def test_read_write_body(content_type, body, expected):
    headers = {"Content-Type": content_type} if content_type else {}
    assert read_write_body(make_request("POST", "/", headers=headers, body=body), "t") == expected


@pytest.mark.parametrize(("content_type", "body", "status", "message"), [
    pytest.param("application/json", b"{bad", 400, "invalid JSON body: ", id="bad json"),
    pytest.param(None, b"nope", 400, "invalid JSON body: ", id="bad json without type"),
    pytest.param("text/plain", b"nope", 400,
                 'unsupported Content-Type "text/plain" and body is not valid JSON',
                 id="other type"),
    pytest.param(None, b'{"a":"' + b"x" * (1024 * 1024) + b'"}', 413, "request body too large",
                 id="over 1 MiB"),
])
def test_read_write_body_errors(content_type, body, status, message):
    headers = {"Content-Type": content_type} if content_type else {}
    with pytest.raises(TableError) as raised:
        read_write_body(make_request("POST", "/", headers=headers, body=body), "t")
    assert raised.value.status == status and raised.value.message.startswith(message)
    if status == 413:
        assert raised.value.body()["hint"] == "Reduce request body size to under 1MB"


# ---------------------------------------------------------------------------- answers


def crud_engine(statuses: dict | None = None, response: dict | None = None, **table):
    methods = {"list": "GET", "create": "POST", "get": "GET", "update": "PUT", "patch": "PATCH",
               "delete": "DELETE"}
    mocks, extend = [], []
    for action, method in methods.items():
        path = "/items" if action in ("list", "create") else "/items/{id}"
        mock = http_mock(f"items-{action}", method, path, body="ignored")
        if statuses is None or action not in statuses:
            del mock["http"]["response"]
        else:
            mock["http"]["response"]["statusCode"] = statuses[action]
        mocks.append(mock)
        binding = {"mock": f"items-{action}", "table": "items", "action": action}
        if response is not None:
            binding["response"] = response
        extend.append(binding)
    return engine_of(*mocks, tables=[{"name": "items", **table}], extend=extend)


def test_default_statuses_without_a_mock_response():
    engine = crud_engine()
    status, headers, body = call(engine, "POST", "/items", b'{"id":"a"}')
    assert status == 201 and headers["content-type"] == "application/json"
    assert call(engine, "GET", "/items")[0] == 200
    assert call(engine, "PUT", "/items/a", b"{}")[0] == 200
    assert call(engine, "PATCH", "/items/a", b"{}")[0] == 200
    status, headers, body = call(engine, "DELETE", "/items/a")
    assert status == 204 and body == b"" and "content-type" not in headers


def test_explicit_mock_status_governs_and_body_is_ignored():
    engine = crud_engine(statuses={"create": 200, "delete": 200})
    status, _, body = call(engine, "POST", "/items", b'{"id":"a"}')
    assert status == 200 and orjson.loads(body)["id"] == "a"
    assert call(engine, "DELETE", "/items/a")[:3:2] == (200, b"")


def test_transform_status_beats_the_mock_status():
    engine = crud_engine(statuses={"create": 200, "delete": 200},
                         response={"create": {"status": 202}, "delete": {"status": 410}})
    assert call(engine, "POST", "/items", b'{"id":"a"}')[0] == 202
    assert call(engine, "DELETE", "/items/a")[0] == 410


def test_error_answers_keep_their_own_status():
    engine = crud_engine(statuses={"get": 200, "create": 201})
    assert call(engine, "GET", "/items/zzz")[0] == 404
    call(engine, "POST", "/items", b'{"id":"a"}')
    assert call(engine, "POST", "/items", b'{"id":"a"}')[0] == 409


def test_delete_body_and_preserve():
    engine = crud_engine(response={"delete": {"status": 200, "preserve": True,
                                              "body": {"id": "{{item.id}}", "deleted": True}}},
                         seedData=[{"id": "a"}])
    status, _, body = call(engine, "DELETE", "/items/a")
    assert status == 200 and orjson.loads(body) == {"id": "a", "deleted": True}
    assert call(engine, "GET", "/items/a")[0] == 200


def test_204_never_carries_a_body():
    engine = crud_engine(response={"delete": {"body": {"id": "{{item.id}}"}}},
                         seedData=[{"id": "a"}])
    assert call(engine, "DELETE", "/items/a")[::2] == (204, b"")


def test_binding_transform_replaces_the_table_transform():
    engine = engine_of(
        http_mock("raw", "GET", "/raw/{id}"), http_mock("shaped", "GET", "/shaped/{id}"),
        tables=[{"name": "t", "seedData": [{"id": "a", "secret": 1}],
                 "response": {"fields": {"hide": ["secret"]}}}],
        extend=[{"mock": "raw", "table": "t", "action": "get"},
                {"mock": "shaped", "table": "t", "action": "get",
                 "response": {"fields": {"inject": {"object": "thing"}}}}])
    assert "secret" not in orjson.loads(call(engine, "GET", "/raw/a")[2])
    shaped = orjson.loads(call(engine, "GET", "/shaped/a")[2])
    assert shaped["secret"] == 1 and shaped["object"] == "thing"


def test_mock_headers_apply_with_templates_and_content_type_override():
    mock = http_mock("m", "GET", "/t/{id}", headers={"X-Req": "{{request.pathParam.id}}",
                                                      "Content-Type": "application/vnd.x+json"})
    engine = engine_of(mock, tables=[{"name": "t", "seedData": [{"id": "a"}]}],
                       extend=[{"mock": "m", "table": "t", "action": "get"}])
    _, headers, _ = call(engine, "GET", "/t/a")
    assert headers["x-req"] == "a" and headers["content-type"] == "application/vnd.x+json"


def test_head_sends_no_body_but_the_length():
    engine = crud_engine(seedData=[{"id": "a"}])
    status, headers, body = call(engine, "HEAD", "/items/a")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 0


def test_missing_item_id_parameter_is_400():
    engine = engine_of(http_mock("m", "GET", "/t"), tables=[{"name": "t"}],
                       extend=[{"mock": "m", "table": "t", "action": "get"}])
    status, _, body = call(engine, "GET", "/t")
    assert status == 400 and orjson.loads(body) == {
        "error": "item ID required for get", "resource": "t", "statusCode": 400}


def test_validation_warnings_header_in_warn_mode():
    engine = crud_engine(validation={"mode": "warn", "fields": {"name": {"required": True}}})
    status, headers, _ = call(engine, "POST", "/items", b"{}")
    assert status == 201 and headers["x-mockd-validation-warnings"] == "name is required"


def test_stateful_binding_on_the_mock():
    mock = http_mock("m", "POST", "/sb")
    mock["http"]["statefulBinding"] = {"table": "t", "action": "create"}
    del mock["http"]["response"]
    engine = engine_of(mock, tables=[{"name": "t"}])
    assert call(engine, "POST", "/sb", b'{"a":1}')[0] == 201


def test_extend_overrides_stateful_binding():
    mock = http_mock("m", "GET", "/sb")
    mock["http"]["statefulBinding"] = {"table": "t", "action": "create"}
    engine = engine_of(mock, tables=[{"name": "t"}],
                       extend=[{"mock": "m", "table": "t", "action": "list"}])
    assert "data" in orjson.loads(call(engine, "GET", "/sb")[2])


def test_binding_to_an_undefined_table_answers_404():
    engine = engine_of(http_mock("m", "GET", "/x"),
                       extend=[{"mock": "m", "table": "ghost", "action": "list"}])
    status, _, body = call(engine, "GET", "/x")
    assert status == 404 and orjson.loads(body)["error"] == 'resource "ghost" not found'


def test_custom_action_merges_path_params_into_the_input():
    mock = http_mock("m", "POST", "/ops/{account}")
    engine = engine_of(mock, extend=[{"mock": "m", "table": "", "action": "custom",
                                      "operation": "transfer"}])
    engine.tables.custom_runner = lambda request, store: {"input": request.body}
    status, _, body = call(engine, "POST", "/ops/acc1", b'{"amount":5}')
    assert status == 200 and orjson.loads(body) == {"input": {"amount": 5, "account": "acc1"}}
    engine.tables.custom_runner = lambda request, store: None
    assert orjson.loads(call(engine, "POST", "/ops/acc1", b"{}")[2]) == {"success": True}


def test_config_reload_keeps_runtime_items():
    config = make_config(http_mock("m", "POST", "/t"), tables=[{"name": "t"}],
                         extend=[{"mock": "m", "table": "t", "action": "create"}])
    engine = engine_of(http_mock("m", "POST", "/t"), tables=[{"name": "t"}],
                       extend=[{"mock": "m", "table": "t", "action": "create"}])
    call(engine, "POST", "/t", b'{"id":"kept"}')
    config["mocks"].append(http_mock("other", "GET", "/other"))
    engine.load(validate_config(config))
    assert "kept" in engine.tables.tables["t"].items


def test_example_stripe_config_loads():
    from pathlib import Path

    from mocks.loader import load_config_file

    engine = Engine()
    engine.load(load_config_file(Path(__file__).resolve().parents[2] / "examples" /
                                 "stripe-customers.yaml"))
    status, _, body = call(engine, "GET", "/v1/customers/cus_seed000000000001")
    assert status == 200 and orjson.loads(body)["object"] == "customer"


# ---------------------------------------------------------------------------- list filters


def listed_names(engine: Engine, query: str) -> list[str]:
    status, _, body = call(engine, "GET", "/pets", query=query)
    assert status == 200
    return sorted(item["name"] for item in orjson.loads(body)["data"])


PETS = [{"name": "rex", "kind": "dog"}, {"name": "tom", "kind": "cat"}]


def test_list_ignores_the_query_params_the_mock_matches_on():
    mock = http_mock("m", "GET", "/pets")
    mock["http"]["matcher"]["queryParams"] = {"version": "2"}
    engine = engine_of(mock, tables=[{"name": "pets", "seedData": PETS}],
                       extend=[{"mock": "m", "table": "pets", "action": "list"}])
    assert listed_names(engine, "version=2") == ["rex", "tom"]
    assert listed_names(engine, "version=2&kind=cat") == ["tom"]  # other names still filter


def test_list_ignores_credential_query_params():
    mock = http_mock("m", "GET", "/pets")
    mock["http"]["credentialQueryParams"] = ["api_key"]
    engine = engine_of(mock, tables=[{"name": "pets", "seedData": PETS}],
                       extend=[{"mock": "m", "table": "pets", "action": "list"}])
    assert listed_names(engine, "api_key=secret") == ["rex", "tom"]
    assert listed_names(engine, "api_key=secret&kind=dog") == ["rex"]


def test_list_filters_on_declared_query_params_only_when_items_have_the_field():
    mock = http_mock("m", "GET", "/pets")
    mock["http"]["declaredQueryParams"] = ["api_key", "api_secret", "kind"]
    engine = engine_of(mock, tables=[{"name": "pets", "seedData": PETS}],
                       extend=[{"mock": "m", "table": "pets", "action": "list"}])
    assert listed_names(engine, "api_key=k&api_secret=s") == ["rex", "tom"]
    assert listed_names(engine, "api_key=k&api_secret=s&kind=cat") == ["tom"]
    assert listed_names(engine, "kind=bird") == []  # a field: still an exact filter
    assert listed_names(engine, "colour=red") == []  # undeclared names filter as before


def test_list_without_credential_names_still_filters_on_every_name():
    engine = engine_of(http_mock("m", "GET", "/pets"),
                       tables=[{"name": "pets", "seedData": PETS}],
                       extend=[{"mock": "m", "table": "pets", "action": "list"}])
    assert listed_names(engine, "api_key=secret") == []
