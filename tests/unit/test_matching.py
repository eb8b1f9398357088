"""Precedence, the method + path index and near misses (SPEC "Matching rules", notes §4–5)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mocks.loader import validate_config
from mocks.engine.matching import near_misses
from mocks.protocols.http.matcher import precedence_key
from mocks.engine.snapshot import compile_snapshot
from tests.helpers import http_mock, make_config, make_request


def winner(mocks, request):
    snapshot = compile_snapshot(validate_config(make_config(*mocks)))
    match = snapshot.index.find(request)
    return match.candidate.mock_id if match else None


def test_exact_path_beats_param_even_when_param_is_first_and_has_more_conditions():
    mocks = [http_mock("param", "GET", "/u/{id}", matcher={"headers": {"X-A": "1"}}),
             http_mock("exact", "GET", "/u/me")]
    assert winner(mocks, make_request("GET", "/u/me", headers={"X-A": "1"})) == "exact"


def test_path_pattern_beats_param_and_glob():
    mocks = [http_mock("glob", "GET", "/a/*"), http_mock("param", "GET", "/a/{id}"),
             http_mock("pattern", "GET", matcher={"pathPattern": "^/a/[0-9]+$"})]
    assert winner(mocks, make_request("GET", "/a/12")) == "pattern"
    assert winner(mocks, make_request("GET", "/a/xy")) == "param"
    assert winner(mocks, make_request("GET", "/a/x/y")) == "glob"


def test_any_path_condition_beats_pathless_mock():
    mocks = [http_mock("pathless", "GET", matcher={"headers": {"X-A": "1"}}),
             http_mock("glob", "GET", "/*")]
    assert winner(mocks, make_request("GET", "/x", headers={"X-A": "1"})) == "glob"


def test_more_conditions_win_regardless_of_file_order():
    mocks = [http_mock("plain", "GET", "/t"),
             http_mock("gold", "GET", "/t", matcher={"headers": {"X-Tier": "gold"}})]
    assert winner(mocks, make_request("GET", "/t", headers={"X-Tier": "gold"})) == "gold"
    assert winner(mocks, make_request("GET", "/t")) == "plain"


def test_priority_breaks_ties_but_never_beats_more_conditions():
    mocks = [http_mock("low", "GET", "/p"), http_mock("high", "GET", "/p", priority=5),
             http_mock("plain", "GET", "/q", priority=100),
             http_mock("header", "GET", "/q", matcher={"headers": {"X-P": "1"}})]
    assert winner(mocks, make_request("GET", "/p")) == "high"
    assert winner(mocks, make_request("GET", "/q", headers={"X-P": "1"})) == "header"


def test_earlier_mock_wins_a_full_tie():
    mocks = [http_mock("first", "GET", "/d"), http_mock("second", "GET", "/d")]
    assert winner(mocks, make_request("GET", "/d")) == "first"


def test_method_less_mock_matches_every_method():
    mocks = [http_mock("any", None, "/any")]
    for method in ("GET", "POST", "DELETE", "OPTIONS"):
        assert winner(mocks, make_request(method, "/any")) == "any"


def test_disabled_mock_never_matches():
    mock = http_mock("off", "GET", "/off")
    mock["enabled"] = False
    assert winner([mock], make_request("GET", "/off")) is None


def test_precedence_key_orders_specificity_then_conditions_then_priority_then_order():
    keys = [precedence_key(2, 5, 9, 0), precedence_key(4, 1, 0, 9), precedence_key(4, 2, 0, 9),
            precedence_key(4, 2, 1, 9), precedence_key(4, 2, 1, 3)]
    assert sorted(keys) == [keys[4], keys[3], keys[2], keys[1], keys[0]]


def test_index_agrees_with_a_full_scan_over_many_mocks():
    mocks = []
    for index in range(200):
        path = f"/r{index % 20}/{{id}}" if index % 2 else f"/r{index % 20}/x{index % 7}"
        mocks.append(http_mock(f"m{index}", ["GET", "POST", None][index % 3], path,
                               matcher={"headers": {"X-N": str(index % 5)}} if index % 4 == 0
                               else None))
    snapshot = compile_snapshot(validate_config(make_config(*mocks)))
    for index in range(60):
        request = make_request(["GET", "POST", "PUT"][index % 3], f"/r{index % 20}/x{index % 7}",
                               headers={"X-N": str(index % 5)})
        expected = next((candidate for candidate in snapshot.candidates
                         if candidate.matcher.match(request) is not None), None)
        found = snapshot.index.find(request)
        assert (found.candidate if found else None) is expected


def test_near_misses_top_three_by_score_with_reasons():
    mocks = [http_mock("query", "GET", "/q", matcher={"queryParams": {"a": "1", "b": "x"}}),
             http_mock("other-method", "POST", "/q"),
             http_mock("far", "DELETE", "/elsewhere"),
             http_mock("header", "GET", "/q", matcher={"headers": {"X-A": "1"}})]
    snapshot = compile_snapshot(validate_config(make_config(*mocks)))
    misses = near_misses(snapshot.candidates, make_request("GET", "/q", "a=1&b=wrong"))
    assert [miss["mockId"] for miss in misses] == ["query", "header", "other-method"]
    assert misses[0]["reason"] == ('method and path matched, but query param b '
                                   'expected "x", got "wrong"')
    assert misses[0]["matchPercentage"] == 30 * 100 // 35
    assert {"field", "matched", "score", "maxScore"} <= set(misses[0]["fields"][0])


def test_matcher_without_conditions_is_config_error():
    config = validate_config({"mocks": [{"http": {"matcher": {}}}]})
    with pytest.raises(Exception) as caught:
        compile_snapshot(config)
    assert "mocks[0].http.matcher" in str(caught.value)


def test_near_miss_ranking_equals_explaining_every_mock():
    mocks = []
    for index in range(60):
        matcher = {}
        if index % 3 == 0:
            matcher["headers"] = {"X-A": "1", "X-B": str(index % 2)}
        if index % 4 == 0:
            matcher["queryParams"] = {"q": "x", "page": str(index % 3)}
        if index % 5 == 0:
            matcher["bodyJsonPath"] = {"$.a": 1, "$.b": index % 2}
        mocks.append(http_mock(f"m{index}", ["GET", "POST", None][index % 3],
                               f"/p{index % 7}/{{id}}" if index % 2 else f"/p{index % 7}",
                               matcher=matcher))
    snapshot = compile_snapshot(validate_config(make_config(*mocks)))
    request = make_request("POST", "/p3", "q=x&page=1", headers={"X-A": "1", "X-B": "0"},
                           body='{"a": 1, "b": 0}')
    expected = []
    for order, candidate in enumerate(snapshot.candidates):
        score, results = candidate.matcher.explain(request)
        if any(result.matched for _, result in results):
            expected.append((-score, -(score * 100 // candidate.matcher.max_score), order,
                             candidate.mock_id))
    expected.sort(key=lambda row: row[:3])
    got = near_misses(snapshot.candidates, request, limit=5)
    assert [miss["mockId"] for miss in got] == [row[3] for row in expected[:5]]
    assert [-miss["score"] for miss in got] == [row[0] for row in expected[:5]]


TEMPLATES = ["/api/users/{id}", "/{id}", "/a/{x}/b", "/a/{id}.json", "/a/{b}/{c}", "/a/x{id}",
             "/api/users/{id}/orders"]


def _served(mocks, request):
    snapshot = compile_snapshot(validate_config(make_config(*mocks)))
    match = snapshot.index.find(request)
    return (match.candidate.mock_id, match.path_params) if match else None


@pytest.mark.parametrize("path,expected", [
    ("/api/users/42", ("t0", {"id": "42"})),
    ("/api/users/", None),                      # the parameter needs at least one character
    ("/api/users/4/2", None),                   # ... and stays inside one segment
    ("/api/users/a.b%20c", ("t0", {"id": "a.b%20c"})),
    ("/api/usersx/42", None),
    ("/7", ("t1", {"id": "7"})),
    ("/a/x9", ("t5", {"id": "9"})),
    ("/a/1.json", ("t3", {"id": "1"})),
    ("/a/q/b", ("t2", {"x": "q"})),
    ("/a/q/r", ("t4", {"b": "q", "c": "r"})),
    ("/api/users/5/orders", ("t6", {"id": "5"})),
])
def test_template_paths_capture_one_segment_per_parameter(path, expected):
    mocks = [http_mock(f"t{index}", "GET", template) for index, template in enumerate(TEMPLATES)]
    assert _served(mocks, make_request("GET", path)) == expected


def test_template_index_agrees_with_the_path_condition_on_random_paths():
    # The index matches some templates by a prefix test instead of the regex; the answer must
    # be the one the condition objects (which near misses also use) give.
    segment = st.text(alphabet="au/.x1", min_size=0, max_size=4)
    mocks = [http_mock(f"t{index}", "GET", template) for index, template in enumerate(TEMPLATES)]
    snapshot = compile_snapshot(validate_config(make_config(*mocks)))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(segment, min_size=1, max_size=4))
    def check(segments):
        request = make_request("GET", "/" + "/".join(segments))
        match = snapshot.index.find(request)
        expected = None
        for candidate in snapshot.index.candidates:  # presorted by precedence
            captures = candidate.matcher.match(request)
            if captures is not None:
                expected = (candidate.mock_id, captures)
                break
        assert (None if match is None else (match.candidate.mock_id, match.path_params)) \
            == expected

    check()
