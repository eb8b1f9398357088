"""The dashboard's Mocks area in Chromium against a real ``mockd start``: a mock created from a
template is served on the data plane, a YAML edit changes the answer, an invalid edit shows
the server's error at its key and changes nothing, the toggle disables a mock (404 on the data
plane), duplicate and delete, hit counts, and a list of 1,000 mocks that filters in memory."""
from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import EXPECTED_400, WAIT_MS, screenshot

expect = pytest.importorskip("playwright.sync_api").expect

def create(admin_api, path: str, body, name: str = "", **query) -> dict:
    mock = {"type": "http", "name": name or f"mock {path}",
            "http": {"matcher": {"method": "GET", "path": path},
                     "response": {"statusCode": 200, "body": body}}}
    answer = admin_api.post("/mocks", json=mock, params=query)
    assert answer.status_code == 201, answer.text
    return answer.json()["mock"]


def editor_text(page) -> str:
    return page.get_by_test_id("mock-editor-text").input_value()


def test_create_from_a_template_and_call_it(page, dashboard_server, admin_api, data):
    page.goto(dashboard_server.admin + "/#/mocks")
    page.get_by_test_id("new-mock").click()
    page.get_by_test_id("template-http-json").click()
    text = page.get_by_test_id("new-editor-text")
    expect(text).to_have_value(re.compile(r"path: /api/products"))
    screenshot(page, "mocks-new")
    text.fill(text.input_value().replace("/api/products", "/ui/products")
              .replace("name: List products", "name: Products from the UI"))
    page.get_by_test_id("new-editor-save").click()
    expect(page.get_by_test_id("mock-name")).to_have_text("Products from the UI")
    mock_id = page.evaluate("location.hash").split("/")[2]
    assert mock_id.startswith("http_")
    answer = data.get("/ui/products")
    assert answer.status_code == 200
    assert answer.json() == [{"id": 1, "name": "Keyboard", "price": 49.9},
                             {"id": 2, "name": "Mouse", "price": 19.9}]
    assert admin_api.get(f"/mocks/{mock_id}").json()["name"] == "Products from the UI"


def test_a_yaml_edit_changes_the_answer(page, dashboard_server, admin_api, data):
    mock = create(admin_api, "/ui/edit", {"version": "one"})
    page.goto(f"{dashboard_server.admin}/#/mocks/{mock['id']}?tab=edit")
    expect(page.get_by_test_id("mock-editor-text")).to_have_value(re.compile("version: one"))
    page.get_by_test_id("mock-editor-text").fill(editor_text(page).replace("version: one", "version: two"))
    page.get_by_test_id("mock-editor-save").click()
    page.get_by_test_id("tab-definition").click()
    expect(page.get_by_test_id("mock-definition")).to_contain_text("version: two")
    assert data.get("/ui/edit").json() == {"version": "two"}
    screenshot(page, "mock")


def test_an_invalid_edit_shows_the_error_at_its_key_and_changes_nothing(
        page, expected_console, dashboard_server, admin_api, data):
    expected_console.append(EXPECTED_400)
    mock = create(admin_api, "/ui/invalid", {"kept": True})
    page.goto(f"{dashboard_server.admin}/#/mocks/{mock['id']}?tab=edit")
    expect(page.get_by_test_id("mock-editor-text")).to_have_value(re.compile("statusCode: 200"))
    page.get_by_test_id("mock-editor-text").fill(
        editor_text(page).replace("statusCode: 200", "statusCode: abc"))
    page.get_by_test_id("mock-editor-save").click()
    error = page.locator("[data-testid=mock-editor-preview] [data-testid=field-error]"
                         "[data-path='http.response.statusCode']")
    expect(error).to_be_visible()
    expect(error).to_contain_text("valid integer")
    # The error row sits right under the line of the key it names.
    line = error.locator("xpath=preceding-sibling::span[contains(@class,'line')][1]")
    expect(line).to_contain_text("statusCode: abc")
    expect(line).to_have_class(re.compile("has-error"))
    expect(page.get_by_test_id("mock-editor-errors")).to_contain_text("http.response.statusCode")
    screenshot(page, "mock-invalid-edit")
    assert admin_api.get(f"/mocks/{mock['id']}").json()["http"]["response"]["statusCode"] == 200
    answer = data.get("/ui/invalid")
    assert (answer.status_code, answer.json()) == (200, {"kept": True})
    # A YAML syntax error is caught before anything is sent, at its line.
    page.get_by_test_id("mock-editor-text").fill("type: http\nhttp: [unclosed\n")
    page.get_by_test_id("mock-editor-save").click()
    expect(page.get_by_test_id("mock-editor-errors")).to_contain_text("YAML")
    assert admin_api.get(f"/mocks/{mock['id']}").json()["http"]["response"]["statusCode"] == 200


