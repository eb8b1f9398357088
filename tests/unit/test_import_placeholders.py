"""Schema-generated placeholders (behavior notes §13 "Generation")."""
from __future__ import annotations

import random
import re

import pytest

from mocks.portability.importers.placeholders import MAX_DEPTH, SchemaSampler, pattern_string

SCHEMAS = {
    "#/s/Node": {"type": "object", "properties": {
        "id": {"type": "integer"}, "next": {"$ref": "#/s/Node"},
        "kids": {"type": "array", "items": {"$ref": "#/s/Node"}}}},
    "#/s/Base": {"type": "object", "properties": {"id": {"type": "string", "example": "b1"}}},
    "#/s/Loop": {"allOf": [{"$ref": "#/s/Loop"}, {"properties": {"a": {"example": 1}}}]},
    "#/s/Person": {"type": "object", "required": ["name", "parent", "friends"], "properties": {
        "name": {"type": "string"}, "nick": {"type": "string"},
        "parent": {"$ref": "#/s/Person"},
        "friends": {"type": "array", "items": {"$ref": "#/s/Person"}}}},
    "#/s/MaybePerson": {"type": "object", "nullable": True, "required": ["me"], "properties": {
        "me": {"$ref": "#/s/MaybePerson"}}},
    "#/s/Wide": {"type": "object", "required": ["deep"], "properties": {
        "deep": {"$ref": "#/s/Level"}}},
    "#/s/Level": {"type": "object", "required": ["id", "next"], "properties": {
        "id": {"type": "integer", "minimum": 1}, "optional": {"type": "string"},
        "next": {"type": "object", "required": ["leaf"], "properties": {
            "leaf": {"type": "string", "minLength": 3}}}}},
}


def sample(schema, name=None, seed="seed"):
    def resolve(reference):
        return SCHEMAS[reference]

    return SchemaSampler(resolve, random.Random(seed)).sample(schema, name)


@pytest.mark.parametrize(("schema", "value"), [
    pytest.param({"type": "string", "example": "x", "enum": ["y"]}, "x", id="example first"),
    pytest.param({"type": "string", "default": "d"}, "d", id="default"),
    pytest.param({"const": 7}, 7, id="const"),
    pytest.param({"type": "string", "examples": ["first", "second"]}, "first",
                 id="3.1 examples list"),
    pytest.param({"type": "string", "format": "date-time"}, "2024-01-15T10:30:00Z",
                 id="string by format"),
    pytest.param({"type": "string", "format": "email"}, "user@example.com", id="email format"),
    pytest.param({"type": "string"}, "string", id="plain string"),
    pytest.param({"type": ["null", "string"]}, "string", id="3.1 type list skips null"),
    pytest.param({"type": "object"}, {}, id="object without properties"),
    pytest.param({}, None, id="empty schema"),
    pytest.param({"oneOf": [{"type": "string", "example": "one"}, {"type": "integer"}]}, "one",
                 id="first oneOf"),
    pytest.param({"anyOf": [{"type": "boolean", "example": False}]}, False, id="first anyOf"),
])
def test_placeholder_rules_in_order(schema, value):
    assert sample(schema) == value


@pytest.mark.parametrize(("name", "value"), [
    ("email", "user@example.com"), ("contact_email", "user@example.com"),
    ("first_name", "John"), ("name", "John Doe"), ("website", "https://example.com"),
    ("created_at", "2024-01-15T10:30:00Z"), ("city", "Springfield"), ("misc", "string")])
def test_placeholder_strings_by_property_name(name, value):
    assert sample({"type": "string"}, name) == value


@pytest.mark.parametrize("name", ["id", "customer_id", "userId"])
def test_placeholder_id_names_get_uuids(name):
    value = sample({"type": "string"}, name)
    assert len(value) == 36 and value[14] == "4"


def test_placeholder_enum_is_a_member_and_reproducible_per_seed():
    schema = {"enum": list(range(50))}
    values = {sample(schema, seed=f"s{index}") for index in range(20)}
    assert values <= set(range(50)) and len(values) > 1
    assert sample(schema, seed="same") == sample(schema, seed="same")


@pytest.mark.parametrize(("schema", "low", "high"), [
    ({"type": "integer"}, 0, 100),
    ({"type": "integer", "minimum": 5, "maximum": 7}, 5, 7),
    ({"type": "integer", "minimum": 1, "maximum": 3, "exclusiveMinimum": True,
      "exclusiveMaximum": True}, 2, 2),
    ({"type": "integer", "exclusiveMinimum": 10, "exclusiveMaximum": 12}, 11, 11),
    ({"type": "integer", "minimum": 500}, 500, 600),
    ({"type": "number", "minimum": 0.5, "maximum": 0.75}, 0.5, 0.75),
])
def test_placeholder_numbers_stay_inside_bounds(schema, low, high):
    for seed in range(30):
        value = sample(schema, seed=seed)
        assert low <= value <= high


def test_placeholder_numbers_have_two_decimals():
    value = sample({"type": "number"})
    assert round(value, 2) == value


@pytest.mark.parametrize(("bounds", "count"), [
    pytest.param({}, 1, id="one item by default"),
    pytest.param({"minItems": 0}, 1, id="minItems 0"),
    pytest.param({"minItems": 2}, 2, id="minItems 2"),
    pytest.param({"minItems": 9}, 9, id="minItems above 3 honoured"),
    pytest.param({"maxItems": 0}, 0, id="maxItems 0"),
    pytest.param({"minItems": 2, "maxItems": 2}, 2, id="exactly 2"),
])
def test_placeholder_arrays_honour_min_and_max_items(bounds, count):
    schema = {"type": "array", "items": {"type": "string"}, **bounds}
    assert sample(schema) == ["string"] * count


