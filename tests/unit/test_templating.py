"""The template language of SPEC "Templating": every expression, errors, seeds, JSON bodies."""
from __future__ import annotations

import datetime
import re
import time
import uuid
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mocks.core.request import MockRequest
from mocks.core.templating import (RenderContext, TemplateError, TemplateState, compile_template,
                                     compile_value, resolve_seed)
from tests.helpers import make_request

ORDER = {"user": {"name": "Ann", "age": 5, "vip": True, "score": 1.5, "tags": ["a", "b"],
                  "nickname": None},
         "items": [{"name": "first", "qty": 2}, {"name": "second", "qty": 0}],
         "note": ""}


def order_request(**overrides: Any) -> MockRequest:
    """POST /shop/orders/42?page=3&name=bob with an X-Request-ID header and the ORDER body."""
    arguments: dict[str, Any] = {
        "method": "POST", "path": "/shop/orders/42", "query": "page=3&name=bob&empty=",
        "headers": {"x-request-id": "req-7", "content-type": "application/json"},
        "body": orjson.dumps(ORDER),
    }
    arguments.update(overrides)
    return make_request(**arguments)


def render(text: str, request: MockRequest | None = None, path_params: dict[str, str] | None = None,
           seed: int | None = None, state: TemplateState | None = None) -> str:
    context = RenderContext(request or order_request(), path_params if path_params is not None else {"id": "42"},
                            seed, state or TemplateState())
    return compile_template(text).render(context)


# ------------------------------------------------------------------ request expressions
@pytest.mark.parametrize("text,expected", [
    pytest.param("{{request.method}}", "POST", id="method"),
    pytest.param("{{request.path}}", "/shop/orders/42", id="path"),
    pytest.param("{{request.url}}", "http://localhost/shop/orders/42?page=3&name=bob&empty=", id="url"),
    pytest.param("{{request.pathParam.id}}", "42", id="path param"),
    pytest.param("{{request.query.name}}", "bob", id="query param"),
    pytest.param("{{request.header.X-Request-ID}}", "req-7", id="header as written in docs"),
    pytest.param("{{request.header.x-request-id}}", "req-7", id="header lower case"),
    pytest.param("{{request.header.X-REQUEST-ID}}", "req-7", id="header upper case"),
    pytest.param("{{request.body.user.name}}", "Ann", id="body dotted field"),
    pytest.param("{{request.body.items[1].name}}", "second", id="body index access"),
    pytest.param("{{request.body.items.0.name}}", "first", id="body dotted index"),
    pytest.param("{{request.body.user.age}}", "5", id="body integer as text"),
    pytest.param("{{request.body.items[1].qty}}", "0", id="body zero as text"),
    pytest.param("{{request.body.user.vip}}", "true", id="body boolean as JSON text"),
    pytest.param("{{request.body.user.score}}", "1.5", id="body float as JSON text"),
    pytest.param("{{request.body.user.tags}}", '["a","b"]', id="body array as compact JSON"),
    pytest.param("{{request.body.items[0]}}", '{"name":"first","qty":2}', id="body object as compact JSON"),
    pytest.param("{{request.rawBody}}", orjson.dumps(ORDER).decode(), id="raw body"),
    pytest.param("{{ request.method }}", "POST", id="whitespace inside braces"),
    pytest.param("{{\trequest.method\n}}", "POST", id="tabs and newlines inside braces"),
    pytest.param("{{REQUEST.METHOD}}", "POST", id="keywords in any case"),
    pytest.param("{{request.pathparam.id}}", "42", id="field name in any case"),
    pytest.param("order {{request.pathParam.id}} for {{request.query.name}}!", "order 42 for bob!",
                 id="literal text around expressions"),
])
def test_request_expression_present_field_renders_its_text(text, expected):
    assert render(text) == expected


def test_request_body_top_level_array_index_renders_element():
    request = order_request(body=b'[{"id": "a"}, {"id": "b"}]')
    assert render("{{request.body[1].id}}", request) == "b"


