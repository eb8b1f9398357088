"""Form-encoded bodies converted to JSON (SPEC "Form-encoded bodies"; behavior notes §6)."""
from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tables.forms import form_scalar, key_path, parse_form


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("true", True, id="true is a boolean"),
    pytest.param("false", False, id="false is a boolean"),
    pytest.param("42", 42, id="integer text"),
    pytest.param("-7", -7, id="negative integer"),
    pytest.param("007", 7, id="leading zeros still integer text"),
    pytest.param("1.5", 1.5, id="decimal text is a float"),
    pytest.param("-0.25", -0.25, id="negative decimal"),
    pytest.param("2e3", 2000.0, id="exponent is a float"),
    pytest.param("null", None, id="null text"),
    pytest.param("inf", None, id="inf is null"),
    pytest.param("-Infinity", None, id="negative infinity is null"),
    pytest.param("NaN", None, id="nan is null"),
    pytest.param("+15551234567", "+15551234567", id="plus keeps telephone numbers"),
    pytest.param("+5", "+5", id="plus number stays text"),
    pytest.param("hello", "hello", id="text"),
    pytest.param("", "", id="empty stays empty text"),
    pytest.param("1_000", "1_000", id="underscore is not a number"),
    pytest.param(" 5", " 5", id="spaces are not a number"),
    pytest.param("True", "True", id="only lower-case booleans"),
    pytest.param("99999999999999999999", 1e20, id="beyond 64 bits becomes float"),
])
def test_form_scalar(text, expected):
    value = form_scalar(text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(("key", "expected"), [
    ("a", ["a"]), ("a[b]", ["a", "b"]), ("a[0][k]", ["a", "0", "k"]), ("a[]", ["a", ""]),
    ("a]b", ["a]b"]), ("[x]", ["[x]"])])
def test_key_path(key, expected):
    assert key_path(key) == expected


@pytest.mark.parametrize(("pairs", "expected"), [
    pytest.param([("name", "Ada"), ("age", "36")], {"name": "Ada", "age": 36}, id="flat"),
    pytest.param([("a[b]", "v")], {"a": {"b": "v"}}, id="nested object"),
    pytest.param([("metadata[tier]", "gold"), ("metadata[n]", "2")],
                 {"metadata": {"tier": "gold", "n": 2}}, id="two nested keys"),
    pytest.param([("a[0]", "x"), ("a[1]", "y")], {"a": ["x", "y"]}, id="indexed array"),
    pytest.param([("a[1]", "y"), ("a[0]", "x")], {"a": ["x", "y"]}, id="indexes out of order"),
    pytest.param([("a[0][k]", "v"), ("a[1][k]", "w")], {"a": [{"k": "v"}, {"k": "w"}]},
                 id="array of objects"),
    pytest.param([("a[]", "x"), ("a[]", "y")], {"a": ["x", "y"]}, id="empty brackets append"),
    pytest.param([("a[0]", "x"), ("a[2]", "z")], {"a": {"0": "x", "2": "z"}},
                 id="gapped indexes stay an object"),
    pytest.param([("a", "1"), ("a", "2")], {"a": 1}, id="first value wins"),
    pytest.param([("0", "x"), ("1", "y")], {"0": "x", "1": "y"}, id="top level stays an object"),
    pytest.param([("a[b][c]", "true")], {"a": {"b": {"c": True}}}, id="deep nesting"),
    pytest.param([("phone", "+1 555 0100")], {"phone": "+1 555 0100"}, id="plus with spaces"),
])
def test_parse_form(pairs, expected):
    assert parse_form(urlencode(pairs)) == expected


def test_parse_form_decodes_percent_and_plus():
    assert parse_form(b"name=Ada+Lovelace&email=ada%40example.com&tel=%2B44") == {
        "name": "Ada Lovelace", "email": "ada@example.com", "tel": "+44"}


def test_parse_form_never_raises_on_garbage():
    assert parse_form(b"\xff\xfe=\x00&&=&a") == {"\ufffd\ufffd": "\x00", "": "", "a": ""}
