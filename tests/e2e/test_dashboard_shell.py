"""The dashboard's frame in Chromium: the page at ``/`` of the admin port asks for the API key
once and keeps it for the tab, every area of the header opens, nothing is fetched from another
origin, and the API docs at ``/docs`` render offline."""
from __future__ import annotations

import re

from tests.e2e.conftest import WAIT_MS, screenshot

AREAS = ("overview", "mocks", "requests", "tables", "streams", "chaos", "recordings",
         "transfer", "try")


def test_the_key_prompt_appears_once_and_a_wrong_key_is_refused(browser, dashboard_server):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(dashboard_server.admin + "/#/mocks")
        dialog = page.locator("#key-dialog")
        dialog.wait_for(state="visible", timeout=WAIT_MS)
        page.fill("#key-input", "mk_" + "0" * 64)
        page.click("#key-form button[type=submit]")
        page.locator("#key-error").wait_for(state="visible", timeout=WAIT_MS)
        page.fill("#key-input", dashboard_server.api_key)
        page.click("#key-form button[type=submit]")
        dialog.wait_for(state="hidden", timeout=WAIT_MS)
        assert page.evaluate("sessionStorage.getItem('mockd.apiKey')") == dashboard_server.api_key
        page.reload()
        page.locator("section.page-mocks").wait_for(timeout=WAIT_MS)
        assert not dialog.is_visible()
    finally:
        context.close()


def test_every_area_of_the_header_opens(page, dashboard_server):
    page.goto(dashboard_server.admin + "/")
    for area in AREAS:
        page.click(f"#nav a[data-area={area}]")
        page.locator(f"section.page-{area}").wait_for(timeout=WAIT_MS)
        assert page.locator(f"#nav a[data-area={area}]").get_attribute("class") == "active"
    screenshot(page, "shell")


def test_api_docs_render_offline(page, dashboard_server):
    page.goto(dashboard_server.admin + "/")
    with page.expect_popup() as popup_info:
        page.click("#nav a[href='/docs']")
    docs = popup_info.value
    # The first OpenAPI document is built on demand (about 200 operations): seconds on a
    # loaded machine.
    docs.locator(".swagger-ui .opblock").first.wait_for(timeout=4 * WAIT_MS)
    assert re.search(r"/mocks", docs.content())
    screenshot(docs, "api-docs")
