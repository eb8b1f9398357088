"""WireMock stub-mapping import (behavior notes §13 "wiremock")."""
from __future__ import annotations

import json

import pytest

from mocks.portability.importers import ImportDocumentError, import_document, import_path
from tests.import_golden import FIXTURES, assert_matches_golden, case_name, cases


@pytest.mark.parametrize("source", cases("wiremock"), ids=case_name)
def test_wiremock_golden_file_converts_to_expected_config(source):
    assert_matches_golden(source)


def mapping(request, response=None, **extra):
    return {"request": request, "response": response or {"status": 200}, **extra}


def matcher_of(request):
    return import_document(json.dumps(mapping(request))).mocks[0]["http"]["matcher"]


@pytest.mark.parametrize(("request_spec", "expected"), [
    pytest.param({"urlPath": "/a", "url": "/b?x=1", "urlPattern": "/c.*"}, {"path": "/a"},
                 id="urlPath first"),
    pytest.param({"url": "/b?x=1&y=2", "urlPattern": "/c.*"},
                 {"path": "/b", "queryParams": {"x": "1", "y": "2"}}, id="then url with query"),
    pytest.param({"urlPathPattern": "/c/[0-9]+"}, {"pathPattern": "^/c/[0-9]+$"},
                 id="patterns anchored"),
    pytest.param({"urlPattern": "^/d.*$"}, {"pathPattern": "^/d.*$"}, id="already anchored"),
])
def test_wiremock_url_precedence(request_spec, expected):
    assert matcher_of(request_spec) == expected


@pytest.mark.parametrize("operator", ["equalTo", "contains", "matches"])
def test_wiremock_value_operators_kept_literally(operator):
    matcher = matcher_of({"urlPath": "/a", "method": "GET",
                          "queryParameters": {"q": {operator: "v.*"}},
                          "headers": {"X-H": {operator: "h"}}})
    assert matcher["queryParams"] == {"q": "v.*"}
    assert matcher["headers"] == {"X-H": "h"}


def test_wiremock_any_method_has_no_method_condition():
    assert "method" not in matcher_of({"method": "ANY", "urlPath": "/a"})


def test_wiremock_body_precedence_body_then_json_then_base64():
    response = {"status": 200, "body": "text", "jsonBody": {"j": 1}, "base64Body": "Yg=="}
    mock = import_document(json.dumps(mapping({"url": "/x"}, response))).mocks[0]
    assert mock["http"]["response"]["body"] == "text"
    del response["body"]
    mock = import_document(json.dumps(mapping({"url": "/x"}, response))).mocks[0]
    assert mock["http"]["response"]["body"] == {"j": 1}
    del response["jsonBody"]
    mock = import_document(json.dumps(mapping({"url": "/x"}, response))).mocks[0]
    assert mock["http"]["response"]["body"] == "b"


def test_wiremock_priority_and_delay_copied():
    mock = import_document(json.dumps(mapping({"url": "/x"}, {"status": 201,
                                                              "fixedDelayMilliseconds": 250},
                                              priority=4))).mocks[0]
    assert mock["http"]["priority"] == 4
    assert mock["http"]["response"] == {"statusCode": 201, "delayMs": 250}


def test_wiremock_directory_is_detected_and_read_in_name_order():
    directory = FIXTURES / "wiremock" / "recorded-directory"
    result = import_path(directory)
    assert result.format == "wiremock"
    assert [m["http"]["matcher"]["path"] for m in result.mocks] == ["/api/users", "/api/avatar"]


def test_wiremock_empty_directory_is_not_detected(tmp_path):
    with pytest.raises(ImportDocumentError) as caught:
        import_path(tmp_path)
    assert "a directory without WireMock mapping files" in str(caught.value)


def test_wiremock_directory_file_that_does_not_parse_names_the_file(tmp_path):
    (tmp_path / "a.json").write_text('{"request": {"url": "/a"}, "response": {}}')
    (tmp_path / "b.json").write_text("{broken")
    with pytest.raises(ImportDocumentError) as caught:
        import_path(tmp_path)
    assert str(caught.value).startswith("wiremock: b.json: not valid JSON or YAML")


@pytest.mark.parametrize(("document", "message"), [
    pytest.param({"mappings": [{"request": {}, "response": {}}, {"request": {}}]},
                 "wiremock: mappings[1]: expected a mapping with request and response",
                 id="mapping without response"),
    pytest.param(mapping({"url": "/x"}, {"status": "200"}),
                 "wiremock: response.status: expected an HTTP status number, got '200'",
                 id="text status"),
    pytest.param(mapping({"url": "/x", "headers": ["a"]}),
                 "wiremock: request.headers: expected a mapping", id="headers list"),
    pytest.param(mapping({"url": "/x"}, priority=-1),
                 "wiremock: priority: expected a whole number ≥ 0", id="negative priority"),
    pytest.param(mapping({"url": "/x"}, {"base64Body": "***"}),
                 "wiremock: response.base64Body: not valid base64", id="bad base64"),
])
def test_wiremock_malformed_mapping_names_the_place(document, message):
    with pytest.raises(ImportDocumentError) as caught:
        import_document(json.dumps(document), format="wiremock")
    assert str(caught.value) == message
