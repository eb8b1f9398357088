"""OpenAPI 3.0/3.1 and Swagger 2.0 import (behavior notes §13): golden files, then the rules
one by one, then errors."""
from __future__ import annotations

import json

import pytest

from mocks.portability.importers import ImportDocumentError, import_document
from mocks.portability.importers.openapi import choose_status, default_body, status_number
from tests.import_golden import assert_matches_golden, case_name, cases


@pytest.mark.parametrize("source", cases("openapi"), ids=case_name)
def test_openapi_golden_file_converts_to_expected_config(source):
    assert_matches_golden(source)


def spec(paths, **extra):
    return json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
                       "paths": paths, **extra})


def only_mock(text, **options):
    mocks = import_document(text, **options).mocks
    assert len(mocks) == 1
    return mocks[0]


@pytest.mark.parametrize(("codes", "chosen"), [
    pytest.param(["404", "204", "201", "200"], "200", id="200 first"),
    pytest.param(["404", "204", "201"], "201", id="then 201"),
    pytest.param(["202", "204"], "202", id="then 202"),
    pytest.param(["500", "204"], "204", id="then 204"),
    pytest.param(["404", "206", "203"], "206", id="then the first 2xx"),
    pytest.param(["default", "2XX"], "2XX", id="range key counts as 2xx"),
    pytest.param(["404", "500"], "404", id="else the first"),
    pytest.param([], None, id="none"),
])
def test_openapi_status_choice_follows_preference_order(codes, chosen):
    assert choose_status(codes) == chosen


@pytest.mark.parametrize(("code", "number"), [("201", 201), ("2XX", 200), ("4xx", 400),
                                               ("default", 200)])
def test_openapi_status_number_reads_ranges_and_default(code, number):
    assert status_number(code) == number


@pytest.mark.parametrize(("status", "body"), [
    (200, {"status": "ok"}), (201, {"id": 1, "created": True}), (204, None),
    (404, {"error": "Not Found"}), (409, {"error": "Conflict"}),
    (500, {"error": "Internal Server Error"}), (503, {"status": 503}), (202, {"status": 202})])
def test_openapi_default_bodies_per_status(status, body):
    assert default_body(status) == body


def test_openapi_paths_sorted_and_methods_in_fixed_order():
    document = spec({"/b": {"delete": {"responses": {}}, "get": {"responses": {}},
                            "options": {"responses": {}}, "post": {"responses": {}}},
                     "/a": {"patch": {"responses": {}}, "put": {"responses": {}}}})
    order = [(m["http"]["matcher"]["method"], m["http"]["matcher"]["path"])
             for m in import_document(document).mocks]
    assert order == [("PUT", "/a"), ("PATCH", "/a"), ("GET", "/b"), ("POST", "/b"),
                     ("DELETE", "/b"), ("OPTIONS", "/b")]


def test_openapi_media_example_wins_over_schema_example():
    mock = only_mock(spec({"/x": {"get": {"responses": {"200": {"description": "", "content": {
        "application/json": {"example": {"from": "media"},
                             "schema": {"type": "object", "example": {"from": "schema"}}}}}}}}}))
    assert mock["http"]["response"]["body"] == {"from": "media"}


def test_openapi_schema_example_after_ref_wins_over_generation():
    document = spec({"/x": {"get": {"responses": {"200": {"description": "", "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/X"}}}}}}}},
        components={"schemas": {"X": {"type": "object", "example": {"a": 1},
                                      "properties": {"b": {"type": "string"}}}}})
    assert only_mock(document)["http"]["response"]["body"] == {"a": 1}


def test_openapi_content_type_is_the_first_media_type():
    mock = only_mock(spec({"/x": {"get": {"responses": {"200": {"description": "", "content": {
        "application/xml": {"example": "<a/>"}, "application/json": {"example": {}}}}}}}}))
    assert mock["http"]["response"]["headers"] == {"Content-Type": "application/xml"}
    assert mock["http"]["response"]["body"] == "<a/>"


def test_openapi_swagger_base_path_is_prefixed_and_servers_ignored():
    swagger = json.dumps({"swagger": "2.0", "basePath": "/api/", "paths": {
        "/items": {"get": {"responses": {"200": {"description": ""}}}}}})
    assert only_mock(swagger)["http"]["matcher"]["path"] == "/api/items"
    openapi = spec({"/items": {"get": {"responses": {}}}},
                   servers=[{"url": "https://example.com/base"}])
    assert only_mock(openapi)["http"]["matcher"]["path"] == "/items"


def test_openapi_query_and_header_parameters_with_examples_become_conditions():
    mock = only_mock(spec({"/x": {"parameters": [
        {"name": "tenant", "in": "header", "example": "acme"}],
        "get": {"parameters": [
            {"name": "page", "in": "query", "example": 2},
            {"name": "flag", "in": "query", "example": True},
            {"name": "size", "in": "query", "schema": {"type": "integer"}},
            {"name": "Accept", "in": "header", "example": "text/plain"},
            {"name": "id", "in": "cookie", "example": "c"}],
            "responses": {}}}}))
    matcher = mock["http"]["matcher"]
    assert matcher["queryParams"] == {"page": "2", "flag": "true"}
    assert matcher["headers"] == {"tenant": "acme"}


def test_openapi_operation_parameter_overrides_path_level_one():
    mock = only_mock(spec({"/x": {"parameters": [{"name": "v", "in": "query", "example": "1"}],
                                  "get": {"parameters": [
                                      {"name": "v", "in": "query", "example": "2"}],
                                      "responses": {}}}}))
    assert mock["http"]["matcher"]["queryParams"] == {"v": "2"}


