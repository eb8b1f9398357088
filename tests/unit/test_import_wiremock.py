"""WireMock stub-mapping import (behavior notes §13 "wiremock")."""
from __future__ import annotations

import base64
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


@pytest.mark.parametrize(("spec", "header", "query"), [
    pytest.param({"equalTo": "v"}, "v", "v", id="plain equalTo stays text"),
    pytest.param({"equalTo": "v*"}, {"equalTo": "v*"}, "v*",
                 id="header equalTo that would read as a wildcard"),
    pytest.param({"equalTo": "V", "caseInsensitive": True},
                 {"equalTo": "V", "caseInsensitive": True},
                 {"equalTo": "V", "caseInsensitive": True}, id="caseInsensitive"),
    pytest.param({"equalToIgnoreCase": "V"}, {"equalTo": "V", "caseInsensitive": True},
                 {"equalTo": "V", "caseInsensitive": True}, id="old equalToIgnoreCase"),
    pytest.param({"contains": "v"}, {"contains": "v"}, {"contains": "v"}, id="contains"),
    pytest.param({"matches": "v.*"}, {"matches": "v.*"}, {"matches": "v.*"}, id="matches"),
    pytest.param({"doesNotMatch": "v.*"}, {"doesNotMatch": "v.*"}, {"doesNotMatch": "v.*"},
                 id="doesNotMatch"),
    pytest.param({"absent": True}, {"absent": True}, {"absent": True}, id="absent"),
])
def test_wiremock_value_operators_convert_exactly(spec, header, query):
    matcher = matcher_of({"urlPath": "/a", "method": "GET", "queryParameters": {"q": spec},
                          "headers": {"X-H": spec}})
    assert matcher["queryParams"] == {"q": query}
    assert matcher["headers"] == {"X-H": header}


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


def test_wiremock_delay_copied_and_lone_default_priority_left_out():
    mock = import_document(json.dumps(mapping({"url": "/x"}, {"status": 201,
                                                              "fixedDelayMilliseconds": 250},
                                              priority=5))).mocks[0]
    assert "priority" not in mock["http"]
    assert mock["http"]["response"] == {"statusCode": 201, "delayMs": 250}


def test_wiremock_priorities_keep_their_order_with_ours_higher_wins():
    document = {"mappings": [mapping({"url": "/a"}, priority=1), mapping({"url": "/b"}),
                             mapping({"url": "/c"}, priority=9), mapping({"url": "/d"},
                                                                         priority=3)]}
    mocks = import_document(json.dumps(document)).mocks
    assert [mock["http"].get("priority", 0) for mock in mocks] == [8, 4, 0, 6]


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


@pytest.mark.parametrize(("document", "item", "reason"), [
    pytest.param({"mappings": [{"request": {"url": "/ok"}, "response": {}}, {"request": {}}]},
                 "mappings[1]", "expected a mapping with request and response",
                 id="mapping without response"),
    pytest.param({"mappings": [mapping({"url": "/x"}, {"status": "200"})]}, "mappings[0]",
                 "response.status: expected an HTTP status number, got '200'", id="text status"),
    pytest.param({"mappings": [mapping({"url": "/x", "headers": ["a"]})]}, "mappings[0]",
                 "request.headers: expected a mapping", id="headers list"),
    pytest.param({"mappings": [mapping({"url": "/x"}, priority=-1)]}, "mappings[0]",
                 "priority: expected a whole number ≥ 0, got -1", id="negative priority"),
    pytest.param({"mappings": [mapping({"url": "/x"}, priority="high")]}, "mappings[0]",
                 "priority: expected a whole number ≥ 0, got 'high'", id="text priority"),
    pytest.param({"mappings": [mapping({"url": "/x"}, priority=1.5)]}, "mappings[0]",
                 "priority: expected a whole number ≥ 0, got 1.5", id="fractional priority"),
    pytest.param({"mappings": [mapping({"url": "/x"}, {"base64Body": "***"})]}, "mappings[0]",
                 "response.base64Body: not valid base64", id="bad base64"),
])
def test_wiremock_malformed_mapping_is_skipped_naming_the_place(document, item, reason):
    document["mappings"].append(mapping({"url": "/kept"}))
    result = import_document(json.dumps(document), format="wiremock")
    assert {"item": item, "reason": reason} in result.skipped
    assert f"skipped {item}: {reason}" in result.warnings
    assert "/kept" in [mock["http"]["matcher"].get("path") for mock in result.mocks]


