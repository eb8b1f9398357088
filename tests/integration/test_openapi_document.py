"""The admin API's OpenAPI document (``/openapi-admin.json``, shown by Swagger UI at ``/docs``).

Fetched from a running ``mockd start``: every operation documents its answers with an example
or a schema, every route that reads a JSON body documents it with an example, the documented
200 examples of simple routes have the keys the live answers have, and documented request
examples are accepted by the routes they document.
"""
from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import free_port, http_mock, make_config, start_server

#: POST routes that take no body (an action on the path alone).
BODYLESS = {
    ("post", "/mocks/{mock_id}/toggle"), ("post", "/admin/api-key/rotate"),
    ("post", "/state/reset"), ("post", "/reset"), ("post", "/reset/{table}"),
    ("post", "/state/resources/{name}/reset"), ("post", "/state/resources/{name}/unregister"),
    ("post", "/scenarios/reset"), ("post", "/chaos/stats/reset"),
    ("post", "/chaos/circuit-breakers/{key}/trip"), ("post", "/chaos/circuit-breaker/{key}/trip"),
    ("post", "/chaos/circuit-breakers/{key}/reset"),
    ("post", "/chaos/circuit-breaker/{key}/reset"), ("post", "/chaos/profiles/{name}/apply"),
    ("post", "/mqtt/{broker_id}/record/start"), ("post", "/mqtt/{broker_id}/record/stop"),
    ("post", "/soap/{mock_id}/record/start"), ("post", "/soap/{mock_id}/record/stop"),
    ("post", "/mqtt-recordings/export"), ("post", "/soap-recordings/export"),
    ("post", "/stream-recordings/vacuum"), ("post", "/stream-recordings/{recording_id}/stop"),
    ("post", "/stream-recordings/{recording_id}/export"), ("post", "/replay/{replay_id}/pause"),
    ("post", "/replay/{replay_id}/resume"), ("post", "/proxy/stop"),
}

#: Routes whose documented 200 example must have the live answer's keys.
SIMPLE_ROUTES = ("/mocks", "/health", "/workspaces", "/state", "/proxy/status", "/sessions",
                 "/chaos", "/requests")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    config = make_config(
        {**http_mock("users-list", "GET", "/api/users", body={"users": []}),
         "name": "List users"},
        tables=[{"name": "accounts", "seedData": [{"id": "acc_alice", "balance": 10000}]}])
    with start_server(tmp_path_factory.mktemp("openapi"), config) as process:
        yield process


@pytest.fixture(scope="module")
def document(server) -> dict[str, Any]:
    with server.admin_client() as client:
        answer = client.get("/openapi-admin.json", timeout=60)
    assert answer.status_code == 200
    return answer.json()


def _operations(document: dict[str, Any]):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield method, path, operation


def _example(operation: dict[str, Any], status: str = "200") -> Any:
    content = operation["responses"][status]["content"]
    return next(iter(content.values()))["example"]


def _keys(value: Any) -> set[str]:
    return set(value) if isinstance(value, dict) else set()


def test_every_operation_documents_an_answer(document):
    missing = []
    for method, path, operation in _operations(document):
        responses = operation.get("responses") or {}
        described = responses and all(response.get("description")
                                      for response in responses.values())
        shown = "204" in responses or any(
            "example" in media or "schema" in media
            for response in responses.values()
            for media in (response.get("content") or {}).values())
        if not (described and shown):
            missing.append(f"{method.upper()} {path}")
    assert len(list(_operations(document))) > 150
    assert missing == []


def test_every_json_body_is_documented_with_an_example(document):
    missing = []
    for method, path, operation in _operations(document):
        if method not in ("post", "put", "patch") or (method, path) in BODYLESS:
            continue
        content = (operation.get("requestBody") or {}).get("content") or {}
        if not any("example" in media and "schema" in media for media in content.values()):
            missing.append(f"{method.upper()} {path}")
    assert missing == []


def test_created_and_deleted_answers_use_their_status_codes(document):
    paths = document["paths"]
    assert set(paths["/mocks"]["post"]["responses"]) >= {"201", "400", "409"}
    assert "200" not in paths["/state/resources"]["post"]["responses"]
    assert set(paths["/mocks/{mock_id}"]["delete"]["responses"]) == {"204", "404"}
    error = paths["/mocks/{mock_id}"]["get"]["responses"]["404"]["content"]["application/json"]
    assert error["example"] == {"error": "not_found", "message": "mock not found"}
    assert error["schema"]["required"] == ["error", "message"]
    assert paths["/status"]["get"]["responses"]["503"]["content"]["application/json"][
        "example"]["error"] == "no_engine"


@pytest.mark.parametrize("path", SIMPLE_ROUTES)
def test_documented_example_has_the_live_keys(server, document, path):
    with server.admin_client() as client:
        if path == "/sessions":  # a session the proxy recorded into, then ended
            started = client.post("/proxy/start", json={"port": free_port(),
                                                        "sessionName": "docs"})
            assert started.status_code == 200, started.text
            assert client.post("/proxy/stop").status_code == 200
        if path == "/requests":
            with server.client() as data:
                assert data.get("/api/users").status_code == 200
        if path == "/proxy/status":  # the keys of a running proxy
            started = client.post("/proxy/start", json={"port": free_port()})
            assert started.status_code == 200, started.text
        try:
            live = client.get(path)
        finally:
            if path == "/proxy/status":
                client.post("/proxy/stop")
    assert live.status_code == 200
    documented = _example(document["paths"][path]["get"])
    answer = live.json()
    if isinstance(answer, list):
        assert answer and documented, path
        assert _keys(documented[0]) == _keys(answer[0])
    else:
        assert _keys(documented) == _keys(answer)


@pytest.mark.parametrize("method, path, status", [
    ("post", "/mocks", 201), ("post", "/workspaces", 201), ("post", "/state/resources", 201),
    ("put", "/chaos", 200), ("post", "/sessions", 201), ("post", "/folders", 201),
    ("post", "/state/operations", 201), ("put", "/preferences", 200),
])
def test_documented_request_examples_are_accepted(server, document, method, path, status):
    operation = document["paths"][path][method]
    example = operation["requestBody"]["content"]["application/json"]["example"]
    with server.admin_client() as client:
        answer = client.request(method.upper(), path, json=example)
        if path == "/chaos":  # the data plane answers without faults again
            assert client.put("/chaos", json={"enabled": False}).status_code == 200
    assert answer.status_code == status, answer.text
    assert _keys(_example(operation, str(status))) <= _keys(answer.json()) | {"details"}
