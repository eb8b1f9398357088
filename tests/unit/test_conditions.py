"""Each matcher condition: match, miss, score, near-miss text, bad config (STYLE §14)."""
from __future__ import annotations

import pytest

from mocks.core import scores
from mocks.protocols.http.conditions import (BodyContainsCondition, BodyEqualsCondition,
                                     BodyPatternCondition, HeaderCondition, JsonPathCondition,
                                     MethodCondition, PathPatternCondition, QueryParamCondition,
                                     path_condition)
from mocks.core.errors import ConfigError
from tests.helpers import make_request


# ------------------------------------------------------------------ method
def test_method_condition_same_method_matches_with_full_score():
    result = MethodCondition("post").evaluate(make_request("POST", "/"))
    assert result.matched and result.score == scores.METHOD


def test_method_condition_other_method_misses_and_explains():
    result = MethodCondition("POST").evaluate(make_request("GET", "/"), explain=True)
    assert not result.matched and result.score == 0
    assert result.mismatch == 'method expected "POST", got "GET"'


# ------------------------------------------------------------------ path
@pytest.mark.parametrize("pattern,path,captures", [
    pytest.param("/a/b", "/a/b", {}, id="exact"),
    pytest.param("/users/{id}", "/users/42", {"id": "42"}, id="one param"),
    pytest.param("/o/{org}/r/{repo}", "/o/acme/r/x", {"org": "acme", "repo": "x"},
                 id="two params"),
    pytest.param("/s/{sid}.json", "/s/abc.json", {"sid": "abc"}, id="param inside a segment"),
    pytest.param("/f/{rest:.*}", "/f/a/b/c.txt", {"rest": "a/b/c.txt"}, id="catch-all param"),
    pytest.param("/g/*", "/g/a/b", {"0": "a/b"}, id="trailing glob takes the rest"),
    pytest.param("/g/*", "/g", {"0": ""}, id="trailing glob matches the prefix itself"),
    pytest.param("/x/*/y", "/x/abc/y", {"0": "abc"}, id="inner glob one segment"),
    pytest.param("/caf%C3%A9", "/café", {}, id="pattern url-decoded"),
])
def test_path_condition_matching_path_captures(pattern, path, captures):
    result = path_condition(pattern, "p").evaluate(make_request("GET", path))
    assert result.matched
    assert dict(result.captures) == captures


@pytest.mark.parametrize("pattern,path", [
    pytest.param("/a/b", "/a/b/c", id="exact longer"),
    pytest.param("/a/b", "/a", id="exact shorter"),
    pytest.param("/users/{id}", "/users/42/extra", id="param does not span slashes"),
    pytest.param("/users/{id}", "/users/", id="param needs a value"),
    pytest.param("/x/*/y", "/x/a/b/y", id="inner glob is one segment"),
])
def test_path_condition_other_path_misses(pattern, path):
    assert not path_condition(pattern, "p").evaluate(make_request("GET", path)).matched


@pytest.mark.parametrize("pattern,specificity,points", [
    pytest.param("/a", scores.SPECIFICITY_EXACT, scores.PATH_EXACT, id="exact"),
    pytest.param("/a/{id}", scores.SPECIFICITY_TEMPLATE, scores.PATH_TEMPLATE, id="template"),
    pytest.param("/a/*", scores.SPECIFICITY_GLOB, scores.PATH_GLOB, id="glob"),
    pytest.param("/a/{rest:.*}", scores.SPECIFICITY_GLOB, scores.PATH_GLOB, id="catch-all"),
])
def test_path_condition_kind_sets_specificity_and_score(pattern, specificity, points):
    condition = path_condition(pattern, "p")
    assert condition.specificity == specificity and condition.max_score == points


def test_path_condition_miss_explains_expected_and_actual():
    result = path_condition("/a/{id}", "p").evaluate(make_request("GET", "/b"), explain=True)
    assert result.expected == "/a/{id}" and result.actual == "/b"


@pytest.mark.parametrize("bad", [
    pytest.param("no-slash", id="relative"),
    pytest.param("/a/{id", id="unbalanced brace"),
    pytest.param("/a/{x:(}", id="bad custom regex"),
])
def test_path_condition_bad_path_is_config_error_with_key(bad):
    with pytest.raises(ConfigError) as caught:
        path_condition(bad, "mocks[0].http.matcher.path")
    assert caught.value.path == "mocks[0].http.matcher.path"


