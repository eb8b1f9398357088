"""Sessions and HTTP recordings on a real ``mockd start``: traffic recorded through the
recording proxy from a loopback upstream, listed, filtered, exported (JSON and YAML),
converted into mocks that answer as the upstream did, deleted; the 400 and 404 answers.

Source: SPEC "Proxy, CA and recordings"; behavior notes §1 "Proxy, CA, sessions,
recordings".
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import yaml

from tests.helpers import free_port, start_server

pytestmark = pytest.mark.integration


class Origin(BaseHTTPRequestHandler):
    """The upstream: ``GET /users/{n}`` a JSON user, ``POST /users`` 201 echoing the body,
    anything else 404 text."""

    def log_message(self, *args):  # quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Set-Cookie", "sid=secret-cookie")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - http.server's name
        if self.path.startswith("/users/"):
            number = self.path.rsplit("/", 1)[1]
            self._send(200, json.dumps({"id": int(number), "name": f"user {number}"}).encode(),
                       "application/json")
        else:
            self._send(404, b"no such page", "text/plain")

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self._send(201, json.dumps({"id": 99, **body}).encode(), "application/json")


@pytest.fixture(scope="module")
def origin():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("recordings")) as process:
        yield process


def record_through_proxy(server, origin: str, session_name: str,
                         paths: tuple[str, ...], post: bool = False):
    """Start the proxy (record mode, session ``session_name``), GET each path of ``origin``
    through it (and POST ``/users`` with ``post``), stop it; answers the session id and the
    upstream's answers by path (``"POST /users"`` for the post)."""
    port = free_port()
    with server.admin_client() as admin:
        started = admin.post("/proxy/start", json={"port": port, "mode": "record",
                                                   "sessionName": session_name})
        assert started.status_code == 200, started.text
        answers = {}
        with httpx.Client(proxy=f"http://127.0.0.1:{port}", trust_env=False,
                          timeout=10) as client:
            for path in paths:
                answers[path] = client.get(origin + path,
                                           headers={"Authorization": "Bearer hidden"})
            if post:
                answers["POST /users"] = client.post(origin + "/users", json={"name": "ann"})
        assert admin.post("/proxy/stop").status_code == 200
    return started.json()["sessionId"], answers


@pytest.fixture(scope="module")
def recorded(server, origin):
    """Five exchanges recorded through the proxy in session ``shop``."""
    return record_through_proxy(server, origin, "shop",
                                ("/users/1", "/users/2", "/users/1", "/missing"), post=True)


def test_sessions_create_list_get_and_delete(admin):
    created = admin.post("/sessions", json={"name": "manual", "filters": {
        "includePaths": ["/api/*"]}})
    assert created.status_code == 201, created.text
    session = created.json()
    assert set(session) == {"id", "name", "startTime", "recordingCount", "filters"}
    assert session["name"] == "manual" and session["recordingCount"] == 0
    assert session["startTime"].endswith("Z")
    listed = {row["id"]: row for row in admin.get("/sessions").json()}
    assert listed[session["id"]]["name"] == "manual"
    assert "filters" not in listed[session["id"]]
    one = admin.get(f"/sessions/{session['id']}").json()
    assert one["filters"] == {"includePaths": ["/api/*"]} and one["recordings"] == []
    assert admin.delete(f"/sessions/{session['id']}").status_code == 204
    missing = admin.get(f"/sessions/{session['id']}")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    assert admin.delete(f"/sessions/{session['id']}").status_code == 404
    assert admin.post("/sessions", json={}).json()["error"] == "validation_error"
    assert admin.post("/sessions", json={"name": "x", "filters": []}).status_code == 400
    assert admin.post("/sessions", content=b"{").json()["error"] == "invalid_json"


def test_bad_queries_and_bodies_are_400_and_unknown_ids_404(admin):
    for query in ({"limit": "0"}, {"limit": "10001"}, {"offset": "-1"}, {"limit": "x"}):
        answer = admin.get("/recordings", params=query)
        assert answer.status_code == 400 and answer.json()["error"] == "validation_error"
        assert next(iter(query)) in answer.json()["message"]
    for path in ("/recordings/rec_nope",):
        assert admin.get(path).json() == {"error": "not_found",
                                          "message": "Recording not found"}
        assert admin.delete(path).status_code == 404
    assert admin.post("/recordings/rec_nope/to-mock").status_code == 404
    assert admin.post("/recordings/sessions/sess_nope/to-mocks").status_code == 404
    bad = admin.post("/recordings/convert", json={"deduplicate": "yes"})
    assert bad.status_code == 400 and "deduplicate" in bad.json()["message"]
    assert admin.post("/recordings/convert", json={"recordingIds": "a"}).status_code == 400
    assert admin.post("/recordings/export", json={"format": "xml"}).status_code == 400
    none = admin.post("/recordings/convert", json={"recordingIds": ["rec_nope"]})
    assert none.status_code == 400 and none.json()["error"] == "no_recordings"