def test_placeholder_all_of_merges_properties_through_references():
    value = sample({"allOf": [{"$ref": "#/s/Base"},
                              {"properties": {"extra": {"type": "boolean", "example": True}}}]})
    assert value == {"id": "b1", "extra": True}


def test_placeholder_reference_cycles_are_left_out():
    value = sample({"$ref": "#/s/Node"})
    assert set(value) == {"id"} | {"kids"}
    assert value["kids"] == []


def test_placeholder_all_of_cycle_terminates():
    assert sample({"$ref": "#/s/Loop"}) == {"a": 1}


def test_placeholder_depth_is_bounded():
    schema: dict = {"type": "string"}
    for _ in range(MAX_DEPTH + 5):
        schema = {"type": "object", "properties": {"child": schema}}
    value = sample(schema)
    depth = 0
    while value:
        value = value["child"]
        depth += 1
    assert depth == MAX_DEPTH


def test_placeholder_unknown_reference_is_left_out():
    assert sample({"type": "object", "properties": {"a": {"$ref": "#/missing"}}}) == {}


# ---------------------------------------------------------------------------- constraints


@pytest.mark.parametrize("schema", [
    pytest.param({"type": "string", "pattern": r"^[A-Z]{3}-\d{4}$"}, id="anchored code"),
    pytest.param({"type": "string", "pattern": r"^[a-z]+@[a-z]+\.com$"}, id="email-like"),
    pytest.param({"type": "string", "pattern": r"^cus_[A-Za-z0-9]{14}$"}, id="prefixed id"),
    pytest.param({"type": "string", "pattern": r"[0-9]+", "minLength": 12, "maxLength": 14},
                 id="unanchored with lengths"),
    pytest.param({"type": "string", "pattern": r"^[a-z]*$", "minLength": 20}, id="long star"),
    pytest.param({"type": "string", "pattern": r"^[^@\s]+$", "maxLength": 5}, id="negated class"),
])
def test_placeholder_strings_match_their_pattern_and_lengths(schema):
    for seed in range(10):
        value = sample(schema, name="email", seed=seed)
        assert re.search(schema["pattern"], value), value
        assert schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", 10**6)


def test_placeholder_pattern_strings_are_reproducible():
    schema = {"type": "string", "pattern": r"^[A-Z]{2}[0-9]{6}$"}
    assert sample(schema, seed="a") == sample(schema, seed="a")


def test_placeholder_unreadable_pattern_falls_back_to_a_plain_string():
    assert pattern_string(r"\p{L}+", random.Random(1)) is None
    assert sample({"type": "string", "pattern": r"\p{L}+"}) == "string"


@pytest.mark.parametrize(("schema", "value"), [
    pytest.param({"type": "string", "minLength": 10}, "stringstri", id="minLength pads"),
    pytest.param({"type": "string", "maxLength": 3}, "str", id="maxLength cuts"),
    pytest.param({"type": "string", "format": "uuid", "maxLength": 3}, None, id="format wins"),
    pytest.param({"type": "string", "format": "ipv4"}, "192.168.1.1", id="ipv4"),
    pytest.param({"type": "string", "format": "uri"}, "https://example.com", id="uri"),
    pytest.param({"type": "string", "format": "date"}, "2024-01-15", id="date"),
])
def test_placeholder_string_lengths_and_formats(schema, value):
    generated = sample(schema)
    if value is None:
        assert len(generated) == 36
    else:
        assert generated == value


def test_placeholder_name_samples_respect_lengths():
    assert sample({"type": "string", "maxLength": 4}, name="email") == "stri"


def test_placeholder_integers_honour_multiple_of():
    for seed in range(20):
        value = sample({"type": "integer", "minimum": 10, "maximum": 50, "multipleOf": 7},
                       seed=seed)
        assert value % 7 == 0 and 10 <= value <= 50


def test_placeholder_required_properties_in_a_cycle_are_present():
    value = sample({"$ref": "#/s/Person"})
    assert set(value) >= {"name", "parent", "friends"}
    parent = value["parent"]  # the cycle, cut to its required parts once
    assert set(parent) == {"name", "parent", "friends"} and parent["friends"] == []
    assert parent["parent"] == {}  # a cycle of required values ends in the smallest value


def test_placeholder_required_cycle_through_a_nullable_schema_ends_in_null():
    value = sample({"$ref": "#/s/MaybePerson"})
    assert value == {"me": None}  # met again in a cycle: its smallest value, null


def test_placeholder_required_properties_survive_the_depth_limit():
    schema: dict = {"$ref": "#/s/Wide"}
    for _ in range(MAX_DEPTH + 3):
        schema = {"type": "object", "required": ["child"], "properties": {
            "child": schema, "extra": {"type": "string"}}}
    value = sample(schema)
    for _ in range(MAX_DEPTH + 3):
        assert "child" in value
        value = value["child"]
    assert set(value["deep"]) == {"id", "next"} and len(value["deep"]["next"]["leaf"]) >= 3


def test_placeholder_all_of_unites_required():
    value = sample({"allOf": [{"$ref": "#/s/Base"},
                              {"required": ["id"]}]})
    assert value == {"id": "b1"}


def test_placeholder_required_name_without_a_property_schema_is_present():
    value = sample({"type": "object", "required": ["x", "y"],
                    "additionalProperties": {"type": "integer", "minimum": 3, "maximum": 3}})
    assert value == {"x": 3, "y": 3}