def test_request_body_without_path_renders_whole_body_as_compact_json():
    request = order_request(body=b'{ "a" : [1, 2] }')
    assert render("{{request.body}}", request) == '{"a":[1,2]}'


@pytest.mark.parametrize("text,request_overrides", [
    pytest.param("{{request.pathParam.nope}}", {}, id="unknown path param"),
    pytest.param("{{request.query.nope}}", {}, id="absent query param"),
    pytest.param("{{request.query.empty}}", {}, id="empty query param"),
    pytest.param("{{request.header.X-Nope}}", {}, id="absent header"),
    pytest.param("{{request.body.user.email}}", {}, id="absent body field"),
    pytest.param("{{request.body.user.nickname}}", {}, id="null body field"),
    pytest.param("{{request.body.items[9].name}}", {}, id="index past the end"),
    pytest.param("{{request.body.user[0]}}", {}, id="index into an object"),
    pytest.param("{{request.body.user.name.first}}", {}, id="field of a string"),
    pytest.param("{{request.body.items.x}}", {}, id="named field of an array"),
    pytest.param("{{request.body.user.name}}", {"body": b"not json"}, id="body not JSON"),
    pytest.param("{{request.body.user.name}}", {"body": b""}, id="no body"),
    pytest.param("{{request.body}}", {"body": b"{"}, id="whole body not JSON"),
    pytest.param("{{request.rawBody}}", {"body": b""}, id="raw body empty"),
])
def test_request_expression_missing_field_renders_empty(text, request_overrides):
    assert render(text, order_request(**request_overrides)) == ""


def test_request_body_nested_deeper_than_json_encoder_limit_renders_empty():
    deep = b"[" * 400 + b"]" * 400
    assert render("{{request.body}}", order_request(body=deep)) == ""


def test_request_raw_body_invalid_utf8_renders_with_replacement_characters():
    assert render("{{request.rawBody}}", order_request(body=b"ok\xff")) == "ok\ufffd"


# ------------------------------------------------------------------ upper, lower, default
@pytest.mark.parametrize("text,expected", [
    pytest.param("{{upper request.query.name}}", "BOB", id="upper space form"),
    pytest.param("{{upper(request.query.name)}}", "BOB", id="upper parenthesised"),
    pytest.param("{{lower request.header.X-Request-ID}}", "req-7", id="lower space form"),
    pytest.param("{{lower(request.method)}}", "post", id="lower parenthesised"),
    pytest.param("{{upper 'mixed Case'}}", "MIXED CASE", id="upper of a quoted literal"),
    pytest.param("{{upper request.query.nope}}", "", id="upper of a missing field"),
])
def test_case_function_value_renders_converted(text, expected):
    assert render(text) == expected


@pytest.mark.parametrize("text,expected", [
    pytest.param("{{default request.query.nope 'guest'}}", "guest", id="space form missing"),
    pytest.param("{{default request.query.name 'guest'}}", "bob", id="space form present"),
    pytest.param("{{default(request.query.nope, 'guest')}}", "guest", id="call form missing"),
    pytest.param("{{default(request.query.name, 'guest')}}", "bob", id="call form present"),
    pytest.param('{{default(request.query.nope, "double quoted")}}', "double quoted", id="double quotes"),
    pytest.param("{{default request.query.empty 'guest'}}", "guest", id="empty value"),
    pytest.param("{{default request.body.user.nickname 'anon'}}", "anon", id="null body field"),
    pytest.param("{{default request.body.items[1].qty 'none'}}", "0", id="zero is a value"),
    pytest.param("{{default request.query.nope guest}}", "guest", id="bare word fallback"),
    pytest.param("{{default request.query.nope John Doe}}", "John Doe", id="several bare words"),
    pytest.param("{{default request.query.nope request.pathParam.id}}", "42", id="fallback expression"),
    pytest.param("{{default(request.query.nope, '}}')}}", "}}", id="braces inside quotes"),
    pytest.param(r"{{default(request.query.nope, 'it\'s')}}", "it's", id="escaped quote"),
    pytest.param("{{upper(default(request.query.nope, 'x'))}}", "X", id="nested calls"),
])
def test_default_function_missing_or_present_value_renders_expected(text, expected):
    assert render(text) == expected


