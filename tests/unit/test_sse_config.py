"""Config schema of streaming mocks: placement beside ``matcher`` instead of ``response``,
limits and errors naming their key (behavior notes §9; SPEC "SSE config", "Chunked config")."""
from __future__ import annotations

import pytest

from mocks.core.errors import ConfigError
from mocks.loader import validate_config
from mocks.engine.snapshot import compile_snapshot
from mocks.protocols.streaming.chunked import ChunkedAction
from mocks.protocols.streaming.sse import SseAction


def config_with(http: dict) -> dict:
    return {"version": "1.0", "mocks": [{"id": "s", "http": {"matcher": {"path": "/s"},
                                                              **http}}]}


def compiled_action(http: dict):
    snapshot = compile_snapshot(validate_config(config_with(http)))
    return snapshot.candidates[0].action


def test_sse_and_chunked_blocks_compile_to_stream_actions():
    assert isinstance(compiled_action({"sse": {"events": [{"data": "x"}]}}), SseAction)
    assert isinstance(compiled_action({"chunked": {"data": "abc"}}), ChunkedAction)


def test_sse_config_round_trips_with_camel_case_keys():
    http = {"sse": {"events": [{"type": "t", "data": {"a": 1}, "id": "1", "retry": 10,
                                "comment": "c", "delay": 5}],
                    "timing": {"initialDelay": 1, "fixedDelay": 2,
                               "randomDelay": {"min": 1, "max": 2},
                               "burst": {"count": 2, "interval": 1, "pause": 3},
                               "perEventDelays": [1]},
                    "lifecycle": {"keepaliveInterval": 5, "timeout": 2, "maxEvents": 3,
                                  "connectionTimeout": 4, "simulateDisconnect": 2,
                                  "termination": {"type": "error", "closeDelay": 10,
                                                  "finalEvent": {"type": "bye", "data": "x"}}},
                    "resume": {"enabled": True, "bufferSize": 10, "maxAge": 60}}}
    mock = validate_config(config_with(http)).mocks[0]
    assert mock.model_dump(mode="json", by_alias=True, exclude_none=True)["http"]["sse"] == \
        {**http["sse"], "templateParams": {}}


@pytest.mark.parametrize(("http", "path", "words"), [
    pytest.param({"response": {"body": "x"}, "sse": {"events": [{"data": 1}]}}, "mocks[0].http",
                 "exactly one of response, sse, chunked", id="sse beside response"),
    pytest.param({"sse": {"events": [{"data": 1}]}, "chunked": {"data": "x"}}, "mocks[0].http",
                 "also got chunked", id="sse beside chunked"),
    pytest.param({"chunked": {"data": "x"}, "statefulOperation": "op"}, "mocks[0].http",
                 "also got statefulOperation", id="chunked beside statefulOperation"),
    pytest.param({"sse": {"events": [{"data": 1}], "lifecycle": {"keepaliveInterval": 3}}},
                 "mocks[0].http.sse.lifecycle.keepaliveInterval", "at least 5 seconds",
                 id="keepalive below the 5 s minimum"),
    pytest.param({"sse": {}}, "mocks[0].http.sse", "needs events, a generator or a template",
                 id="nothing to send"),
    pytest.param({"sse": {"events": [{"type": "a\nb", "data": 1}]}},
                 "mocks[0].http.sse.events[0].type", "one line", id="event type with a newline"),
    pytest.param({"sse": {"events": [{"data": 1, "colour": "red"}]}},
                 "mocks[0].http.sse.events[0].colour", "unknown key", id="unknown key"),
    pytest.param({"sse": {"timing": {"randomDelay": {"min": 5, "max": 1}}, "events": [{}]}},
                 "mocks[0].http.sse.timing.randomDelay", "must not be larger",
                 id="random delay min above max"),
    pytest.param({"sse": {"generator": {"type": "random"}}}, "mocks[0].http.sse.generator",
                 "random.schema", id="random generator without schema"),
    pytest.param({"chunked": {"data": "x", "ndjsonItems": [1]}}, "mocks[0].http.chunked",
                 "exactly one of data, dataFile or ndjsonItems", id="two chunked sources"),
    pytest.param({"chunked": {"chunkSize": 0, "data": "x"}}, "mocks[0].http.chunked.chunkSize",
                 "greater than or equal to 1", id="chunk size 0"),
])
def test_bad_streaming_config_names_its_key(http, path, words):
    with pytest.raises(ConfigError) as raised:
        validate_config(config_with(http))
    assert raised.value.path == path
    assert words in raised.value.reason


@pytest.mark.parametrize(("http", "path"), [
    pytest.param({"sse": {"events": [{"data": {"x": "{{nope}}"}}]}},
                 "mocks[0].http.sse.events[0].data.x", id="template in event data"),
    pytest.param({"sse": {"template": "llm-chat", "templateParams": {"tokens": 3}}},
                 "mocks[0].http.sse.templateParams.tokens", id="template parameter"),
    pytest.param({"sse": {"events": [{"data": "x"}], "lifecycle": {
        "termination": {"finalEvent": {"data": "$random(9,1)"}}}}},
        "mocks[0].http.sse.lifecycle.termination.finalEvent.data", id="final event data"),
    pytest.param({"sse": {"generator": {"type": "random", "random": {"schema": {
        "v": "$random(2,1)"}}}}}, "mocks[0].http.sse.generator.random.schema.v",
        id="generator schema"),
])
def test_compile_errors_name_their_key(http, path):
    with pytest.raises(ConfigError) as raised:
        compile_snapshot(validate_config(config_with(http)))
    assert raised.value.path == path


def test_keepalive_of_zero_and_five_and_complete_termination_are_accepted():
    for seconds in (0, 5, 60):
        validate_config(config_with({"sse": {"events": [{"data": 1}],
                                             "lifecycle": {"keepaliveInterval": seconds}}}))
    mock = validate_config(config_with({"sse": {"events": [{"data": 1}], "lifecycle": {
        "termination": {"type": "complete"}}}})).mocks[0]
    assert mock.http.sse.lifecycle.termination.type == "graceful"


def test_response_beside_stateful_binding_stays_allowed():
    # The table feature's documented combination (a bound mock's status and headers).
    validate_config({"version": "1.0", "tables": [{"name": "t"}], "mocks": [
        {"id": "b", "http": {"matcher": {"path": "/t"}, "response": {"statusCode": 200},
                             "statefulBinding": {"table": "t", "action": "list"}}}]})
