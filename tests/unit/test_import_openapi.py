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


def test_openapi_parameter_examples_are_not_conditions():
    # a plain request (no query string, no extra header) must match the imported mock
    mock = only_mock(spec({"/x": {"parameters": [
        {"name": "tenant", "in": "header", "example": "acme"}],
        "get": {"parameters": [
            {"name": "page", "in": "query", "example": 2},
            {"name": "flag", "in": "query", "required": True, "example": True},
            {"name": "size", "in": "query", "schema": {"type": "integer"}},
            {"name": "Accept", "in": "header", "example": "text/plain"},
            {"name": "id", "in": "cookie", "example": "c"}],
            "responses": {}}}}))
    assert mock["http"]["matcher"] == {"method": "GET", "path": "/x"}


def test_openapi_exporter_marked_conditions_come_back():
    mock = only_mock(spec({"/x": {"parameters": [
        {"name": "tenant", "in": "header", "example": "acme", "x-mockd-condition": True}],
        "get": {"parameters": [
            {"name": "page", "in": "query", "example": 2, "x-mockd-condition": True},
            {"name": "flag", "in": "query", "example": True}],
            "responses": {}}}}))
    matcher = mock["http"]["matcher"]
    assert matcher["queryParams"] == {"page": "2"}
    assert matcher["headers"] == {"tenant": "acme"}


def test_openapi_operation_parameter_overrides_path_level_one():
    mock = only_mock(spec({"/x": {"parameters": [
        {"name": "v", "in": "query", "example": "1", "x-mockd-condition": True}],
        "get": {"parameters": [{"name": "v", "in": "query", "example": "2"}],
                "responses": {}}}}))
    assert "queryParams" not in mock["http"]["matcher"]


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


def test_openapi_external_reference_in_text_skips_the_operation_with_the_reason():
    result = import_document(spec({"/x": {"get": {"responses": {"200": {
        "description": "", "content": {"application/json": {
            "schema": {"$ref": "other.yaml#/Pet"}}}}}}},
        "/y": {"get": {"responses": {}}}}))
    assert [mock["http"]["matcher"]["path"] for mock in result.mocks] == ["/y"]
    assert result.skipped == [{
        "item": "paths./x.get",
        "reason": "responses.200.content.application/json.schema: $ref 'other.yaml#/Pet' "
                  "points to another file; import the spec from its file (not from text or a "
                  "URL) so that relative references can be read"}]


NOTHING = "openapi: nothing could be imported: 1 item skipped; first: "


