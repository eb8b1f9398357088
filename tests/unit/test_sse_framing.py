"""Framing of streaming mocks: SSE event encoding, the opening, NDJSON and raw chunks
(behavior notes §9 "Encoding"; STYLE §11)."""
from __future__ import annotations

import pytest

from mocks.protocols.streaming.framing import (SSE_KEEPALIVE, SSE_OPENING, ChunkedFraming,
                                               NdjsonFraming, SseEvent, SseFraming,
                                               encode_sse_event, payload_text)


@pytest.mark.parametrize(("event", "wire"), [
    pytest.param(SseEvent(data="hello"), b"data: hello\n\n", id="data only"),
    pytest.param(SseEvent(type="update", data="x", id="7", retry=1500, comment="note"),
                 b": note\nevent: update\nid: 7\nretry: 1500\ndata: x\n\n",
                 id="field order: comment, event, id, retry, data"),
    pytest.param(SseEvent(data="a\nb\r\nc\rd"), b"data: a\ndata: b\ndata: c\ndata: d\n\n",
                 id="one data line per payload line (LF, CRLF, CR)"),
    pytest.param(SseEvent(data="tab\tand\x0cform feed"), b"data: tab\tand\x0cform feed\n\n",
                 id="form feed is not a line break in SSE"),
    pytest.param(SseEvent(comment="one\ntwo"), b": one\n: two\n\n",
                 id="comment only: no data line, so clients dispatch nothing"),
    pytest.param(SseEvent(data=""), b"data: \n\n", id="empty payload"),
    pytest.param(SseEvent(type="t", id="i"), b"event: t\nid: i\n\n", id="no data"),
])
def test_encode_sse_event_writes_fields_in_order(event, wire):
    assert encode_sse_event(event) == wire


@pytest.mark.parametrize(("value", "text"), [
    pytest.param("as is", "as is", id="string as it is"),
    pytest.param({"b": 1, "a": [1, 2], "c": None}, '{"b":1,"a":[1,2],"c":null}',
                 id="object as compact JSON, key order kept"),
    pytest.param(3, "3", id="number"),
    pytest.param(True, "true", id="boolean"),
    pytest.param(None, "null", id="null"),
])
def test_payload_text_strings_as_is_other_values_compact_json(value, text):
    assert payload_text(value) == text


def test_sse_framing_opens_with_retry_3000_and_pings_with_a_comment():
    framing = SseFraming()
    assert framing.content_type == b"text/event-stream"
    assert framing.opening() == SSE_OPENING == b"retry: 3000\n\n"
    assert framing.keepalive == SSE_KEEPALIVE == b": keepalive\n\n"
    assert framing.frame(SseEvent(data="1")) == b"data: 1\n\n"


def test_sse_framing_inline_opening_puts_retry_into_the_first_event_only():
    framing = SseFraming(opening_inline=True)
    assert framing.opening() == b""
    assert framing.frame(SseEvent(data="1")) == b"retry: 3000\ndata: 1\n\n"
    assert framing.frame(SseEvent(data="2")) == b"data: 2\n\n"


def test_ndjson_framing_one_compact_json_value_per_line():
    framing = NdjsonFraming()
    assert framing.content_type == b"application/x-ndjson"
    assert framing.keepalive is None
    assert framing.frame({"a": 1, "b": [True, None]}) == b'{"a":1,"b":[true,null]}\n'
    assert framing.frame("text") == b'"text"\n'  # a JSON string item is JSON
    assert framing.frame(b'{"raw":1}') == b'{"raw":1}\n'  # a line of chunked.data as it is


def test_chunked_framing_sends_pieces_as_they_are():
    framing = ChunkedFraming()
    assert framing.content_type == b"application/octet-stream"
    assert framing.opening() == b""
    assert framing.frame(b"abcd") == b"abcd"