@pytest.mark.parametrize(("operation", "name"), [
    ({"summary": "List", "operationId": "list"}, "List"),
    ({"operationId": "list"}, "list"),
    ({}, "GET /things"),
])
def test_openapi_name_is_summary_then_operation_id_then_method_and_path(operation, name):
    mock = only_mock(spec({"/things": {"get": {**operation, "responses": {}}}}))
    assert mock["name"] == name


def test_openapi_ids_use_the_as_prefix_only_with_an_operation_id():
    result = import_document(spec({"/a": {"get": {"operationId": "getA", "responses": {}}},
                                   "/b": {"get": {"responses": {}}}}), as_prefix="svc")
    ids = [mock["id"] for mock in result.mocks]
    assert ids[0] == "svc.getA"
    assert ids[1].startswith("http_") and len(ids[1]) == len("http_") + 16
    assert result.operation_ids == {"getA": "svc.getA", "svc.getA": "svc.getA"}


def test_openapi_without_prefix_ids_are_random_and_operation_ids_recorded():
    result = import_document(spec({"/a": {"get": {"operationId": "getA", "responses": {}}}}))
    assert result.mocks[0]["id"].startswith("http_")
    assert result.operation_ids == {"getA": result.mocks[0]["id"]}


def test_openapi_duplicate_operation_ids_get_a_suffix_and_a_warning():
    result = import_document(spec({"/a": {"get": {"operationId": "x", "responses": {}}},
                                   "/b": {"get": {"operationId": "x", "responses": {}}}}),
                             as_prefix="p")
    assert [mock["id"] for mock in result.mocks] == ["p.x", "p.x-2"]
    assert "duplicate id 'p.x'" in result.warnings[0]


def test_openapi_examples_with_braces_are_served_literally():
    mock = only_mock(spec({"/x": {"get": {"responses": {"200": {"description": "", "content": {
        "application/json": {"example": {"url": "{{baseUrl}}/x"}}}}}}}}))
    assert mock["http"]["response"]["body"] == {"url": "\\{{baseUrl}}/x"}


def test_openapi_yaml_integer_status_keys_are_read():
    text = "openapi: 3.0.0\npaths:\n  /x:\n    post:\n      responses:\n        201:\n" \
           "          description: made\n"
    assert only_mock(text)["http"]["response"]["statusCode"] == 201


def test_openapi_generation_is_reproducible():
    document = spec({"/x": {"get": {"responses": {"200": {"description": "", "content": {
        "application/json": {"schema": {"type": "object", "properties": {
            "n": {"type": "integer"}, "s": {"enum": ["a", "b", "c", "d"]}}}}}}}}}})
    first = import_document(document).mocks[0]["http"]["response"]["body"]
    assert import_document(document).mocks[0]["http"]["response"]["body"] == first


def test_openapi_external_reference_is_a_warning_not_an_error():
    result = import_document(spec({"/x": {"get": {"responses": {"200": {
        "description": "", "content": {"application/json": {
            "schema": {"$ref": "other.yaml#/Pet"}}}}}}}}))
    assert result.warnings == ["$ref 'other.yaml#/Pet' points outside this document; treated "
                               "as an empty schema"]


@pytest.mark.parametrize(("document", "message"), [
    pytest.param(spec({"/users": {"get": {"responses": [1]}}}),
                 "openapi: paths./users.get.responses: expected a mapping, got a list",
                 id="responses not a mapping"),
    pytest.param(spec([]), "openapi: paths: expected a mapping, got a list", id="paths list"),
    pytest.param(spec({"/u": "x"}), "openapi: paths./u: expected a mapping, got a string",
                 id="path item string"),
    pytest.param(spec({"/u": {"post": []}}), "openapi: paths./u.post: expected a mapping, got "
                 "a list", id="operation list"),
    pytest.param(spec({"u": {}}), "openapi: paths.u: a path must start with '/'",
                 id="relative path"),
    pytest.param(spec({"/u": {"get": {"responses": {"200": {"$ref": "#/nope"}}}}}),
                 "openapi: paths./u.get.responses.200: $ref '#/nope' does not resolve",
                 id="dangling ref"),
    pytest.param(spec({"/u": {"get": {"parameters": {"a": 1}, "responses": {}}}}),
                 "openapi: paths./u.get.parameters: expected a list, got a mapping",
                 id="parameters mapping"),
    pytest.param(json.dumps({"openapi": "4.0", "paths": {}}),
                 "openapi: openapi: unsupported version '4.0'; OpenAPI 3.0, 3.1 and Swagger "
                 "2.0 are supported", id="unknown openapi version"),
    pytest.param(json.dumps({"swagger": "1.2", "paths": {}}),
                 "openapi: swagger: unsupported version '1.2'; Swagger 2.0 and OpenAPI 3.x "
                 "are supported", id="swagger 1.2"),
])
def test_openapi_malformed_document_names_the_place(document, message):
    with pytest.raises(ImportDocumentError) as caught:
        import_document(document)
    assert str(caught.value) == message


def test_openapi_forced_format_on_unparsable_text_reports_line_and_column():
    with pytest.raises(ImportDocumentError) as caught:
        import_document("openapi: 3.0.0\npaths: [unclosed\n", format="swagger")
    assert str(caught.value).startswith("openapi: not valid JSON or YAML at line 3, column 1")
