"""SOAP recording on a real server: start and stop recording, envelopes (a fault among them,
SOAP 1.1 and 1.2) recorded with their answers, the ``/soap-recordings`` filters, statistics,
get, delete, clear and export, and conversion into a ``soap`` mock that, once POSTed to
``/mocks``, answers the same (SPEC "WebSocket, gRPC, MQTT and SOAP administration"; behavior
notes §1)."""
from __future__ import annotations

from xml.etree.ElementTree import canonicalize

import httpx

from tests.helpers import start_server

NS = "urn:example:calc"
SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12 = "http://www.w3.org/2003/05/soap-envelope"


def calc_config() -> dict:
    return {"version": "1.0", "mocks": [
        {"id": "calc", "type": "soap", "soap": {"path": "/soap/calc", "operations": {
            "Add": {"soapAction": f"{NS}/Add",
                    "response": f"<AddResponse xmlns='{NS}'><sum>"
                                "{{xpath '//Add/a'}}+{{xpath '//Add/b'}}</sum></AddResponse>"},
            "Divide": {"soapAction": f"{NS}/Divide",
                       "fault": {"code": "soap:Client", "string": "division by zero",
                                 "detail": "<reason>b is 0</reason>"}},
            "Ping": {"response": f"<PingResponse xmlns='{NS}'>pong</PingResponse>"}}}},
        {"id": "other", "type": "soap", "soap": {"path": "/soap/other", "operations": {
            "Ping": {"response": "<PingResponse>other</PingResponse>"}}}},
    ]}


