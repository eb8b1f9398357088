"""Postman collection import (behavior notes §13 "postman")."""
from __future__ import annotations

import json

import pytest

from mocks.portability.importers import ImportDocumentError, import_document
from mocks.portability.importers.postman import substitute
from tests.import_golden import assert_matches_golden, case_name, cases


@pytest.mark.parametrize("source", cases("postman"), ids=case_name)
def test_postman_golden_file_converts_to_expected_config(source):
    assert_matches_golden(source)


def collection(items, variables=None):
    return json.dumps({"info": {"name": "c", "schema": "https://schema.getpostman.com/json/"
                                "collection/v2.1.0/collection.json"},
                       "item": items, "variable": variables or []})


def test_postman_folders_are_flattened_depth_first():
    items = [{"name": "a", "item": [{"name": "a1", "request": {"url": "/a1"}},
                                    {"name": "deep", "item": [{"name": "a2",
                                                               "request": {"url": "/a2"}}]}]},
             {"name": "b", "request": {"url": "/b"}}]
    assert [m["name"] for m in import_document(collection(items)).mocks] == ["a1", "a2", "b"]


def test_postman_variables_substituted_and_unknown_ones_stay_literal():
    assert substitute("{{host}}/{{ missing }}", {"host": "h"}) == "h/{{ missing }}"


def test_postman_unknown_variable_in_a_saved_body_is_served_literally():
    items = [{"name": "x", "request": {"url": "/x"},
              "response": [{"code": 200, "body": "hi {{user}}"}]}]
    assert import_document(collection(items)).mocks[0]["http"]["response"]["body"] == \
        "hi \\{{user}}"


def test_postman_first_saved_response_else_ok():
    items = [{"name": "one", "request": {"url": "/1"},
              "response": [{"code": 404, "body": "no"}, {"code": 200, "body": "yes"}]},
             {"name": "two", "request": {"url": "/2"}}]
    first, second = (m["http"]["response"] for m in import_document(collection(items)).mocks)
    assert first == {"statusCode": 404, "body": "no"}
    assert second == {"statusCode": 200, "body": {"status": "ok"}}


def test_postman_computed_headers_are_not_conditions():
    items = [{"name": "x", "request": {"url": "/x", "header": [
        {"key": "Content-Type", "value": "application/json"},
        {"key": "content-length", "value": "3"}, {"key": "ACCEPT", "value": "*/*"},
        {"key": "X-Off", "value": "1", "disabled": True}, {"key": "X-On", "value": "2"}]}}]
    assert import_document(collection(items)).mocks[0]["http"]["matcher"]["headers"] == {
        "X-On": "2"}


def test_postman_variable_holding_a_url_with_a_path_contributes_the_path():
    items = [{"name": "x", "request": {"url": "{{base}}/users/:id"}}]
    mock = import_document(collection(items, [{"key": "base",
                                               "value": "https://api.example.com/v2"}])).mocks[0]
    assert mock["http"]["matcher"]["path"] == "/v2/users/{id}"


@pytest.mark.parametrize(("items", "message"), [
    pytest.param("x", "postman: item: expected a list of requests and folders", id="item text"),
    pytest.param([1], "postman: nothing could be imported: 1 item skipped; first: item[0]: "
                      "expected a mapping (a request or a folder)", id="item number"),
    pytest.param([{"name": "f", "item": [{"request": 5}]}],
                 "postman: nothing could be imported: 1 item skipped; first: item[0].item[0]: "
                 "request: expected a mapping or a URL", id="request number"),
    pytest.param([{"request": {"url": "/x"}, "response": [{"code": "abc"}]}],
                 "postman: nothing could be imported: 1 item skipped; first: item[0]: "
                 "response[0].code: expected an HTTP status number", id="bad code"),
])
def test_postman_malformed_collection_names_the_place(items, message):
    with pytest.raises(ImportDocumentError) as caught:
        import_document(json.dumps({"info": {}, "item": items}))
    assert str(caught.value) == message
