"""Tables on the control plane through a real ``mockd start``: the ``/state`` routes,
``/reset``, ``mockd stateful add``, ``mockd http add --stateful``, definitions persisting
across a restart while runtime items reset to seed data, and the same routes on the
engine-control port of a headless engine (SPEC "State", "Persistence and run modes"; behavior
notes §1 "State (tables)", §15, §16)."""
from __future__ import annotations

import re

import httpx
import pytest

from tests.helpers import free_port, http_mock, make_config, run_mockd, start_engine, \
    start_server

pytestmark = pytest.mark.integration


def config() -> dict:
    return make_config(
        http_mock("pets-list", "GET", "/pets"), http_mock("pets-create", "POST", "/pets",
                                                          status=201),
        http_mock("pets-get", "GET", "/pets/{id}"),
        tables=[{"name": "pets", "seedData": [{"id": "p1", "name": "Rex"}]},
                {"name": "orders", "parentField": "petId"}],
        extend=[{"mock": "pets-list", "table": "pets", "action": "list"},
                {"mock": "pets-create", "table": "pets", "action": "create"},
                {"mock": "pets-get", "table": "pets", "action": "get"}])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("tables-admin"), config()) as process:
        yield process


def test_state_overview_and_resources(server):
    with server.client() as data, server.admin_client() as admin:
        data.post("/pets", json={"id": "p2"})
        state = admin.get("/state").json()
        assert state["resourceList"] == ["pets", "orders"]
        assert state["resources"][0] == {"name": "pets", "itemCount": 2, "seedCount": 1,
                                         "idField": "id"}
        assert state["resources"][1]["parentField"] == "petId"
        assert (state["total"], state["totalItems"]) == (2, 2)
        assert admin.get("/state/resources").json() == state["resources"]
        assert admin.get("/state/resources/pets").json()["itemCount"] == 2
        missing = admin.get("/state/resources/nope")
        assert missing.status_code == 404 and missing.json()["error"] == "not_found"
        assert admin.post("/state/reset").json() == {"status": "reset"}
        assert admin.get("/state/resources/pets").json()["itemCount"] == 1


def test_reset_aliases(server):
    with server.client() as data, server.admin_client() as admin:
        data.post("/pets", json={"id": "extra"})
        assert admin.post("/reset/pets").json() == {"status": "reset", "table": "pets"}
        assert data.get("/pets/extra").status_code == 404
        data.post("/pets", json={"id": "extra"})
        assert admin.post("/reset").json() == {"status": "reset", "tables": 2}
        assert data.get("/pets/extra").status_code == 404
        unknown = admin.post("/reset/ghost")
        assert unknown.status_code == 404
        assert unknown.json() == {"error": "not_found", "message": "Table not found: ghost"}
        assert admin.post("/state/reset", params={"resource": "pets"}).status_code == 200
        assert admin.post("/state/reset", params={"resource": "ghost"}).status_code == 404
        assert admin.post("/state/resources/pets/reset").json() == {"status": "reset",
                                                                    "resource": "pets"}


def test_clear_does_not_restore_seeds(server):
    with server.client() as data, server.admin_client() as admin:
        assert admin.delete("/state/resources/pets").json() == {"cleared": True}
        assert data.get("/pets").json()["meta"]["total"] == 0
        assert admin.get("/state/resources/pets").json()["seedCount"] == 1
        admin.post("/reset/pets")
        assert data.get("/pets").json()["meta"]["total"] == 1


def test_items_routes(server):
    with server.client() as data, server.admin_client() as admin:
        created = admin.post("/state/resources/pets/items", json={"id": "adm", "name": "Ad"})
        assert created.status_code == 201 and created.json()["name"] == "Ad"
        assert data.get("/pets/adm").json()["name"] == "Ad"
        assert admin.post("/state/resources/pets/items", json={"id": "adm"}).status_code == 409
        listed = admin.get("/state/resources/pets/items", params={"limit": 1}).json()
        assert listed["meta"]["limit"] == 1 and listed["meta"]["has_more"] is True
        assert admin.get("/state/resources/pets/items/adm").json()["id"] == "adm"
        missing = admin.get("/state/resources/pets/items/none")
        assert missing.status_code == 404 and missing.json()["message"] == "Item not found"
        assert admin.get("/state/resources/ghost/items").status_code == 404


