"""Table validation: every rule key and format, dot paths, modes (SPEC "Validation";
behavior notes §7)."""
from __future__ import annotations

import pytest

from tables.config import FieldRule, TableConfig, TableValidation
from tables.store import OperationRequest, TableDefinition, TableStore
from tables.validation import (TableValidator, check_value, format_matches, resolve_path,
                               type_matches)


def issues_of(rule: dict, value, present: bool = True, partial: bool = False) -> list[str]:
    found = []
    check_value(FieldRule.model_validate(rule), present, value, "f", "body", partial, found)
    return [issue.code for issue in found]


@pytest.mark.parametrize(("kind", "good", "bad"), [
    ("string", "x", 1), ("number", 1.5, "1.5"), ("number", 2, True), ("integer", 3, 3.5),
    ("integer", 3.0, "3"), ("boolean", False, 0), ("array", [], {}), ("object", {}, [])])
def test_type(kind, good, bad):
    assert type_matches(kind, good) and not type_matches(kind, bad)
    assert issues_of({"type": kind}, good) == []
    assert issues_of({"type": kind}, bad) == ["type"]


@pytest.mark.parametrize(("rule", "value", "codes"), [
    pytest.param({"required": True}, None, ["required"], id="required missing"),
    pytest.param({"required": True, "nullable": True}, None, [], id="nullable null"),
    pytest.param({"minLength": 3}, "ab", ["min_length"], id="minLength"),
    pytest.param({"minLength": 2}, "éé", [], id="length counts characters"),
    pytest.param({"maxLength": 2}, "abc", ["max_length"], id="maxLength"),
    pytest.param({"pattern": "^[A-Z]{2}$"}, "ab", ["pattern"], id="pattern"),
    pytest.param({"pattern": "[0-9]"}, "a1b", [], id="pattern searches"),
    pytest.param({"min": 1}, 0, ["min"], id="min"),
    pytest.param({"min": 1}, 1, [], id="min inclusive"),
    pytest.param({"max": 10}, 10.5, ["max"], id="max"),
    pytest.param({"exclusiveMin": 1}, 1, ["exclusive_min"], id="exclusiveMin"),
    pytest.param({"exclusiveMax": 1}, 1, ["exclusive_max"], id="exclusiveMax"),
    pytest.param({"minItems": 1}, [], ["min_items"], id="minItems"),
    pytest.param({"maxItems": 1}, [1, 2], ["max_items"], id="maxItems"),
    pytest.param({"uniqueItems": True}, [{"a": 1}, {"a": 1}], ["unique_items"], id="uniqueItems"),
    pytest.param({"items": {"type": "integer"}}, [1, "x", 2], ["type"], id="items"),
    pytest.param({"enum": ["a", "b"]}, "c", ["enum"], id="enum"),
    pytest.param({"enum": [1]}, True, ["enum"], id="enum keeps booleans apart"),
    pytest.param({"properties": {"city": {"required": True}}}, {}, ["required"],
                 id="properties"),
    pytest.param({"type": "string", "minLength": 5}, 3, ["type"], id="type failure stops"),
])
def test_rule_keys(rule, value, codes):
    assert issues_of(rule, value) == codes


def test_required_missing_field_and_partial_skip():
    assert issues_of({"required": True}, None, present=False) == ["required"]
    assert issues_of({"required": True}, None, present=False, partial=True) == []
    assert issues_of({"type": "string"}, None, present=False) == []


def test_custom_message_replaces_the_generated_one():
    found = []
    check_value(FieldRule(min_length=3, message="too short!"), True, "a", "name", "body", False,
                found)
    assert found[0].message == "too short!" and found[0].as_dict() == {
        "field": "name", "location": "body", "code": "min_length", "message": "too short!",
        "received": "a", "expected": "3"}


@pytest.mark.parametrize(("name", "good", "bad"), [
    ("email", "ada@example.com", "ada@"), ("uuid", "123e4567-e89b-12d3-a456-426614174000",
                                            "123e4567"),
    ("date", "2024-02-29", "2023-02-29"), ("datetime", "2024-01-01T10:00:00Z", "2024-01-01"),
    ("date-time", "2024-01-01T10:00:00.5+02:00", "10:00"), ("uri", "https://x.test/a", "x.test"),
    ("url", "http://localhost:1", "/relative"), ("ipv4", "10.0.0.1", "::1"),
    ("ipv6", "::1", "10.0.0.1"), ("ip", "::1", "999.1.1.1"), ("hostname", "api.example.com",
                                                               "-bad-.com")])
def test_formats(name, good, bad):
    assert format_matches(name, good) and not format_matches(name, bad)
    assert issues_of({"format": name}, bad) == ["format"]


def test_unknown_format_passes():
    assert format_matches("credit-card", "anything")


