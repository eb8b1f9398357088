"""The dashboard's frame in Chromium: the page at ``/`` of the admin port asks for the API key
once and keeps it for the tab, every area of the header opens, nothing is fetched from another
origin, and the API docs at ``/docs`` render offline."""
from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import WAIT_MS, OriginGuard, screenshot
from tests.helpers import free_port

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


def test_a_request_to_another_origin_fails_in_the_page_and_fails_the_test(browser,
                                                                          dashboard_server):
    """The guard of every browser test (``page`` fixture): a fetch, a script and an image of
    other hosts (a name, an address, another port of 127.0.0.1) are recorded, the two hosts
    other than 127.0.0.1 do not resolve in Chromium, and the check fails naming them."""
    context = browser.new_context()
    try:
        guard = OriginGuard(context, (dashboard_server.admin, dashboard_server.base))
        page = context.new_page()
        # A data-plane page: no Content-Security-Policy stops the requests before they start.
        page.goto(dashboard_server.base + "/no-such-mock")
        failures = page.evaluate("""async () => {
          const outcome = async (url) => {
            try { await fetch(url, {mode: "no-cors"}); return "fetched"; }
            catch (error) { return String(error); } };
          const image = new Image();
          const loaded = new Promise((resolve) => {
            image.onload = () => resolve("loaded"); image.onerror = () => resolve("failed"); });
          image.src = "http://10.255.255.1/pixel.png";
          const script = document.createElement("script");
          script.src = "https://cdn.example.com/lib.js";
          document.head.append(script);
          return [await outcome("https://cdn.example.com/api"), await loaded];
        }""")
        assert failures[0].startswith("TypeError"), failures  # not resolved: fetch fails
        assert failures[1] == "failed", failures
        other_port = f"http://127.0.0.1:{free_port()}/other"
        page.evaluate("url => fetch(url).catch(() => null)", other_port)
        page.evaluate("1")  # the request events above have been delivered
        with pytest.raises(AssertionError) as failed:
            guard.check()
        for url in ("https://cdn.example.com/api", "http://10.255.255.1/pixel.png",
                    "https://cdn.example.com/lib.js", other_port):
            assert url in guard.other_origins
            assert url in str(failed.value)
    finally:
        context.close()
