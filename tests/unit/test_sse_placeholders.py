"""Event data placeholders and templates of streaming mocks (SPEC "SSE config"; behavior notes
§9: ``$uuid``, ``$timestamp`` RFC 3339, ``$random(min,max)`` int, ``$pick(a,b,c)`` as whole
string values; ``{{…}}`` expanded)."""
from __future__ import annotations

import re
import uuid

import pytest

from mocks.core.errors import ConfigError
from mocks.core.templating import RenderContext, TemplateState
from mocks.protocols.streaming.placeholders import compile_event_data
from tests.helpers import make_request

RFC3339_MILLIS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def context(seed: int | None = None) -> RenderContext:
    return RenderContext(request=make_request(), path_params={}, seed=seed, state=TemplateState())


def render(value, seed: int | None = None):
    return compile_event_data(value, "data").render(context(seed))


def test_uuid_placeholder_is_a_version_4_uuid():
    value = render("$uuid")
    assert uuid.UUID(value).version == 4
    assert render("$uuid") != value


def test_timestamp_placeholder_is_rfc3339_utc():
    assert RFC3339_MILLIS.fullmatch(render("$timestamp"))


def test_random_placeholder_is_an_integer_in_range_inclusive():
    values = {render("$random(1, 3)") for _ in range(100)}
    assert values == {1, 2, 3}
    assert all(type(value) is int for value in values)
    assert render("$random(-2,-2)") == -2


def test_pick_placeholder_is_one_of_the_words():
    assert {render("$pick(red, green,blue)") for _ in range(100)} == {"red", "green", "blue"}


@pytest.mark.parametrize("text", ["$uuid ", "id: $uuid", "$random(1)", "$pickle", "$5 off",
                                  "$unknown"])
def test_text_that_is_not_exactly_a_placeholder_is_kept(text):
    assert render(text) == text


def test_placeholders_and_templates_work_at_any_depth():
    value = render({"user": {"id": "$uuid", "tags": ["$pick(a)", "fixed", "{{upper('x')}}"]},
                    "n": 1, "ok": True})
    assert uuid.UUID(value["user"]["id"])
    assert value["user"]["tags"] == ["a", "fixed", "X"]
    assert value["n"] == 1 and value["ok"] is True


def test_static_data_is_detected_and_kept_as_given():
    compiled = compile_event_data({"a": [1, "b"], "c": None}, "data")
    assert compiled.is_static
    assert compiled.render(None) == {"a": [1, "b"], "c": None}
    assert not compile_event_data({"a": ["$uuid"]}, "data").is_static


def test_a_seed_makes_placeholders_reproducible():
    data = {"id": "$uuid", "n": "$random(1,1000000)", "p": "$pick(a,b,c,d,e,f,g)"}
    assert render(data, seed=7) == render(data, seed=7)
    assert render(data, seed=7) != render(data, seed=8)


@pytest.mark.parametrize(("value", "path"), [
    pytest.param({"a": {"b": "$random(5,1)"}}, "data.a.b", id="random min above max"),
    pytest.param(["x", "$pick( , )"], "data[1]", id="pick without a choice"),
    pytest.param({"t": "{{nope}}"}, "data.t", id="unknown template expression"),
])
def test_bad_placeholder_or_template_names_its_key(value, path):
    with pytest.raises(ConfigError) as raised:
        compile_event_data(value, "data")
    assert raised.value.path == path