def test_wiremock_import_of_only_unconvertible_mappings_fails_naming_the_first():
    document = mapping({"url": "/x", "bodyPatterns": [{"matchesXPath": "//a"}]})
    with pytest.raises(ImportDocumentError) as caught:
        import_document(json.dumps(document), format="wiremock")
    assert str(caught.value) == (
        "wiremock: nothing could be imported: 1 item skipped; first: mappings[0]: "
        "request.bodyPatterns[0]: body pattern matchesXPath is not supported")


@pytest.mark.parametrize(("request_spec", "reason"), [
    pytest.param({"bodyPatterns": [{"matchesXPath": "//a"}]},
                 "request.bodyPatterns[0]: body pattern matchesXPath is not supported",
                 id="matchesXPath"),
    pytest.param({"bodyPatterns": [{"binaryEqualTo": "AAE="}]},
                 "request.bodyPatterns[0]: body pattern binaryEqualTo is not supported",
                 id="binaryEqualTo"),
    pytest.param({"bodyPatterns": [{"matchesJsonPath": {"expression": "$.a",
                                                        "equalTo": "1"}}]},
                 "request.bodyPatterns[0].matchesJsonPath: matchesJsonPath with a sub-matcher "
                 "is not supported", id="matchesJsonPath with a sub-matcher"),
    pytest.param({"bodyPatterns": [{"equalToXml": "<a/>", "enablePlaceholders": True}]},
                 "request.bodyPatterns[0].enablePlaceholders: option enablePlaceholders of "
                 "equalToXml is not supported", id="equalToXml placeholders"),
    pytest.param({"bodyPatterns": [{"equalToJson": "{nope"}]},
                 "request.bodyPatterns[0].equalToJson: not valid JSON text",
                 id="equalToJson text that is not JSON"),
    pytest.param({"headers": {"X-A": {"or": [{"equalTo": "1"}, {"equalTo": "2"}]}}},
                 "request.headers.X-A: matcher or is not supported", id="or"),
    pytest.param({"headers": {"X-A": {"and": [{"contains": "1"}, {"contains": "2"}]}}},
                 "request.headers.X-A: matcher and is not supported", id="and"),
    pytest.param({"queryParameters": {"since": {"before": "now"}}},
                 "request.queryParameters.since: matcher before is not supported",
                 id="before"),
    pytest.param({"queryParameters": {"q": {"hasExactly": [{"equalTo": "1"}]}}},
                 "request.queryParameters.q: matcher hasExactly is not supported",
                 id="hasExactly"),
    pytest.param({"headers": {"X-A": {"absent": False}}},
                 "request.headers.X-A: matcher absent is not supported", id="absent false"),
    pytest.param({"cookies": {"s": {"matches": "a.*"}}},
                 "request.cookies.s: cookie matcher matches is not supported",
                 id="cookie other than equalTo"),
    pytest.param({"host": {"equalTo": "example.com"}},
                 "request.host: this request condition has no mockd equivalent; the mapping "
                 "would match more requests than in WireMock", id="host"),
    pytest.param({"multipartPatterns": [{"name": "f"}]},
                 "request.multipartPatterns: this request condition has no mockd equivalent; "
                 "the mapping would match more requests than in WireMock", id="multipart"),
])
def test_wiremock_condition_without_equivalent_skips_the_mapping(request_spec, reason):
    document = {"mappings": [mapping({"urlPath": "/a", **request_spec}),
                             mapping({"urlPath": "/b"})]}
    result = import_document(json.dumps(document))
    assert result.skipped == [{"item": "mappings[0]", "reason": reason}]
    assert [mock["http"]["matcher"]["path"] for mock in result.mocks] == ["/b"]