def test_dot_path_reaches_nested_fields_and_every_array_element():
    body = {"address": {"city": "Oslo"}, "items": [{"sku": "A"}, {}, {"sku": "C"}]}
    assert resolve_path(body, ["address", "city"], "") == [("address.city", True, "Oslo")]
    assert resolve_path(body, ["items", "sku"], "") == [
        ("items[0].sku", True, "A"), ("items[1].sku", False, None), ("items[2].sku", True, "C")]
    assert resolve_path(body, ["items", "1"], "") == [("items[1]", True, {})]
    assert resolve_path({}, ["address", "city"], "") == [("address.city", False, None)]


def validator(**config) -> TableValidator:
    return TableValidator(TableValidation.model_validate(config))


def test_validator_required_list_fields_and_array_paths():
    checker = validator(required=["name", "address.city"],
                        fields={"items.sku": {"required": True, "pattern": "^[A-Z]+$"}})
    found = checker.check({"items": [{"sku": "ok"}, {}]}, "create")
    assert [(issue.field, issue.code) for issue in found] == [
        ("name", "required"), ("address.city", "required"), ("items[0].sku", "pattern"),
        ("items[1].sku", "required")]


def test_patch_is_partial_update_is_not():
    checker = validator(fields={"name": {"required": True, "minLength": 2}})
    assert [issue.code for issue in checker.check({}, "update")] == ["required"]
    assert checker.check({}, "patch") == []
    assert [issue.code for issue in checker.check({"name": "a"}, "patch")] == ["min_length"]


def test_on_create_and_on_update_overlays_merge_over_the_base():
    checker = validator(fields={"name": {"type": "string"}},
                        onCreate={"required": ["email"]},
                        onUpdate={"fields": {"name": {"type": "integer"}}, "mode": "warn"})
    assert [issue.field for issue in checker.check({"name": "x"}, "create")] == ["email"]
    assert [issue.code for issue in checker.check({"name": "x"}, "update")] == ["type"]
    assert checker.mode_for("create") == "strict" and checker.mode_for("update") == "warn"


def test_path_params_are_checked_as_their_type():
    checker = validator(pathParams={"userId": {"type": "integer", "min": 1}})
    assert checker.check({}, "create", {"userId": "7"}) == []
    found = checker.check({}, "create", {"userId": "abc"})
    assert [(issue.field, issue.location, issue.code) for issue in found] == [
        ("userId", "path", "type")]


def test_json_schema_properties_and_required_become_rules():
    checker = validator(schema={"type": "object", "required": ["email"], "properties": {
        "email": {"type": "string", "format": "email"},
        "age": {"type": ["integer", "null"], "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}}})
    assert checker.check({"email": "a@b.co", "age": None, "tags": ["x"]}, "create") == []
    codes = [issue.code for issue in checker.check({"age": -1, "tags": [1, "a", "b"]}, "create")]
    assert sorted(codes) == ["max_items", "min", "required", "type"]


def test_auto_infers_types_from_seed_data():
    checker = TableValidator(TableValidation(auto=True),
                             [{"name": "a", "age": 1, "price": 2.5}, {"name": "b", "age": 2,
                                                                      "price": 3}])
    found = checker.check({"name": 5, "age": 1.5, "price": 4}, "create")
    assert [(issue.field, issue.code) for issue in found] == [("name", "type"), ("age", "type")]


@pytest.mark.parametrize(("mode", "body", "rejected", "warnings"), [
    pytest.param("strict", {"name": "ab"}, True, 0, id="strict rejects any issue"),
    pytest.param("warn", {}, False, 2, id="warn never rejects"),
    pytest.param("permissive", {"name": "ab"}, False, 1,
                 id="permissive allows a non-required issue"),
    pytest.param("permissive", {}, True, 0, id="permissive rejects a missing required field"),
])
def test_modes_through_the_store(mode, body, rejected, warnings):
    store = TableStore()
    store.apply_definitions([TableDefinition(TableConfig.model_validate({
        "name": "users", "validation": {"mode": mode, "fields": {
            "name": {"required": True, "minLength": 3},
            "email": {"required": True, "format": "email"}}}}))])
    body = {"email": "a@b.co", **body} if body else {}
    result = store.execute(OperationRequest("create", "users", body=body))
    assert (result.error is not None) is rejected
    if rejected:
        assert result.error.status == 400 and result.error.message == "validation failed"
        assert result.error.body()["errors"][0]["field"] == result.error.field
    else:
        assert len(result.warnings) == warnings


def test_bad_pattern_is_a_config_error():
    with pytest.raises(ValueError, match="pattern does not compile"):
        FieldRule(pattern="(")


def test_unknown_type_is_a_config_error():
    with pytest.raises(ValueError, match="unknown type 'str'"):
        FieldRule(type="str")