# ------------------------------------------------------------------ time
RFC3339_SECONDS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
RFC3339_NANOSECONDS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z")


def test_now_expression_renders_current_utc_time_rfc3339():
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    text = render("{{now}}")
    after = datetime.datetime.now(datetime.timezone.utc)
    assert RFC3339_SECONDS.fullmatch(text)
    assert before <= datetime.datetime.fromisoformat(text.replace("Z", "+00:00")) <= after


def test_timestamp_expression_renders_current_unix_seconds():
    before = int(time.time())
    value = int(render("{{timestamp}}"))
    assert before <= value <= int(time.time())


def test_timestamp_iso_expression_renders_utc_with_nanoseconds():
    before = time.time_ns()
    text = render("{{timestamp.iso}}")
    after = time.time_ns()
    assert RFC3339_NANOSECONDS.fullmatch(text)
    seconds = datetime.datetime.fromisoformat(text[:19] + "+00:00").timestamp()
    assert before <= int(seconds) * 1_000_000_000 + int(text[20:29]) <= after


def test_timestamp_unix_ms_expression_renders_current_unix_milliseconds():
    before = time.time_ns() // 1_000_000
    value = int(render("{{timestamp.unix_ms}}"))
    assert before <= value <= time.time_ns() // 1_000_000


# ------------------------------------------------------------------ uuid, random, sequence
def test_uuid_expression_renders_version_4_uuid():
    text = render("{{uuid}}")
    assert uuid.UUID(text).version == 4 and str(uuid.UUID(text)) == text


def test_uuid_short_expression_renders_eight_hex_characters():
    assert re.fullmatch(r"[0-9a-f]{8}", render("{{uuid.short}}"))


def test_uuid_expression_twice_in_one_template_renders_two_ids():
    first, second = render("{{uuid}} {{uuid}}").split(" ")
    assert first != second


@pytest.mark.parametrize("text,low,high", [
    pytest.param("{{random.int(1, 6)}}", 1, 6, id="random.int"),
    pytest.param("{{randomInt(1, 6)}}", 1, 6, id="alias randomInt"),
    pytest.param("{{random.int 1 6}}", 1, 6, id="space form"),
    pytest.param("{{random.int(-5, -2)}}", -5, -2, id="negative range"),
    pytest.param("{{random.int(7, 7)}}", 7, 7, id="single value"),
    pytest.param("{{random.int}}", 0, 100, id="bare form 0 to 100"),
])
def test_random_int_expression_renders_integers_covering_range(text, low, high):
    template = compile_template(text)
    values = {int(template.render(RenderContext(order_request(), {}, seed, TemplateState())))
              for seed in range(1500)}
    assert values == set(range(low, high + 1))


@pytest.mark.parametrize("text,low,high,decimals", [
    pytest.param("{{random.float(1.5, 2.5)}}", 1.5, 2.5, None, id="random.float"),
    pytest.param("{{randomFloat(1.5, 2.5)}}", 1.5, 2.5, None, id="alias randomFloat"),
    pytest.param("{{random.float(0, 100, 2)}}", 0, 100, 2, id="with decimals"),
    pytest.param("{{random.float}}", 0, 1, None, id="bare form 0 to 1"),
])
def test_random_float_expression_renders_numbers_within_range(text, low, high, decimals):
    for seed in range(100):
        value = render(text, seed=seed)
        assert re.fullmatch(r"-?\d+\.\d+", value) and low <= float(value) <= high
        if decimals is not None:
            assert len(value.split(".")[1]) == decimals


@pytest.mark.parametrize("text,length", [
    pytest.param("{{random.string(12)}}", 12, id="random.string"),
    pytest.param("{{randomString(3)}}", 3, id="alias randomString"),
    pytest.param("{{random.string}}", 10, id="bare form 10 characters"),
    pytest.param("{{random.string(0)}}", 0, id="zero length"),
])
def test_random_string_expression_renders_alphanumerics_of_length(text, length):
    value = render(text)
    assert len(value) == length and re.fullmatch(r"[A-Za-z0-9]*", value)


