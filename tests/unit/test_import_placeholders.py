"""Schema-generated placeholders (behavior notes §13 "Generation")."""
from __future__ import annotations

import random

import pytest

from mocks.portability.importers.placeholders import MAX_DEPTH, SchemaSampler

SCHEMAS = {
    "#/s/Node": {"type": "object", "properties": {
        "id": {"type": "integer"}, "next": {"$ref": "#/s/Node"},
        "kids": {"type": "array", "items": {"$ref": "#/s/Node"}}}},
    "#/s/Base": {"type": "object", "properties": {"id": {"type": "string", "example": "b1"}}},
    "#/s/Loop": {"allOf": [{"$ref": "#/s/Loop"}, {"properties": {"a": {"example": 1}}}]},
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


@pytest.mark.parametrize(("min_items", "count"), [(None, 1), (0, 1), (2, 2), (9, 3)])
def test_placeholder_arrays_have_one_to_three_items(min_items, count):
    schema = {"type": "array", "items": {"type": "string"}}
    if min_items is not None:
        schema["minItems"] = min_items
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
