"""The built-in SSE templates produce exactly the payloads of behavior notes §9: ``llm-chat``
``chat.completion.chunk`` events and ``[DONE]``; ``notification-stream`` in both forms."""
from __future__ import annotations

import re

import orjson
import pytest

from mocks.core.errors import ConfigError
from mocks.core.templating import RenderContext, TemplateState
from mocks.protocols.streaming.framing import payload_text
from mocks.protocols.streaming.templates import (DEFAULT_TOKENS, LlmChatTemplate,
                                                 compile_sse_template)
from tests.helpers import make_request

CHUNK = re.compile(r'\{"choices":\[\{"delta":\{"content":(?P<content>"[^"]*")\},'
                   r'"finish_reason":(?P<finish>null|"[a-z_]+"),"index":0\}\],'
                   r'"created":(?P<created>\d+),"id":"(?P<id>chatcmpl-[A-Za-z0-9]{24})",'
                   r'"model":"(?P<model>[^"]+)","object":"chat\.completion\.chunk"\}')


def events_of(template):
    sequence = template.sequence()
    context = RenderContext(request=make_request(), path_params={}, seed=None,
                            state=TemplateState())
    out = []
    position = 0
    while (event := sequence.event_at(position)) is not None:
        data = payload_text(event.data.render(context)) if event.data is not None else None
        out.append((event.type, data, event.id, event.delay_ms))
        position += 1
    return out


def test_llm_chat_chunks_match_the_openai_wire_format_byte_for_byte():
    events = events_of(compile_sse_template("llm-chat", {"tokens": ["Hel", "lo"]}, "p"))
    first, second, done = events
    found = [CHUNK.fullmatch(data) for _, data, _, _ in (first, second)]
    assert all(found), [data for _, data, _, _ in events]
    assert [orjson.loads(match["content"]) for match in found] == ["Hel", "lo"]
    assert [match["finish"] for match in found] == ["null", '"stop"']
    assert found[0]["id"] == found[1]["id"] and found[0]["created"] == found[1]["created"]
    assert found[0]["model"] == "gpt-4-mock"
    assert done == (None, "[DONE]", None, None)
    assert [event_type for event_type, _, _, _ in events] == [None, None, None]  # no event:


def test_llm_chat_defaults_and_params():
    template = compile_sse_template("openai-chat", {}, "p")
    events = events_of(template)
    assert [orjson.loads(data)["choices"][0]["delta"]["content"]
            for _, data, _, _ in events[:-1]] == list(DEFAULT_TOKENS)
    assert [delay for _, _, _, delay in events] == [50] * len(DEFAULT_TOKENS) + [None]
    custom = events_of(compile_sse_template("openai", {
        "tokens": ["a"], "model": "m-1", "finishReason": "length", "includeDone": False,
        "delayPerToken": 0}, "p"))
    assert len(custom) == 1
    chunk = orjson.loads(custom[0][1])
    assert chunk["model"] == "m-1" and chunk["choices"][0]["finish_reason"] == "length"
    assert custom[0][3] == 0


def test_llm_chat_gives_every_connection_its_own_completion_id():
    template = compile_sse_template("llm-chat", {"tokens": ["x"]}, "p")
    assert isinstance(template, LlmChatTemplate) and template.inline_opening
    ids = {orjson.loads(events_of(template)[0][1])["id"] for _ in range(5)}
    assert len(ids) == 5


def test_notification_stream_messages_form():
    events = events_of(compile_sse_template("notification-stream", {
        "interval": 20, "messages": [{"type": "alert", "payload": {"level": 3}},
                                     {"payload": "plain text"}]}, "p"))
    assert events == [("alert", '{"level":3}', None, 20),
                      ("notification", "plain text", None, 20)]


def test_notification_stream_notifications_form_with_timestamp_and_id():
    events = events_of(compile_sse_template("notification", {
        "eventType": "note", "includeTimestamp": True, "includeId": True,
        "notifications": [{"type": "info", "message": "hi"},
                          {"type": "warn", "message": "careful"}]}, "p"))
    assert [(event_type, event_id, delay) for event_type, _, event_id, delay in events] == [
        ("note", "1", 1000), ("note", "2", 1000)]
    first = orjson.loads(events[0][1])
    assert list(first) == ["type", "message", "timestamp", "id"]
    assert (first["type"], first["message"], first["id"]) == ("info", "hi", "1")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", first["timestamp"])


def test_notification_stream_notifications_form_plain():
    events = events_of(compile_sse_template("notification-stream", {
        "notifications": [{"type": "info", "message": "hi"}]}, "p"))
    assert events == [("notification", '{"type":"info","message":"hi"}', None, 1000)]


@pytest.mark.parametrize(("name", "params", "path"), [
    pytest.param("llm-chat", {"tokens": "Hello"}, "p.templateParams.tokens", id="tokens not a list"),
    pytest.param("llm-chat", {"tokens": ["a", 1]}, "p.templateParams.tokens[1]", id="token not a string"),
    pytest.param("llm-chat", {"includeDone": "yes"}, "p.templateParams.includeDone", id="includeDone"),
    pytest.param("llm-chat", {"delayPerToken": -1}, "p.templateParams.delayPerToken", id="negative delay"),
    pytest.param("notification-stream", {}, "p.templateParams", id="no messages"),
    pytest.param("notification-stream", {"messages": ["x"]}, "p.templateParams.messages[0]", id="bad entry"),
    pytest.param("chat", {}, "p.template", id="unknown template name"),
])
def test_bad_template_params_name_their_key(name, params, path):
    with pytest.raises(ConfigError) as raised:
        compile_sse_template(name, params, "p")
    assert raised.value.path == path