# ------------------------------------------------------------------ pathPattern
def test_path_pattern_named_groups_become_captures():
    condition = PathPatternCondition(r"^/o/(?P<order>\d+)/i/(?P<item>[a-z]+)$", "k")
    result = condition.evaluate(make_request("GET", "/o/12/i/ab"))
    assert result.matched and result.captures == {"order": "12", "item": "ab"}
    assert result.score == scores.PATH_PATTERN


def test_path_pattern_miss():
    condition = PathPatternCondition(r"^/o/\d+$", "k")
    assert not condition.evaluate(make_request("GET", "/o/x")).matched


def test_path_pattern_bad_regex_names_key_and_position():
    with pytest.raises(ConfigError) as caught:
        PathPatternCondition("^/a/(b", "mocks[3].http.matcher.pathPattern")
    assert str(caught.value).startswith("mocks[3].http.matcher.pathPattern: ")
    assert "position" in str(caught.value)


# ------------------------------------------------------------------ headers
@pytest.mark.parametrize("expected,actual,ok", [
    pytest.param("Secret", "Secret", True, id="exact"),
    pytest.param("Secret", "secret", False, id="value is case-sensitive"),
    pytest.param("abc*", "abcdef", True, id="prefix"),
    pytest.param("abc*", "xabc", False, id="prefix miss"),
    pytest.param("*xyz", "123xyz", True, id="suffix"),
    pytest.param("*xyz", "xyz123", False, id="suffix miss"),
    pytest.param("*mid*", "aamidbb", True, id="contains"),
    pytest.param("*mid*", "m-i-d", False, id="contains miss"),
    pytest.param("Bearer *", "Bearer abc.def", True, id="bearer prefix"),
])
def test_header_condition_value_forms(expected, actual, ok):
    condition = HeaderCondition({"X-Tag": expected})
    assert condition.evaluate(make_request(headers={"x-tag": actual})).matched is ok


def test_header_condition_name_is_case_insensitive():
    condition = HeaderCondition({"X-Api-Token": "t"})
    assert condition.evaluate(make_request(headers={"X-API-TOKEN": "t"})).matched


def test_header_condition_missing_header_never_matches_and_explains():
    condition = HeaderCondition({"X-A": "1", "X-B": "*"})
    result = condition.evaluate(make_request(headers={"X-A": "1"}), explain=True)
    assert not result.matched
    assert result.score == scores.HEADER and condition.max_score == 2 * scores.HEADER
    assert result.details[1] == {"key": "X-B", "expected": "*", "actual": "(missing)",
                                 "matched": False}
    assert result.mismatch == 'header X-B expected "*", got (missing)'
    assert condition.weight == 2


# ------------------------------------------------------------------ query
def test_query_condition_all_present_extra_ignored():
    condition = QueryParamCondition({"a": "1", "b": "x"})
    assert condition.evaluate(make_request(query="a=1&b=x&c=3")).matched


def test_query_condition_first_value_counts():
    condition = QueryParamCondition({"a": "1"})
    assert condition.evaluate(make_request(query="a=1&a=2")).matched
    assert not condition.evaluate(make_request(query="a=2&a=1")).matched


def test_query_condition_wrong_value_explains():
    result = QueryParamCondition({"a": "1"}).evaluate(make_request(query="a=2"), explain=True)
    assert not result.matched
    assert result.mismatch == 'query param a expected "1", got "2"'


# ------------------------------------------------------------------ body
def test_body_equals_whole_body_only():
    condition = BodyEqualsCondition("exact-body")
    assert condition.evaluate(make_request(body="exact-body")).matched
    assert not condition.evaluate(make_request(body="exact-body ")).matched
    assert condition.max_score == scores.BODY_EQUALS


def test_body_contains_substring():
    condition = BodyContainsCondition("needle")
    assert condition.evaluate(make_request(body="hay needle hay")).matched
    result = condition.evaluate(make_request(body="hay"), explain=True)
    assert not result.matched and result.mismatch == 'body expected to contain "needle"'


@pytest.mark.parametrize("pattern,body,ok", [
    pytest.param(r"(?i)^hello\s+world$", "HELLO   World", True, id="case-insensitive flag"),
    pytest.param(r"(?s)^start.*end$", "start\nmiddle\nend", True, id="dotall flag"),
    pytest.param(r"^start.*end$", "start\nmiddle\nend", False, id="no dotall"),
])
def test_body_pattern_inline_flags(pattern, body, ok):
    assert BodyPatternCondition(pattern, "k").evaluate(make_request(body=body)).matched is ok


def test_body_pattern_bad_regex_is_config_error():
    with pytest.raises(ConfigError):
        BodyPatternCondition("(", "mocks[0].http.matcher.bodyPattern")


