"""WebSocket mock configs: every bad input is a config error naming its key; durations in
every accepted form; templates and matchers compiled once with the snapshot."""
from __future__ import annotations

import pytest

from mocks.core.durations import parse_duration_ms, parse_duration_range_ms
from mocks.core.errors import ConfigError
from mocks.engine.snapshot import compile_snapshot
from mocks.loader import validate_config
from tests.helpers import make_config


def websocket(**block):
    return {"id": "w", "type": "websocket", "websocket": {"path": "/ws", **block}}


def compile_one(mock):
    return compile_snapshot(validate_config(make_config(mock)))


def error_of(mock) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        compile_one(mock)
    return raised.value


@pytest.mark.parametrize(("block", "key", "reason"), [
    ({"matchers": [{"match": {"type": "regex", "value": "(oops"}, "noResponse": True}]},
     "mocks[0].websocket.matchers[0].match.value", "bad regex"),
    ({"matchers": [{"match": {"type": "starts", "value": "a"}, "noResponse": True}]},
     "mocks[0].websocket.matchers[0].match.type", "exact"),
    ({"matchers": [{"match": {"type": "json", "path": "$..[", "value": 1},
                    "noResponse": True}]},
     "mocks[0].websocket.matchers[0].match.path", "invalid JSONPath"),
    ({"matchers": [{"match": {"type": "exact", "value": "a"}}]},
     "mocks[0].websocket.matchers[0]", "give a response or noResponse: true"),
    ({"matchers": [{"match": {"type": "exact", "value": "a"},
                    "response": {"type": "binary", "value": "not base64!"}}]},
     "mocks[0].websocket.matchers[0].response", "standard base64"),
    ({"matchers": [{"match": {"type": "exact", "value": "a"},
                    "response": {"type": "text", "value": "{{request.nope}}"}}]},
     "mocks[0].websocket.matchers[0].response.value", "unknown request field"),
    ({"defaultResponse": {"type": "text", "value": "x", "delay": "soon"}},
     "mocks[0].websocket.defaultResponse.delay", "expected a duration"),
    ({"scenario": {"steps": [{"type": "expect"}]}},
     "mocks[0].websocket.scenario.steps[0]", "an expect step needs match"),
    ({"heartbeat": {"interval": "10ms"}},
     "mocks[0].websocket.heartbeat.interval", "at least 100ms"),
    ({"maxMessageSize": 0}, "mocks[0].websocket.maxMessageSize", "greater than or equal to 1"),
    ({"requireSubprotocol": True}, "mocks[0].websocket", "needs a subprotocols list"),
    ({"echo": True}, "mocks[0].websocket.echo", "unknown key"),
])
def test_bad_websocket_config_names_the_key(block, key, reason):
    error = error_of(websocket(**block))
    assert error.path == key, str(error)
    assert reason in str(error)


def test_path_must_be_absolute_and_json_match_needs_something():
    assert error_of({"id": "w", "type": "websocket",
                     "websocket": {"path": "ws"}}).path == "mocks[0].websocket.path"
    error = error_of(websocket(matchers=[{"match": {"type": "json"}, "noResponse": True}]))
    assert "type json needs a value, a path, or both" in str(error)


@pytest.mark.parametrize(("text", "ms"), [(250, 250), ("250", 250), ("400ms", 400),
                                          ("5s", 5000), ("1.5s", 1500), ("2m", 120000),
                                          ("1h", 3600000), (" 7 ms ", 7)])
def test_durations_in_every_form_are_milliseconds(text, ms):
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("bad", [-1, "fast", "5 days", True, None, "25h"])
def test_bad_durations_are_refused(bad):
    with pytest.raises(ValueError):
        parse_duration_ms(bad)


def test_duration_ranges():
    assert parse_duration_range_ms("100ms-500ms") == (100, 500)
    assert parse_duration_range_ms("2s") == (2000, 2000)
    assert parse_duration_range_ms([1, 2]) == (1, 2)
    with pytest.raises(ValueError):
        parse_duration_range_ms("5s-1s")


def test_a_websocket_mock_compiles_into_one_route_with_its_path_pattern():
    snapshot = compile_one(websocket(path="/ws/{room}", echoMode=True))
    [route] = snapshot.websocket_routes.values()
    assert route.mock_id == "w" and route.pattern.fullmatch("/ws/lobby")
    assert not route.pattern.fullmatch("/ws/a/b")
