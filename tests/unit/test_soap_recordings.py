"""SOAP recordings without a server: the capture bounded by the store, filters, conversion of
SOAP 1.1 and 1.2 answers and faults, and the ``/soap`` recording and ``/soap-recordings``
routes of the engine-control port (behavior notes §1)."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import orjson
import pytest

from mocks.core.recordings import RecordingQueryError
from mocks.protocols.soap.config import SoapMock
from mocks.protocols.soap.control import route_soap
from mocks.protocols.soap.envelope import Fault, envelope, fault_body
from mocks.protocols.soap.recordings import SoapHub, convert, hub_of, recording_send, select
from recordings.store import KindRecordings, RecordingStore, installed
from tests.unit.control_routes import route_caller


@pytest.fixture(autouse=True)
def fresh_store():
    """Each test on its own in-memory recording store (the hubs use the process-wide one)."""
    with installed(RecordingStore()) as mine:
        yield mine


def captured(hub: SoapHub, body: bytes, status: int = 200, operation: str = "Op",
             version: str = "1.1") -> None:
    """Send one answer through :func:`recording_send`."""
    sent: list = []

    async def send(message):
        sent.append(message)

    async def run():
        wrapper = recording_send(hub, "m", "/soap", SimpleNamespace(body=b"<req/>"), send, {
            "soapAction": f"urn:{operation}", "soapVersion": version,
            "soapOperation": operation})
        await wrapper({"type": "http.response.start", "status": status, "headers": []})
        await wrapper({"type": "http.response.body", "body": body})

    asyncio.run(run())
    assert [message["type"] for message in sent] == ["http.response.start",
                                                     "http.response.body"]


def test_capture_is_bounded_by_count_and_bytes_oldest_first(fresh_store):
    hub = SoapHub(recordings=KindRecordings("soap", max_entries=3, max_bytes=100_000))
    for index in range(5):
        captured(hub, envelope("1.1", f"<R>{index}</R>".encode()))
    store = hub.recordings
    assert len(store.entries) == 3 and store.dropped == 2
    assert [f"<R>{index}</R>" in entry["responseBody"]
            for index, entry in zip((2, 3, 4), store.entries)] == [True] * 3
    assert store.bytes == fresh_store.stats("soap")["bytes"] > 0
    assert "sessionId" not in store.entries[0]
    small = SoapHub(recordings=KindRecordings("soap", max_entries=100, max_bytes=1_500,
                                              store=RecordingStore()))
    for index in range(10):
        captured(small, envelope("1.1", f"<R>{index}</R>".encode()))
    assert small.recordings.bytes <= 1_500 and small.recordings.dropped > 0
    assert len(small.recordings.entries) + small.recordings.dropped == 10
    assert fresh_store.stats("soap")["count"] == 3  # the other store is apart


def test_select_filters_and_rejects_bad_values():
    hub = SoapHub()
    captured(hub, envelope("1.1", b"<A/>"), operation="A")
    captured(hub, fault_body(Fault("soap:Server", "boom"), "1.1"), 500, operation="B")
    entries = hub.recordings.entries
    assert select(entries, {"hasFault": "TRUE"})["total"] == 1
    assert select(entries, {"operation": "A", "soapAction": "urn:A"})["total"] == 1
    assert select(entries, {"endpoint": "x"})["total"] == 0
    assert "_size" not in select(entries, {})["recordings"][0]
    for bad in ({"hasFault": "1"}, {"limit": "10001"}, {"offset": "a"}):
        with pytest.raises(RecordingQueryError):
            select(entries, bad)


def test_convert_keeps_faults_of_both_versions_and_skips_what_it_cannot_serve():
    hub = SoapHub()
    captured(hub, fault_body(Fault("urn:x:Quota", "over", "<n>3</n>"), "1.2"), 500,
             operation="A", version="1.2")
    captured(hub, fault_body(Fault("soap:Client", "bad"), "1.1"), 500, operation="B")
    captured(hub, b"not xml", operation="C")
    captured(hub, envelope("1.1", b'<x:R xmlns:x="urn:r"><x:v>1</x:v></x:R>'), operation="D")
    entries = list(hub.recordings.entries)
    result = convert(entries, preserve_faults=True, path="/replay", name="R")
    operations = result["mock"]["soap"]["operations"]
    assert operations["A"]["fault"] == {"code": "urn:x:Quota", "string": "over",
                                        "detail": "<n>3</n>"}
    assert operations["B"]["fault"] == {"code": "soap:Client", "string": "bad"}
    assert operations["D"]["response"] == '<x:R xmlns:x="urn:r"><x:v>1</x:v></x:R>'
    assert "delay" not in operations["D"] and result["skipped"] == 1  # C
    assert result["mock"]["soap"]["path"] == "/replay" and result["mock"]["name"] == "R"
    SoapMock.model_validate(result["mock"]["soap"])  # a valid soap config
    assert list(convert(entries)["mock"]["soap"]["operations"]) == ["D"]
    with pytest.raises(LookupError):
        convert(entries, operation="C")


def test_engine_control_routes_record_list_convert_and_clear():
    shared: dict = {}
    hub = hub_of(shared)
    captured(hub, envelope("1.1", b"<A/>"), operation="A")
    captured(hub, envelope("1.1", b"<B/>"), operation="B")
    first = hub.recordings.entries[0]["id"]
    mock = SimpleNamespace(id="m", type="soap", name="", enabled=True,
                           soap=SimpleNamespace(path="/soap", operations={"A": None}))
    control = SimpleNamespace(engine=SimpleNamespace(
        shared_state=shared, snapshot=SimpleNamespace(mocks=[], routed={})))
    call = route_caller(route_soap, control)

    assert call("POST", "/soap/m/record/start")[0] == 404
    control.engine.snapshot.mocks = [mock]
    assert call("POST", "/soap/m/record/start") == (200, {
        "id": "m", "recordingEnabled": True, "message": "Recording started"})
    assert hub.recording == {"m"}
    assert call("GET", "/soap")[1]["handlers"][0]["recordingEnabled"] is True
    assert call("GET", "/soap-recordings", {"operation": "B"})[1]["total"] == 1
    assert call("GET", "/soap-recordings", {"hasFault": "no"})[0] == 400
    assert call("GET", f"/soap-recordings/{first}")[1]["operation"] == "A"
    assert call("GET", "/soap-recordings/nope") == (404, {
        "error": "not_found", "message": "SOAP recording not found"})
    assert call("GET", "/soap-recordings/stats")[1]["byOperation"] == {"A": 1, "B": 1}
    assert call("POST", "/soap-recordings/export")[1]["count"] == 2
    status, converted = call("POST", "/soap-recordings/convert",
                             body=orjson.dumps({"operation": "B"}))
    assert status == 200 and list(converted["mock"]["soap"]["operations"]) == ["B"]
    assert call("POST", f"/soap-recordings/{first}/convert")[1]["recordingCount"] == 1
    assert call("POST", "/soap-recordings/convert", body=b"{")[0] == 400
    assert call("POST", "/soap-recordings/convert",
                body=b'{"path": "no-slash"}')[1]["error"] == "validation_error"
    assert call("DELETE", f"/soap-recordings/{first}")[0] == 200
    assert call("DELETE", "/soap-recordings") == (200, {"deleted": 1})
    assert call("POST", "/soap-recordings/convert")[1]["error"] == "no_recordings"
    assert call("PUT", "/soap-recordings")[0] == 405
    assert call("GET", "/soap/m/record/start")[0] == 405
    assert call("POST", "/soap/m/record/stop")[1]["recordingEnabled"] is False
    assert asyncio.run(route_soap(control, "GET", "/mqtt", {}, None, None)) is False