def test_sequence_expression_repeated_uses_count_up_from_one():
    state = TemplateState()
    assert [render("{{sequence('orders')}}", state=state) for _ in range(3)] == ["1", "2", "3"]


def test_sequence_expression_with_start_counts_up_from_start():
    state = TemplateState()
    assert [render('{{sequence("invoices", 1000)}}', state=state) for _ in range(2)] == ["1000", "1001"]


def test_sequence_expression_different_names_count_independently():
    state = TemplateState()
    assert render("{{sequence('a')}} {{sequence('b', 10)}} {{sequence('a')}}", state=state) == "1 10 2"


def test_sequence_expression_same_name_in_two_templates_shares_counter():
    state = TemplateState()
    render("{{sequence('shared')}}", state=state)
    assert render("{{sequence('shared', 500)}}", state=state) == "2"
    assert state.sequences() == {"shared": 3}


def test_sequence_expression_new_engine_state_starts_over():
    render("{{sequence('x')}}", state=TemplateState())
    assert render("{{sequence('x')}}", state=TemplateState()) == "1"


# ------------------------------------------------------------------ faker
@pytest.mark.parametrize("text", [
    pytest.param("{{faker.firstName}}", id="SPEC spelling"),
    pytest.param("{{faker.firstname}}", id="lower case"),
    pytest.param("{{FAKER.FIRSTNAME}}", id="upper case"),
])
def test_faker_expression_type_name_any_case_renders_same_value(text):
    assert render(text, seed=11) == render("{{faker.firstName}}", seed=11) != ""


def test_faker_expression_every_type_renders_nonempty_text():
    from mocks.core.fakedata import FAKE_DATA_TYPES
    text = "|".join(f"{{{{faker.{name}}}}}" for name in FAKE_DATA_TYPES)
    values = render(text, seed=3).split("|")
    assert len(values) == 35 and all(values)


@pytest.mark.parametrize("text,count", [
    pytest.param("{{faker.words(1)}}", 1, id="one"),
    pytest.param("{{faker.words(6)}}", 6, id="six"),
    pytest.param("{{faker.words 4}}", 4, id="space form"),
])
def test_faker_words_with_count_renders_exactly_count_words(text, count):
    assert len(render(text).split(" ")) == count


def test_faker_words_without_count_renders_three_to_five_words():
    assert {len(render("{{faker.words}}", seed=seed).split(" ")) for seed in range(100)} == {3, 4, 5}


# ------------------------------------------------------------------ static text and escapes
def test_compile_template_without_expressions_is_static_and_renders_text_unchanged():
    template = compile_template('{"ok": true} } {')
    assert template.is_static and template.render(None) == '{"ok": true} } {'


def test_compile_template_with_expression_is_not_static():
    assert not compile_template("id={{uuid}}").is_static


def test_compile_template_escaped_braces_render_literal_braces():
    template = compile_template(r"\{{request.method}} is {{request.method}}")
    assert render(template.source) == "{{request.method}} is POST"


def test_compile_template_only_escaped_braces_is_static():
    template = compile_template(r"use \{{name}}")
    assert template.is_static and template.render(None) == "use {{name}}"


