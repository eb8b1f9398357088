"""Compiled responses: default Content-Type, static pre-building, header safety, template errors
with key paths, binary bodies (``bodyBase64``, ``bodyFile`` bytes) (SPEC "Response"; behavior
notes §4)."""
from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest

from mocks.config import Response
from mocks.core.errors import ConfigError
from mocks.core.responses import CompiledResponse, default_content_type
from mocks.core.templating import TemplateState
from mocks.engine.app import DataPlaneApp
from mocks.loader import validate_config
from tests.helpers import engine_with, http_mock, make_config, make_request


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


# --- binary bodies: bodyBase64 and bodyFile bytes (SPEC "Response"; HAR import) -----------

#: A 1x1 PNG: bytes that are not UTF-8 text.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a1a8"
                    "f1d70000000049454e44ae426082")


def answer(response, request=None):
    return response.render(request or make_request(), {}, TemplateState())


def test_body_base64_is_served_as_the_exact_bytes_frozen_at_compile_time():
    response = compiled(bodyBase64=base64.b64encode(PNG).decode())
    assert response.is_static
    status, headers, body = answer(response)
    assert (status, body) == (200, PNG)
    assert dict(headers)[b"content-type"] == b"application/octet-stream"


def test_body_base64_keeps_the_mocks_content_type_and_ignores_line_breaks():
    encoded = base64.encodebytes(PNG).decode()  # 76-character lines
    assert "\n" in encoded
    response = compiled(headers={"Content-Type": "image/png"}, bodyBase64=encoded)
    _, headers, body = answer(response)
    assert body == PNG
    assert [value for name, value in headers if name == b"content-type"] == [b"image/png"]


def test_body_base64_is_never_a_template_even_with_templated_headers():
    raw = b"{{request.path}} \xff"
    response = compiled(headers={"X-Path": "{{request.path}}"},
                        bodyBase64=base64.b64encode(raw).decode())
    _, headers, body = answer(response, make_request(path="/p"))
    assert body == raw
    assert dict(headers)[b"x-path"] == b"/p"
    assert dict(headers)[b"content-type"] == b"application/octet-stream"


def test_text_bodies_keep_todays_default_content_type():
    assert dict(answer(compiled(body='{"a": 1}'))[1])[b"content-type"] == b"application/json"
    assert dict(answer(compiled(body="hi"))[1])[b"content-type"] == b"text/plain"


@pytest.mark.parametrize(("value", "reason"), [
    pytest.param("!!!!", "not valid base64: only A-Z, a-z, 0-9, '+' and '/' are allowed",
                 id="bad characters"),
    pytest.param("abc", "not valid base64: 3 characters, expected a multiple of 4",
                 id="unpadded"),
    pytest.param("a-_b", "not standard base64: '-' and '_' belong to the URL-safe alphabet",
                 id="url-safe"),
])
def test_invalid_body_base64_is_a_config_error_naming_the_key(value, reason):
    with pytest.raises(ConfigError) as caught:
        validate_config(make_config(http_mock("a", "GET", "/a",
                                              response={"bodyBase64": value})))
    assert caught.value.path == "mocks[0].http.response.bodyBase64"
    assert caught.value.reason.startswith(reason)


@pytest.mark.parametrize("others", [{"body": "x"}, {"bodyFile": "x.png"}])
def test_body_base64_excludes_body_and_body_file(others):
    with pytest.raises(ConfigError) as caught:
        validate_config(make_config(http_mock("a", "GET", "/a",
                                              response={"bodyBase64": "AA==", **others})))
    assert caught.value.path == "mocks[0].http.response"
    assert caught.value.reason == ("give only one of body, bodyFile and bodyBase64, not "
                                   f"{next(iter(others))} and bodyBase64")


def file_response(tmp_path, name, content, **fields):
    (tmp_path / name).write_bytes(content)
    return CompiledResponse(Response.model_validate({"bodyFile": name, **fields}),
                            "mocks[0].http.response", tmp_path)


def test_body_file_that_is_not_utf8_is_served_byte_exact_with_its_extensions_type(tmp_path):
    _, headers, body = answer(file_response(tmp_path, "logo.png", PNG))
    assert body == PNG
    assert dict(headers)[b"content-type"] == b"image/png"


def test_body_file_of_unknown_extension_binary_is_octet_stream_text_is_sniffed(tmp_path):
    _, headers, body = answer(file_response(tmp_path, "blob.bin123", b"\x00\xff\xfe"))
    assert (body, dict(headers)[b"content-type"]) == (b"\x00\xff\xfe",
                                                      b"application/octet-stream")
    _, headers, _ = answer(file_response(tmp_path, "data", b'{"a": 1}'))
    assert dict(headers)[b"content-type"] == b"application/json"


def test_body_file_content_type_set_by_the_mock_wins(tmp_path):
    response = file_response(tmp_path, "logo.png", PNG,
                             headers={"Content-Type": "application/x-custom"})
    _, headers, _ = answer(response)
    assert [value for name, value in headers if name == b"content-type"] == \
        [b"application/x-custom"]


def test_body_file_text_templates_still_render(tmp_path):
    response = file_response(tmp_path, "hello.txt", "héllo {{request.path}}".encode())
    _, headers, body = answer(response, make_request(path="/x"))
    assert body == "héllo /x".encode()
    assert dict(headers)[b"content-type"] == b"text/plain"


def test_body_file_with_template_marks_but_not_utf8_is_served_as_it_is(tmp_path):
    raw = b"{{request.path}}\xff\xfe"
    _, _, body = answer(file_response(tmp_path, "odd.bin", raw), make_request(path="/x"))
    assert body == raw


def test_body_file_without_templates_keeps_its_exact_bytes(tmp_path):
    raw = "\ufeffline one\r\nline two\r\n".encode()
    _, _, body = answer(file_response(tmp_path, "page.html", raw))
    assert body == raw


def test_body_file_changed_on_disk_is_read_again(tmp_path):
    response = file_response(tmp_path, "logo.png", PNG)
    assert answer(response)[2] == PNG
    (tmp_path / "logo.png").write_bytes(PNG + b"\x00more")
    assert answer(response)[2] == PNG + b"\x00more"


async def serve(app, method, path):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await app({"type": "http", "method": method, "path": path, "query_string": b"",
               "headers": [], "scheme": "http", "server": ("127.0.0.1", 4280),
               "client": ("127.0.0.1", 5000)}, receive, send)
    start = next(message for message in sent if message["type"] == "http.response.start")
    body = b"".join(message.get("body", b"") for message in sent
                    if message["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body


def test_binary_bodies_end_to_end_through_the_data_plane(tmp_path):
    (tmp_path / "logo.png").write_bytes(PNG)
    app = DataPlaneApp(engine_with(
        http_mock("b64", "GET", "/b64", response={"bodyBase64": base64.b64encode(PNG).decode()}),
        http_mock("file", "GET", "/file", response={"bodyFile": "logo.png"}),
        base_dir=tmp_path))
    for path, content_type in ((b"/b64", b"application/octet-stream"),
                               (b"/file", b"image/png")):
        status, headers, body = asyncio.run(serve(app, "GET", path.decode()))
        assert (status, headers[b"content-type"], body) == (200, content_type, PNG)
        assert headers[b"content-length"] == str(len(PNG)).encode()
        status, headers, body = asyncio.run(serve(app, "HEAD", path.decode()))
        assert body == b"" and headers[b"content-length"] == str(len(PNG)).encode()
