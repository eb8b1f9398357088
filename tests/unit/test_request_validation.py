"""Per-mock request validation ``http.validation`` (behavior notes §7): every location, mode,
``failStatus``, code, the problem+json shape, the warnings header and config errors.

Requests go through the real data-plane ASGI app of an in-process engine.
"""
from __future__ import annotations

import asyncio

import orjson
import pytest

from mocks.engine.app import DataPlaneApp
from mocks.engine.core import Engine
from mocks.core.errors import ConfigError
from mocks.loader import validate_config
from mocks.core.responses import CompiledResponse
from mocks.protocols.http.validation import ValidatingAction, ValidatingStreamAction
from tables.validation import TableValidator, ValidationIssue
from tests.helpers import http_mock, make_config


def engine_of(*mocks: dict, **extra) -> Engine:
    engine = Engine()
    engine.load(validate_config(make_config(*mocks, **extra)))
    return engine


def call(engine: Engine, method: str, path: str, body: bytes | str = b"", query: str = "",
         headers: dict | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request through the data-plane app: ``(status, headers, body)``."""
    messages = []
    scope = {"type": "http", "method": method, "path": path, "query_string": query.encode(),
             "headers": [(name.lower().encode(), value.encode())
                         for name, value in (headers or {}).items()]}
    raw = body.encode() if isinstance(body, str) else body

    async def receive():
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message):
        messages.append(message)

    asyncio.run(DataPlaneApp(engine)(scope, receive, send))
    start = messages[0]
    content = b"".join(message.get("body", b"") for message in messages[1:])
    return (start["status"], {name.decode(): value.decode() for name, value in start["headers"]},
            content)


def validated(validation: dict, method: str = "POST", path: str = "/v",
              **extra) -> Engine:
    return engine_of(http_mock("v", method, path, body={"ok": True}, status=201,
                               validation=validation, **extra))


def problem(engine: Engine, *args, **kwargs) -> tuple[int, dict, dict]:
    status, headers, body = call(engine, *args, **kwargs)
    return status, headers, orjson.loads(body)


# ---------------------------------------------------------------------------- wiring


def test_mocks_without_validation_get_no_wrapper():
    engine = engine_of(http_mock("plain", "GET", "/p"),
                       http_mock("checked", "GET", "/c", validation={"required": ["a"]}))
    actions = {candidate.mock_id: candidate.action for candidate in engine.snapshot.candidates}
    assert type(actions["plain"]) is CompiledResponse
    assert isinstance(actions["checked"], ValidatingAction)


def test_a_valid_request_gets_the_mock_answer_without_warnings():
    engine = validated({"fields": {"name": {"type": "string", "required": True}}})
    status, headers, body = call(engine, "POST", "/v", '{"name": "Ada"}')
    assert (status, orjson.loads(body)) == (201, {"ok": True})
    assert "x-mockd-validation-warnings" not in headers


# ---------------------------------------------------------------------------- problem shape


def test_one_failure_problem_json_shape():
    engine = validated({"fields": {"email": {"type": "string", "format": "email"}}})
    status, headers, body = problem(engine, "POST", "/v", '{"email": "nope"}')
    assert status == 400
    assert headers["content-type"] == "application/problem+json"
    assert body == {
        "type": "validation_error", "title": "Request Validation Failed", "status": 400,
        "detail": "email must be a valid email",
        "errors": [{"field": "email", "location": "body", "code": "format",
                    "message": "email must be a valid email", "received": "nope",
                    "expected": "email", "hint": "for example user@example.com"}]}


def test_several_failures_count_in_detail_and_fail_status_applies():
    engine = validated({"failStatus": 422, "required": ["a", "b"]})
    status, _, body = problem(engine, "POST", "/v", "{}")
    assert status == 422 and body["status"] == 422
    assert body["detail"] == "2 validation errors"
    assert [(error["field"], error["code"]) for error in body["errors"]] == [
        ("a", "required"), ("b", "required")]
    assert body["errors"][0]["hint"] == "add a to the JSON body"
    assert "received" not in body["errors"][0]


def test_head_rejection_has_no_body_bytes():
    engine = validated({"queryParams": {"q": {"required": True}}}, method="HEAD")
    status, headers, body = call(engine, "HEAD", "/v")
    assert status == 400 and body == b"" and int(headers["content-length"]) > 0


# ---------------------------------------------------------------------------- codes


@pytest.mark.parametrize(("rule", "value", "code"), [
    ({"required": True}, None, "required"),
    ({"type": "integer"}, "7", "type"),
    ({"minLength": 3}, "ab", "min_length"),
    ({"maxLength": 2}, "abc", "max_length"),
    ({"pattern": "^[A-Z]+$"}, "abc", "pattern"),
    ({"format": "uuid"}, "not-a-uuid", "format"),
    ({"min": 1}, 0, "min"),
    ({"max": 10}, 11, "max"),
    ({"exclusiveMin": 1}, 1, "exclusive_min"),
    ({"exclusiveMax": 1}, 1, "exclusive_max"),
    ({"minItems": 2}, [1], "min_items"),
    ({"maxItems": 1}, [1, 2], "max_items"),
    ({"uniqueItems": True}, [1, 1], "unique_items"),
    ({"enum": ["a", "b"]}, "c", "enum"),
])
def test_each_rule_code_on_the_body(rule, value, code):
    engine = validated({"fields": {"f": rule}})
    body = {} if value is None else {"f": value}
    status, _, answer = problem(engine, "POST", "/v", orjson.dumps(body))
    assert status == 400
    assert [(error["field"], error["location"], error["code"])
            for error in answer["errors"]] == [("f", "body", code)]


def test_nested_dot_paths_reach_every_array_element():
    engine = validated({"fields": {"items.sku": {"type": "string", "required": True}}})
    _, _, answer = problem(engine, "POST", "/v", '{"items": [{"sku": "a"}, {}, {"sku": 3}]}')
    assert [(error["field"], error["code"]) for error in answer["errors"]] == [
        ("items[1].sku", "required"), ("items[2].sku", "type")]


def test_invalid_json_is_one_issue_and_skips_field_rules():
    engine = validated({"required": ["a"], "fields": {"a": {"type": "string"}}})
    _, _, answer = problem(engine, "POST", "/v", "{not json")
    assert answer["detail"] == "request body is not valid JSON"
    assert [(error["field"], error["location"], error["code"]) for error in answer["errors"]] \
        == [("", "body", "invalid_json")]
    assert answer["errors"][0]["hint"]


def test_an_empty_body_counts_as_an_empty_object():
    engine = validated({"required": ["a"]})
    _, _, answer = problem(engine, "POST", "/v", "")
    assert [error["code"] for error in answer["errors"]] == ["required"]


def test_schema_properties_root_type_and_additional_properties():
    schema = {"type": "object", "additionalProperties": False, "required": ["name"],
              "properties": {"name": {"type": "string", "minLength": 2},
                             "age": {"type": ["integer", "null"], "minimum": 0}}}
    engine = validated({"schema": schema})
    assert call(engine, "POST", "/v", '{"name": "Al", "age": null}')[0] == 201
    _, _, answer = problem(engine, "POST", "/v", '{"name": "A", "age": -1, "extra": 1}')
    assert [(error["field"], error["code"]) for error in answer["errors"]] == [
        ("extra", "unknown_field"), ("name", "min_length"), ("age", "min")]
    _, _, answer = problem(engine, "POST", "/v", "[1, 2]")
    assert [(error["field"], error["code"], error["expected"])
            for error in answer["errors"]] == [("", "schema", "object")]


def test_explicit_fields_win_over_schema_rules():
    engine = validated({"schema": {"properties": {"n": {"type": "string"}}},
                        "fields": {"n": {"type": "integer"}}})
    assert call(engine, "POST", "/v", '{"n": 5}')[0] == 201


# ---------------------------------------------------------------------------- locations


def test_path_params_are_coerced_from_text():
    engine = validated({"pathParams": {"id": {"type": "integer", "min": 1}}},
                       method="GET", path="/users/{id}")
    assert call(engine, "GET", "/users/5")[0] == 201
    _, _, answer = problem(engine, "GET", "/users/abc")
    assert [(error["field"], error["location"], error["code"], error["received"])
            for error in answer["errors"]] == [("id", "path", "type", "abc")]
    _, _, answer = problem(engine, "GET", "/users/0")
    assert [(error["code"], error["received"]) for error in answer["errors"]] == [("min", 0)]


def test_query_params_are_coerced_and_checked():
    engine = validated({"queryParams": {
        "limit": {"type": "integer", "max": 100}, "active": {"type": "boolean"},
        "sort": {"required": True, "enum": ["asc", "desc"]}}}, method="GET")
    assert call(engine, "GET", "/v", query="limit=10&active=true&sort=asc")[0] == 201
    _, _, answer = problem(engine, "GET", "/v", query="limit=500&active=maybe")
    assert [(error["field"], error["location"], error["code"]) for error in answer["errors"]] \
        == [("limit", "query", "max"), ("active", "query", "type"), ("sort", "query",
                                                                      "required")]
    assert answer["errors"][2]["hint"] == "add sort to the query string"


def test_headers_are_matched_without_case():
    engine = validated({"headers": {"X-Api-Key": {"required": True, "pattern": "^key-"}}},
                       method="GET")
    assert call(engine, "GET", "/v", headers={"x-api-key": "key-1"})[0] == 201
    _, _, answer = problem(engine, "GET", "/v", headers={"X-API-KEY": "nope"})
    assert [(error["field"], error["location"], error["code"]) for error in answer["errors"]] \
        == [("x-api-key", "header", "pattern")]
    _, _, answer = problem(engine, "GET", "/v")
    assert answer["errors"][0]["code"] == "required"


# ---------------------------------------------------------------------------- modes


def test_warn_mode_never_rejects_and_reports_in_a_header():
    engine = validated({"mode": "warn", "required": ["a"],
                        "fields": {"b": {"type": "integer"}}})
    status, headers, body = call(engine, "POST", "/v", '{"b": "x"}')
    assert (status, orjson.loads(body)) == (201, {"ok": True})
    assert headers["x-mockd-validation-warnings"] == "a is required; b must be of type integer"
    # The pre-built start message of the static response is shared: it must stay untouched.
    status, headers, _ = call(engine, "POST", "/v", '{"a": 1}')
    assert status == 201 and "x-mockd-validation-warnings" not in headers


def test_permissive_mode_rejects_only_required_issues():
    engine = validated({"mode": "permissive", "required": ["a"],
                        "fields": {"b": {"type": "integer"}}})
    status, headers, _ = call(engine, "POST", "/v", '{"a": 1, "b": "x"}')
    assert status == 201
    assert headers["x-mockd-validation-warnings"] == "b must be of type integer"
    status, _, answer = problem(engine, "POST", "/v", '{"b": "x"}')
    assert status == 400 and answer["detail"] == "2 validation errors"


def test_invalid_json_in_permissive_mode_is_a_warning():
    engine = validated({"mode": "permissive", "fields": {"a": {"type": "string"}}})
    status, headers, _ = call(engine, "POST", "/v", "{oops")
    assert status == 201
    assert headers["x-mockd-validation-warnings"] == "request body is not valid JSON"


def test_rule_message_replaces_the_generated_one():
    engine = validated({"fields": {"a": {"type": "string", "message": "a must be text"}}})
    _, _, answer = problem(engine, "POST", "/v", '{"a": 1}')
    assert answer["detail"] == "a must be text"


# ---------------------------------------------------------------------------- other actions


def test_a_bound_mock_is_validated_before_the_table_write():
    engine = engine_of(
        http_mock("create", "POST", "/users", status=201, validation={"required": ["name"]},
                  statefulBinding={"table": "users", "action": "create"}),
        http_mock("list", "GET", "/users", statefulBinding={"table": "users",
                                                            "action": "list"}),
        tables=[{"name": "users"}])
    assert call(engine, "POST", "/users", "{}")[0] == 400
    assert call(engine, "POST", "/users", '{"name": "Ada"}')[0] == 201
    _, _, listing = call(engine, "GET", "/users")
    assert [item["name"] for item in orjson.loads(listing)["data"]] == ["Ada"]


def test_a_streaming_mock_is_validated_too():
    mock = {"id": "s", "type": "http", "http": {
        "matcher": {"method": "GET", "path": "/events"},
        "sse": {"events": [{"data": "hello"}]},
        "validation": {"queryParams": {"token": {"required": True}}}}}
    engine = engine_of(mock)
    action = engine.snapshot.candidates[0].action
    assert isinstance(action, ValidatingStreamAction) and action.kind == "sse"
    status, headers, body = call(engine, "GET", "/events")
    assert status == 400 and headers["content-type"] == "application/problem+json"
    assert orjson.loads(body)["errors"][0]["field"] == "token"
    status, headers, body = call(engine, "GET", "/events", query="token=t")
    assert status == 200 and b"hello" in body


# ---------------------------------------------------------------------------- config


@pytest.mark.parametrize(("validation", "where"), [
    pytest.param({"fields": {"email": {"pattern": "(["}}},
                 "mocks[0].http.validation.fields.email.pattern", id="bad pattern"),
    pytest.param({"fields": {"a": {"type": "text"}}}, "mocks[0].http.validation.fields.a.type",
                 id="unknown type"),
    pytest.param({"mode": "loose"}, "mocks[0].http.validation.mode", id="unknown mode"),
    pytest.param({"failStatus": 99}, "mocks[0].http.validation.failStatus", id="bad status"),
    pytest.param({"onCreate": {}}, "mocks[0].http.validation.onCreate", id="unknown key"),
    pytest.param({"schema": {"properties": {"a": {"pattern": "(["}}}},
                 "mocks[0].http.validation.schema", id="bad schema pattern"),
])
def test_config_errors_name_the_key(validation, where):
    with pytest.raises(ConfigError) as raised:
        validated(validation)
    assert raised.value.path == where


def test_camel_case_keys_load_into_the_typed_block():
    config = validate_config(make_config(http_mock("v", "GET", "/v", validation={
        "pathParams": {"a": {}}, "queryParams": {"b": {}}, "failStatus": 409})))
    validation = config.mocks[0].http.validation
    assert (list(validation.path_params), list(validation.query_params),
            validation.fail_status, validation.mode) == (["a"], ["b"], 409, "strict")


def test_table_issues_still_carry_no_hint():
    validator = TableValidator(validate_config(make_config(tables=[{
        "name": "t", "validation": {"required": ["a"]}}])).tables[0].validation)
    issues = validator.check({}, "create")
    assert issues == [ValidationIssue("a", "body", "required", "a is required")]
    assert "hint" not in issues[0].as_dict()
