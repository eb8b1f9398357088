"""HAR import (behavior notes §13 "har"): per-entry skipping, binary bodies as ``bodyBase64``."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from mocks.core.responses import CompiledResponse
from mocks.core.templating import TemplateState
from mocks.loader import validate_config
from mocks.portability.importers import ImportDocumentError, import_document
from mocks.portability.importers.har import is_static
from tests.helpers import make_request
from tests.import_golden import assert_matches_golden, case_name, cases


@pytest.mark.parametrize("source", cases("har"), ids=case_name)
def test_har_golden_file_converts_to_expected_config(source):
    assert_matches_golden(source)


def har(*entries, version="1.2"):
    log = {"entries": list(entries)}
    if version:
        log["version"] = version
    return json.dumps({"log": log})


def entry(method="GET", url="https://x.test/a", status=200, headers=(), text=None,
          mime="application/json"):
    content = {"mimeType": mime}
    if text is not None:
        content["text"] = text
    return {"request": {"method": method, "url": url, "headers": []},
            "response": {"status": status, "content": content,
                         "headers": [{"name": n, "value": v} for n, v in headers]}}


@pytest.mark.parametrize(("path", "content_type", "static"), [
    ("/app.js", "", True), ("/style.css", "", True), ("/logo.PNG", "", True),
    ("/font.woff2", "", True), ("/api/img", "image/webp", True), ("/api", "text/css", True),
    ("/api/users", "application/json", False), ("/index.html", "text/html", False),
    ("/v1.2/users", "", False)])
def test_har_static_assets_by_extension_or_type(path, content_type, static):
    assert is_static(path, content_type) is static


def test_har_first_entry_of_a_method_and_path_wins():
    result = import_document(har(entry(text='{"n":1}'), entry(text='{"n":2}'),
                                 entry(method="POST", text='{"n":3}')))
    bodies = [m["http"]["response"]["body"] for m in result.mocks]
    assert bodies == [{"n": 1}, {"n": 3}]
    assert [m["id"] for m in result.mocks] == ["imported-1", "imported-2"]


def test_har_transport_headers_dropped():
    result = import_document(har(entry(headers=[
        ("Content-Length", "3"), ("Transfer-Encoding", "chunked"), ("Connection", "close"),
        ("Content-Encoding", "gzip"), (":status", "200"), ("ETag", "abc")])))
    assert result.mocks[0]["http"]["response"]["headers"] == {"ETag": "abc"}


def test_har_mime_type_becomes_content_type_when_headers_lack_it():
    result = import_document(har(entry(text="<p/>", mime="text/html")))
    assert result.mocks[0]["http"]["response"]["headers"] == {"Content-Type": "text/html"}


def test_har_extension_detects_even_without_log_key_content():
    with pytest.raises(ImportDocumentError) as caught:
        import_document("{}", filename="capture.har")
    assert str(caught.value).startswith("har: log: expected a mapping")


@pytest.mark.parametrize(("text", "message"), [
    pytest.param(har(version=None), "har: log.version: required (HAR 1.1 or 1.2)",
                 id="no version"),
    pytest.param(json.dumps({"log": {"version": "1.2", "entries": {}}}),
                 "har: log.entries: expected a list", id="entries mapping"),
])
def test_har_malformed_archive_names_the_place(text, message):
    with pytest.raises(ImportDocumentError) as caught:
        import_document(text)
    assert str(caught.value) == message


BAD_ENTRIES = [
    pytest.param({"request": {}, "response": {}},
                 "log.entries[0]: request: expected a mapping with a url", id="no url"),
    pytest.param("entry", "log.entries[0]: expected a mapping", id="not a mapping"),
    pytest.param(entry(status="OK"),
                 "log.entries[0] (GET /a): response.status: expected an HTTP status, got 'OK'",
                 id="text status"),
    pytest.param({**entry(), "response": {"status": 200, "content": {
        "text": "!!", "encoding": "base64"}}},
        "log.entries[0] (GET /a): response.content.text: encoding is base64 but the text "
        "does not decode", id="bad base64"),
]


@pytest.mark.parametrize(("bad", "where"), BAD_ENTRIES)
def test_har_bad_entry_is_skipped_with_a_warning_and_the_rest_imported(bad, where):
    result = import_document(har(bad, entry(url="https://x.test/ok", text='{"ok":true}')))
    assert [mock["http"]["matcher"]["path"] for mock in result.mocks] == ["/ok"]
    item, _, reason = where.partition(": ")
    assert result.skipped == [{"item": item, "reason": reason}]
    assert f"skipped {where}" in result.warnings


@pytest.mark.parametrize(("bad", "where"), BAD_ENTRIES)
def test_har_with_only_bad_entries_imports_nothing_and_says_why(bad, where):
    with pytest.raises(ImportDocumentError) as caught:
        import_document(har(bad))
    assert str(caught.value) == f"har: nothing could be imported: 1 item skipped; first: {where}"


def test_har_bad_first_entry_does_not_hide_a_good_repeat_of_its_path():
    result = import_document(har(entry(status="OK"), entry(text='{"n":2}')))
    assert [mock["http"]["response"]["body"] for mock in result.mocks] == [{"n": 2}]
    assert not any("repeated" in warning for warning in result.warnings)


PNG_HEAD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def test_har_base64_binary_body_becomes_body_base64_with_the_hars_content_type():
    encoded = base64.b64encode(PNG_HEAD).decode()
    result = import_document(har({**entry(url="https://x.test/logo.png", headers=[
        ("Content-Type", "image/png")]), "response": {
            "status": 200, "headers": [{"name": "Content-Type", "value": "image/png"}],
            "content": {"mimeType": "image/png", "text": encoded, "encoding": "base64"}}}),
        include_static=True)
    response = result.mocks[0]["http"]["response"]
    assert response == {"statusCode": 200, "headers": {"Content-Type": "image/png"},
                        "bodyBase64": encoded}
    assert result.warnings == []


def test_har_base64_binary_body_takes_the_mime_type_when_headers_lack_it():
    encoded = base64.b64encode(b"\x00\xff").decode()
    result = import_document(har({**entry(url="https://x.test/blob"), "response": {
        "status": 200, "headers": [], "content": {"mimeType": "application/x-blob",
                                                  "text": encoded, "encoding": "base64"}}}))
    response = result.mocks[0]["http"]["response"]
    assert response["headers"] == {"Content-Type": "application/x-blob"}
    assert base64.b64decode(response["bodyBase64"]) == b"\x00\xff"


def test_har_base64_utf8_text_stays_a_text_body():
    encoded = base64.b64encode('{"name": "zoë"}'.encode()).decode()
    result = import_document(har({**entry(), "response": {"status": 200, "headers": [],
                                                          "content": {
        "mimeType": "application/json", "text": encoded, "encoding": "base64"}}}))
    response = result.mocks[0]["http"]["response"]
    assert response["body"] == {"name": "zoë"} and "bodyBase64" not in response


def test_har_imported_binary_body_is_served_byte_exact():
    encoded = base64.b64encode(PNG_HEAD).decode()
    result = import_document(har({**entry(url="https://x.test/img"), "response": {
        "status": 200, "headers": [{"name": "Content-Type", "value": "image/png"}],
        "content": {"mimeType": "image/png", "text": encoded, "encoding": "base64"}}}),
        include_static=True)
    response = CompiledResponse(validate_config(result.config_document()).mocks[0].http.response,
                                "mocks[0].http.response", Path("."))
    _, headers, body = response.render(make_request(path="/img"), {}, TemplateState())
    assert body == PNG_HEAD and dict(headers)[b"content-type"] == b"image/png"