def test_create_and_unregister_a_resource(server):
    with server.admin_client() as admin:
        created = admin.post("/state/resources", json={"name": "widgets", "idField": "sku"})
        assert created.status_code == 201
        assert created.json() == {"name": "widgets", "idField": "sku",
                                  "message": "Stateful resource created"}
        again = admin.post("/state/resources", json={"name": "widgets"})
        assert again.status_code == 409 and again.json()["error"] == "conflict"
        invalid = admin.post("/state/resources", json={"idField": "x"})
        assert invalid.status_code == 400 and invalid.json()["error"] == "validation_error"
        assert "name" in invalid.json()["message"]
        assert "widgets" in admin.get("/state").json()["resourceList"]
        exported = admin.get("/config").json()
        assert {"name": "widgets", "idField": "sku"} in exported["statefulResources"]
        assert "tables" not in exported  # the resolved form (behavior notes §1)
        gone = admin.post("/state/resources/widgets/unregister")
        assert gone.json() == {"deleted": True, "resource": "widgets",
                               "message": "Stateful resource unregistered"}
        assert "widgets" not in admin.get("/state").json()["resourceList"]
        assert admin.post("/state/resources/widgets/unregister").status_code == 404


def test_admin_mock_edits_keep_runtime_items(server):
    with server.client() as data, server.admin_client() as admin:
        data.post("/pets", json={"id": "survivor"})
        answer = admin.post("/mocks", json=http_mock("unrelated", "GET", "/unrelated", body="u"))
        assert answer.status_code == 201
        assert data.get("/unrelated").text == "u"
        assert data.get("/pets/survivor").status_code == 200


