"""The dashboard's Import / export area in Chromium against a real ``mockd start``: a pasted or
uploaded collection gets a dry-run preview (what would be created or replaced, the warnings,
nothing changed) and is then imported; an invalid one shows the server's error at its key; a
document of another format is named; each export download equals the admin API's answer."""
from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml


expect = pytest.importorskip("playwright.sync_api").expect

from tests.e2e.conftest import EXPECTED_400, screenshot  # noqa: E402


#: Keys of a client collection that carry the time it was made (they differ between two
#: exports of the same mocks).
TIME_KEYS = {"__export_date", "created", "modified"}


def timeless(value):
    """``value`` (parsed JSON/YAML) without the :data:`TIME_KEYS` at any depth."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in TIME_KEYS}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def collection(*mocks: dict) -> dict:
    return {"version": "1.0", "mocks": list(mocks)}


def http(path: str, body, mock_id: str | None = None, status: int = 200) -> dict:
    mock = {"type": "http", "name": f"imported {path}",
            "http": {"matcher": {"method": "GET", "path": path},
                     "response": {"statusCode": status, "body": body}}}
    if mock_id:
        mock["id"] = mock_id
    return mock


def test_paste_preview_then_import(page, dashboard_server, admin_api):
    existing = admin_api.post("/mocks", json=http("/tr/old", "old")).json()["mock"]
    document = collection(http("/tr/new", {"fresh": True}),
                          {**http("/tr/old", "replaced"), "id": existing["id"]})
    page.goto(dashboard_server.admin + "/#/transfer")
    page.get_by_test_id("import-text").fill(yaml.safe_dump(document, sort_keys=False))
    expect(page.get_by_test_id("import-apply")).to_be_disabled()
    page.get_by_test_id("import-preview").click()
    expect(page.get_by_test_id("import-summary")).to_contain_text("2 mocks would be imported")
    expect(page.get_by_test_id("import-warnings")).to_contain_text(
        f"{existing['id']}: a mock with this id exists")
    rows = page.locator("[data-testid=import-preview-table] tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_have_attribute("data-action", "create")
    expect(rows.nth(0)).to_contain_text("/tr/new")
    expect(rows.nth(1)).to_have_attribute("data-action", "replace")
    screenshot(page, "transfer")
    # The dry run changed nothing.
    assert httpx.get(dashboard_server.base + "/tr/new", timeout=10).status_code == 404
    assert httpx.get(dashboard_server.base + "/tr/old", timeout=10).text == "old"

    page.get_by_test_id("import-apply").click()
    expect(page.get_by_test_id("import-done")).to_contain_text("2 mocks imported")
    assert httpx.get(dashboard_server.base + "/tr/new", timeout=10).json() == {"fresh": True}
    assert httpx.get(dashboard_server.base + "/tr/old", timeout=10).text == "replaced"


def test_upload_a_json_file(page, dashboard_server, admin_api):
    document = collection(http("/tr/uploaded", "from a file"))
    page.goto(dashboard_server.admin + "/#/transfer")
    page.get_by_test_id("import-file").set_input_files(files=[{
        "name": "mocks.json", "mimeType": "application/json",
        "buffer": json.dumps(document).encode()}])
    expect(page.get_by_test_id("import-text")).to_have_value(json.dumps(document))
    page.get_by_test_id("import-preview").click()
    expect(page.get_by_test_id("import-summary")).to_contain_text("1 mock would be imported")
    page.get_by_test_id("import-apply").click()
    expect(page.get_by_test_id("import-done")).to_be_visible()
    assert httpx.get(dashboard_server.base + "/tr/uploaded", timeout=10).text == "from a file"


def test_an_invalid_collection_shows_the_error_at_its_key(page, expected_console,
                                                          dashboard_server, admin_api):
    expected_console.append(EXPECTED_400)
    before = admin_api.get("/mocks").json()["total"]
    document = collection(http("/tr/fine", "ok"), http("/tr/bad", "x", status="abc"))
    page.goto(dashboard_server.admin + "/#/transfer")
    page.get_by_test_id("import-text").fill(yaml.safe_dump(document, sort_keys=False))
    page.get_by_test_id("import-preview").click()
    error = page.locator("[data-testid=field-error][data-path='mocks[1].http.response.statusCode']")
    expect(error).to_be_visible()
    line = error.locator("xpath=preceding-sibling::span[contains(@class,'line')][1]")
    expect(line).to_contain_text("statusCode: abc")
    expect(page.get_by_test_id("import-apply")).to_be_disabled()
    assert admin_api.get("/mocks").json()["total"] == before


def test_another_format_is_named(page, dashboard_server):
    page.goto(dashboard_server.admin + "/#/transfer")
    page.get_by_test_id("import-text").fill(json.dumps(
        {"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {}}))
    page.get_by_test_id("import-preview").click()
    expect(page.get_by_test_id("import-other-format")).to_contain_text("OpenAPI")
    expect(page.get_by_test_id("import-other-format")).to_contain_text("mockd import")
    expect(page.get_by_test_id("import-apply")).to_be_disabled()


@pytest.mark.parametrize(("testid", "path", "params"), [
    ("export-config-yaml", "/config", {"format": "yaml"}),
    ("export-config-json", "/config", {"format": "json"}),
    ("export-openapi-json", "/openapi.json", {}),
    ("export-openapi-yaml", "/openapi.yaml", {}),
    ("export-insomnia-json", "/insomnia.json", {}),
    ("export-insomnia-yaml", "/insomnia.yaml", {}),
])
def test_export_downloads_equal_the_admin_api(page, dashboard_server, admin_api, testid, path,
                                              params):
    admin_api.post("/mocks", json=http(f"/tr/export/{testid}", {"n": 1}))
    page.goto(dashboard_server.admin + "/#/transfer")
    with page.expect_download() as info:
        page.get_by_test_id(testid).click()
    download = info.value
    content = Path(download.path()).read_bytes()
    expected = admin_api.get(path, params=params)
    assert expected.status_code == 200
    if path.startswith("/insomnia"):  # made at the time of the export: compare the rest
        assert timeless(yaml.safe_load(content)) == timeless(yaml.safe_load(expected.content))
        assert yaml.safe_load(content) != timeless(yaml.safe_load(content))
    else:
        assert content == expected.content
    assert download.suggested_filename.endswith(path.rsplit(".", 1)[-1] if "." in path
                                                else params["format"])
