"""Replacing and deleting one table item through the admin API of a real ``mockd start``
(``PUT`` / ``DELETE /state/resources/{name}/items/{id}``, the routes the dashboard's Tables area
edits with), seen through the data plane's bound routes (behavior notes §1 "State", §6)."""
from __future__ import annotations

import pytest

from tests.helpers import http_mock, make_config, start_server

pytestmark = pytest.mark.integration


def config() -> dict:
    return make_config(
        http_mock("pets-get", "GET", "/pets/{id}"),
        tables=[{"name": "pets", "seedData": [{"id": "p1", "name": "Rex", "age": 3},
                                              {"id": "p2", "name": "Bo"}],
                 "validation": {"fields": {"name": {"type": "string", "required": True}}}}],
        extend=[{"mock": "pets-get", "table": "pets", "action": "get"}])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("tables-items"), config()) as process:
        yield process


def test_put_replaces_the_item_and_keeps_id_and_created_at(server):
    with server.client() as data, server.admin_client() as admin:
        before = admin.get("/state/resources/pets/items/p1").json()
        answer = admin.put("/state/resources/pets/items/p1", json={"id": "other", "name": "Max"})
        assert answer.status_code == 200
        item = answer.json()
        assert item["id"] == "p1" and item["name"] == "Max" and "age" not in item
        assert item["createdAt"] == before["createdAt"]
        assert data.get("/pets/p1").json()["name"] == "Max"
        admin.post("/reset/pets")


def test_put_refuses_bad_bodies_and_unknown_items(server):
    with server.admin_client() as admin:
        not_object = admin.put("/state/resources/pets/items/p1", json=[1, 2])
        assert not_object.status_code == 400
        assert not_object.json()["error"] == "validation_error"
        invalid = admin.put("/state/resources/pets/items/p1", json={"name": 7})
        assert invalid.status_code == 400 and invalid.json()["error"] == "validation_error"
        bad_json = admin.put("/state/resources/pets/items/p1", content=b"{nope",
                             headers={"Content-Type": "application/json"})
        assert bad_json.status_code == 400 and bad_json.json()["error"] == "invalid_json"
        missing = admin.put("/state/resources/pets/items/ghost", json={"name": "x"})
        assert missing.status_code == 404
        assert missing.json() == {"error": "not_found", "message": "Item not found"}
        no_table = admin.put("/state/resources/nope/items/p1", json={"name": "x"})
        assert no_table.status_code == 404
        assert no_table.json()["message"] == "Table not found: nope"
        assert admin.get("/state/resources/pets/items/p1").json()["name"] == "Rex"


def test_delete_removes_the_item(server):
    with server.client() as data, server.admin_client() as admin:
        answer = admin.delete("/state/resources/pets/items/p2")
        assert answer.status_code == 204 and answer.content == b""
        assert data.get("/pets/p2").status_code == 404
        assert admin.get("/state/resources/pets").json()["itemCount"] == 1
        again = admin.delete("/state/resources/pets/items/p2")
        assert again.status_code == 404
        assert again.json() == {"error": "not_found", "message": "Item not found"}
        assert admin.delete("/state/resources/nope/items/p2").status_code == 404
        admin.post("/reset/pets")
        assert data.get("/pets/p2").status_code == 200