# ------------------------------------------------------------------ JSONPath
@pytest.mark.parametrize("path,expected,body,ok", [
    pytest.param("$.a.b", 5, '{"a":{"b":5}}', True, id="nested number"),
    pytest.param("$.a.b", 5, '{"a":{"b":6}}', False, id="nested number miss"),
    pytest.param("$.items[0]", "first", '{"items":["first","x"]}', True, id="index"),
    pytest.param("$.flag", True, '{"flag":true}', True, id="boolean"),
    pytest.param("$.flag", True, '{"flag":1}', False, id="boolean is not one"),
    pytest.param("$.nothing", None, '{"nothing":null}', True, id="null"),
    pytest.param("$.nothing", None, '{}', False, id="null needs the key"),
    pytest.param("$.items[*].id", {"exists": True}, '{"items":[{"id":1}]}', True,
                 id="wildcard exists"),
    pytest.param("$.items[*].id", {"exists": True}, '{"items":[{"n":1}]}', False,
                 id="wildcard exists miss"),
    pytest.param("$..name", "bob", '{"o":{"i":{"name":"bob"}}}', True, id="recursive"),
    pytest.param("$.deleted", {"exists": False}, '{"present":1}', True, id="exists false"),
    pytest.param("$.deleted", {"exists": False}, 'not json', True,
                 id="exists false on a non-JSON body"),
    pytest.param("$.a", "1", 'not json', False, id="malformed JSON does not match"),
    pytest.param("$.count", "5", '{"count":5}', True, id="text matches a number's text"),
])
def test_json_path_entries(path, expected, body, ok):
    condition = JsonPathCondition({path: expected}, "k")
    assert condition.evaluate(make_request("POST", "/", body=body)).matched is ok


def test_json_path_score_counts_entries_and_explains():
    condition = JsonPathCondition({"$.a": 1, "$.b": 2}, "k")
    result = condition.evaluate(make_request(body='{"a":1,"b":3}'), explain=True)
    assert condition.weight == 2 and condition.max_score == 2 * scores.BODY_JSON_PATH
    assert result.score == scores.BODY_JSON_PATH
    assert result.mismatch == "body JSONPath condition not satisfied"


def test_json_path_bad_expression_is_config_error():
    with pytest.raises(ConfigError) as caught:
        JsonPathCondition({"$.a[": 1}, "mocks[0].http.matcher.bodyJsonPath")
    assert caught.value.path.startswith("mocks[0].http.matcher.bodyJsonPath")


@pytest.mark.parametrize("query,expected", [
    pytest.param("a=1&b=x", {"a": ["1"], "b": ["x"]}, id="plain"),
    pytest.param("a=1&a=2", {"a": ["1", "2"]}, id="repeated"),
    pytest.param("a&b=", {"a": [""], "b": [""]}, id="blank values kept"),
    pytest.param("q=hello+world&x%5B0%5D=%C3%A9", {"q": ["hello world"], "x[0]": ["é"]},
                 id="form decoding"),
    pytest.param("&&a=1&", {"a": ["1"]}, id="empty parts skipped"),
])
def test_request_query_parsing_matches_form_rules(query, expected):
    from urllib.parse import parse_qsl

    assert make_request(query=query).query_all == expected
    reference: dict = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        reference.setdefault(name, []).append(value)
    assert reference == expected


def test_request_header_lookup_without_building_the_view():
    from mocks.core.request import MockRequest

    request = MockRequest("GET", "/", raw_headers=[(b"x-a", b"1"), (b"x-a", b"2")])
    assert request.header("x-a") == "1" and request.header("x-b") is None
    assert "headers" not in request.__dict__


