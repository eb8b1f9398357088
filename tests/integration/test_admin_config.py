"""`/config`, `/workspaces`, `/status`, `/ports`, `/metrics` and the API docs against a real
server (SPEC "Configuration", "Workspaces", "Health and metrics"; behavior notes §1, §12, §17).
"""
from __future__ import annotations

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import http_mock, make_config, start_server

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("admin-config"),
                      make_config(http_mock("base", "GET", "/base/{id}", body="b"))) as process:
        yield process


def test_export_as_json_and_yaml(admin):
    exported = admin.get("/config", params={"name": "snap"}).json()
    assert exported["version"] == "1.0" and exported["kind"] == "MockCollection"
    assert exported["name"] == "snap" and exported["metadata"] == {"name": "snap"}
    assert "base" in [mock["id"] for mock in exported["mocks"]]
    as_yaml = admin.get("/config", params={"format": "yaml"})
    assert as_yaml.headers["content-type"].startswith("application/x-yaml")
    assert yaml.safe_load(as_yaml.text)["name"] == "mockd-export"


def test_import_merges_replaces_and_dry_runs(admin, data):
    wrapped = {"config": {"version": "1.0", "mocks": [
        http_mock("imp-1", "GET", "/imp/1", body="one")]}}
    result = admin.post("/config", json=wrapped).json()
    assert result["message"] == "Configuration imported successfully"
    assert result["imported"] == 1 and result["total"] >= 2
    assert data.get("/imp/1").text == "one"

    bare_yaml = yaml.safe_dump({"version": "1.0", "mocks": [
        {"id": "imp-2", "matcher": {"method": "GET", "path": "/imp/2"},
         "response": {"body": "two"}}]})
    imported = admin.post("/config", content=bare_yaml,
                          headers={"Content-Type": "application/x-yaml"})
    assert imported.status_code == 200 and data.get("/imp/2").text == "two"
    assert admin.get("/mocks/imp-2").json()["enabled"] is True

    dry = admin.post("/config", params={"dryRun": "true"},
                     json={"version": "1.0", "mocks": [http_mock("dry", "GET", "/dry")],
                           "statefulResources": [{"name": "things"}]}).json()
    assert dry == {"dryRun": True, "mocks": 1, "statefulResources": 1}
    assert admin.get("/mocks/dry").status_code == 404

    replaced = admin.post("/config", params={"replace": "true"}, json={
        "version": "1.0", "mocks": [http_mock("only", "GET", "/only", body="only")]}).json()
    assert replaced["total"] == 1
    assert [mock["id"] for mock in admin.get("/mocks").json()["mocks"]] == ["only"]
    assert data.get("/imp/1").status_code == 404 and data.get("/only").text == "only"


@pytest.mark.parametrize("content, content_type, code", [
    pytest.param(b'{"replace": true}', "application/json", "missing_config", id="no config"),
    pytest.param(b"mocks: [unclosed", "application/yaml", "invalid_yaml", id="bad YAML"),
    pytest.param(b"{", "application/json", "invalid_json", id="bad JSON"),
    pytest.param(b'{"config": {"version": "1.0", "mocks": [{"type": "http", "http": '
                 b'{"matcher": {"path": "x"}}}]}}', "application/json", "validation_error",
                 id="invalid mock"),
])
def test_import_errors(admin, content, content_type, code):
    answer = admin.post("/config", content=content, headers={"Content-Type": content_type})
    assert answer.status_code == 400 and answer.json()["error"] == code
    if code == "validation_error":
        assert answer.json()["message"].startswith("mocks[0].http.matcher.path")


def test_workspaces_crud_and_base_paths(admin, data):
    listed = admin.get("/workspaces").json()
    assert listed["workspaces"][0]["id"] == "local" and listed["count"] >= 1
    created = admin.post("/workspaces", json={"name": "Billing Team", "description": "d"})
    assert created.status_code == 201
    workspace = created.json()
    assert workspace["id"].startswith("ws_") and workspace["basePath"] == "/billing-team"
    assert workspace["type"] == "local" and workspace["description"] == "d"
    duplicate = admin.post("/workspaces", json={"name": "Billing Team"})
    assert duplicate.status_code == 409
    assert duplicate.json()["error"] == "already_exists"
    assert duplicate.json()["details"] == {"existingId": workspace["id"]}
    overlap = admin.post("/workspaces", json={"name": "Other", "basePath": "/billing-team/x"})
    assert overlap.status_code == 409 and overlap.json()["error"] == "basepath_conflict"

    admin.post("/mocks", params={"workspaceId": workspace["id"]},
               json=http_mock("invoice", "GET", "/invoices", body="inv"))
    assert data.get("/billing-team/invoices").text == "inv"
    assert data.get("/invoices").status_code == 404
    in_workspace = admin.get("/mocks", params={"workspaceId": workspace["id"]}).json()
    assert [mock["id"] for mock in in_workspace["mocks"]] == ["invoice"]
    exported = admin.get("/config", params={"workspaceId": workspace["id"]}).json()
    assert [mock["id"] for mock in exported["mocks"]] == ["invoice"]
    data.get("/billing-team/invoices")
    logged = admin.get("/requests", params={"workspaceId": workspace["id"]}).json()
    assert logged["total"] == 2 and logged["requests"][0]["workspaceId"] == workspace["id"]

    updated = admin.put(f"/workspaces/{workspace['id']}", json={"basePath": "/billing"})
    assert updated.json()["basePath"] == "/billing"
    assert data.get("/billing/invoices").text == "inv"
    assert admin.put("/workspaces/local", json={"name": "x"}).status_code == 400
    assert admin.delete("/workspaces/local").status_code == 400
    assert admin.delete(f"/workspaces/{workspace['id']}").status_code == 204
    assert admin.get(f"/workspaces/{workspace['id']}").json() == {
        "error": "not_found", "message": "Workspace not found"}
    assert data.get("/billing/invoices").status_code == 404