def test_recorded_traffic_is_listed_filtered_and_redacted(admin, recorded):
    session_id, _ = recorded
    listing = admin.get("/recordings", params={"session": session_id}).json()
    assert listing["total"] == 5 and listing["limit"] == 100 and listing["offset"] == 0
    first = listing["recordings"][0]
    assert first["sessionId"] == session_id and first["request"]["method"] == "GET"
    assert first["request"]["path"] == "/users/1"
    assert first["response"]["statusCode"] == 200 and first["duration"] > 0
    headers = {name.lower(): values for name, values in first["request"]["headers"].items()}
    assert "hidden" not in json.dumps(headers)
    assert "secret-cookie" not in json.dumps(first["response"]["headers"])
    assert admin.get("/recordings", params={"sessionId": session_id, "method": "post"}
                     ).json()["total"] == 1
    assert admin.get("/recordings", params={"path": "/users/1"}).json()["total"] == 2
    assert admin.get("/recordings", params={"path": "/users/*"}).json()["total"] == 3
    page = admin.get("/recordings", params={"limit": 2, "offset": 4}).json()
    assert page["total"] == 5 and len(page["recordings"]) == 1
    assert admin.get(f"/recordings/{first['id']}").json() == first
    sessions = {row["id"]: row for row in admin.get("/sessions").json()}
    assert sessions[session_id]["recordingCount"] == 5 and sessions[session_id]["name"] == "shop"
    assert len(admin.get(f"/sessions/{session_id}").json()["recordings"]) == 5


def test_export_json_and_yaml(admin, recorded):
    session_id, _ = recorded
    exported = admin.post("/recordings/export", json={"sessionId": session_id}).json()
    assert exported["version"] == "1.0" and exported["count"] == 5
    assert exported["exportedAt"].endswith("Z")
    as_yaml = admin.post("/recordings/export", json={"format": "yaml",
                                                      "sessionId": session_id})
    assert as_yaml.headers["content-type"].startswith("application/x-yaml")
    assert yaml.safe_load(as_yaml.text)["recordings"] == exported["recordings"]
    chosen = [exported["recordings"][1]["id"]]
    assert admin.post("/recordings/export", json={"recordingIds": chosen}).json()["count"] == 1


def test_converted_mocks_answer_as_the_upstream_did(admin, data, recorded):
    session_id, answers = recorded
    preview = admin.post("/recordings/convert", json={"sessionId": session_id,
                                                      "create": False})
    assert preview.status_code == 200, preview.text
    assert preview.json()["config"]["version"] == "1.0"
    assert preview.json()["count"] == len(preview.json()["config"]["mocks"])
    before = {row["id"] for row in admin.get("/mocks").json()["mocks"]}
    assert not before & {mock["id"] for mock in preview.json()["config"]["mocks"]}
    converted = admin.post(f"/recordings/sessions/{session_id}/to-mocks", json={})
    assert converted.status_code == 200, converted.text
    mock_ids = converted.json()["mockIds"]
    assert converted.json()["count"] == len(mock_ids) > 0
    stored = {row["id"] for row in admin.get("/mocks").json()["mocks"]}
    assert set(mock_ids) <= stored
    for path in ("/users/1", "/users/2", "/missing"):
        served = data.get(path)
        recorded_answer = answers[path]
        assert served.status_code == recorded_answer.status_code, path
        assert served.headers["content-type"] == recorded_answer.headers["content-type"]
        if "json" in recorded_answer.headers["content-type"]:
            assert served.json() == recorded_answer.json(), path
        else:
            assert served.content == recorded_answer.content, path
    created = data.post("/users", json={"name": "ann"})
    assert created.status_code == 201 and created.json() == answers["POST /users"].json()


def test_one_recording_to_a_mock_then_delete_and_clear(admin, recorded):
    session_id, _ = recorded
    rows = admin.get("/recordings", params={"session": session_id}).json()["recordings"]
    one = admin.post(f"/recordings/{rows[3]['id']}/to-mock", json={"includeHeaders": True})
    assert one.status_code == 200 and one.json()["count"] == 1, one.text
    assert admin.delete(f"/recordings/{rows[0]['id']}").status_code == 204
    assert admin.get(f"/recordings/{rows[0]['id']}").status_code == 404
    assert admin.get("/recordings").json()["total"] == 4
    assert admin.delete("/recordings").json() == {"deleted": 4}
    assert admin.get("/recordings").json()["total"] == 0
    assert admin.get(f"/sessions/{session_id}").json()["recordingCount"] == 0
    assert admin.delete("/sessions").json()["deleted"] >= 1
    assert admin.get("/sessions").json() == []
