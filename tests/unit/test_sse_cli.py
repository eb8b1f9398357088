"""The ``--sse*`` flags of ``mockd http add`` become an ``sse`` block (behavior notes §15)."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from mocks.protocols.streaming.cli import apply_sse_options, parse_sse_event, sse_block, sse_options
from mocks.config import HttpMock


@pytest.mark.parametrize(("text", "event"), [
    pytest.param('tick:{"n":1}', {"type": "tick", "data": {"n": 1}}, id="type and JSON data"),
    pytest.param("note:hello there", {"type": "note", "data": "hello there"}, id="text data"),
    pytest.param("just text", {"type": "message", "data": "just text"}, id="no type"),
    pytest.param('{"a":1}', {"type": "message", "data": {"a": 1}}, id="JSON without a type"),
    pytest.param("time:12:30", {"type": "time", "data": "12:30"}, id="split at the first colon"),
    pytest.param("n:42", {"type": "n", "data": 42}, id="number"),
])
def test_parse_sse_event(text, event):
    assert parse_sse_event(text) == event


def test_sse_block_repeats_events_and_sets_delay_and_keepalive():
    block = sse_block(events=("a:1", "b"), delay_ms=250, template=None, repeat=2,
                      keepalive_seconds=10)
    assert block == {"timing": {"fixedDelay": 250}, "lifecycle": {"keepaliveInterval": 10},
                     "events": [{"type": "a", "data": 1}, {"type": "message", "data": "b"}] * 2}


def test_sse_block_defaults_to_one_connected_event_and_repeat_zero_is_endless():
    assert sse_block(events=(), delay_ms=100, template=None, repeat=1,
                     keepalive_seconds=0)["events"] == [
        {"type": "message", "data": {"status": "connected"}}]
    endless = sse_block(events=("x",), delay_ms=100, template=None, repeat=0, keepalive_seconds=0)
    assert endless["generator"] == {"type": "template", "template": {
        "events": [{"type": "message", "data": "x"}]}}
    assert "events" not in endless


def test_sse_block_templates():
    llm = sse_block(events=(), delay_ms=100, template="llm-chat", repeat=1, keepalive_seconds=0)
    assert llm == {"timing": {"fixedDelay": 100}, "template": "llm-chat"}
    notes = sse_block(events=("alert:{\"x\":1}",), delay_ms=40, template="notification",
                      repeat=1, keepalive_seconds=0)
    assert notes["templateParams"] == {"interval": 40, "messages": [
        {"type": "alert", "payload": {"x": 1}}]}


@pytest.mark.parametrize("template", [None, "llm-chat", "notification-stream"])
def test_every_block_the_flags_make_is_a_valid_sse_config(template):
    mock = {"http": {"matcher": {"path": "/s"}, "response": {"statusCode": 200}}}
    apply_sse_options(mock, {"sse": True, "sse_events": ("a:1",), "sse_delay": 5,
                             "sse_template": template, "sse_repeat": 0, "sse_keepalive": 5})
    assert "response" not in mock["http"]
    HttpMock.model_validate(mock["http"])


def test_without_sse_flags_the_mock_keeps_its_response():
    mock = {"http": {"matcher": {"path": "/s"}, "response": {"statusCode": 204}}}
    apply_sse_options(mock, {"sse": False, "sse_events": (), "sse_template": None})
    assert mock["http"]["response"] == {"statusCode": 204}


def test_keepalive_below_five_seconds_is_a_usage_error():
    @click.command()
    @sse_options
    def command(**options):
        click.echo(options["sse_keepalive"])

    assert CliRunner().invoke(command, ["--sse-keepalive", "5"]).output.strip() == "5"
    refused = CliRunner().invoke(command, ["--sse-keepalive", "4"])
    assert refused.exit_code == 2 and "at least 5 seconds" in refused.output
