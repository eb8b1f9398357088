"""HAR import (behavior notes §13 "har")."""
from __future__ import annotations

import json

import pytest

from mocks.portability.importers import ImportDocumentError, import_document
from mocks.portability.importers.har import is_static
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
    pytest.param(har({"request": {}, "response": {}}),
                 "har: log.entries[0].request: expected a mapping with a url", id="no url"),
    pytest.param(har(entry(status="OK")),
                 "har: log.entries[0].response.status: expected an HTTP status, got 'OK'",
                 id="text status"),
    pytest.param(har({**entry(), "response": {"status": 200, "content": {
        "text": "!!", "encoding": "base64"}}}),
        "har: log.entries[0].response.content.text: encoding is base64 but the text does "
        "not decode", id="bad base64"),
])
def test_har_malformed_archive_names_the_place(text, message):
    with pytest.raises(ImportDocumentError) as caught:
        import_document(text)
    assert str(caught.value) == message