# ------------------------------------------------------------------ compile errors
@pytest.mark.parametrize("text,message", [
    pytest.param("{{ fooBar }}", "unknown template expression 'fooBar' at position 3", id="unknown name"),
    pytest.param("{{ fooBar(1) }}", "unknown template function 'fooBar' at position 3", id="unknown function"),
    pytest.param("{{request.nope}}", "unknown request field 'nope' at position 2", id="unknown request field"),
    pytest.param("{{faker.nope}}", "unknown fake-data type 'nope' at position 2", id="unknown fake-data type"),
    pytest.param("ab {{request.method", "unclosed '{{' at position 3", id="unclosed braces"),
    pytest.param("{{}}", "empty expression at position 0", id="empty expression"),
    pytest.param("{{   }}", "empty expression at position 0", id="blank expression"),
    pytest.param("{{ 'abc }}", "unterminated string at position 3", id="unterminated string"),
    pytest.param("{{upper(request.method}}", "missing ')' for 'upper(' at position 2", id="missing parenthesis"),
    pytest.param("{{random.int(1 2)}}", "expected ',' or ')' at position 15", id="missing comma"),
    pytest.param("{{request.query.a b}}", "unexpected 'b' at position 18", id="stray word after field"),
    pytest.param("{{random.int(5, 1)}}", "random.int: min 5 is greater than max 1", id="reversed range"),
    pytest.param("{{random.int(a, 1)}}", "random.int needs an integer argument, got 'a' at position 13",
                 id="non-integer argument"),
    pytest.param("{{random.float(x, 1)}}", "random.float needs a number argument, got 'x'", id="non-number"),
    pytest.param("{{random.int(1, 2, 3)}}", "random.int takes (min, max), got 3 arguments", id="too many"),
    pytest.param("{{random.string(-1)}}", "random.string: length must not be negative", id="negative length"),
    pytest.param("{{upper}}", "upper takes one value, got 0 arguments", id="upper without value"),
    pytest.param("{{default(request.query.a)}}", "default takes (value, 'fallback'), got 1 argument",
                 id="default without fallback"),
    pytest.param("{{sequence()}}", "sequence takes ('name') or ('name', start), got 0 arguments",
                 id="sequence without name"),
    pytest.param("{{sequence('a', 'b')}}", "sequence needs an integer argument, got 'b'", id="sequence bad start"),
    pytest.param("{{faker.name(3)}}", "faker.name takes no arguments", id="arguments to a faker type"),
    pytest.param("{{faker.words(-1)}}", "faker.words: count must not be negative", id="negative word count"),
    pytest.param("{{request.query}}", "request.query needs a name", id="query without name"),
    pytest.param("{{request.method.x}}", "request.method has no sub-field 'x'", id="sub-field of method"),
    pytest.param("{{request.body.a[x]}}", "malformed body path 'a[x]'", id="bad index"),
    pytest.param("{{upper request.qurey.name}}", "unknown request field 'qurey'", id="typo inside argument"),
])
def test_compile_template_bad_expression_raises_template_error_naming_what_and_where(text, message):
    with pytest.raises(TemplateError) as raised:
        compile_template(text)
    assert raised.value.detail.startswith(message)
    assert isinstance(raised.value, ValueError) and str(raised.value) == raised.value.detail


def test_template_error_position_attribute_points_into_the_text():
    with pytest.raises(TemplateError) as raised:
        compile_template("hello {{ nope }}")
    assert raised.value.position == 9 and "hello {{ nope }}"[9:13] == "nope"


# ------------------------------------------------------------------ JSON values
def test_compile_value_json_body_renders_strings_at_any_depth_and_keeps_other_values():
    value = compile_value({"id": "{{request.pathParam.id}}", "count": 3, "ok": True, "none": None,
                           "lines": [{"name": "{{request.body.items[0].name}}", "qty": 2}, "{{request.method}}"],
                           "static": {"k": "v"}})
    assert not value.is_static
    assert value.render(RenderContext(order_request(), {"id": "42"}, None, TemplateState())) == {
        "id": "42", "count": 3, "ok": True, "none": None,
        "lines": [{"name": "first", "qty": 2}, "POST"], "static": {"k": "v"}}


def test_compile_value_numeric_request_field_renders_as_string():
    value = compile_value({"age": "{{request.body.user.age}}"})
    assert value.render(RenderContext(order_request(), {}, None, TemplateState())) == {"age": "5"}


def test_compile_value_without_expressions_is_static_and_renders_the_same_object():
    body = {"a": [1, {"b": "plain"}], "c": "text"}
    value = compile_value(body)
    assert value.is_static and value.render(None) is body


def test_compile_value_keys_are_literal_text():
    value = compile_value({"{{uuid}}": "{{request.method}}"})
    assert value.render(RenderContext(order_request(), {}, None, TemplateState())) == {"{{uuid}}": "POST"}