@pytest.mark.parametrize(("document", "message"), [
    pytest.param(spec({"/users": {"get": {"responses": [1]}}}),
                 NOTHING + "paths./users.get: responses: expected a mapping, got a list",
                 id="responses not a mapping"),
    pytest.param(spec([]), "openapi: paths: expected a mapping, got a list", id="paths list"),
    pytest.param(spec({"/u": "x"}), "openapi: paths./u: expected a mapping, got a string",
                 id="path item string"),
    pytest.param(spec({"/u": {"post": []}}), NOTHING + "paths./u.post: expected a mapping, got "
                 "a list", id="operation list"),
    pytest.param(spec({"u": {}}), "openapi: paths.u: a path must start with '/'",
                 id="relative path"),
    pytest.param(spec({"/u": {"get": {"responses": {"200": {"$ref": "#/nope"}}}}}),
                 NOTHING + "paths./u.get: responses.200: $ref '#/nope' does not resolve",
                 id="dangling ref"),
    pytest.param(spec({"/u": {"get": {"parameters": {"a": 1}, "responses": {}}}}),
                 NOTHING + "paths./u.get: parameters: expected a list, got a mapping",
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


# ---------------------------------------------------------------------------- partial import


def test_openapi_one_bad_operation_is_skipped_and_named_the_rest_imports():
    result = import_document(spec({
        "/a": {"get": {"responses": {"200": {"$ref": "#/components/responses/Nope"}}},
               "post": {"responses": {"201": {"description": "made"}}}},
        "/b": {"get": {"responses": {}}}}))
    assert [mock["http"]["matcher"]["method"] for mock in result.mocks] == ["POST", "GET"]
    assert result.skipped == [{"item": "paths./a.get", "reason": "responses.200: $ref "
                               "'#/components/responses/Nope' does not resolve"}]
    assert result.warnings[-1].startswith("skipped paths./a.get: responses.200: $ref")


def test_openapi_nothing_resolving_is_an_error_naming_the_reason():
    with pytest.raises(ImportDocumentError) as caught:
        import_document(spec({"/a": {"get": {"responses": {"200": {
            "$ref": "https://example.com/r.yaml#/ok"}}}}}))
    assert str(caught.value) == (
        "openapi: nothing could be imported: 1 item skipped; first: paths./a.get: "
        "responses.200: $ref 'https://example.com/r.yaml#/ok' is a remote reference; mockd "
        "never downloads references. Save the file inside the spec's folder and refer to it "
        "by a relative path")


# ---------------------------------------------------------------------------- $ref


def test_openapi_percent_encoded_json_pointer_resolves():
    result = import_document(spec({
        "/users/{id}": {"get": {"responses": {"200": {"description": "", "content": {
            "application/json": {"example": {"id": 1}}}}}}},
        "/copy": {"get": {"responses": {
            "200": {"$ref": "#/paths/~1users~1%7Bid%7D/get/responses/200"}}}}}))
    assert result.skipped == []
    assert [mock["http"]["response"]["body"] for mock in result.mocks] == [{"id": 1}] * 2


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def multi_file_spec(tmp_path):
    """main.yaml -> ./schemas/user.yaml#/User -> (relative to schemas/) ./address.yaml and
    ../common.json; plus a cycle back into main.yaml."""
    write(tmp_path / "api" / "main.json", {
        "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
        "paths": {"/users/{id}": {"get": {"responses": {"200": {"description": "", "content": {
            "application/json": {"schema": {"$ref": "./schemas/user.yaml#/User"}}}}}}},
            "/ping": {"$ref": "paths/ping.json"}},
        "components": {"schemas": {"Team": {"type": "object", "required": ["lead"],
                                            "properties": {"lead": {
                                                "$ref": "schemas/user.yaml#/User"}}}}}})
    write(tmp_path / "api" / "schemas" / "user.yaml", """
User:
  type: object
  required: [id, address, code, team]
  properties:
    id: {$ref: '../common.json#/Id'}
    code: {type: string, pattern: '^U-[0-9]{5}$'}
    address: {$ref: 'address.yaml'}
    team: {$ref: '../main.json#/components/schemas/Team'}
""")
    write(tmp_path / "api" / "schemas" / "address.yaml",
          "type: object\nrequired: [city]\nproperties:\n  city: {type: string, "
          "minLength: 4, maxLength: 4}\n")
    write(tmp_path / "api" / "common.json", {"Id": {"type": "integer", "minimum": 7,
                                                    "maximum": 7}})
    write(tmp_path / "api" / "paths" / "ping.json", {"get": {"responses": {"200": {
        "description": "", "content": {"text/plain": {"example": "pong"}}}}}})
    return tmp_path / "api" / "main.json"


def test_openapi_relative_file_references_resolve_from_the_referring_file(tmp_path):
    from mocks.portability.importers import import_path

    result = import_path(multi_file_spec(tmp_path))
    assert result.skipped == []
    paths = {mock["http"]["matcher"]["path"]: mock["http"]["response"] for mock in result.mocks}
    assert paths["/ping"]["body"] == "pong"
    user = paths["/users/{id}"]["body"]
    assert user["id"] == 7 and len(user["address"]["city"]) == 4
    assert user["code"].startswith("U-") and len(user["code"]) == 7
    # the cycle User -> Team -> User (across files) is cut, required keys kept
    assert set(user["team"]["lead"]) == {"id", "address", "code", "team"}


@pytest.mark.parametrize(("reference", "reason"), [
    pytest.param("../outside.yaml#/X", "points outside the spec's folder", id="dot-dot"),
    pytest.param("/etc/passwd", "points outside the spec's folder", id="absolute"),
    pytest.param("http://127.0.0.1:9/x.yaml", "is a remote reference", id="url"),
    pytest.param("missing.yaml#/X", "cannot read file 'missing.yaml'", id="missing file"),
    pytest.param("bad.yaml", "file 'bad.yaml': not valid JSON or YAML", id="unparsable"),
    pytest.param("common.json#/Nope", "does not resolve", id="dangling pointer"),
])
def test_openapi_unreadable_file_references_skip_the_operation(tmp_path, reference, reason):
    from mocks.portability.importers import import_path

    write(tmp_path / "outside.yaml", "X: {type: string}\n")
    write(tmp_path / "api" / "bad.yaml", "a: [unclosed\n")
    write(tmp_path / "api" / "common.json", {"Id": {"type": "integer"}})
    main = write(tmp_path / "api" / "main.json", json.loads(spec({
        "/bad": {"get": {"responses": {"200": {"description": "", "content": {
            "application/json": {"schema": {"$ref": reference}}}}}}},
        "/good": {"get": {"responses": {}}}})))
    result = import_path(main)
    assert [mock["http"]["matcher"]["path"] for mock in result.mocks] == ["/good"]
    [skipped] = result.skipped
    assert skipped["item"] == "paths./bad.get" and reason in skipped["reason"]


def test_openapi_symbolic_link_out_of_the_folder_is_refused(tmp_path):
    from mocks.portability.importers import import_path

    write(tmp_path / "secret.yaml", "X: {type: string}\n")
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "link.yaml").symlink_to(tmp_path / "secret.yaml")
    main = write(tmp_path / "api" / "main.json", json.loads(spec({
        "/bad": {"get": {"responses": {"200": {"$ref": "link.yaml#/X"}}}},
        "/good": {"get": {"responses": {}}}})))
    result = import_path(main)
    assert "points outside the spec's folder" in result.skipped[0]["reason"]


# ---------------------------------------------------------------------------- Location


@pytest.mark.parametrize(("header", "location"), [
    pytest.param({"schema": {"type": "string"}, "example": "/next"}, "/next", id="example"),
    pytest.param({"schema": {"type": "string", "example": "/s"}}, "/s", id="schema example"),
    pytest.param({"examples": {"a": {"value": "/first"}, "b": {"value": "/b"}}}, "/first",
                 id="first examples value"),
    pytest.param({"schema": {"type": "string"}}, "https://example.com", id="generated uri"),
    pytest.param({"schema": {"type": "string", "format": "uri-reference"}}, "/resource",
                 id="generated by format"),
])
def test_openapi_redirect_carries_location(header, location):
    mock = only_mock(spec({"/old": {"get": {"responses": {"302": {
        "description": "moved", "headers": {"Location": header}}}}}}))
    response = mock["http"]["response"]
    assert response["statusCode"] == 302 and response["headers"]["Location"] == location


def test_openapi_redirect_without_a_declared_location_points_at_root():
    mock = only_mock(spec({"/old": {"get": {"responses": {"301": {"description": "moved"}}}}}))
    assert mock["http"]["response"]["headers"] == {"Location": "/"}


def test_swagger_redirect_location_reads_the_header_itself():
    document = json.dumps({"swagger": "2.0", "info": {"title": "t", "version": "1"},
                           "paths": {"/old": {"get": {"responses": {"303": {
                               "description": "see", "headers": {"location": {
                                   "type": "string", "example": "/new"}}}}}}}})
    assert only_mock(document)["http"]["response"]["headers"] == {"Location": "/new"}


# ---------------------------------------------------------------------------- credentials


def test_openapi_query_api_keys_are_recorded_on_every_mock():
    result = import_document(spec(
        {"/pets": {"get": {"responses": {}}}},
        components={"securitySchemes": {
            "key": {"type": "apiKey", "in": "query", "name": "api_key"},
            "header": {"type": "apiKey", "in": "header", "name": "X-Key"},
            "ref": {"$ref": "#/components/x-schemes/token"}},
            "x-schemes": {"token": {"type": "apiKey", "in": "query", "name": "token"}}}))
    assert result.mocks[0]["http"]["credentialQueryParams"] == ["api_key", "token"]


def test_swagger_query_api_keys_come_from_security_definitions():
    document = json.dumps({"swagger": "2.0", "info": {"title": "t", "version": "1"},
                           "securityDefinitions": {"k": {"type": "apiKey", "in": "query",
                                                         "name": "key"}},
                           "paths": {"/pets": {"get": {"responses": {}}}}})
    assert only_mock(document)["http"]["credentialQueryParams"] == ["key"]


def test_openapi_without_query_api_keys_records_nothing():
    mock = only_mock(spec({"/x": {"get": {"responses": {}}}}))
    assert "credentialQueryParams" not in mock["http"]


def test_openapi_declared_query_params_are_recorded_in_document_order():
    mock = only_mock(spec(
        {"/apps": {"parameters": [{"name": "page", "in": "query"}],
                   "get": {"parameters": [
                       {"name": "api_key", "in": "query", "required": True},
                       {"name": "api_secret", "in": "query", "required": True},
                       {"name": "X-Trace", "in": "header"},
                       {"name": "token", "in": "query"},
                       {"name": "tier", "in": "query", "example": "gold",
                        "x-mockd-condition": True}],
                       "responses": {}}}},
        components={"securitySchemes": {"t": {"type": "apiKey", "in": "query",
                                              "name": "token"}}}))
    # credentials and conditions are listed elsewhere; headers are no query parameters
    assert mock["http"]["declaredQueryParams"] == ["page", "api_key", "api_secret"]
    assert mock["http"]["credentialQueryParams"] == ["token"]
    assert mock["http"]["matcher"]["queryParams"] == {"tier": "gold"}
