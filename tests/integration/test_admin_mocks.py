"""`/mocks` CRUD, bulk, toggle and the error bodies, against a real `mockd start`
(SPEC "Admin API" / "Errors"; behavior notes §1 "Mocks", §3)."""
from __future__ import annotations

import re

import pytest

from tests.helpers import http_mock, make_config, start_server

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("admin-mocks"),
                      make_config(http_mock("seed", "GET", "/seed", body="seeded"))) as process:
        yield process


def test_created_mock_is_served_by_the_very_next_request(admin, data):
    created = admin.post("/mocks", json={"type": "http", "name": "greeting", "http": {
        "matcher": {"method": "GET", "path": "/greet"},
        "response": {"statusCode": 201, "body": {"hello": "world"}}}})
    assert created.status_code == 201
    body = created.json()
    assert re.fullmatch(r"http_[0-9a-f]{16}", body["id"])
    assert body["action"] == "created" and body["message"] == "Created http mock"
    # contract note: SPEC says "201 with the Mock" -> the mock's fields also at the top level
    assert body["mock"]["id"] == body["id"] and body["type"] == "http"
    assert body["name"] == "greeting" and body["http"] == body["mock"]["http"]
    assert body["mock"]["enabled"] is True and body["mock"]["workspaceId"] == "local"
    answer = data.get("/greet")
    assert answer.status_code == 201 and answer.json() == {"hello": "world"}


def test_get_put_patch_delete_cycle(admin, data):
    admin.post("/mocks", json=http_mock("cycle", "GET", "/cycle", body="v1"))
    fetched = admin.get("/mocks/cycle").json()
    assert fetched["http"]["matcher"] == {"method": "GET", "path": "/cycle"}
    created_at = fetched["createdAt"]

    put = admin.put("/mocks/cycle", json=http_mock("ignored", "GET", "/cycle", body="v2"))
    assert put.status_code == 200
    assert put.json()["action"] == "updated" and put.json()["message"] == "Updated http mock"
    assert put.json()["mock"]["id"] == "cycle" and put.json()["mock"]["createdAt"] == created_at
    assert data.get("/cycle").text == "v2"

    patched = admin.patch("/mocks/cycle", json={"name": "renamed", "http": {
        "response": {"statusCode": 202, "body": "v3"}}}).json()["mock"]
    assert patched["name"] == "renamed" and patched["http"]["matcher"]["path"] == "/cycle"
    assert data.get("/cycle").status_code == 202

    assert admin.delete("/mocks/cycle").status_code == 204
    assert admin.get("/mocks/cycle").json() == {"error": "not_found",
                                                "message": "mock not found"}
    assert data.get("/cycle").status_code == 404
    assert admin.delete("/mocks/cycle").status_code == 404
    assert admin.put("/mocks/cycle", json=http_mock("x", "GET", "/x")).status_code == 404


def test_toggle_flips_enabled_and_the_data_plane_follows(admin, data):
    admin.post("/mocks", json=http_mock("flip", "GET", "/flip", body="on"))
    off = admin.post("/mocks/flip/toggle").json()
    assert off["action"] == "toggled" and off["message"] == "Mock disabled"
    assert off["mock"]["enabled"] is False and data.get("/flip").status_code == 404
    on = admin.post("/mocks/flip/toggle").json()
    assert on["message"] == "Mock enabled" and data.get("/flip").text == "on"


def test_list_filters_and_paging(admin):
    created = admin.post("/mocks/bulk", json=[
        http_mock("list-a", "GET", "/list/a", body="a"),
        {**http_mock("list-b", "POST", "/list/b"), "name": "Wasp"}])
    assert created.status_code == 201, created.text
    assert admin.post("/mocks/list-b/toggle").status_code == 200
    listed = admin.get("/mocks", params={"search": "list-"}).json()
    assert [mock["id"] for mock in listed["mocks"]] == ["list-a", "list-b"]
    assert listed["total"] == listed["count"] == 2
    assert [mock["id"] for mock in admin.get("/mocks", params={"enabled": "false"}).json()["mocks"]] \
        == ["list-b"]
    # "wasp" has letters outside hex, so no generated id (http_<16 hex>) can match it
    assert admin.get("/mocks", params={"search": "wasp"}).json()["count"] == 1
    page = admin.get("/mocks", params={"search": "list-", "limit": 1, "offset": 1}).json()
    assert [mock["id"] for mock in page["mocks"]] == ["list-b"] and page["total"] == 2
    assert admin.get("/mocks", params={"type": "grpc"}).json()["count"] == 0
    bad = admin.get("/mocks", params={"offset": -1})
    assert bad.status_code == 400 and bad.json()["error"] == "validation_error"
    assert "offset" in bad.json()["message"]