def test_wiremock_body_patterns_convert_to_body_matchers():
    matcher = matcher_of({"urlPath": "/a", "bodyPatterns": [
        {"equalTo": "x", "caseInsensitive": True}, {"contains": "y"}, {"matches": "z.*"},
        {"doesNotMatch": ".*secret.*"},
        {"equalToJson": '{"a": [1, 2]}', "ignoreArrayOrder": True, "ignoreExtraElements": True},
        {"equalToJson": {"b": 1}}, {"equalToXml": "<a><b/></a>"},
        {"matchesJsonPath": "$.items[0]"}]})
    assert matcher["bodyMatchers"] == [
        {"equalTo": "x", "caseInsensitive": True}, {"contains": "y"}, {"matches": "z.*"},
        {"doesNotMatch": ".*secret.*"},
        {"equalToJson": '{"a": [1, 2]}', "ignoreArrayOrder": True, "ignoreExtraElements": True},
        {"equalToJson": {"b": 1}}, {"equalToXml": "<a><b/></a>"},
        {"matchesJsonPath": "$.items[0]"}]


@pytest.mark.parametrize(("cookies", "expected"), [
    pytest.param({"session": {"equalTo": "abc"}}, {"contains": "session=abc"}, id="one"),
    pytest.param({"a": "1", "b": {"equalTo": "2"}},
                 {"matches": "(?s)(?=.*a=1)(?=.*b=2).*"}, id="two"),
])
def test_wiremock_cookies_become_an_approximate_cookie_header_with_a_warning(cookies, expected):
    result = import_document(json.dumps(mapping({"urlPath": "/a", "cookies": cookies})))
    assert result.mocks[0]["http"]["matcher"]["headers"] == {"Cookie": expected}
    pairs = " and ".join(f"{name}={value if isinstance(value, str) else value['equalTo']}"
                         for name, value in cookies.items())
    assert result.warnings == [
        f"mappings[0].request.cookies: approximated as a Cookie header that contains {pairs}; "
        "WireMock compares each parsed cookie exactly"]


def test_wiremock_basic_auth_becomes_an_exact_authorization_header():
    matcher = matcher_of({"urlPath": "/a", "basicAuthCredentials": {"username": "ada",
                                                                    "password": "pw"}})
    assert matcher["headers"] == {"Authorization": "Basic YWRhOnB3"}


def test_wiremock_url_path_template_becomes_a_path_with_parameters():
    assert matcher_of({"urlPathTemplate": "/users/{id}"}) == {"path": "/users/{id}"}


def test_wiremock_scenario_fields_become_http_scenario():
    document = {"mappings": [
        mapping({"urlPath": "/a"}, scenarioName="flow", requiredScenarioState="Started",
                newScenarioState="Second"),
        mapping({"urlPath": "/b"}, scenarioName="flow", requiredScenarioState="Second"),
        mapping({"urlPath": "/c"}, requiredScenarioState="Second")]}
    result = import_document(json.dumps(document))
    assert [mock["http"]["scenario"] for mock in result.mocks] == [
        {"name": "flow", "requiredState": "Started", "newState": "Second"},
        {"name": "flow", "requiredState": "Second"}]
    assert result.skipped == [{"item": "mappings[2]",
                               "reason": "requiredScenarioState: needs a scenarioName"}]


