"""Format detection, format names and the shared error/result shapes of the one import path
(behavior notes §13 "Detection" and "Aliases"; STYLE §10)."""
from __future__ import annotations

import json

import pytest

from mocks.portability.importers import (ALIASES, FORMATS, ImportDocumentError, canonical_format,
                             decode_text, detect_format, import_document, import_path)
from mocks.portability.importers.common import literal_text, literal_value, split_url


@pytest.mark.parametrize(("document", "detected"), [
    pytest.param({"openapi": "3.1.0", "paths": {}}, "openapi", id="openapi"),
    pytest.param({"swagger": "2.0", "paths": {}}, "openapi", id="swagger"),
    pytest.param({"log": {"version": "1.2", "entries": []}}, "har", id="har"),
    pytest.param({"version": "1.0", "mocks": []}, "mockd", id="own with mocks"),
    pytest.param({"version": "1.0", "kind": "MockCollection"}, "mockd", id="own with kind"),
    pytest.param({"info": {"name": "c"}, "item": []}, "postman", id="postman"),
    pytest.param({"routes": [], "endpointPrefix": ""}, "mockoon", id="mockoon prefix"),
    pytest.param({"routes": [], "port": 3000}, "mockoon", id="mockoon port"),
    pytest.param({"request": {}, "response": {}}, "wiremock", id="wiremock single"),
    pytest.param({"mappings": []}, "wiremock", id="wiremock wrapper"),
    pytest.param([{"request": {}, "response": {}}], "wiremock", id="wiremock array"),
    # order matters where markers overlap (notes §13): har before own before openapi ...
    pytest.param({"log": {}, "openapi": "3.0.0"}, "har", id="har before openapi"),
    pytest.param({"version": "1.0", "mocks": [], "openapi": "3.0.0"}, "mockd",
                 id="own before openapi"),
    pytest.param({"openapi": "3.0.0", "info": {}, "item": []}, "openapi",
                 id="openapi before postman"),
    pytest.param({"info": {}, "item": [], "routes": [], "port": 1}, "postman",
                 id="postman before mockoon"),
    pytest.param({"routes": [], "port": 1, "request": {}, "response": {}}, "mockoon",
                 id="mockoon before wiremock"),
    pytest.param({"mocks": []}, None, id="mocks without version"),
    pytest.param({"routes": []}, None, id="routes alone"),
    pytest.param([1, 2], None, id="plain list"),
])
def test_detection_by_content_in_documented_order(document, detected):
    assert detect_format(json.dumps(document)) == detected


def test_detection_reads_yaml_too():
    assert detect_format("openapi: 3.0.0\npaths: {}\n") == "openapi"


@pytest.mark.parametrize(("name", "canonical"), [
    *((name, name) for name in FORMATS), *ALIASES.items(), (" Swagger ", "openapi")])
def test_format_names_and_aliases(name, canonical):
    assert canonical_format(name) == canonical


def test_unknown_format_name_lists_the_known_ones():
    with pytest.raises(ImportDocumentError) as caught:
        import_document("{}", format="raml")
    assert str(caught.value).startswith("raml: unknown format; use one of wsdl, har, mockd,")


@pytest.mark.parametrize(("text", "message"), [
    pytest.param('{"hello": 1, "world": 2}', "unknown: not a recognised document (top-level "
                 "keys: hello, world); expected OpenAPI/Swagger, Postman collection, HAR, "
                 "WireMock mappings, Mockoon environment, WSDL 1.1 or a mockd config; pass "
                 "--format to choose", id="unknown keys"),
    pytest.param("", "unknown: not a recognised document (an empty document)", id="empty"),
    pytest.param("just words", "unknown: not a recognised document (plain text)", id="text"),
    pytest.param("<html/>", "unknown: not a recognised document (an XML document whose root "
                 "is not a WSDL 1.1 <definitions>)", id="other xml"),
    pytest.param("a: [1\n", "unknown: not valid JSON or YAML at line 2, column 1",
                 id="broken yaml"),
])
def test_unknown_document_is_one_line_naming_what_was_found(text, message):
    with pytest.raises(ImportDocumentError) as caught:
        import_document(text)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_unreadable_file_is_an_import_error(tmp_path):
    with pytest.raises(ImportDocumentError) as caught:
        import_path(tmp_path / "missing.yaml", format="openapi")
    assert str(caught.value).startswith("openapi: cannot read ")


def test_result_carries_format_source_and_a_postable_config(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"openapi": "3.0.0", "info": {"title": "T"}, "paths": {
        "/a": {"get": {"responses": {}}}}}))
    result = import_path(path)
    assert (result.format, result.source, result.name) == ("openapi", str(path), "T")
    assert set(result.config_document()) == {"version", "mocks"}
    assert result.summary() == [{"id": result.mocks[0]["id"], "name": "GET /a",
                                 "method": "GET", "path": "/a"}]


@pytest.mark.parametrize(("raw", "text"), [
    ("é".encode("utf-8"), "é"), (b"\xef\xbb\xbfa", "a"), ("ab".encode("utf-16"), "ab"),
    (b"\xe9t\xe9", "été")])
def test_documents_decode_from_utf8_bom_utf16_or_latin1(raw, text):
    assert decode_text(raw) == text


@pytest.mark.parametrize(("value", "literal"), [
    ("{{x}}", "\\{{x}}"), ("a {{b}} {{c}}", "a \\{{b}} \\{{c}}"), ("no braces", "no braces"),
    ({"k": ["{{v}}", 1]}, {"k": ["\\{{v}}", 1]})])
def test_imported_data_is_made_literal(value, literal):
    assert literal_value(value) == literal


def test_literal_value_keeps_unchanged_objects():
    value = {"a": [1, "x"]}
    assert literal_value(value) is value
    assert literal_text("x") == "x"


@pytest.mark.parametrize(("url", "path", "query"), [
    ("https://h.test/a/b?x=1&x=2&y=", "/a/b", {"x": "1", "y": ""}),
    ("https://h.test", "/", {}), ("/p%20q#frag", "/p q", {}), ("rel/path?z=9", "/rel/path",
                                                               {"z": "9"})])
def test_split_url(url, path, query):
    assert split_url(url) == (path, query)
