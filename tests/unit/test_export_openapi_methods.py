"""OpenAPI export of mocks without a method condition: such a mock answers every method, so
it becomes one operation per method (issue 14 item 6; behavior notes §13: methods GET, POST,
PUT, DELETE, PATCH, HEAD, OPTIONS)."""
from __future__ import annotations

import json

from mocks.portability.exporters.openapi import openapi_document
from mocks.portability.importers import import_document
from tests.helpers import http_mock, make_config

EVERY_METHOD = ["delete", "get", "head", "options", "patch", "post", "put"]


def test_mock_without_method_exports_every_method():
    document = openapi_document(make_config(http_mock("any", None, "/things", body={"ok": 1})))
    operations = document["paths"]["/things"]
    assert sorted(operations) == EVERY_METHOD
    assert {operation["operationId"] for operation in operations.values()} == {
        f"any.{method}" for method in EVERY_METHOD}
    assert operations["post"]["responses"]["200"]["content"] == {
        "application/json": {"example": {"ok": 1}}}
    assert "1 HTTP mock(s)" in document["info"]["description"]


def test_mock_with_a_method_keeps_it_over_a_mock_without_one():
    document = openapi_document(make_config(
        http_mock("any", None, "/things", body="fallback"),
        http_mock("get-things", "GET", "/things", body="list")))
    operations = document["paths"]["/things"]
    assert operations["get"]["operationId"] == "get-things"
    assert operations["put"]["operationId"] == "any.put"
    assert "x-mockd-skipped" not in document


def test_second_mock_without_method_on_the_same_path_is_skipped():
    document = openapi_document(make_config(http_mock("first", None, "/x"),
                                            http_mock("second", None, "/x")))
    assert {op["operationId"] for op in document["paths"]["/x"].values()} == {
        f"first.{method}" for method in EVERY_METHOD}
    assert document["x-mockd-skipped"] == ["second"]


def test_export_of_any_method_mock_imports_back_as_one_mock_per_method():
    document = openapi_document(make_config(http_mock("any", None, "/ping", body="pong")))
    result = import_document(json.dumps(document))
    assert sorted(mock["http"]["matcher"]["method"] for mock in result.mocks) == sorted(
        method.upper() for method in EVERY_METHOD)