def test_bulk_create_replace_and_duplicates(admin, data):
    created = admin.post("/mocks/bulk", json=[http_mock("bulk-1", "GET", "/bulk/1", body="1"),
                                             http_mock("bulk-2", "GET", "/bulk/2", body="2")])
    assert created.status_code == 201 and created.json()["created"] == 2
    assert [mock["id"] for mock in created.json()["mocks"]] == ["bulk-1", "bulk-2"]
    assert data.get("/bulk/2").text == "2"
    twice = admin.post("/mocks/bulk", json=[http_mock("dup", "GET", "/d1"),
                                           http_mock("dup", "GET", "/d2")])
    assert twice.status_code == 400 and twice.json()["error"] == "duplicate_id"
    taken = admin.post("/mocks/bulk", json=[http_mock("bulk-1", "GET", "/again")])
    assert taken.status_code == 400 and taken.json()["error"] == "duplicate_id"
    assert admin.get("/mocks/dup").status_code == 404


def test_duplicate_id_on_create_is_409(admin):
    admin.post("/mocks", json=http_mock("twice", "GET", "/twice"))
    again = admin.post("/mocks", json=http_mock("twice", "GET", "/twice2"))
    assert again.status_code == 409 and again.json()["error"] == "duplicate_id"


@pytest.mark.parametrize("body, status, code, field", [
    pytest.param(b"{not json", 400, "invalid_json", None, id="invalid JSON"),
    pytest.param(b"", 400, "invalid_json", None, id="empty body"),
    pytest.param(b'{"name": "no type"}', 400, "missing_type", None, id="no type"),
    pytest.param(b'{"type": "http", "http": {"matcher": {"path": "rel"}}}', 400,
                 "validation_error", "http.matcher.path", id="relative path"),
    pytest.param(b'{"type": "http", "http": {"matcher": {"pathPattern": "(x"}}}', 400,
                 "validation_error", "http.matcher.pathPattern", id="regex that does not compile"),
    pytest.param(b'{"type": "http", "http": {"matcher": {}, "response": {"delayMs": -1}}}', 400,
                 "validation_error", "http.response.delayMs", id="negative delay"),
    pytest.param(b'{"type": "nope", "nope": {}}', 400, "validation_error", "type",
                 id="unknown type"),
])
def test_bad_bodies_get_the_spec_error_body(admin, body, status, code, field):
    before = admin.get("/mocks").json()["total"]
    answer = admin.post("/mocks", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == status
    payload = answer.json()
    assert set(payload) == {"error", "message"} and payload["error"] == code
    if field:
        assert payload["message"].startswith(field), payload
    assert admin.get("/mocks").json()["total"] == before  # nothing was written


def test_failed_write_leaves_database_and_engine_as_they_were(admin, data):
    admin.post("/mocks", json=http_mock("stable", "GET", "/stable", body="v1"))
    broken = {"type": "http", "http": {"matcher": {"method": "GET", "path": "/stable"},
                                       "response": {"body": "{{ unclosed"}}}
    answer = admin.put("/mocks/stable", json=broken)
    assert answer.status_code == 400 and answer.json()["error"] == "validation_error"
    assert admin.get("/mocks/stable").json()["http"]["response"]["body"] == "v1"
    assert data.get("/stable").text == "v1"


def test_body_over_10_mib_is_413(admin):
    answer = admin.post("/mocks", content=b"x" * (10 * 1024 * 1024 + 1),
                        headers={"Content-Type": "application/json"})
    assert answer.status_code == 413 and answer.json()["error"] == "body_too_large"


def test_unknown_route_and_method(admin):
    assert admin.get("/no/such/route").status_code == 404
    assert admin.get("/no/such/route").json()["error"] == "not_found"
    assert admin.patch("/mocks").status_code == 405


def test_every_answer_carries_the_security_headers(admin):
    for answer in (admin.get("/mocks"), admin.get("/mocks/missing"), admin.get("/health")):
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["content-security-policy"] == "default-src 'self'"
        assert answer.headers["cache-control"] == "no-store"
        assert answer.headers["referrer-policy"] == "strict-origin-when-cross-origin"


def test_cors_echoes_loopback_origins_only(admin):
    allowed = admin.options("/mocks", headers={"Origin": "http://localhost:3000",
                                               "Access-Control-Request-Method": "POST"})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "http://localhost:3000"
    denied = admin.options("/mocks", headers={"Origin": "http://evil.example",
                                              "Access-Control-Request-Method": "POST"})
    assert denied.status_code == 403


def test_delete_all_of_one_type(admin):
    admin.post("/mocks", json={"id": "ws-mock", "type": "websocket",
                               "websocket": {"path": "/ws"}})
    assert admin.delete("/mocks", params={"type": "websocket"}).status_code == 204
    assert admin.get("/mocks", params={"type": "websocket"}).json()["count"] == 0
    assert admin.get("/mocks", params={"type": "http"}).json()["count"] > 0