def test_wiremock_mapping_files_with_comments_parse(tmp_path):
    (tmp_path / "a.json").write_text(
        '// a line comment\n{"request": {"url": "/a//b", /* block\n comment */ "method": '
        '"GET"}, "response": {"body": "x /* not a comment */ \\" // nor this"}}\n')
    result = import_path(tmp_path)
    assert result.mocks[0]["http"]["matcher"]["path"] == "/a//b"
    assert result.mocks[0]["http"]["response"]["body"] == 'x /* not a comment */ " // nor this'


def test_wiremock_single_document_with_comments_is_detected():
    text = '/* exported */ {"request": {"url": "/a"}, // the answer\n "response": {}}'
    assert import_document(text).mocks[0]["http"]["matcher"]["path"] == "/a"


def test_wiremock_directory_items_are_named_by_file_and_index(tmp_path):
    (tmp_path / "mappings").mkdir()
    (tmp_path / "mappings" / "two.json").write_text(json.dumps({"mappings": [
        mapping({"url": "/a"}), mapping({"url": "/b"}, {"status": "x"})]}))
    result = import_path(tmp_path)
    assert result.skipped == [{"item": "two.json[1]", "reason": "response.status: expected "
                                                                "an HTTP status number, got 'x'"}]


def _files_tree(tmp_path, body_file_name: str, content: bytes, file_name: str = "x.bin",
                headers: dict | None = None):
    (tmp_path / "mappings" / "nested").mkdir(parents=True)
    (tmp_path / "__files").mkdir()
    (tmp_path / "__files" / file_name).write_bytes(content)
    response = {"bodyFileName": body_file_name, **({"headers": headers} if headers else {})}
    (tmp_path / "mappings" / "nested" / "m.json").write_text(json.dumps(mapping(
        {"urlPath": "/f"}, response)))
    (tmp_path / "mappings" / "other.json").write_text(json.dumps(mapping({"urlPath": "/o"})))
    return import_path(tmp_path)


def test_wiremock_body_file_is_found_above_the_mapping_file(tmp_path):
    result = _files_tree(tmp_path, "hello.txt", "héllo".encode(), "hello.txt")
    assert result.mocks[0]["http"]["response"] == {"statusCode": 200, "body": "héllo"}


def test_wiremock_binary_body_file_becomes_base64_with_a_content_type(tmp_path):
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff"
    result = _files_tree(tmp_path, "logo.png", png, "logo.png")
    response = result.mocks[0]["http"]["response"]
    assert response["headers"] == {"Content-Type": "image/png"}
    assert base64.b64decode(response["bodyBase64"]) == png
    assert "body" not in response


def test_wiremock_binary_body_file_keeps_the_mapping_content_type(tmp_path):
    result = _files_tree(tmp_path, "logo.png", b"\xff\xfe\x00", "logo.png",
                         headers={"Content-Type": "application/x-thing"})
    assert result.mocks[0]["http"]["response"]["headers"] == {
        "Content-Type": "application/x-thing"}


@pytest.mark.parametrize("name", ["../mappings/other.json", "/etc/hostname",
                                  "../../outside.txt"])
def test_wiremock_body_file_outside_files_skips_the_mapping(tmp_path, name):
    result = _files_tree(tmp_path, name, b"x")
    assert result.skipped == [{"item": "nested/m.json[0]",
                               "reason": f"response.bodyFileName: {name!r} leads outside the "
                                         "__files folder"}]
    assert [mock["http"]["matcher"]["path"] for mock in result.mocks] == ["/o"]


def test_wiremock_single_mapping_file_finds_files_one_folder_up(tmp_path):
    (tmp_path / "mappings").mkdir()
    (tmp_path / "__files").mkdir()
    (tmp_path / "__files" / "hello.txt").write_text("hello")
    single = tmp_path / "mappings" / "one.json"
    single.write_text(json.dumps(mapping({"urlPath": "/h"}, {"bodyFileName": "hello.txt"})))
    result = import_path(single)
    assert result.mocks[0]["http"]["response"]["body"] == "hello"
    assert result.warnings == []
