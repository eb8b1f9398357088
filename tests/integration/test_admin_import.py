"""``POST /import`` against a real ``mockd start``: third-party documents (an OpenAPI document
of ``@readme/oas-examples`` from npm, and the Postman, HAR, WireMock and curl documents of
``tests/fixtures/import``) are previewed with ``?dryRun=true`` (nothing changes) and imported
(the mocks answer on the data plane); unknown formats, undetected and broken documents,
documents that need files beside them, unknown workspaces and oversized bodies are refused
with the status and message a user can act on (SPEC "Import and export"; behavior notes §1,
§13)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import start_server
from tests.thirdparty import OAS_EXAMPLES, package_root

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("admin-import")) as process:
        yield process


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def mock_ids(admin, workspace: str | None = None) -> list[str]:
    params = {"workspaceId": workspace} if workspace else {}
    return [mock["id"] for mock in admin.get("/mocks", params=params).json()["mocks"]]


def test_openapi_dry_run_lists_the_operations_and_changes_nothing_then_imports(admin, data):
    spec = package_root(OAS_EXAMPLES) / "3.0" / "json" / "petstore.json"
    operations = {(method.upper(), path)
                  for path, item in json.loads(spec.read_text())["paths"].items()
                  for method in item if method in ("get", "put", "post", "delete", "patch")}
    before = mock_ids(admin)

    dry = admin.post("/import", params={"dryRun": "true", "as": "pets",
                                        "filename": "petstore.json"},
                     content=spec.read_bytes(), headers={"Content-Type": "application/json"})
    assert dry.status_code == 200, dry.text
    answer = dry.json()
    assert answer["dryRun"] is True and answer["format"] == "openapi"
    assert answer["count"] == len(operations) == len(answer["mocks"])
    assert {(row["method"], row["path"]) for row in answer["mocks"]} == operations
    assert all(row["id"].startswith("pets.") and row["name"] for row in answer["mocks"])
    assert mock_ids(admin) == before
    assert data.get("/store/inventory").status_code == 404

    imported = admin.post("/import", params={"as": "pets"}, content=spec.read_bytes())
    assert imported.status_code == 201, imported.text
    assert imported.json() == {"imported": len(operations), "total": len(before) +
                               len(operations), "format": "openapi", "replace": False}
    inventory = data.get("/store/inventory")
    assert inventory.status_code == 200
    assert inventory.headers["content-type"].startswith("application/json")
    pet = data.get("/pet/7")
    assert pet.status_code == 200 and "name" in pet.json()
    assert {row["id"] for row in answer["mocks"]} <= set(mock_ids(admin))


def test_postman_collection_with_a_variable(admin, data):
    text = fixture_text("postman/shop-collection-v2.1.json")
    dry = admin.post("/import", params={"dryRun": "true"}, content=text).json()
    assert dry["format"] == "postman"
    rows = {(row["method"], row["path"]): row["name"] for row in dry["mocks"]}
    assert rows[("GET", "/api/products")] == "List products"
    assert rows[("POST", "/api/orders")] == "Create order"
    assert data.get("/api/products", headers={"X-Api-Key": "secret-123"}).status_code == 404

    imported = admin.post("/import", params={"format": "postman2"}, content=text)
    assert imported.status_code == 201, imported.text
    assert imported.json()["imported"] == dry["count"]
    products = data.get("/api/products", headers={"X-Api-Key": "secret-123"})
    assert products.status_code == 200
    assert products.json() == [{"id": 1, "name": "Lamp"}, {"id": 2, "name": "Desk {{size}}"}]
    order = data.post("/api/orders", content="{}")
    assert order.status_code == 201 and order.headers["location"] == "/api/orders/9"


def test_har_detected_and_static_assets_kept_only_when_asked(admin, data):
    session = fixture_text("har/browser-session.har")
    dry = admin.post("/import", params={"dryRun": "true"}, content=session).json()
    assert dry["format"] == "har" and dry["count"] == 4 and dry["warnings"]

    static = fixture_text("har/static-assets.har")
    without = admin.post("/import", params={"dryRun": "true"}, content=static)
    assert without.status_code == 400  # only static assets: nothing to import
    assert without.json()["message"].startswith("har: the document holds nothing to import")
    with_static = admin.post("/import", params={"dryRun": "true", "includeStatic": "true"},
                             content=static).json()
    assert with_static["format"] == "har" and with_static["count"] == 2

    imported = admin.post("/import", content=session)
    assert imported.status_code == 201, imported.text
    assert imported.json()["format"] == "har" and imported.json()["imported"] == 4
    projects = data.get("/v1/projects", params={"page": "2", "sort": "name"})
    assert projects.status_code == 200 and projects.json()["page"] == 2
    assert data.delete("/v1/projects/p1").status_code == 204


def test_wiremock_mapping_answers_with_its_matchers(admin, data):
    imported = admin.post("/import", params={"filename": "mappings/account.json"},
                          content=fixture_text("wiremock/single-mapping.json"))
    assert imported.status_code == 201, imported.text
    assert imported.json()["format"] == "wiremock"
    account = data.get("/accounts/123", params={"expand": "owner"},
                       headers={"Authorization": "Bearer t"})
    assert account.status_code == 200
    assert account.json() == {"id": "123", "owner": {"name": "Ada"}}
    assert data.get("/accounts/123", headers={"Authorization": "Bearer t"}).status_code == 404


def test_curl_needs_the_format_and_then_imports(admin, data):
    text = fixture_text("curl/api-calls.sh")
    undetected = admin.post("/import", content="curl https://api.example.com/v1/balance")
    assert undetected.status_code == 400
    assert undetected.json()["error"] == "validation_error"
    assert "?format=curl" in undetected.json()["message"]
    assert "--format" not in undetected.json()["message"]

    imported = admin.post("/import", params={"format": "curl"}, content=text)
    assert imported.status_code == 201, imported.text
    assert imported.json()["format"] == "curl" and imported.json()["imported"] == 5
    charges = data.get("/v1/charges", params={"limit": "3"},
                       headers={"Authorization": "Bearer sk_test_123"})
    assert charges.status_code == 200 and charges.json() == {"status": "ok"}


def test_replace_into_a_workspace_leaves_the_others(admin):
    workspace = admin.post("/workspaces", json={"name": "import-target"}).json()["id"]
    first = {"version": "1.0", "mocks": [{"id": "ws-first", "http": {
        "matcher": {"path": "/ws/first"}, "response": {"body": "first"}}}]}
    assert admin.post("/import", params={"workspaceId": workspace},
                      json=first).status_code == 201
    assert mock_ids(admin, workspace) == ["ws-first"]
    default_before = mock_ids(admin, "local")
    text = fixture_text("wiremock/array-of-mappings.json")
    answer = admin.post("/import", params={"workspaceId": workspace, "replace": "true"},
                        content=text)
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["replace"] is True and body["total"] == body["imported"] > 0
    assert len(mock_ids(admin, workspace)) == body["imported"]
    assert mock_ids(admin, "local") == default_before


def test_a_mockd_collection_is_checked_like_post_config(admin, data):
    good = {"version": "1.0", "mocks": [{"id": "via-import", "type": "http", "http": {
        "matcher": {"method": "GET", "path": "/via/import"},
        "response": {"statusCode": 200, "body": "native"}}}]}
    dry = admin.post("/import", params={"dryRun": "true"}, json=good).json()
    assert dry == {"dryRun": True, "format": "mockd", "count": 1, "mocks": [
        {"id": "via-import", "name": "", "method": "GET", "path": "/via/import"}]}
    assert admin.post("/import", params={"format": "yaml"}, json=good).status_code == 201
    assert data.get("/via/import").text == "native"

    bad = {"version": "1.0", "mocks": [{"id": "bad", "type": "http", "http": {
        "matcher": {"path": "/bad"}, "response": {"statusCode": "abc"}}}]}
    refused = admin.post("/import", json=bad)
    assert refused.status_code == 400
    assert refused.json()["error"] == "validation_error"
    assert refused.json()["message"].startswith("mocks[0].http.response.statusCode:")
    assert admin.get("/mocks/bad").status_code == 404


@pytest.mark.parametrize(("params", "body", "expected"), [
    ({"format": "raml"}, "{}", "format: unknown format 'raml'; use one of wsdl, har, mockd"),
    ({}, "", "body: the document to import is empty"),
    ({}, '{"hello": "world"}', "unknown: not a recognised document (top-level keys: hello)"),
    ({"format": "openapi"}, '{"openapi": "3.0.0", "paths": {"/a": ',
     "openapi: not valid JSON or YAML at line"),
    ({"format": "postman"}, "[1, 2]", "postman:"),
    ({"var": "novalue"}, "{}", "var: expected NAME=VALUE, got 'novalue'"),
])
def test_documents_that_cannot_be_imported(admin, params, body, expected):
    before = mock_ids(admin)
    answer = admin.post("/import", params=params, content=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "validation_error"
    assert answer.json()["message"].startswith(expected), answer.json()["message"]
    assert mock_ids(admin) == before


@pytest.mark.parametrize(("filename", "body", "expected"), [
    ("svc.proto", 'syntax = "proto3";\nimport "shared/types.proto";\npackage p;\n'
     'service S { rpc M (A) returns (A); }\nmessage A {}\n',
     "proto: svc.proto: shared/types.proto: File not found"),
    ("svc.proto", 'syntax = "proto3";\nimport "/etc/hostname";\n'
     'service S { rpc M (A) returns (A); }\nmessage A {}\n',
     "proto: svc.proto: /etc/hostname: File not found"),
    ("svc.wsdl", '<?xml version="1.0"?><definitions '
     'xmlns="http://schemas.xmlsoap.org/wsdl/" targetNamespace="urn:x">'
     '<import namespace="urn:y" location="../../etc/passwd"/></definitions>',
     "wsdl: location '../../etc/passwd'"),
    ("api.json", json.dumps({"openapi": "3.0.0", "info": {"title": "t", "version": "1"},
                             "paths": {"/a": {"get": {"responses": {"200": {
                                 "description": "x", "content": {"application/json": {
                                     "schema": {"$ref": "/etc/passwd#/x"}}}}}}}}}),
     "openapi: nothing could be imported"),
])
def test_a_document_that_needs_files_beside_it_is_refused(admin, filename, body, expected):
    answer = admin.post("/import", params={"filename": filename}, content=body)
    assert answer.status_code == 400, answer.text
    message = answer.json()["message"]
    assert message.startswith(expected), message
    assert "self-contained documents only" in message
    assert "root:" not in message  # nothing of /etc/passwd was read


def test_a_self_contained_proto_imports(admin):
    text = ('syntax = "proto3";\npackage shop;\nimport "google/protobuf/empty.proto";\n'
            'service Catalog { rpc Ping (google.protobuf.Empty) returns '
            '(google.protobuf.Empty); }\n')
    dry = admin.post("/import", params={"dryRun": "true", "filename": "catalog.proto",
                                        "grpcPort": "50999"}, content=text).json()
    assert dry["format"] == "proto" and dry["count"] == 1
    assert dry["mocks"][0]["name"] == "shop.Catalog"


def test_unknown_workspace_and_oversized_body(admin):
    missing = admin.post("/import", params={"workspaceId": "nope", "format": "curl"},
                         content="curl https://x.example/a")
    assert missing.status_code == 404
    assert "Workspace not found" in missing.json()["message"]
    huge = admin.post("/import", params={"format": "curl"},
                      content=b"curl https://x.example/a " + b"x" * (10 * 1024 * 1024 + 1))
    assert huge.status_code == 413
    assert huge.json()["error"] == "body_too_large"