@pytest.mark.parametrize("body,location", [
    pytest.param({"a": "{{nope}}"}, ".a", id="object field"),
    pytest.param({"items": [1, {"name": "{{nope}}"}]}, ".items[1].name", id="nested in array"),
    pytest.param(["{{nope}}"], "[0]", id="top-level array"),
    pytest.param({"a b": "{{nope}}"}, '["a b"]', id="key that needs quoting"),
    pytest.param("{{nope}}", "", id="plain string"),
])
def test_compile_value_bad_template_raises_with_location_inside_value(body, location):
    with pytest.raises(TemplateError) as raised:
        compile_value(body)
    assert raised.value.location == location
    assert raised.value.detail.startswith("unknown template expression 'nope' at position 2")
    assert str(raised.value) == (f"{location}: {raised.value.detail}" if location else raised.value.detail)


def test_compile_value_escaped_braces_in_json_string_render_literal_braces():
    value = compile_value({"doc": r"write \{{name}}", "list": [r"\{{x}}"], "n": 1})
    assert value.is_static and value.render(None) == {"doc": "write {{name}}", "list": ["{{x}}"], "n": 1}


# ------------------------------------------------------------------ seeds
@pytest.mark.parametrize("query,headers,response_seed,expected", [
    pytest.param("_mockd_seed=1&_mock_seed=2", {"x-mockd-seed": "3"}, 4, 1, id="_mockd_seed wins"),
    pytest.param("_mock_seed=2", {"x-mockd-seed": "3"}, 4, 2, id="_mock_seed beats header"),
    pytest.param("", {"x-mockd-seed": "3"}, 4, 3, id="header beats response seed"),
    pytest.param("", {}, 4, 4, id="response seed"),
    pytest.param("", {}, None, None, id="no seed anywhere"),
    pytest.param("_mockd_seed=abc&_mock_seed=2", {}, None, 2, id="non-integer query skipped"),
    pytest.param("_mockd_seed=1.5", {"x-mockd-seed": "x"}, 4, 4, id="non-integers skipped"),
    pytest.param("_mockd_seed=", {}, 4, 4, id="empty value skipped"),
    pytest.param("_mockd_seed=-7", {}, None, -7, id="negative integer"),
    pytest.param("_mockd_seed=%205%20", {}, None, 5, id="surrounding spaces"),
    pytest.param("_mockd_seed=" + "9" * 5000, {}, 4, 4, id="absurdly long number skipped"),
    pytest.param("_mockd_seed=\u0665", {}, 4, 4, id="non-ASCII digit skipped"),
])
def test_resolve_seed_sources_follow_documented_precedence(query, headers, response_seed, expected):
    assert resolve_seed(make_request("GET", "/", query, headers), response_seed) == expected


SEEDED = "{{uuid}} {{uuid.short}} {{random.int(1, 1000000)}} {{random.float(0, 1)}} {{random.string(8)}} " \
         "{{faker.name}} {{faker.email}} {{faker.creditCard}} {{faker.iban}} {{faker.sentence}}"


def test_seeded_render_same_seed_and_request_renders_identical_text():
    assert render(SEEDED, seed=42) == render(SEEDED, seed=42)


def test_seeded_render_different_seeds_render_different_text():
    outputs = [render(SEEDED, seed=seed) for seed in range(5)]
    assert len(set(outputs)) == 5
    # Every part varies, not just some of them.
    assert all(len({output.split(" ")[part] for output in outputs}) == 5 for part in range(5))


def test_unseeded_render_renders_different_text_each_time():
    assert render(SEEDED) != render(SEEDED)


def test_seeded_render_query_seed_through_resolve_seed_repeats_output():
    def serve() -> str:
        request = order_request(query="_mock_seed=9")
        context = RenderContext(request, {}, resolve_seed(request, None), TemplateState())
        return compile_template(SEEDED).render(context)

    assert serve() == serve()


