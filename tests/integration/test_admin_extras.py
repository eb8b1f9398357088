"""Admin niceties against a real `mockd start`: truthful rate-limit headers, the OpenAPI
export of mocks without a method, and the dashboard routes `/folders`, `/preferences`,
`/formats`, `/templates`, `/handlers` (issue 14 item 6; behavior notes §1 "Other routes",
§3, §13, §18)."""
from __future__ import annotations

import json

import httpx
import pytest
import yaml

from tests.helpers import (MOCKD, MockdProcess, free_port, http_mock, isolated_env, make_config,
                           run_mockd, start_server)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("admin-extras"),
                      make_config(http_mock("any-method", None, "/anything", body={"ok": True}),
                                  http_mock("get-only", "GET", "/only", body="only"))) as process:
        yield process


# ---------------------------------------------------------------------------- rate limit


def test_rate_limit_headers_count_down_to_the_429(tmp_path):
    port, admin_port = free_port(), free_port()
    argv = [MOCKD, "start", "--port", str(port), "--admin-port", str(admin_port),
            "--data-dir", str(tmp_path / "data"), "--no-auth"]
    # 2 requests/s, so the bucket holds 4 and hardly refills while the test runs
    with MockdProcess(argv, isolated_env(tmp_path, MOCKD_ADMIN_RATE_LIMIT="2"), tmp_path,
                      tmp_path / "server.log") as process:
        process.admin = f"http://127.0.0.1:{admin_port}"
        process.wait_healthy(process.admin + "/health")
        # The readiness polls took tokens of 127.0.0.1's bucket: the counted requests come
        # from another loopback address, whose bucket is full (buckets are per client IP).
        with process.admin_client(
                transport=httpx.HTTPTransport(local_address="127.0.0.2")) as admin:
            answers = [admin.get("/mocks") for _ in range(5)]
    limit = int(answers[0].headers["X-RateLimit-Limit"])
    assert limit == 4
    for count, answer in enumerate(answers[:4], start=1):
        assert answer.status_code == 200
        assert int(answer.headers["X-RateLimit-Limit"]) == limit
        assert int(answer.headers["X-RateLimit-Remaining"]) == limit - count
    refused = answers[4]
    assert refused.status_code == 429 and refused.text == "Too Many Requests"
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert int(refused.headers["Retry-After"]) >= 1
    assert int(refused.headers["X-RateLimit-Reset"]) >= int(answers[3].headers["X-RateLimit-Reset"])


def test_default_rate_limit_headers_say_burst_200(admin):
    first = admin.get("/mocks")
    second = admin.get("/mocks")
    assert first.headers["X-RateLimit-Limit"] == second.headers["X-RateLimit-Limit"] == "200"
    assert int(second.headers["X-RateLimit-Remaining"]) <= int(
        first.headers["X-RateLimit-Remaining"])


# ---------------------------------------------------------------------------- openapi export


def test_export_openapi_of_a_mock_without_method_lists_every_method(server, tmp_path):
    result = run_mockd(["export", "--format", "openapi", "--admin-url", server.admin],
                       tmp_path)
    assert result.returncode == 0, result.stderr
    document = yaml.safe_load(result.stdout)
    assert sorted(document["paths"]["/anything"]) == [
        "delete", "get", "head", "options", "patch", "post", "put"]
    assert list(document["paths"]["/only"]) == ["get"]


def test_openapi_route_lists_every_method_too(admin):
    document = admin.get("/openapi.json").json()
    assert len(document["paths"]["/anything"]) == 7
    assert json.dumps(document)  # plain JSON


# ---------------------------------------------------------------------------- folders


def test_folder_crud_and_delete_moves_mocks_to_the_root(admin, data):
    created = admin.post("/folders", json={"name": "Orders", "metaSortKey": 1})
    assert created.status_code == 201, created.text
    folder = created.json()
    assert set(folder) == {"id", "name", "workspaceId", "metaSortKey", "createdAt", "updatedAt"}
    inner = admin.post("/folders", json={"name": "Refunds", "parentId": folder["id"]}).json()
    assert inner["parentId"] == folder["id"]

    mock = admin.post("/mocks", json={**http_mock("in-folder", "GET", "/in-folder", body="x"),
                                      "parentId": folder["id"]}).json()["mock"]
    assert mock["parentId"] == folder["id"]
    listed = admin.get("/mocks", params={"folderId": folder["id"]}).json()
    assert [row["id"] for row in listed["mocks"]] == ["in-folder"]

    assert admin.get(f"/folders/{folder['id']}").json()["name"] == "Orders"
    replaced = admin.put(f"/folders/{folder['id']}", json={"name": "Sales"}).json()
    assert replaced["name"] == "Sales" and "metaSortKey" not in replaced  # PUT replaces
    assert replaced["createdAt"] == folder["createdAt"]
    assert replaced["updatedAt"] >= folder["updatedAt"]
    patched = admin.patch(f"/folders/{inner['id']}", json={"name": "Returns"}).json()
    assert patched["name"] == "Returns" and patched["parentId"] == folder["id"]

    assert admin.delete(f"/folders/{folder['id']}").status_code == 204
    assert admin.get(f"/folders/{folder['id']}").json() == {"error": "not_found",
                                                           "message": "Folder not found"}
    assert "parentId" not in admin.get("/mocks/in-folder").json()
    assert "parentId" not in admin.get(f"/folders/{inner['id']}").json()
    assert data.get("/in-folder").text == "x"  # still served
    assert admin.delete(f"/folders/{folder['id']}").status_code == 404


