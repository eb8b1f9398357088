"""OpenAPI export -> import round trip: templates come back verbatim, conditions come back
as conditions, credential query parameters come back (SPEC "Import and export"; OpenAPI
export and import)."""
from __future__ import annotations

import json

import pytest

from mocks.portability.exporters.openapi import openapi_document
from mocks.portability.importers import import_document
from tests.helpers import http_mock, make_config


def round_trip(*mocks: dict) -> list[dict]:
    document = openapi_document(make_config(*mocks))
    return import_document(json.dumps(document)).mocks


@pytest.mark.parametrize("body", [
    pytest.param("user {{request.pathParam.id}}", id="text template"),
    pytest.param('{"id": "{{request.pathParam.id}}", "name": "{{request.query.name}}"}',
                 id="JSON text with templates"),
    pytest.param('{"id": {{request.pathParam.id}}}', id="JSON-like text that is no JSON"),
    pytest.param({"id": "{{request.pathParam.id}}", "tags": ["{{ upper(request.method) }}"]},
                 id="structured body"),
    pytest.param("\\{{item.name}} is literal", id="escaped braces stay escaped"),
])
def test_templates_survive_export_and_import(body):
    [mock] = round_trip(http_mock("m", "GET", "/users/{id}", body=body,
                                  headers={"Content-Type": "application/json"}))
    assert mock["http"]["response"]["body"] == body


def test_templated_redirect_location_survives():
    [mock] = round_trip(http_mock("m", "GET", "/old/{id}", status=302,
                                  headers={"Location": "/new/{{request.pathParam.id}}"}))
    assert mock["http"]["response"]["headers"]["Location"] == "/new/{{request.pathParam.id}}"


def test_literal_examples_stay_literal():
    [mock] = round_trip(http_mock("m", "GET", "/x", body={"plain": "value"}))
    assert mock["http"]["response"]["body"] == {"plain": "value"}
    document = openapi_document(make_config(http_mock("m", "GET", "/x", body={"a": 1})))
    assert "x-mockd-template" not in document["paths"]["/x"]["get"]["responses"]["200"]


def test_conditions_survive_export_and_import():
    [mock] = round_trip(http_mock("m", "GET", "/x", matcher={
        "queryParams": {"page": "2"}, "headers": {"X-Tenant": "acme"}}))
    matcher = mock["http"]["matcher"]
    assert matcher["queryParams"] == {"page": "2"} and matcher["headers"] == {"X-Tenant": "acme"}


def test_credential_query_params_survive_export_and_import():
    [mock] = round_trip(http_mock("m", "GET", "/x", credentialQueryParams=["api_key"]))
    assert mock["http"]["credentialQueryParams"] == ["api_key"]


def test_declared_query_params_survive_export_and_import_and_stay_no_conditions():
    [mock] = round_trip(http_mock("m", "GET", "/x", matcher={"queryParams": {"v": "2"}},
                                  declaredQueryParams=["api_key", "v", "status"]))
    assert mock["http"]["declaredQueryParams"] == ["api_key", "status"]
    assert mock["http"]["matcher"]["queryParams"] == {"v": "2"}


def test_binary_body_and_matcher_objects_survive_export_and_import():
    import base64

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\xff").decode()
    collection = {"version": "1.0", "mocks": [
        {"id": "logo", "type": "http", "http": {
            "matcher": {"method": "GET", "path": "/logo.png",
                        "headers": {"X-Tag": {"contains": "v"}},
                        "queryParams": {"size": {"matches": "[0-9]+"}}},
            "response": {"statusCode": 200, "headers": {"Content-Type": "image/png"},
                         "bodyBase64": png}}}]}
    document = openapi_document(collection)
    operation = document["paths"]["/logo.png"]["get"]
    assert "parameters" not in operation  # matcher objects have no single example value
    media = operation["responses"]["200"]["content"]["image/png"]
    assert media == {"schema": {"type": "string", "format": "byte"}, "example": png}
    [mock] = import_document(json.dumps(document), format="openapi").mocks
    response = mock["http"]["response"]
    assert response["bodyBase64"] == png and "body" not in response
    assert response["headers"]["Content-Type"] == "image/png"