def test_seeded_render_header_and_body_sharing_context_repeat_together():
    header, body = compile_template("{{uuid}}"), compile_value({"id": "{{uuid}}", "n": "{{faker.name}}"})

    def serve() -> tuple[str, Any]:
        context = RenderContext(order_request(), {}, 5, TemplateState())
        return header.render(context), body.render(context)

    first = serve()
    assert first == serve() and first[0] != first[1]["id"]


# ------------------------------------------------------------------ properties
ALL_REQUEST_EXPRESSIONS = (
    "{{request.method}}|{{request.path}}|{{request.url}}|{{request.pathParam.id}}|{{request.query.q}}|"
    "{{request.header.X-Test}}|{{request.body.a.b}}|{{request.body.items[0].name}}|{{request.body}}|"
    "{{request.body[0]}}|{{request.rawBody}}|{{default request.query.q 'none'}}|{{upper request.body.a}}|"
    "{{lower(request.header.accept)}}|{{faker.name}}|{{uuid}}|{{random.int(1, 9)}}"
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", "items", "name", "0"])
                                                                       | st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)
bodies = st.binary(max_size=200) | json_values.map(orjson.dumps)
header_names = st.sampled_from(["x-test", "accept", "x-mockd-seed"]) | st.text(min_size=1, max_size=10).map(str.lower)
requests = st.builds(
    MockRequest,
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE"]) | st.text(max_size=8),
    path=st.text(max_size=40).map(lambda path: "/" + path),
    query_string=st.text(max_size=60) | st.just("q=1&_mock_seed=12"),
    header_pairs=st.lists(st.tuples(header_names, st.text(max_size=20)), max_size=5),
    body=bodies,
)
path_parameters = st.dictionaries(st.sampled_from(["id", "other"]) | st.text(max_size=5), st.text(max_size=10),
                                  max_size=3)
PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Compiled once for the module, as a server compiles a mock once and renders it per request:
# the properties below are about rendering arbitrary requests, and compiling these constant
# templates again for each example was most of their time.
ALL_REQUEST_TEMPLATE = compile_template(ALL_REQUEST_EXPRESSIONS)
ALL_REQUEST_VALUE = compile_value({"x": [ALL_REQUEST_EXPRESSIONS]})
SEEDED_ALL_REQUEST_TEMPLATE = compile_template(SEEDED + "|" + ALL_REQUEST_EXPRESSIONS)


@PROPERTY_SETTINGS
@given(request=requests, path_params=path_parameters, response_seed=st.none() | st.integers())
def test_render_property_arbitrary_request_input_never_raises_and_returns_text(request, path_params, response_seed):
    context = RenderContext(request, path_params, resolve_seed(request, response_seed), TemplateState())
    assert isinstance(ALL_REQUEST_TEMPLATE.render(context), str)
    assert isinstance(ALL_REQUEST_VALUE.render(context)["x"][0], str)


@PROPERTY_SETTINGS
@given(request=requests, seed=st.integers())
def test_render_property_same_seed_and_request_gives_same_bytes(request, seed):
    template = SEEDED_ALL_REQUEST_TEMPLATE

    def serve() -> bytes:
        return template.render(RenderContext(request, {"id": "1"}, seed, TemplateState())).encode()

    assert serve() == serve()


@PROPERTY_SETTINGS
@given(seeds=st.lists(st.integers(), min_size=2, max_size=2, unique=True))
def test_render_property_different_seeds_give_different_uuids(seeds):
    template = compile_template("{{uuid}}")
    first, second = (template.render(RenderContext(make_request(), {}, seed, TemplateState())) for seed in seeds)
    assert first != second


template_pieces = st.sampled_from(["{{", "}}", "(", ")", ",", "'", '"', "\\", " ", "request.", "body", "query.",
                                   "header.", "pathParam.", "faker.", "words", "name", "random.int", "default",
                                   "upper", "sequence", "1", "-2", "[0]", ".", "uuid", "now"]) | st.text(max_size=3)


@PROPERTY_SETTINGS
@given(text=st.lists(template_pieces, max_size=15).map("".join))
def test_compile_template_property_arbitrary_text_compiles_or_raises_template_error_only(text):
    try:
        template = compile_template(text)
    except TemplateError:
        return
    assert isinstance(template.render(RenderContext(order_request(), {}, 1, TemplateState())), str)