def test_the_toggle_disables_a_mock(page, dashboard_server, admin_api, data):
    mock = create(admin_api, "/ui/toggle", "on", name="toggled mock")
    assert data.get("/ui/toggle").status_code == 200
    page.goto(dashboard_server.admin + "/#/mocks")
    row = page.locator(f"tr[data-mock-id='{mock['id']}']")
    toggle = row.get_by_test_id("mock-toggle")
    expect(toggle).to_be_checked()
    toggle.click()
    expect(page.locator("#toasts")).to_contain_text("toggled mock: Mock disabled")
    expect(row).to_have_class(re.compile("disabled"))
    assert admin_api.get(f"/mocks/{mock['id']}").json()["enabled"] is False
    assert data.get("/ui/toggle").status_code == 404
    toggle.click()
    expect(page.locator("#toasts")).to_contain_text("toggled mock: Mock enabled")
    assert data.get("/ui/toggle").status_code == 200


def test_duplicate_then_delete(page, dashboard_server, admin_api):
    mock = create(admin_api, "/ui/dup", "x", name="original")
    page.goto(f"{dashboard_server.admin}/#/mocks/{mock['id']}")
    page.get_by_test_id("duplicate-mock").click()
    expect(page.get_by_test_id("mock-name")).to_have_text("original (copy)")
    copy_id = page.evaluate("location.hash").split("/")[2]
    assert copy_id != mock["id"]
    copy = admin_api.get(f"/mocks/{copy_id}").json()
    assert copy["http"] == mock["http"]
    page.get_by_test_id("delete-mock").click()
    page.get_by_test_id("confirm-no").click()
    assert admin_api.get(f"/mocks/{copy_id}").status_code == 200
    page.get_by_test_id("delete-mock").click()
    page.get_by_test_id("confirm-yes").click()
    expect(page.get_by_test_id("mock-table")).to_be_visible()
    assert admin_api.get(f"/mocks/{copy_id}").status_code == 404
    assert admin_api.get(f"/mocks/{mock['id']}").status_code == 200
    expect(page.locator(f"tr[data-mock-id='{copy_id}']")).to_have_count(0)


def test_the_list_shows_hit_counts_and_filters(page, dashboard_server, admin_api, data):
    mock = create(admin_api, "/ui/hits", "hit", name="hit me")
    for _ in range(3):
        assert data.get("/ui/hits").status_code == 200
    page.goto(dashboard_server.admin + "/#/mocks")
    row = page.locator(f"tr[data-mock-id='{mock['id']}']")
    expect(row.get_by_test_id("mock-hits")).to_have_text("3")
    screenshot(page, "mocks")
    page.get_by_test_id("mock-filter").fill("hit me")
    expect(page.locator("[data-testid=mock-table] tbody tr:visible")).to_have_count(1)
    expect(row).to_be_visible()


def test_a_thousand_mocks_render_once_and_filter_in_memory(page, dashboard_server, admin_api):
    workspace = admin_api.post("/workspaces", json={"name": "Thousand"}).json()
    mocks = [{"type": "http", "name": f"bulk {n:04d}",
              "http": {"matcher": {"method": "GET", "path": f"/bulk/{n}"},
                       "response": {"statusCode": 200, "body": n}}} for n in range(1000)]
    answer = admin_api.post("/mocks/bulk", json=mocks, params={"workspaceId": workspace["id"]},
                            timeout=120)
    assert answer.status_code == 201, answer.text
    page.context.add_init_script(f"sessionStorage.setItem('mockd.workspace', {workspace['id']!r});")
    calls: list[str] = []
    page.on("request", lambda request: calls.append(request.url))
    started = time.monotonic()
    page.goto(dashboard_server.admin + "/#/mocks")
    expect(page.get_by_test_id("mock-count")).to_have_text("1000 mocks", timeout=WAIT_MS)
    elapsed = time.monotonic() - started
    before = len(calls)
    # A path no random id (hex) can contain: "0999" alone also matches ids like http_…0999….
    page.get_by_test_id("mock-filter").fill("/bulk/999")
    expect(page.get_by_test_id("mock-count")).to_have_text("1 of 1000")
    expect(page.locator("[data-testid=mock-table] tbody tr:visible")).to_have_count(1)
    page.get_by_test_id("mock-filter").fill("")
    expect(page.get_by_test_id("mock-count")).to_have_text("1000 mocks")
    assert len(calls) == before, f"filtering called the server: {calls[before:]}"
    mock_calls = [url for url in calls if re.search(r"/mocks/[^?]", url)]
    assert not mock_calls, f"per-row calls: {mock_calls[:5]}"
    print(f"1000 mocks listed in {elapsed:.2f} s")
    assert elapsed < 30  # a loaded 2-core machine; the figure itself is in bench/dashboard.py
