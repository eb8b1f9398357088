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
