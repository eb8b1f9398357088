"""``docs/websocket.md`` means what it says: its chat example and its scenario example load
as written into a real ``mockd engine`` and answer exactly as the page describes."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.helpers import start_engine

pytestmark = pytest.mark.integration

DOC = Path(__file__).resolve().parents[2] / "docs" / "websocket.md"
YAML_BLOCKS = re.findall(r"^```yaml\n(.*?)^```", DOC.read_text(), re.MULTILINE | re.DOTALL)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    chat = yaml.safe_load(YAML_BLOCKS[0])
    trading = yaml.safe_load(YAML_BLOCKS[1])  # a list item, as it would sit under mocks:
    config = {**chat, "mocks": chat["mocks"] + trading}
    with start_engine(tmp_path_factory.mktemp("docs-ws"), config) as process:
        process.ws = process.base.replace("http://", "ws://")
        yield process


def test_chat_example_answers_as_documented(engine):
    with connect(engine.ws + "/ws/chat/lobby?nick=ann", open_timeout=10) as ws:
        ws.send("ping")
        assert ws.recv(timeout=5) == "pong"
        ws.send(json.dumps({"type": "join", "user": {"name": "Ann"}}))
        assert json.loads(ws.recv(timeout=5)) == {"event": "joined", "user": "Ann",
                                                  "room": "lobby"}
        ws.send("Bye!")
        assert ws.recv(timeout=5) == "see you, ann"
        ws.send("more spam")
        with pytest.raises(TimeoutError):
            ws.recv(timeout=0.5)
        ws.send("img:logo")
        assert ws.recv(timeout=5) == b"\x89PNG\r\n\x1a\n"
        ws.send("dance")
        assert ws.recv(timeout=5) == "unknown command: dance"


def test_scenario_example_runs_and_closes_on_an_unexpected_message(engine):
    with connect(engine.ws + "/ws/trading", open_timeout=10) as ws:
        assert json.loads(ws.recv(timeout=5))["event"] == "welcome"
        ws.send(json.dumps({"action": "subscribe"}))
        assert json.loads(ws.recv(timeout=5)) == {"event": "subscribed"}
        tick = json.loads(ws.recv(timeout=5))
        assert tick["symbol"] == "ACME" and 90 <= float(tick["price"]) <= 110
    with connect(engine.ws + "/ws/trading", open_timeout=10) as ws:
        ws.recv(timeout=5)
        ws.send("hello?")
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd.code == 1008
        assert closed.value.rcvd.reason == "scenario: unexpected message"