def test_folder_errors_use_the_admin_error_body(admin):
    missing = admin.post("/folders", json={})
    assert missing.status_code == 400 and missing.json() == {
        "error": "missing_field",
        "message": "name: required field is missing; give the folder a name"}
    wrong = admin.post("/folders", json={"name": "x", "colour": "red"})
    assert wrong.json() == {"error": "validation_error", "message": "colour: unknown key"}
    orphan = admin.post("/folders", json={"name": "x", "parentId": "fld_missing"})
    assert orphan.status_code == 400 and orphan.json()["message"].startswith("parentId: ")
    assert admin.post("/folders", content=b"{", headers={
        "Content-Type": "application/json"}).json()["error"] == "invalid_json"


# ---------------------------------------------------------------------------- preferences


def test_preferences_are_validated(admin):
    assert admin.put("/preferences", json=[1]).status_code == 400
    too_big = admin.put("/preferences", json={"blob": "x" * (64 * 1024)})
    assert too_big.status_code == 413 and too_big.json()["error"] == "body_too_large"


PREFERENCES = {"theme": "dark", "columns": {"path": 240}, "lastWorkspace": "local"}


def test_preferences_persist_across_a_restart(secured):
    # ``secured`` is the restart: its data dir holds what a first server stored.
    assert secured.first_preferences == {}  # the first server started with none
    with secured.admin_client(headers={"X-API-Key": secured.key}) as admin:
        assert admin.get("/preferences").json() == PREFERENCES
        assert admin.get(f"/folders/{secured.kept_folder['id']}").json()["name"] == "Kept"


# ---------------------------------------------------------------------------- catalogues


def test_formats_list_import_detection_rules_and_export_formats(admin):
    answer = admin.get("/formats").json()
    imports = {entry["name"]: entry for entry in answer["import"]}
    assert {"openapi", "postman", "har", "wiremock", "mockoon", "wsdl", "curl", "mockd"} <= set(
        imports)
    assert "swagger" in imports["openapi"]["aliases"] and imports["openapi"]["detection"]
    assert imports["curl"]["detected"] is False
    assert answer["detectionOrder"][0] == "wsdl"
    exports = {entry["name"]: entry for entry in answer["export"]}
    assert {"mockd", "openapi", "insomnia"} <= set(exports)


def test_handlers_list_every_mock_type(admin):
    answer = admin.get("/handlers").json()
    by_type = {row["type"]: row for row in answer["handlers"]}
    assert by_type["http"]["served"] is True and by_type["http"]["mocks"] >= 2
    assert by_type["oauth"]["served"] is True
    assert set(by_type) >= {"http", "graphql", "grpc", "websocket", "mqtt", "soap", "oauth"}


def test_every_template_can_be_applied_as_it_is(admin, data):
    templates = admin.get("/templates").json()["templates"]
    for template in templates:
        if "config" in template:
            answer = admin.post("/config", json={"config": template["config"]})
            assert answer.status_code == 200, (template["id"], answer.text)
        else:
            answer = admin.post("/mocks", json=template["mock"])
            assert answer.status_code == 201, (template["id"], answer.text)
    products = data.get("/api/products")
    assert products.status_code == 200 and products.json()[0]["name"] == "Keyboard"
    order = data.get("/api/orders/42", params={"currency": "usd"}).json()
    assert order["id"] == "42" and order["currency"] == "usd"
    created = data.post("/api/users", json={"name": "Grace Hopper"})
    assert created.status_code == 201, created.text
    user_id = created.json()["id"]
    assert data.get(f"/api/users/{user_id}").json()["name"] == "Grace Hopper"
    with data.stream("GET", "/api/orders/7/events") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        first = next(line for line in stream.iter_lines() if line.startswith("data:"))
    assert json.loads(first[len("data:"):]) == {"order": "7", "state": "packed"}
    discovery = data.get("/auth/.well-known/openid-configuration")
    assert discovery.status_code == 200 and discovery.json()["issuer"].endswith("/auth")


# ---------------------------------------------------------------------------- admin key


@pytest.mark.parametrize("method, path", [
    ("GET", "/folders"), ("POST", "/folders"), ("GET", "/folders/x"), ("PUT", "/folders/x"),
    ("PATCH", "/folders/x"), ("DELETE", "/folders/x"), ("GET", "/preferences"),
    ("PUT", "/preferences"), ("GET", "/formats"), ("GET", "/templates"),
    ("GET", "/templates/http-json"), ("GET", "/handlers"),
])
def test_dashboard_routes_need_the_admin_key(secured, method, path):
    with secured.admin_client() as admin:
        refused = admin.request(method, path, json={})
        assert refused.status_code == 401, refused.text
        assert refused.json()["error"] == "missing_api_key"
    if method == "GET":
        with secured.admin_client(headers={"X-API-Key": secured.key}) as admin:
            assert admin.get(path).status_code in (200, 404)


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    """A server with the admin key on, started on the data dir of a first server (no key,
    stopped) that stored :data:`PREFERENCES` and a folder ``Kept``: the restart of the
    preferences test and the server of the admin-key tests. ``first_preferences`` is what
    the first server answered before the change, ``kept_folder`` the folder it created."""
    directory = tmp_path_factory.mktemp("extras-auth")
    data_dir = directory / "data"
    with start_server(directory, data_dir=data_dir) as first:
        with first.admin_client() as admin:
            first_preferences = admin.get("/preferences").json()
            assert admin.put("/preferences", json=PREFERENCES).json() == PREFERENCES
            kept_folder = admin.post("/folders", json={"name": "Kept"}).json()
    with start_server(directory, no_auth=False, data_dir=data_dir) as process:
        process.key = (data_dir / "admin-api-key").read_text().strip()
        process.first_preferences = first_preferences
        process.kept_folder = kept_folder
        yield process