def test_cli_stateful_add(server, tmp_path):
    result = run_mockd(["stateful", "add", "cli_widgets", "--admin-url", server.admin], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Created stateful resource: cli_widgets" in result.stdout
    with server.admin_client() as admin:
        assert "cli_widgets" in admin.get("/state").json()["resourceList"]
    again = run_mockd(["stateful", "add", "cli_widgets", "--admin-url", server.admin], tmp_path)
    assert again.returncode == 1 and again.stderr.startswith("Error: ")


def test_cli_http_add_stateful_creates_table_and_five_bound_mocks(server, tmp_path):
    result = run_mockd(["http", "add", "--stateful", "cli_things", "--path", "/cli/things",
                        "--admin-url", server.admin], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("Created mock: ") == 5
    with server.client() as data:
        made = data.post("/cli/things", json={"name": "made"})
        assert made.status_code == 201
        item_id = made.json()["id"]
        assert data.get(f"/cli/things/{item_id}").json()["name"] == "made"
        assert item_id in [item["id"] for item in data.get("/cli/things").json()["data"]]
        assert data.put(f"/cli/things/{item_id}", json={"name": "new"}).json()["name"] == "new"
        assert data.delete(f"/cli/things/{item_id}").status_code == 204
    again = run_mockd(["http", "add", "--stateful", "cli_things", "--path", "/cli/things",
                       "--admin-url", server.admin], tmp_path)
    assert again.returncode == 0 and again.stdout.count("Updated mock: ") == 5
    assert "Using stateful resource: cli_things" in again.stdout


def test_definitions_persist_and_runtime_items_reset_on_restart(tmp_path):
    data_dir = tmp_path / "data"
    with start_server(tmp_path, config(), data_dir=data_dir) as first:
        with first.client() as data, first.admin_client() as admin:
            data.post("/pets", json={"id": "runtime-only"})
            assert admin.post("/state/resources",
                              json={"name": "kept", "seedData": [{"id": "k"}]}).status_code == 201
    restart = tmp_path / "again"
    restart.mkdir()
    with start_server(restart, None, data_dir=data_dir) as second:
        with second.client() as data, second.admin_client() as admin:
            assert set(admin.get("/state").json()["resourceList"]) == {"pets", "orders", "kept"}
            assert [pet["id"] for pet in data.get("/pets").json()["data"]] == ["p1"]
            assert admin.get("/state/resources/kept").json()["itemCount"] == 1


def test_engine_control_port_serves_the_state_routes(tmp_path):
    port = free_port()
    with start_engine(tmp_path, config(), extra_args=["--engine-port", str(port),
                                                       "--engine-token", "test-token"]) as engine:
        control = httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False,
                               timeout=10, headers={"X-Engine-Token": "test-token",
                                                    "Content-Type": "application/json"})
        with control, engine.client() as data:
            data.post("/pets", json={"id": "p2"})
            assert control.get("/state").json()["totalItems"] == 2
            assert control.post("/reset/pets").json() == {"status": "reset", "table": "pets"}
            assert control.get("/state/resources/pets").json()["itemCount"] == 1
            created = control.post("/state/resources", json={"name": "rt"})
            assert created.status_code == 201
            item = control.post("/state/resources/rt/items", json={"a": 1})
            assert item.status_code == 201 and re.fullmatch(r"[0-9a-f-]{36}", item.json()["id"])
            assert control.get(f"/state/resources/rt/items/{item.json()['id']}").json()["a"] == 1
            assert control.get("/state/resources/rt/items/x").json()["message"] == \
                "Item not found"
            assert control.delete("/state/resources/rt").json() == {"cleared": True}
            assert control.post("/state/resources/rt/unregister").json()["deleted"] is True
            assert control.post("/reset/ghost").status_code == 404
            assert control.post("/reset").json() == {"status": "reset", "tables": 2}


def test_workspace_scopes_tables_and_custom_operations(server):
    """``?workspaceId=`` on the state, reset and operation routes (behavior notes §1, §12):
    a table or operation created there belongs to it; listings narrow to it; a table of
    another workspace answers 404 there; without ``workspaceId`` every workspace shows."""
    with server.client() as data, server.admin_client() as admin:
        workspace = admin.post("/workspaces", json={"name": "Tables Team"}).json()["id"]
        scope = {"workspaceId": workspace}
        created = admin.post("/state/resources", params=scope,
                             json={"name": "team_items", "seedData": [{"id": "seed"}]})
        assert created.status_code == 201

        scoped = admin.get("/state", params=scope).json()
        assert scoped == {"resources": [{"name": "team_items", "itemCount": 1, "seedCount": 1,
                                         "idField": "id"}],
                          "total": 1, "totalItems": 1, "resourceList": ["team_items"]}
        local = admin.get("/state", params={"workspaceId": "local"}).json()["resourceList"]
        assert {"pets", "orders"} <= set(local) and "team_items" not in local
        assert "team_items" in admin.get("/state").json()["resourceList"]
        assert [resource["name"] for resource in
                admin.get("/state/resources", params=scope).json()] == ["team_items"]
        assert admin.get("/state/resources", params={"workspaceId": "ws_unknown"}).json() == []

        elsewhere = admin.get("/state/resources/pets", params=scope)
        assert (elsewhere.status_code, elsewhere.json()) == (
            404, {"error": "not_found", "message": "Table not found: pets"})
        assert admin.get("/state/resources/team_items", params=scope).json()["itemCount"] == 1
        assert admin.post("/state/resources/team_items/items", params=scope,
                          json={"id": "added"}).status_code == 201
        listed = admin.get("/state/resources/team_items/items", params=scope).json()
        assert listed["meta"]["total"] == 2  # workspaceId is not taken as an item filter
        assert admin.get("/state/resources/pets/items", params=scope).status_code == 404

        # Resetting a workspace leaves the other workspaces' runtime items alone.
        data.post("/pets", json={"id": "stays"})
        assert admin.post("/reset", params=scope).json() == {"status": "reset", "tables": 1}
        assert admin.get("/state/resources/team_items").json()["itemCount"] == 1
        assert data.get("/pets/stays").status_code == 200
        assert admin.post("/reset/pets", params=scope).status_code == 404
        assert admin.post("/state/reset", params={**scope, "resource": "pets"}).status_code \
            == 404
        assert admin.delete("/state/resources/pets", params=scope).status_code == 404

        assert {"name": "team_items", "seedData": [{"id": "seed"}]} in \
            admin.get("/config", params=scope).json()["statefulResources"]
        assert "team_items" not in [table["name"] for table in
                                    admin.get("/config").json().get("statefulResources", [])]

        missing_workspace = admin.post("/state/resources", params={"workspaceId": "ws_nope"},
                                       json={"name": "orphan"})
        assert missing_workspace.status_code == 404
        assert missing_workspace.json()["error"] == "not_found"
        assert "Workspace not found" in missing_workspace.json()["message"]
        # One table namespace per engine: a name of another workspace is taken.
        assert admin.post("/state/resources", params=scope,
                          json={"name": "pets"}).status_code == 409

        operation = {"name": "team_count", "steps": [
            {"type": "read", "resource": "team_items", "id": "input.id", "as": "item"}],
            "response": {"found": "item.id"}}
        assert admin.post("/state/operations", params=scope, json=operation).status_code == 201
        assert admin.get("/state/operations", params=scope).json() == {
            "operations": [{"name": "team_count", "stepCount": 1,
                            "consistency": "best_effort"}], "count": 1}
        assert admin.get("/state/operations", params={"workspaceId": "local"}).json() == {
            "operations": [], "count": 0}
        assert admin.post("/state/operations/team_count/execute", params=scope,
                          json={"id": "seed"}).json() == {"found": "seed"}
        hidden = admin.post("/state/operations/team_count/execute",
                            params={"workspaceId": "local"}, json={"id": "seed"})
        assert (hidden.status_code, hidden.json()["message"]) == (
            404, "Custom operation not found: team_count")
        assert admin.get("/state/operations/team_count",
                         params={"workspaceId": "local"}).status_code == 404
        taken = admin.post("/state/operations", json=operation)  # local, same name
        assert taken.status_code == 409 and taken.json()["error"] == "conflict"
        assert admin.delete("/state/operations/team_count",
                            params={"workspaceId": "local"}).status_code == 404
        assert admin.delete("/state/operations/team_count", params=scope).json()["deleted"]

        assert admin.post("/state/resources/team_items/unregister",
                          params={"workspaceId": "local"}).status_code == 404
        assert admin.post("/state/resources/team_items/unregister",
                          params=scope).json()["deleted"] is True
        assert admin.get("/state", params=scope).json()["total"] == 0
