"""The dashboard's Import / export area in Chromium against a real ``mockd start``: a pasted or
uploaded collection gets a dry-run preview (what would be created or replaced, the warnings,
nothing changed) and is then imported; an invalid one shows the server's error at its key; an
OpenAPI document (``@readme/oas-examples``' petstore, from npm) and pasted curl commands are
converted by the server (``POST /import``), previewed operation by operation and imported; a
document the server cannot convert shows its message; each export download equals the admin
API's answer."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml


expect = pytest.importorskip("playwright.sync_api").expect

from tests.e2e.conftest import EXPECTED_400, WAIT_MS, screenshot  # noqa: E402
from tests.thirdparty import OAS_EXAMPLES, package_root  # noqa: E402


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


def test_paste_preview_then_import(page, dashboard_server, admin_api, data):
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
    assert data.get("/tr/new").status_code == 404
    assert data.get("/tr/old").text == "old"

    page.get_by_test_id("import-apply").click()
    expect(page.get_by_test_id("import-done")).to_contain_text("2 mocks imported")
    assert data.get("/tr/new").json() == {"fresh": True}
    assert data.get("/tr/old").text == "replaced"


def test_upload_a_json_file(page, dashboard_server, admin_api, data):
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
    assert data.get("/tr/uploaded").text == "from a file"


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


def test_an_openapi_document_is_previewed_and_imported(page, dashboard_server, admin_api,
                                                       data):
    spec = package_root(OAS_EXAMPLES) / "3.0" / "json" / "petstore.json"
    operations = {(method.upper(), path)
                  for path, item in json.loads(spec.read_text())["paths"].items()
                  for method in item if method in ("get", "put", "post", "delete", "patch")}
    before = admin_api.get("/mocks").json()["total"]
    page.goto(dashboard_server.admin + "/#/transfer")
    page.get_by_test_id("import-file").set_input_files(str(spec))
    expect(page.get_by_test_id("import-text")).not_to_be_empty(timeout=WAIT_MS)
    page.get_by_test_id("import-as").fill("shop")
    page.get_by_test_id("import-preview").click()
    expect(page.get_by_test_id("import-summary")).to_contain_text(
        f"{len(operations)} mocks would be imported", timeout=WAIT_MS)
    expect(page.get_by_test_id("import-detected-format")).to_contain_text("OpenAPI")
    rows = page.locator("[data-testid=import-preview-table] tbody tr")
    expect(rows).to_have_count(len(operations))
    listed = {tuple(rows.nth(index).locator("td").all_inner_texts()[3:5])
              for index in range(len(operations))}
    assert listed == operations
    expect(rows.first.locator("td").nth(1)).to_contain_text("shop.")
    screenshot(page, "transfer-openapi")
    assert admin_api.get("/mocks").json()["total"] == before  # the dry run changed nothing
    assert data.get("/store/inventory").status_code == 404

    page.get_by_test_id("import-apply").click()
    expect(page.get_by_test_id("import-done")).to_contain_text(
        f"{len(operations)} mocks imported", timeout=WAIT_MS)
    inventory = data.get("/store/inventory")
    assert inventory.status_code == 200
    assert inventory.headers["content-type"].startswith("application/json")
    assert admin_api.get("/mocks/shop.getInventory").status_code == 200


def test_pasted_curl_commands_are_imported(page, dashboard_server, data):
    page.goto(dashboard_server.admin + "/#/transfer")
    page.get_by_test_id("import-text").fill(
        "curl https://api.example.com/tr/curl/a -H 'X-Team: blue'\n"
        "curl -X POST https://api.example.com/tr/curl/b -d x=1\n")
    page.get_by_test_id("import-preview").click()
    expect(page.get_by_test_id("import-summary")).to_contain_text("2 mocks would be imported")
    expect(page.get_by_test_id("import-detected-format")).to_contain_text("curl")
    page.get_by_test_id("import-apply").click()
    expect(page.get_by_test_id("import-done")).to_contain_text("2 mocks imported")
    answer = data.get("/tr/curl/a", headers={"X-Team": "blue"})
    assert answer.status_code == 200


def test_a_document_the_server_cannot_convert_shows_its_message(page, expected_console,
                                                                dashboard_server):
    expected_console.append(EXPECTED_400)
    page.goto(dashboard_server.admin + "/#/transfer")
    page.get_by_test_id("import-text").fill(
        'syntax = "proto3";\nimport "shared/types.proto";\n'
        "service S { rpc M (A) returns (A); }\nmessage A {}\n")
    page.get_by_test_id("import-preview").click()
    errors = page.get_by_test_id("import-errors")
    expect(errors).to_contain_text("shared/types.proto", timeout=WAIT_MS)
    expect(errors).to_contain_text("self-contained documents only")
    expect(page.get_by_test_id("import-apply")).to_be_disabled()


#: The export buttons of the page: test id, the admin API path and query it downloads.
EXPORTS = (
    ("export-config-yaml", "/config", {"format": "yaml"}),
    ("export-config-json", "/config", {"format": "json"}),
    ("export-openapi-json", "/openapi.json", {}),
    ("export-openapi-yaml", "/openapi.yaml", {}),
    ("export-insomnia-json", "/insomnia.json", {}),
    ("export-insomnia-yaml", "/insomnia.yaml", {}),
)


def test_export_downloads_equal_the_admin_api(page, dashboard_server, admin_api):
    """Each of the six export buttons, clicked in turn on one page, downloads what the admin
    API answers (Insomnia's time stamps aside) under a file name of its format."""
    admin_api.post("/mocks", json=http("/tr/export", {"n": 1}))
    page.goto(dashboard_server.admin + "/#/transfer")
    for testid, path, params in EXPORTS:
        with page.expect_download() as info:
            page.get_by_test_id(testid).click()
        download = info.value
        content = Path(download.path()).read_bytes()
        expected = admin_api.get(path, params=params)
        assert expected.status_code == 200, testid
        assert b"/tr/export" in content, testid
        if path.startswith("/insomnia"):  # made at the time of the export: compare the rest
            assert timeless(yaml.safe_load(content)) == timeless(yaml.safe_load(expected.content))
            assert yaml.safe_load(content) != timeless(yaml.safe_load(content))
        else:
            assert content == expected.content, testid
        assert download.suggested_filename.endswith(path.rsplit(".", 1)[-1] if "." in path
                                                    else params["format"]), testid
