"""The dashboard's Overview area in Chromium against a real ``mockd start``: after traffic on
the data plane it shows the request count, the error rate, the mocks by type, the top mocks by
hits and the server's ports, refreshed while the page is open; leaving the page stops the
refreshes."""
from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import screenshot

expect = pytest.importorskip("playwright.sync_api").expect


def test_the_overview_shows_the_traffic(page, dashboard_server, admin_api, data):
    for path, count in (("/ov/busy", 6), ("/ov/quiet", 2)):
        answer = admin_api.post("/mocks", json={
            "type": "http", "name": f"overview {path}",
            "http": {"matcher": {"method": "GET", "path": path},
                     "response": {"statusCode": 200, "body": "ok"}}})
        assert answer.status_code == 201, answer.text
        for _ in range(count):
            assert data.get(path).status_code == 200
    assert data.get("/ov/none").status_code == 404
    busy = next(m for m in admin_api.get("/mocks").json()["mocks"] if m["name"] == "overview /ov/busy")

    page.goto(dashboard_server.admin + "/")
    expect(page.locator("section.page-overview")).to_be_visible()
    expect(page.get_by_test_id("requests-total")).to_have_text("9")
    expect(page.get_by_test_id("error-rate")).to_have_text("11.1%")
    expect(page.get_by_test_id("mocks-total")).to_have_text("2")
    expect(page.locator("[data-testid=mocks-by-type] li[data-type=http]")).to_contain_text("2")
    expect(page.get_by_test_id("server-state")).to_have_text("running")
    top = page.locator("[data-testid=top-mocks] tbody tr")
    expect(top.first).to_have_attribute("data-mock-id", busy["id"])
    expect(top.first.get_by_test_id("top-mock-hits")).to_have_text("6")
    expect(page.get_by_test_id("ports")).to_contain_text("Admin API")
    expect(page.get_by_test_id("rps-sparkline").locator("polyline")).to_have_count(1)

    # New traffic shows at the next refresh (every 2 s) without reloading the page.
    for _ in range(3):
        data.get("/ov/quiet")
    expect(page.get_by_test_id("requests-total")).to_have_text("12")
    points = page.get_by_test_id("rps-sparkline").locator("polyline").get_attribute("points")
    assert len(points.split()) >= 1
    screenshot(page, "overview")


def test_leaving_the_overview_stops_its_refreshes(page, dashboard_server):
    # The page's clock is run forward instead of waited for: its timers fire at once.
    polls = re.compile(r"/(metrics|status)$")
    page.clock.install()
    page.goto(dashboard_server.admin + "/#/overview")
    expect(page.get_by_test_id("server-state")).to_have_text("running")
    # While the overview is shown, it refreshes every 2 s.
    with page.expect_request(lambda request: bool(polls.search(request.url))):
        page.clock.run_for(2500)
    page.click("#nav a[data-area=transfer]")
    expect(page.locator("section.page-transfer")).to_be_visible()
    calls: list[str] = []
    page.on("request", lambda request: calls.append(request.url))
    page.clock.run_for(12_000)  # six refresh periods (and one of the header's /health)
    # A request of the test's own, started after any the timers started, marks the end.
    with page.expect_request("**/health?after-the-timers"):
        page.evaluate("fetch('/health?after-the-timers')")
    assert not [url for url in calls if polls.search(url)], calls
