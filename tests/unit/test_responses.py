"""Compiled responses: default Content-Type, static pre-building, header safety, template errors
with key paths (SPEC "Response"; behavior notes §4)."""
from __future__ import annotations

from pathlib import Path

import pytest

from mocks.config import Response
from mocks.core.errors import ConfigError
from mocks.core.responses import CompiledResponse, default_content_type
from mocks.core.templating import TemplateState
from tests.helpers import make_request


@pytest.mark.parametrize("body,expected", [
    pytest.param(b' {"a": 1} ', b"application/json", id="object"),
    pytest.param(b"[1, 2]", b"application/json", id="array"),
    pytest.param(b"<a/>", b"application/xml", id="xml"),
    pytest.param(b"{not closed", b"text/plain", id="unbalanced braces are text"),
    pytest.param(b"hello", b"text/plain", id="text"),
])
def test_default_content_type(body, expected):
    assert default_content_type(body) == expected


def compiled(**fields):
    return CompiledResponse(Response.model_validate(fields), "mocks[0].http.response", Path("."))


def test_static_response_is_prebuilt_once():
    response = compiled(statusCode=201, body={"a": 1})
    assert response.is_static
    status, headers, body = response.render(make_request(), {}, TemplateState())
    assert (status, body) == (201, b'{"a":1}')
    assert dict(headers)[b"content-type"] == b"application/json"


def test_explicit_content_type_is_kept():
    response = compiled(headers={"Content-Type": "text/csv"}, body="a,b")
    _, headers, _ = response.render(make_request(), {}, TemplateState())
    assert [value for name, value in headers if name == b"content-type"] == [b"text/csv"]


def test_templated_header_cannot_inject_a_header_line():
    response = compiled(headers={"X-Echo": "{{request.query.q}}"}, body="x")
    request = make_request(query="q=a%0D%0ASet-Cookie:%20evil=1")
    _, headers, _ = response.render(request, {}, TemplateState())
    assert dict(headers)[b"x-echo"] == b"a  Set-Cookie: evil=1"


def test_template_error_in_json_body_names_the_nested_key():
    with pytest.raises(ConfigError) as caught:
        compiled(body={"items": [{"name": "{{nope.nope}}"}]})
    assert caught.value.path == "mocks[0].http.response.body.items[0].name"


def test_template_error_in_header_names_the_header():
    with pytest.raises(ConfigError) as caught:
        compiled(headers={"X-A": "{{random.int(5, 1)}}"})
    assert caught.value.path == "mocks[0].http.response.headers.X-A"