def call(client: httpx.Client, path: str, operation: str, inner: str = "",
         version: str = "1.1") -> httpx.Response:
    """POST one envelope naming ``operation`` (with its SOAPAction for Add and Divide)."""
    namespace = SOAP12 if version == "1.2" else SOAP11
    body = (f'<s:Envelope xmlns:s="{namespace}"><s:Body><c:{operation} xmlns:c="{NS}">'
            f"{inner}</c:{operation}></s:Body></s:Envelope>")
    action = f"{NS}/{operation}" if operation in ("Add", "Divide") else ""
    if version == "1.2":
        headers = {"Content-Type": f'application/soap+xml; charset=utf-8; action="{action}"'}
    else:
        headers = {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": f'"{action}"'}
    return client.post(path, content=body, headers=headers)


def test_recording_lists_filters_and_converts_into_a_mock_that_answers_the_same(tmp_path):
    with start_server(tmp_path, calc_config()) as server, \
            httpx.Client(base_url=server.base, trust_env=False, timeout=10) as plane, \
            server.admin_client() as admin:
        assert call(plane, "/soap/calc", "Ping").status_code == 200  # before recording
        started = admin.post("/soap/calc/record/start")
        assert started.status_code == 200, started.text
        assert started.json() == {"id": "calc", "recordingEnabled": True,
                                  "message": "Recording started"}
        missing = admin.post("/soap/nope/record/start")
        assert missing.status_code == 404 and missing.json()["message"] == \
            "SOAP handler not found"
        handlers = {row["id"]: row for row in admin.get("/soap").json()["handlers"]}
        assert handlers["calc"]["recordingEnabled"] is True
        assert handlers["other"]["recordingEnabled"] is False
        assert admin.get("/soap/calc/status").json()["recordingEnabled"] is True

        answers = [call(plane, "/soap/calc", "Add", "<c:a>1</c:a><c:b>2</c:b>"),
                   call(plane, "/soap/calc", "Divide", "<c:a>1</c:a><c:b>0</c:b>"),
                   call(plane, "/soap/calc", "Add", "<c:a>5</c:a><c:b>6</c:b>", "1.2"),
                   call(plane, "/soap/calc", "Ping"),
                   call(plane, "/soap/other", "Ping")]  # another mock: not recording
        assert [answer.status_code for answer in answers] == [200, 500, 200, 200, 200]
        assert admin.post("/soap/calc/record/stop").json()["recordingEnabled"] is False
        assert call(plane, "/soap/calc", "Ping").status_code == 200  # after: not recorded
        assert admin.get("/soap/calc/status").json()["recordingEnabled"] is False

        listing = admin.get("/soap-recordings").json()
        assert listing["total"] == 4 and listing["limit"] == 100 and listing["offset"] == 0
        rows = listing["recordings"]
        assert [row["operation"] for row in rows] == ["Add", "Divide", "Add", "Ping"]
        assert [row["responseBody"] for row in rows] == [answer.text for answer in answers[:4]]
        first = rows[0]
        assert {key: first[key] for key in ("endpoint", "path", "soapAction", "soapVersion",
                                            "statusCode", "fault")} == {
            "endpoint": "calc", "path": "/soap/calc", "soapAction": f"{NS}/Add",
            "soapVersion": "1.1", "statusCode": 200, "fault": False}
        assert "<c:a>1</c:a>" in first["requestBody"] and "<sum>1+2</sum>" in \
            first["responseBody"]
        assert first["durationMs"] >= 0 and first["timestamp"] > 0
        assert first["id"].startswith("soaprec_")
        assert rows[2]["soapVersion"] == "1.2" and rows[1]["fault"] is True
        assert rows[1]["statusCode"] == 500

        def ids(**query):
            found = admin.get("/soap-recordings", params=query)
            assert found.status_code == 200, found.text
            return [row["id"] for row in found.json()["recordings"]]

        assert ids(operation="Add") == [rows[0]["id"], rows[2]["id"]]
        assert ids(soapAction=f"{NS}/Divide") == [rows[1]["id"]]
        assert ids(hasFault="true") == [rows[1]["id"]]
        assert ids(hasFault="false", endpoint="calc") == [rows[0]["id"], rows[2]["id"],
                                                          rows[3]["id"]]
        assert ids(endpoint="other") == []
        assert ids(limit=2, offset=1) == [rows[1]["id"], rows[2]["id"]]
        for bad in ({"hasFault": "maybe"}, {"limit": "0"}, {"limit": "x"}, {"offset": "-1"}):
            answer = admin.get("/soap-recordings", params=bad)
            assert answer.status_code == 400 and answer.json()["error"] == "validation_error"

        stats = admin.get("/soap-recordings/stats").json()
        assert stats["total"] == 4 and stats["faults"] == 1 and stats["dropped"] == 0
        assert stats["byOperation"] == {"Add": 2, "Divide": 1, "Ping": 1}
        assert stats["byEndpoint"] == {"calc": 4} and stats["recordingEndpoints"] == []
        exported = admin.post("/soap-recordings/export").json()
        assert exported["version"] == "1.0" and exported["count"] == 4
        assert exported["recordings"] == rows
        assert admin.get(f"/soap-recordings/{first['id']}").json() == first
        unknown = admin.get("/soap-recordings/nope")
        assert unknown.status_code == 404 and unknown.json()["message"] == \
            "SOAP recording not found"

        one = admin.post(f"/soap-recordings/{rows[1]['id']}/convert",
                         json={"preserveFaults": True})
        assert one.status_code == 200, one.text
        assert one.json()["mock"]["soap"]["operations"] == {"Divide": {
            "soapAction": f"{NS}/Divide", "fault": {
                "code": "soap:Client", "string": "division by zero",
                "detail": "<reason>b is 0</reason>"}}}
        no_fault = admin.post(f"/soap-recordings/{rows[1]['id']}/convert")
        assert no_fault.status_code == 400 and no_fault.json()["error"] == "no_recordings"
        assert admin.post("/soap-recordings/nope/convert").status_code == 404
        bad = admin.post("/soap-recordings/convert", json={"includeDelay": "yes"})
        assert bad.status_code == 400 and bad.json()["error"] == "validation_error"

        converted = admin.post("/soap-recordings/convert", json={
            "endpoint": "calc", "deduplicate": True, "includeDelay": True,
            "preserveFaults": True})
        assert converted.status_code == 200, converted.text
        result = converted.json()
        assert result["recordingCount"] == 3 and result["operationCount"] == 3
        assert result["skipped"] == 1  # the second Add
        mock = result["mock"]
        assert mock["type"] == "soap" and mock["soap"]["path"] == "/soap/calc"
        operations = mock["soap"]["operations"]
        assert list(operations) == ["Add", "Divide", "Ping"]
        assert operations["Add"]["soapAction"] == f"{NS}/Add"
        assert "<sum>1+2</sum>" in operations["Add"]["response"]
        assert isinstance(operations["Add"]["delay"], int)

        mock["soap"]["path"] = "/soap/replay"
        for operation in operations.values():
            operation["delay"] = 0
        posted = admin.post("/mocks", json=mock)
        assert posted.status_code == 201, posted.text
        replay = [call(plane, "/soap/replay", "Add", "<c:a>9</c:a><c:b>9</c:b>"),
                  call(plane, "/soap/replay", "Divide", "<c:a>1</c:a><c:b>0</c:b>"),
                  call(plane, "/soap/replay", "Ping")]
        assert [answer.status_code for answer in replay] == [200, 500, 200]
        assert "<sum>1+2</sum>" in replay[0].text  # the recorded answer, not a new sum
        for again, recorded in zip(replay, (rows[0], rows[1], rows[3])):
            assert canonicalize(again.text) == canonicalize(recorded["responseBody"])

        deleted = admin.delete(f"/soap-recordings/{first['id']}")
        assert deleted.json() == {"message": "Recording deleted", "id": first["id"]}
        assert admin.get(f"/soap-recordings/{first['id']}").status_code == 404
        assert admin.delete(f"/soap-recordings/{first['id']}").status_code == 404
        assert admin.delete("/soap-recordings").json() == {"deleted": 3}
        assert admin.get("/soap-recordings").json()["total"] == 0

