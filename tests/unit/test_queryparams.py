"""Bounded query numbers of the admin list routes (SPEC "Limits", "Errors")."""
from __future__ import annotations

import pytest

from mocks.core.queryparams import (MAX_LIMIT, MAX_QUERY_INTEGER, QueryParameterError,
                                    parse_bool, parse_int)


@pytest.mark.parametrize("raw, expected", [
    pytest.param(None, 100, id="absent gives the default"),
    pytest.param("", 100, id="empty gives the default"),
    pytest.param("0", 0, id="zero"),
    pytest.param(" 25 ", 25, id="spaces around"),
    pytest.param(str(MAX_LIMIT), MAX_LIMIT, id="the bound itself"),
])
def test_parse_int_reads_whole_numbers_within_bounds(raw, expected):
    assert parse_int({"limit": raw}, "limit", 100, maximum=MAX_LIMIT) == expected


@pytest.mark.parametrize("raw, reason", [
    pytest.param("99999999999999999999", "must be between 0 and 10000", id="huge"),
    pytest.param("9" * 5000, "must be between 0 and 10000", id="thousands of digits"),
    pytest.param(str(MAX_LIMIT + 1), "must be between 0 and 10000, got 10001", id="one over"),
    pytest.param("-1", "must be between 0 and 10000, got -1", id="negative"),
    pytest.param("abc", "must be an integer, got 'abc'", id="text"),
    pytest.param("1.5", "must be an integer", id="fraction"),
    pytest.param("1e3", "must be an integer", id="exponent"),
    pytest.param("1_000", "must be an integer", id="underscore"),
    pytest.param("\u0661\u0662", "must be an integer", id="non-ASCII digits"),
])
def test_parse_int_names_the_parameter_and_the_reason(raw, reason):
    with pytest.raises(QueryParameterError) as caught:
        parse_int({"limit": raw}, "limit", 100, maximum=MAX_LIMIT)
    assert caught.value.name == "limit"
    assert str(caught.value).startswith(f"limit: {reason}")
    assert len(str(caught.value)) < 200  # a long value is shortened in the message


def test_parse_int_default_bound_is_a_32_bit_integer():
    assert parse_int({"offset": str(MAX_QUERY_INTEGER)}, "offset", 0) == MAX_QUERY_INTEGER
    with pytest.raises(QueryParameterError):
        parse_int({"offset": str(MAX_QUERY_INTEGER + 1)}, "offset", 0)


@pytest.mark.parametrize("raw, expected", [("true", True), ("FALSE", False), ("1", True),
                                           ("no", False), (None, None), ("", None)])
def test_parse_bool_reads_the_usual_spellings(raw, expected):
    assert parse_bool({"hasError": raw}, "hasError") is expected


def test_parse_bool_refuses_anything_else():
    with pytest.raises(QueryParameterError, match="hasError: must be true or false"):
        parse_bool({"hasError": "maybe"}, "hasError")
