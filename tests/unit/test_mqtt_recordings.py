"""MQTT recordings without a broker: the bounded store, filters, statistics, conversion into
an ``mqtt`` mock config, and the ``/mqtt-recordings`` routes of the engine-control port
(behavior notes §1; SPEC "WebSocket, gRPC, MQTT and SOAP administration")."""
from __future__ import annotations

from types import SimpleNamespace

import orjson
import pytest

from mocks.protocols.mqtt.broker import hub_of
from mocks.protocols.mqtt.config import MqttMock
from mocks.protocols.mqtt.control import route_mqtt
from mocks.protocols.mqtt.recordings import RecordingQueryError, convert, select
from recordings.store import KindRecordings, RecordingStore, installed
from tests.unit.control_routes import route_caller


@pytest.fixture(autouse=True)
def fresh_store():
    """Each test on its own in-memory recording store (the hubs use the process-wide one)."""
    with installed(RecordingStore()) as mine:
        yield mine


def entry(n: int, topic: str, payload: str = "p", *, client: str = "c1",
          direction: str = "publish", qos: int = 0, retain: bool = False) -> dict:
    return {"id": f"r{n}", "brokerId": "b", "port": 1883, "topic": topic, "payload": payload,
            "qos": qos, "retain": retain, "clientId": client, "direction": direction,
            "timestamp": 100.0 + n / 10}


def store_of(*entries: dict) -> KindRecordings:
    store = KindRecordings("mqtt")
    for item in entries:
        store.add(item)
    return store


def test_the_store_drops_the_oldest_beyond_its_count_and_byte_bounds():
    one = len(orjson.dumps({**entry(0, "t"), "sessionId": None}))
    store = KindRecordings("mqtt", max_entries=2, max_bytes=one * 2 + 10)
    for n in range(3):
        store.add(entry(n, "t"))
    assert [item["id"] for item in store.entries] == ["r1", "r2"] and store.dropped == 1
    store.add(entry(3, "t", "p" * one))
    assert [item["id"] for item in store.entries] == ["r3"] and store.dropped == 3
    assert store.bytes == len(orjson.dumps({**store.entries[0], "sessionId": None}))
    store.add(entry(4, "t", "p" * (one * 3)))  # larger than the bound alone: not kept
    assert [item["id"] for item in store.entries] == [] and store.dropped == 5


def test_filters_match_wildcards_client_direction_and_page():
    entries = store_of(entry(1, "s/a/t"), entry(2, "s/b/t", client="c2"),
                       entry(3, "s/#", direction="subscribe"), entry(4, "x/y")).entries
    assert [r["id"] for r in select(entries, {"topicPattern": "s/+/t"})["recordings"]] == [
        "r1", "r2"]
    assert select(entries, {"topicPattern": "#"})["total"] == 4
    assert [r["id"] for r in select(entries, {"clientId": "c2"})["recordings"]] == ["r2"]
    assert select(entries, {"direction": "subscribe"})["recordings"][0]["topic"] == "s/#"
    page = select(entries, {"limit": "2", "offset": "1"})
    assert [r["id"] for r in page["recordings"]] == ["r2", "r3"] and page["total"] == 4
    assert "_size" not in page["recordings"][0]
    for bad in ({"topicPattern": "s/#/t"}, {"direction": "both"}, {"limit": "0"},
                {"offset": "x"}):
        with pytest.raises(RecordingQueryError):
            select(entries, bad)


def test_convert_groups_by_topic_keeps_spacing_and_honours_the_options():
    entries = [entry(0, "a", "1", qos=1), entry(1, "b", "2", retain=True),
               entry(2, "a", "1", qos=2), entry(3, "a", "3"),
               entry(4, "a", direction="subscribe"), {**entry(5, "a"), "payloadBase64": "AA=="}]
    result = convert(entries, deduplicate=True)
    assert result["recordingCount"] == 3 and result["skipped"] == 2
    assert result["mock"]["mqtt"] == {"port": 1883, "topics": [
        {"topic": "a", "qos": 1, "messages": [{"payload": "1", "delay": 0},
                                              {"payload": "3", "delay": 300}]},
        {"topic": "b", "qos": 0, "retain": True, "messages": [{"payload": "2", "delay": 100}]}]}
    plain = convert(entries, include_qos=False, include_retain=False, port=2000,
                    recording_ids=["r1", "r2"])
    assert plain["mock"]["mqtt"] == {"port": 2000, "topics": [
        {"topic": "b", "messages": [{"payload": "2", "delay": 0}]},
        {"topic": "a", "messages": [{"payload": "1", "delay": 100}]}]}
    MqttMock.model_validate(result["mock"]["mqtt"])  # a valid mqtt config
    with pytest.raises(LookupError):
        convert(entries, topic_pattern="z/#")


def test_engine_control_routes_record_list_convert_and_clear():
    shared: dict = {}
    hub = hub_of(shared)
    for item in (entry(1, "s/t", "7"), entry(2, "s/u", "8")):
        hub.recordings.add(item)
    service = SimpleNamespace(port=1883, name="mqtt:1883", broker_id="b",
                              table=SimpleNamespace(mock_ids=("b",)))
    control = SimpleNamespace(engine=SimpleNamespace(shared_state=shared,
                                                     snapshot=SimpleNamespace(services={})))
    call = route_caller(route_mqtt, control)

    assert call("POST", "/mqtt/b/record/start")[0] == 404
    control.engine.snapshot.services = {"mqtt:1883": _as_service(service)}
    assert call("POST", "/mqtt/b/record/start") == (200, {
        "id": "b", "recordingEnabled": True, "message": "Recording started"})
    assert hub.recording == {"b"}
    assert call("GET", "/mqtt-recordings", {"topicPattern": "s/+"})[1]["total"] == 2
    assert call("GET", "/mqtt-recordings", {"topicPattern": "s/#/x"})[0] == 400
    assert call("GET", "/mqtt-recordings/r1")[1]["payload"] == "7"
    assert call("GET", "/mqtt-recordings/nope")[0] == 404
    assert call("GET", "/mqtt-recordings/stats")[1]["total"] == 2
    assert call("POST", "/mqtt-recordings/export")[1]["count"] == 2
    status, converted = call("POST", "/mqtt-recordings/convert",
                             body=orjson.dumps({"recordingIds": ["r2"]}))
    assert status == 200 and converted["mock"]["mqtt"]["topics"][0]["topic"] == "s/u"
    assert call("POST", "/mqtt-recordings/r1/convert")[1]["recordingCount"] == 1
    assert call("POST", "/mqtt-recordings/convert", body=b"{")[0] == 400
    assert call("POST", "/mqtt-recordings/convert",
                body=b'{"deduplicate": "yes"}')[1]["error"] == "validation_error"
    assert call("DELETE", "/mqtt-recordings/r1")[0] == 200
    assert call("DELETE", "/mqtt-recordings") == (200, {"deleted": 1})
    assert call("POST", "/mqtt-recordings/convert")[1]["error"] == "no_recordings"
    assert call("PUT", "/mqtt-recordings")[0] == 405
    assert call("POST", "/mqtt/b/record/stop")[1]["recordingEnabled"] is False


def _as_service(fake):
    """A fake that passes ``isinstance(..., MqttPortService)``."""
    from mocks.protocols.mqtt.broker import MqttPortService

    made = MqttPortService.__new__(MqttPortService)
    made.__dict__.update(vars(fake))
    return made