def test_status_and_ports(server, admin):
    status = admin.get("/status").json()
    assert status["status"] == "running" and status["version"]
    assert status["httpPort"] == int(server.base.rsplit(":", 1)[1])
    assert status["adminPort"] == int(server.admin.rsplit(":", 1)[1])
    for key in ("uptime", "mockCount", "activeMocks", "requestCount", "startedAt", "protocols"):
        assert key in status
    ports = admin.get("/ports").json()["ports"]
    assert [(row["component"], row["protocol"]) for row in ports] == [
        ("Admin API", "HTTP"), ("Mock Engine", "HTTP")]
    assert all(row["status"] == "running" for row in ports)
    verbose = admin.get("/ports", params={"verbose": "true"}).json()["ports"]
    assert verbose[1]["engineId"] == "local"


def test_metrics_use_the_mock_path_template(admin, data):
    admin.post("/mocks", json=http_mock("metric", "GET", "/metric/{id}", body="m"))
    for index in range(3):
        data.get(f"/metric/{index}")
    data.get("/no-such-mock")
    answer = admin.get("/metrics")
    assert answer.headers["content-type"].startswith("text/plain")
    families = {family.name: family for family in text_string_to_metric_families(answer.text)}
    samples = {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
               for family in families.values() for sample in family.samples}
    key = ("mockd_http_requests_total",
           (("method", "GET"), ("path", "/metric/{id}"), ("status", "200")))
    assert samples[key] == 3
    assert not any("/metric/1" in str(labels) for _, labels in samples)  # bounded labels
    assert samples[("mockd_http_request_duration_seconds_bucket",
                    (("le", "+Inf"), ("method", "GET"), ("path", "/metric/{id}")))] == 3
    assert samples[("mockd_match_hits_total", (("mock_id", "metric"),))] == 3
    assert samples[("mockd_match_misses_total", ())] >= 1
    assert samples[("mockd_mocks_total", (("type", "http"),))] >= 1
    assert samples[("mockd_uptime_seconds", ())] > 0
    for name in ("mockd_requests", "mockd_request_duration_seconds", "mockd_admin_requests",
                 "mockd_port_info", "process_cpu_seconds"):
        assert name in families, name
    buckets = sorted({dict(labels).get("le") for name, labels in samples
                      if name == "mockd_http_request_duration_seconds_bucket"},
                     key=lambda bound: float(bound))
    assert buckets == ["0.001", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0",
                       "2.5", "5.0", "10.0", "+Inf"]


def test_swagger_ui_and_openapi_document(admin):
    assert admin.get("/docs").status_code == 200
    document = admin.get("/openapi-admin.json").json()
    assert document["openapi"].startswith("3.")
    for path in ("/mocks", "/mocks/{mock_id}", "/requests", "/config", "/workspaces",
                 "/mocks/{mock_id}/verify"):
        assert path in document["paths"], path
    assert "Mock" in document["components"]["schemas"]
    assert admin.get("/static/ninja/swagger-ui-bundle.js").status_code == 200


def test_export_lists_tables_and_bindings_in_resolved_form_and_round_trips(tmp_path):
    config = {"version": "1.0",
              "mocks": [{"id": "list-items",
                         "http": {"matcher": {"method": "GET", "path": "/api/items"}}},
                        {"id": "make-item",
                         "http": {"matcher": {"method": "POST", "path": "/api/items"}}}],
              "tables": [{"name": "items", "seedData": [{"id": "1", "name": "first"}]}],
              "extend": [{"mock": "list-items", "table": "items", "action": "list"},
                         {"mock": "make-item", "table": "items", "action": "create"}]}
    with start_server(tmp_path, config) as process, process.admin_client() as admin, \
            process.client() as data:
        exported = admin.get("/config").json()
        assert "tables" not in exported and "extend" not in exported
        assert exported["statefulResources"] == [{"name": "items",
                                                  "seedData": [{"id": "1", "name": "first"}]}]
        bindings = {mock["id"]: mock["http"].get("statefulBinding")
                    for mock in exported["mocks"]}
        assert bindings == {"list-items": {"table": "items", "action": "list"},
                            "make-item": {"table": "items", "action": "create"}}

        # The exported document is a config: posting it back serves the same CRUD.
        replaced = admin.post("/config", params={"replace": "true"}, json=exported)
        assert replaced.status_code == 200, replaced.text
        assert data.post("/api/items", json={"name": "second"}).status_code == 201
        assert sorted(item["name"] for item in data.get("/api/items").json()["data"]) \
            == ["first", "second"]
        again = admin.get("/config").json()
        assert again["statefulResources"] == exported["statefulResources"]
        assert {mock["id"]: mock["http"].get("statefulBinding") for mock in again["mocks"]} \
            == bindings
