"""Stream recordings -> mock configs (recordings/convert.py): the configs validate as mocks,
delays are the recorded gaps, clamped and rounded; bad options name the key.

Source: SPEC "Stream recordings" (convert options); behavior notes §9, §10.
"""
from __future__ import annotations

import pytest

from mocks.config import Mock
from recordings.convert import ConvertError, convert


def frame(direction, kind, data, at):
    return {"direction": direction, "type": kind, "data": data, "relativeMs": at}


WS = {"id": "rec_1", "name": "chat", "protocol": "websocket", "metadata": {"path": "/ws"},
      "websocket": {"subprotocol": "v1", "frames": [
          frame("c2s", "text", "hello", 10.0), frame("s2c", "text", "hi {{x}}", 12.4),
          frame("c2s", "ping", "", 20.0), frame("c2s", "binary", "AAE=", 500.0),
          frame("s2c", "binary", "AQI=", 1749.0), frame("s2c", "close", "", 1800.0)]}}
SSE = {"id": "rec_2", "name": "ticker", "protocol": "sse", "metadata": {"path": "/t"},
       "sse": {"events": [{"type": "message", "data": "a", "id": None, "relativeMs": 40.0},
                          {"type": "update", "data": "b", "id": "2", "relativeMs": 1290.0}]}}


def test_websocket_recording_becomes_a_scenario_mock():
    mock = convert(WS)
    Mock.model_validate(mock)
    steps = mock["websocket"]["scenario"]["steps"]
    assert [s["type"] for s in steps] == ["expect", "send", "expect", "send"]
    assert steps[0]["match"] == {"type": "exact", "value": "hello"}
    assert steps[1]["message"] == {"type": "text", "value": "hi \\{{x}}", "delay": 2}
    assert steps[2]["match"]["messageType"] == "binary"
    assert steps[3]["message"] == {"type": "binary", "value": "AQI=", "delay": 1249}
    assert mock["websocket"]["subprotocols"] == ["v1"]


def test_sse_recording_becomes_an_sse_mock():
    mock = convert(SSE, {"simplifyTiming": True})
    Mock.model_validate(mock)
    assert mock["http"]["matcher"] == {"method": "GET", "path": "/t"}
    assert mock["http"]["sse"]["events"] == [{"data": "a", "delay": 0},
                                             {"type": "update", "data": "b", "id": "2",
                                              "delay": 1300}]


def test_delays_are_clamped():
    events = convert(SSE, {"minDelay": 100, "maxDelay": 500})["http"]["sse"]["events"]
    assert [e["delay"] for e in events] == [100, 500]


@pytest.mark.parametrize("options, key", [
    pytest.param({"minDelay": -1}, "minDelay", id="negative"),
    pytest.param({"maxDelay": "5"}, "maxDelay", id="text"),
    pytest.param({"minDelay": 10, "maxDelay": 5}, "minDelay", id="crossed"),
    pytest.param({"simplifyTiming": "yes"}, "simplifyTiming", id="not a bool"),
    pytest.param({"speed": 2}, "speed", id="unknown"),
])
def test_bad_options_name_the_key(options, key):
    with pytest.raises(ConvertError, match=key):
        convert(SSE, options)


def test_a_recording_without_frames_is_refused():
    with pytest.raises(ConvertError, match="no text or binary frames"):
        convert({**WS, "websocket": {"frames": [frame("c2s", "ping", "", 1.0)]}})