# ------------------------------------------------------------------ value matcher objects
@pytest.mark.parametrize("spec,headers,ok", [
    pytest.param({"equalTo": "Abc"}, {"X-V": "Abc"}, True, id="equalTo"),
    pytest.param({"equalTo": "Abc*"}, {"X-V": "Abcdef"}, False,
                 id="equalTo has no wildcards"),
    pytest.param({"equalTo": "abc", "caseInsensitive": True}, {"X-V": "ABC"}, True,
                 id="equalTo caseInsensitive"),
    pytest.param({"contains": "mid"}, {"X-V": "a-mid-b"}, True, id="contains"),
    pytest.param({"contains": "MID"}, {"X-V": "a-mid-b"}, False, id="contains keeps case"),
    pytest.param({"matches": "[a-z]+-[0-9]+"}, {"X-V": "ab-12"}, True, id="matches"),
    pytest.param({"matches": "[a-z]+"}, {"X-V": "ab-12"}, False,
                 id="matches needs the whole value"),
    pytest.param({"matches": "AB-.*", "caseInsensitive": True}, {"X-V": "ab-12"}, True,
                 id="matches caseInsensitive"),
    pytest.param({"doesNotMatch": "[0-9]+"}, {"X-V": "abc"}, True, id="doesNotMatch"),
    pytest.param({"doesNotMatch": "[0-9]+"}, {"X-V": "123"}, False, id="doesNotMatch miss"),
    pytest.param({"doesNotMatch": "[0-9]+"}, {}, False,
                 id="doesNotMatch fails on a missing header"),
    pytest.param({"absent": True}, {}, True, id="absent"),
    pytest.param({"absent": True}, {"X-V": ""}, False, id="absent fails when present"),
    pytest.param({"contains": "a"}, {}, False, id="missing header fails contains"),
])
def test_header_condition_object_values(spec, headers, ok):
    condition = HeaderCondition({"X-V": spec})
    assert condition.evaluate(make_request(headers=headers)).matched is ok
    assert condition.evaluate(make_request(headers=headers), explain=True).matched is ok


@pytest.mark.parametrize("spec,query,ok", [
    pytest.param({"matches": "[0-9]{3}"}, "p=123", True, id="matches"),
    pytest.param({"matches": "[0-9]{3}"}, "p=1234", False, id="matches whole value"),
    pytest.param({"absent": True}, "q=1", True, id="absent"),
    pytest.param({"absent": True}, "p=", False, id="absent fails when blank"),
    pytest.param({"equalTo": "X", "caseInsensitive": True}, "p=x", True, id="caseInsensitive"),
    pytest.param("a*", "p=abc", False, id="text stays exact for query params"),
])
def test_query_condition_object_values(spec, query, ok):
    assert QueryParamCondition({"p": spec}).evaluate(make_request(query=query)).matched is ok


def test_header_condition_object_miss_explains_the_operator():
    condition = HeaderCondition({"X-Id": {"matches": "[0-9]+"}, "X-No": {"absent": True}})
    result = condition.evaluate(make_request(headers={"X-Id": "12a", "X-No": "1"}),
                                explain=True)
    assert result.mismatch == 'header X-Id expected matches "[0-9]+", got "12a"'
    assert [row["expected"] for row in result.details] == ['matches "[0-9]+"', "absent"]
    assert condition.weight == 2


def test_header_condition_bad_regex_names_the_key():
    with pytest.raises(ConfigError) as caught:
        HeaderCondition({"X-Id": {"matches": "(["}}, "mocks[0].http.matcher.headers")
    assert str(caught.value).startswith("mocks[0].http.matcher.headers['X-Id'].matches: ")


# ------------------------------------------------------------------ bodyMatchers
def _body_condition(entry: dict):
    from mocks.protocols.http.conditions import body_matcher_condition
    from mocks.protocols.http.config import BodyMatch

    return body_matcher_condition(BodyMatch.model_validate(entry),
                                  "mocks[0].http.matcher.bodyMatchers[0]")


