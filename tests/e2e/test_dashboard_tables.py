"""The dashboard's Tables area in Chromium: item counts, an item created through the data
plane's REST binding shows up, an item edited as JSON and deleted, a table reset to its seed
data, pages of items, and a custom operation executed from its form (issue 30; behavior notes
§1 "State (tables) and custom operations")."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import EXPECTED_400, WAIT_MS, screenshot

CONFIG = {
    "version": "1.0",
    "tables": [{"name": "pets", "seedData": [{"id": "p1", "name": "Rex"},
                                            {"id": "p2", "name": "Bo"}]},
               {"name": "bulk"}],
    "mocks": [
        {"id": "http_00000000000000b1", "type": "http",
         "http": {"matcher": {"method": "GET", "path": "/pets"}}},
        {"id": "http_00000000000000b2", "type": "http",
         "http": {"matcher": {"method": "POST", "path": "/pets"}, "response": {"statusCode": 201}}},
        {"id": "http_00000000000000b3", "type": "http",
         "http": {"matcher": {"method": "GET", "path": "/pets/{id}"}}},
    ],
    "extend": [{"mock": "http_00000000000000b1", "table": "pets", "action": "list"},
               {"mock": "http_00000000000000b2", "table": "pets", "action": "create"},
               {"mock": "http_00000000000000b3", "table": "pets", "action": "get"}],
    "customOperations": [{
        "name": "rename-pet",
        "steps": [{"type": "update", "resource": "pets", "id": "input.id",
                   "set": {"name": "input.name"}, "as": "pet"}],
        "response": {"renamed": "pet.name"}}],
}


@pytest.fixture(scope="module", autouse=True)
def tables(admin_api):
    answer = admin_api.post("/config", json={"config": CONFIG})
    assert answer.status_code == 200, answer.text


@pytest.fixture(autouse=True)
def seeded(admin_api):
    assert admin_api.post("/reset").status_code == 200


def table_row(page, name):
    return page.locator(f"tr[data-table='{name}']")


def test_counts_and_an_item_created_through_the_data_plane(page, dashboard_server, data):
    page.goto(dashboard_server.admin + "/#/tables")
    expect(table_row(page, "pets").get_by_test_id("item-count")).to_have_text("2", timeout=WAIT_MS)
    created = data.post("/pets", json={"id": "p3", "name": "Fluffy"})
    assert created.status_code == 201
    page.get_by_test_id("refresh-tables").click()
    expect(table_row(page, "pets").get_by_test_id("item-count")).to_have_text("3", timeout=WAIT_MS)
    screenshot(page, "tables")
    table_row(page, "pets").get_by_test_id("table-link").click()
    row = page.locator("tr[data-id='p3']")
    expect(row).to_contain_text("Fluffy", timeout=WAIT_MS)
    expect(page.get_by_test_id("table-item-count")).to_have_text("3 item(s)")


def test_edit_and_delete_an_item_then_reset_to_seed(page, dashboard_server, data):
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(dashboard_server.admin + "/#/tables/pets")
    page.locator("tr[data-id='p1']").get_by_test_id("edit-item").click()
    editor = page.get_by_test_id("item-json")
    expect(editor).to_have_value('{\n  "id": "p1",\n  "name": "Rex"\n}', timeout=WAIT_MS)
    editor.fill('{"name": "Rex the Second", "age": 4}')
    page.get_by_test_id("save-item").click()
    expect(page.locator("tr[data-id='p1']")).to_contain_text("Rex the Second", timeout=WAIT_MS)
    assert data.get("/pets/p1").json()["age"] == 4
    screenshot(page, "table-items")

    page.locator("tr[data-id='p1']").get_by_test_id("edit-item").click()
    page.get_by_test_id("item-json").fill("{not json")
    page.get_by_test_id("save-item").click()
    expect(page.get_by_test_id("item-error")).to_contain_text("Not valid JSON", timeout=WAIT_MS)
    page.get_by_test_id("cancel-edit").click()

    page.locator("tr[data-id='p2']").get_by_test_id("delete-item").click()
    expect(page.locator("tr[data-id='p2']")).to_have_count(0, timeout=WAIT_MS)
    assert data.get("/pets/p2").status_code == 404

    page.get_by_test_id("add-item").click()
    page.get_by_test_id("item-json").fill('{"id": "p9", "name": "Newcomer"}')
    page.get_by_test_id("save-item").click()
    expect(page.locator("tr[data-id='p9']")).to_contain_text("Newcomer", timeout=WAIT_MS)
    assert data.get("/pets/p9").json()["name"] == "Newcomer"

    page.get_by_test_id("reset-table").click()
    expect(page.locator("tr[data-id='p9']")).to_have_count(0, timeout=WAIT_MS)
    expect(page.locator("tr[data-id='p2']")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator("tr[data-id='p1']")).to_contain_text("Rex")
    expect(page.locator("tr[data-id='p1']")).not_to_contain_text("Second")
    assert data.get("/pets/p2").status_code == 200


def test_reset_all_from_the_overview(page, dashboard_server, data):
    page.on("dialog", lambda dialog: dialog.accept())
    data.post("/pets", json={"id": "extra", "name": "Extra"})
    page.goto(dashboard_server.admin + "/#/tables")
    expect(table_row(page, "pets").get_by_test_id("item-count")).to_have_text("3", timeout=WAIT_MS)
    page.get_by_test_id("reset-all").click()
    expect(table_row(page, "pets").get_by_test_id("item-count")).to_have_text("2", timeout=WAIT_MS)
    assert data.get("/pets/extra").status_code == 404


def test_items_come_in_pages(page, dashboard_server, admin_api):
    for number in range(30):
        admin_api.post("/state/resources/bulk/items", json={"id": f"b{number:02d}"})
    page.goto(dashboard_server.admin + "/#/tables/bulk")
    rows = page.get_by_test_id("item-row")
    expect(rows).to_have_count(25, timeout=WAIT_MS)
    page.get_by_test_id("next-page").click()
    expect(rows).to_have_count(5, timeout=WAIT_MS)
    expect(page.get_by_test_id("next-page")).to_be_disabled()
    page.get_by_test_id("previous-page").click()
    expect(rows).to_have_count(25, timeout=WAIT_MS)
    admin_api.delete("/state/resources/bulk")


def test_execute_a_custom_operation(page, dashboard_server, data, expected_console):
    expected_console.append(EXPECTED_400)
    page.goto(dashboard_server.admin + "/#/tables")
    page.locator("button[data-operation='rename-pet']").click()
    page.get_by_test_id("operation-input").fill('{"id": "p2", "name": "Bolt"}')
    page.get_by_test_id("execute-operation").click()
    result = page.get_by_test_id("operation-result")
    expect(result).to_contain_text('"renamed": "Bolt"', timeout=WAIT_MS)
    assert data.get("/pets/p2").json()["name"] == "Bolt"
    page.get_by_test_id("operation-input").fill('{"id": "ghost", "name": "x"}')
    page.get_by_test_id("execute-operation").click()
    expect(result).to_contain_text("Failed (400 execution_failed)", timeout=WAIT_MS)
    expect(result).to_contain_text('item "ghost" not found')
    page.get_by_test_id("operation-input").fill('{"id": "p2",')
    page.get_by_test_id("execute-operation").click()
    expect(result).to_contain_text("Not valid JSON", timeout=WAIT_MS)
    screenshot(page, "tables-operation")
