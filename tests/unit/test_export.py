"""Export: native collection, OpenAPI 3.0 from mocks, Insomnia v4/v5 (SPEC "Import and
export", "Client-collection exports"; behavior notes §1, §13)."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import yaml

from mocks.portability.exporters import dump_collection, native_collection, resolve_bindings
from mocks.portability.exporters.insomnia import insomnia_v4, insomnia_v5
from mocks.portability.exporters.openapi import media_type_of, openapi_document
from mocks.portability.importers import import_document
from tests.helpers import http_mock

COLLECTION = {
    "version": "1.0", "kind": "MockCollection", "name": "shop", "metadata": {"name": "shop"},
    "mocks": [
        http_mock("list", "GET", "/items", body={"data": []},
                  matcher={"queryParams": {"page": "1"}, "headers": {"X-Key": "k",
                                                                     "Auth": "Bearer *"}}),
        http_mock("get", "GET", "/items/{id}", headers={"Content-Type": "application/json",
                                                         "X-Trace": "t"}, body='{"id": 1}'),
        http_mock("text", "POST", "/echo", body="hello", status=202,
                  matcher={"bodyEquals": '{"a": 1}'}),
        http_mock("dup", "GET", "/items", body="second"),
        http_mock("pattern", None, None, matcher={"pathPattern": "^/re/.*$"}),
        {"id": "create", "type": "http", "http": {"matcher": {"method": "POST",
                                                              "path": "/items"}}},
        {"id": "sse", "type": "http", "http": {"matcher": {"method": "GET", "path": "/events"},
                                               "sse": {"events": [{"data": "x"}]}}},
        {"id": "svc", "type": "soap", "soap": {"path": "/soap", "operations": {
            "GetA": {"soapAction": "urn:GetA"}, "GetB": {"soapAction": "urn:GetB"}}}},
        {"id": "mq", "type": "mqtt", "mqtt": {"port": 1883, "topics": []}},
    ],
    "tables": [{"name": "items", "idField": "id"}],
    "extend": [{"mock": "create", "table": "items", "action": "create"}],
}
NOW = datetime(2024, 5, 2, 9, 15, tzinfo=timezone.utc)


def test_resolve_bindings_moves_tables_and_bindings_onto_mocks():
    resolved = resolve_bindings(COLLECTION)
    assert "tables" not in resolved
    assert resolved["statefulResources"] == [{"name": "items", "idField": "id"}]
    create = next(mock for mock in resolved["mocks"] if mock["id"] == "create")
    assert create["http"]["statefulBinding"] == {"table": "items", "action": "create"}
    assert "extend" not in resolved
    assert "statefulBinding" not in COLLECTION["mocks"][5]["http"]  # input untouched


def test_resolve_bindings_by_method_and_path_and_keeps_unresolved_ones():
    document = {"mocks": [http_mock("a", "GET", "/a")],
                "extend": [{"mock": "GET /a", "table": "t", "action": "list"},
                           {"mock": "GET /nowhere", "table": "t", "action": "list"}]}
    resolved = resolve_bindings(document)
    assert resolved["mocks"][0]["http"]["statefulBinding"] == {"table": "t", "action": "list"}
    assert resolved["extend"] == [{"mock": "GET /nowhere", "table": "t", "action": "list"}]


def test_native_collection_shape_and_name():
    collection = native_collection(COLLECTION, "exported-config")
    assert list(collection)[:5] == ["version", "kind", "name", "metadata", "mocks"]
    assert collection["version"] == "1.0" and collection["kind"] == "MockCollection"
    assert collection["name"] == collection["metadata"]["name"] == "exported-config"


def test_native_collection_round_trips_through_import():
    text = dump_collection(native_collection(COLLECTION), "yaml")
    result = import_document(text)
    assert result.format == "mockd"
    assert [mock["id"] for mock in result.mocks] == [mock["id"] for mock in COLLECTION["mocks"]]
    assert result.stateful_resources == [{"name": "items", "idField": "id"}]


def test_dump_collection_json_and_yaml_parse_back():
    collection = native_collection(COLLECTION)
    assert json.loads(dump_collection(collection, "json")) == collection
    assert yaml.safe_load(dump_collection(collection, "yaml")) == collection


def test_openapi_export_one_operation_per_path_and_method():
    document = openapi_document(resolve_bindings(COLLECTION))
    assert document["openapi"] == "3.0.3" and document["info"]["title"] == "shop"
    assert sorted(document["paths"]) == ["/echo", "/events", "/items", "/items/{id}"]
    assert set(document["paths"]["/items"]) == {"get", "post"}
    assert document["x-mockd-skipped"] == ["dup", "pattern"]


def test_openapi_export_parameters_and_responses():
    paths = openapi_document(resolve_bindings(COLLECTION))["paths"]
    listing = paths["/items"]["get"]
    assert listing["operationId"] == "list"
    assert {(p["in"], p["name"], p.get("example")) for p in listing["parameters"]} == {
        ("query", "page", "1"), ("header", "X-Key", "k")}
    assert listing["responses"]["200"]["content"] == {"application/json": {
        "example": {"data": []}}}
    item = paths["/items/{id}"]["get"]
    assert item["parameters"][0] == {"name": "id", "in": "path", "required": True,
                                     "schema": {"type": "string"}}
    assert item["responses"]["200"]["headers"] == {"X-Trace": {"schema": {"type": "string"},
                                                               "example": "t"}}
    assert item["responses"]["200"]["content"] == {"application/json": {"example": {"id": 1}}}
    assert paths["/echo"]["post"]["responses"]["202"]["content"] == {
        "text/plain": {"example": "hello"}}
    assert paths["/items"]["post"]["responses"] == {
        "201": {"description": "Answered from a table (create)"}}


def test_openapi_export_then_import_reproduces_static_mocks():
    exported = json.dumps(openapi_document(resolve_bindings(COLLECTION)))
    imported = {mock["name"]: mock["http"] for mock in import_document(exported).mocks}
    listing = imported["list"]
    assert listing["matcher"] == {"method": "GET", "path": "/items",
                                  "queryParams": {"page": "1"}, "headers": {"X-Key": "k"}}
    assert listing["response"] == {"statusCode": 200,
                                   "headers": {"Content-Type": "application/json"},
                                   "body": {"data": []}}
    assert imported["text"]["response"] == {"statusCode": 202,
                                            "headers": {"Content-Type": "text/plain"},
                                            "body": "hello"}


def test_media_type_inference():
    assert media_type_of({"a": 1}, {}) == "application/json"
    assert media_type_of("[1]", {}) == "application/json"
    assert media_type_of("<a/>", {}) == "application/xml"
    assert media_type_of("hi", {}) == "text/plain"
    assert media_type_of("hi", {"content-type": "text/html; charset=utf-8"}) == "text/html"


def test_insomnia_v4_workspace_folders_and_requests():
    document = insomnia_v4(resolve_bindings(COLLECTION), "http://localhost:4280",
                           "http://localhost:4290", now=NOW)
    assert document["_type"] == "export" and document["__export_format"] == 4
    assert document["__export_date"] == "2024-05-02T09:15:00.000Z"
    resources = {resource["_id"]: resource for resource in document["resources"]}
    assert resources["env_mockd_base"]["data"]["base_url"] == "http://localhost:4280"
    assert resources["env_mockd_base"]["data"]["admin_url"] == "http://localhost:4290"
    assert {key for key in resources if key.startswith("fld_")} == {"fld_http", "fld_soap",
                                                                   "fld_mqtt"}
    listing = resources["req_list"]
    assert listing["url"] == "{{ _.base_url }}/items"
    assert listing["parameters"] == [{"name": "page", "value": "1"}]
    assert listing["headers"] == [{"name": "X-Key", "value": "k"}]
    assert resources["req_get"]["url"] == "{{ _.base_url }}/items/:id"
    echo = resources["req_text"]
    assert echo["body"] == {"mimeType": "application/json", "text": '{"a": 1}'}
    assert {"name": "Content-Type", "value": "application/json"} in echo["headers"]
    assert {"name": "Accept", "value": "text/event-stream"} in resources["req_sse"]["headers"]
    assert {"name": "SOAPAction", "value": "urn:GetA"} in resources["req_svc"]["headers"]
    assert {"name": "SOAPAction", "value": "urn:GetB"} in resources["req_svc_GetB"]["headers"]


def test_insomnia_v5_collection_with_table_requests():
    document = insomnia_v5(resolve_bindings(COLLECTION), "http://localhost:4280",
                           "http://localhost:4290", now=NOW)
    assert document["type"] == "collection.insomnia.rest/5.0"
    folders = {folder["meta"]["id"]: folder for folder in document["collection"]}
    assert set(folders) == {"fld_http", "fld_soap", "fld_mqtt", "fld_tables"}
    ids = {child["meta"]["id"] for child in folders["fld_http"]["children"]}
    assert {"req_list", "req_get", "req_sse"} <= ids
    table_urls = {(child["method"], child["url"]) for child in folders["fld_tables"]["children"]}
    assert ("GET", "{{ _.base_url }}/api/items") in table_urls
    assert ("DELETE", "{{ _.base_url }}/api/items/:id") in table_urls
    assert document["environments"]["data"]["base_url"] == "http://localhost:4280"
    yaml.safe_load(yaml.safe_dump(document))  # serialisable as the YAML download