@pytest.mark.parametrize("entry,body,ok", [
    pytest.param({"equalToJson": '{"a": 1, "b": [1, 2]}'}, '{"b":[1,2],"a":1}', True,
                 id="json key order and white space"),
    pytest.param({"equalToJson": {"a": 1}}, '{"a": 1.0}', True, id="json value; 1 equals 1.0"),
    pytest.param({"equalToJson": {"a": True}}, '{"a": 1}', False, id="boolean is not a number"),
    pytest.param({"equalToJson": {"a": 1}}, '{"a": 1, "b": 2}', False, id="extra key fails"),
    pytest.param({"equalToJson": {"a": {"b": 1}}, "ignoreExtraElements": True},
                 '{"a": {"b": 1, "c": 2}, "d": 3}', True, id="extra keys at every depth"),
    pytest.param({"equalToJson": {"a": 1, "z": 1}, "ignoreExtraElements": True},
                 '{"a": 1}', False, id="missing key still fails"),
    pytest.param({"equalToJson": [1, 2, 3]}, "[3, 2, 1]", False, id="array order counts"),
    pytest.param({"equalToJson": [1, 2, 2], "ignoreArrayOrder": True}, "[2, 1, 2]", True,
                 id="ignoreArrayOrder"),
    pytest.param({"equalToJson": [1, 2, 2], "ignoreArrayOrder": True}, "[2, 1, 1]", False,
                 id="ignoreArrayOrder counts repeats"),
    pytest.param({"equalToJson": [{"id": "${json-unit.ignore}"}, {"id": 1}],
                  "ignoreArrayOrder": True}, '[{"id": 1}, {"id": 2}]', True,
                 id="placeholder does not pair greedily"),
    pytest.param({"equalToJson": {"id": "${json-unit.ignore}", "n": "${json-unit.any-number}",
                                  "s": "${json-unit.any-string}",
                                  "f": "${json-unit.any-boolean}"}},
                 '{"id": [1], "n": 2.5, "s": "x", "f": false}', True, id="placeholders"),
    pytest.param({"equalToJson": {"n": "${json-unit.any-number}"}}, '{"n": "2"}', False,
                 id="any-number rejects text"),
    pytest.param({"equalToJson": {"id": "${json-unit.ignore}"}}, "{}", False,
                 id="ignored key must be present"),
    pytest.param({"equalToJson": {"a": 1}}, "not json", False, id="body not JSON"),
    pytest.param({"equalToXml": '<a:order xmlns:a="urn:o" id="1" k="2"><a:item>x</a:item>'
                                '</a:order>'},
                 '<order xmlns="urn:o" k="2" id="1">\n  <item> x </item>\n</order>', True,
                 id="xml prefix, attribute order, white space"),
    pytest.param({"equalToXml": "<order><item>x</item></order>"},
                 '<order xmlns="urn:o"><item>x</item></order>', False,
                 id="xml namespace URI counts"),
    pytest.param({"equalToXml": "<order><item>x</item></order>"},
                 "<order><!-- note --><item>x</item></order>", True, id="xml comments ignored"),
    pytest.param({"equalToXml": "<order><item>x</item></order>"},
                 "<order><item>y</item></order>", False, id="xml text counts"),
    pytest.param({"equalToXml": "<order/>"}, "<order>", False, id="body not XML"),
    pytest.param({"equalToXml": "<a>y</a>"},
                 '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>', False,
                 id="entities are not expanded"),
    pytest.param({"matchesJsonPath": "$.items[?(@.qty > 1)]"}, '{"items": [{"qty": 2}]}', True,
                 id="matchesJsonPath filter"),
    pytest.param({"matchesJsonPath": "$.missing"}, '{"items": []}', False,
                 id="matchesJsonPath miss"),
    pytest.param({"equalTo": "Hello", "caseInsensitive": True}, "hello", True,
                 id="equalTo caseInsensitive"),
    pytest.param({"contains": "ell"}, "hello", True, id="contains"),
    pytest.param({"matches": "h.*o"}, "hello", True, id="matches whole body"),
    pytest.param({"matches": "ell"}, "hello", False, id="matches is not a search"),
    pytest.param({"doesNotMatch": ".*secret.*"}, "public", True, id="doesNotMatch"),
    pytest.param({"doesNotMatch": ".*secret.*"}, "a secret", False, id="doesNotMatch miss"),
])
def test_body_matcher_entries(entry, body, ok):
    condition = _body_condition(entry)
    assert condition.evaluate(make_request("POST", "/", body=body)).matched is ok


def test_body_matcher_miss_explains_the_entry():
    result = _body_condition({"equalToJson": {"a": 1}, "ignoreArrayOrder": True}).evaluate(
        make_request("POST", "/", body='{"a": 2}'), explain=True)
    assert result.mismatch == 'body expected to satisfy equalToJson {"a":1} (ignoreArrayOrder)'


@pytest.mark.parametrize("entry,where", [
    pytest.param({"equalToJson": "{nope"}, "equalToJson: not valid JSON text", id="json"),
    pytest.param({"equalToXml": "<a>"}, "equalToXml: not well-formed XML", id="xml"),
    pytest.param({"matches": "(["}, "matches: ", id="regex"),
    pytest.param({"matchesJsonPath": "$.a["}, "matchesJsonPath: invalid JSONPath", id="jsonpath"),
])
def test_body_matcher_bad_config_names_the_key(entry, where):
    with pytest.raises(ConfigError) as caught:
        _body_condition(entry)
    assert str(caught.value).startswith(f"mocks[0].http.matcher.bodyMatchers[0].{where}")


def test_body_matchers_count_one_condition_each_for_precedence():
    from mocks.protocols.http.config import Matcher
    from mocks.protocols.http.matcher import compile_matcher

    matcher = Matcher.model_validate({"method": "POST", "bodyMatchers": [
        {"contains": "a"}, {"matchesJsonPath": "$.a"}, {"equalToJson": {"a": 1}}]})
    compiled = compile_matcher(matcher, "m")
    assert compiled.condition_count == 4
    assert compiled.match(make_request("POST", "/", body='{"a": 1}')) == {}
    assert compiled.match(make_request("POST", "/", body='{"a": 2}')) is None