def test_json_body_keys_with_quotes_and_newlines_render_as_data():
    # Object and array templates are compiled to Python functions; keys and static values are
    # data passed beside the code, never code themselves.
    hostile = "k\"}); import os; os._exit(3) #\n\\"
    template = compile_value({hostile: "{{request.path}}", "static": [hostile, "{{uuid}}", 1],
                              "n": None})
    request = MockRequest("GET", "/p")
    rendered = template.render(RenderContext(request, {}, None, TemplateState()))
    assert rendered[hostile] == "/p"
    assert rendered["static"][0] == hostile and rendered["static"][2] == 1
    assert len(rendered["static"][1]) == 36 and rendered["n"] is None


@pytest.mark.parametrize("query_string", [
    "q=search", "a=1&q=first&q=second", "q", "q=", "qq=1&q=2", "x=1", "", "&&q=v&", "q=a=b",
    "q=hello+world", "q=caf%C3%A9", "%71=encoded-name", "q=1&q=%32", "Q=upper",
])
def test_query_expression_gives_the_first_value_the_query_view_gives(query_string):
    # The evaluator scans plain query strings itself; it must agree with MockRequest.query.
    request = MockRequest("GET", "/p", query_string)
    expected = MockRequest("GET", "/p", query_string).query.get("q", "")
    template = compile_template("{{request.query.q}}")
    assert template.render(RenderContext(request, {}, None, TemplateState())) == expected


def test_seeded_object_draws_random_values_in_field_order():
    # Inlined expressions must draw from the seeded stream in the order of the fields, as
    # rendering each template in turn with one context does.
    fields = {"a": "{{faker.name}}", "b": "{{uuid}}", "c": "{{random.int(1, 1000000)}}",
              "d": "{{uuid}}", "e": "{{faker.firstName}}"}
    request = MockRequest("GET", "/p")
    whole = compile_value(fields).render(RenderContext(request, {}, 42, TemplateState()))
    context = RenderContext(request, {}, 42, TemplateState())
    one_by_one = {key: compile_template(text).render(context) for key, text in fields.items()}
    assert whole == one_by_one
    assert whole["b"] != whole["d"]


def test_escaping_template_escapes_every_value_and_keeps_literal_text_verbatim():
    """Literal text with quotes, braces and backslashes is written as given; every value
    goes through the escape except the escape-free generators (uuid)."""
    request = make_request("POST", "/x", body=b'{"a": "<1>", "b": "x\\\\"}',
                           headers={"Content-Type": "application/json"})
    template = compile_template('<p q="\'{}\\n">{{request.body.a}}</p>{{request.body.b}}'
                                '<u>{{uuid}}</u> }} " \'', escape=lambda text: f"[{text}]")
    rendered = template.render(RenderContext(request, {}, 7, TemplateState()))
    match = re.fullmatch(r'<p q="\'\{\}\\n">\[<1>\]</p>\[x\\\]<u>([0-9a-f-]{36})</u> }} " \'',
                         rendered)
    assert match is not None, rendered
    assert uuid.UUID(match.group(1)).version == 4
    assert template.renderer()(RenderContext(request, {}, 7, TemplateState())) == rendered


@pytest.mark.parametrize("expression", ["now", "timestamp", "timestamp.iso", "timestamp.unix_ms",
                                        "uuid", "uuid.short"])
def test_values_left_unescaped_hold_nothing_an_escape_would_change(expression):
    """An escaping template (a SOAP body) skips the escape for these values: what they render
    must then hold no character the escape changes."""
    marked = compile_template("<v>{{" + expression + "}}</v>", escape=lambda text: f"[{text}]")
    plain = compile_template("{{" + expression + "}}")
    for seed in range(20):
        context = RenderContext(make_request(), {}, seed, TemplateState())
        text = plain.render(context)
        assert not set(text) & set("&<>\"'"), text
        rendered = marked.render(RenderContext(make_request(), {}, seed, TemplateState()))
        assert "[" not in rendered and rendered.startswith("<v>")
