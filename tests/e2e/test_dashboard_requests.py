"""The dashboard's Request log in Chromium: a request sent to the data plane with httpx appears
live (the SSE stream, no reload), the matched/unmatched and path filters, an unmatched
request's near misses compared side by side with what the near mock expected, and "Create a
mock from this request" in one click, after which the same request matches; a burst of
requests keeps the page responsive with at most 500 rows (issue 30; behavior notes §1
"Request log", §4)."""
from __future__ import annotations

import time

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import WAIT_MS, screenshot


@pytest.fixture(scope="module")
def greeting(admin_api):
    """An HTTP mock ``GET /greeting`` that wants header ``X-Team: blue``."""
    answer = admin_api.post("/mocks", json={
        "id": "http_00000000000000a1", "type": "http", "name": "Greeting",
        "http": {"matcher": {"method": "GET", "path": "/greeting", "headers": {"X-Team": "blue"}},
                 "response": {"statusCode": 200, "body": "hello"}}})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def open_log(page, dashboard_server):
    page.goto(dashboard_server.admin + "/#/requests")
    expect(page.get_by_test_id("stream-status")).to_have_text("live", timeout=WAIT_MS)


def test_a_request_appears_live_and_filters_apply(page, dashboard_server, greeting):
    open_log(page, dashboard_server)
    with httpx.Client(base_url=dashboard_server.base, timeout=10) as data:
        assert data.get("/greeting", headers={"X-Team": "blue"}).status_code == 200
        assert data.get("/live-unmatched-path").status_code == 404
    rows = page.get_by_test_id("request-row")
    expect(rows.filter(has_text="/live-unmatched-path")).to_have_count(1, timeout=WAIT_MS)
    matched = rows.filter(has_text="/greeting").first
    expect(matched).to_contain_text(greeting)
    page.get_by_test_id("filter-matched").select_option("unmatched")
    expect(rows.filter(has_text="/greeting")).to_have_count(0, timeout=WAIT_MS)
    expect(rows.filter(has_text="/live-unmatched-path")).to_have_count(1)
    page.get_by_test_id("filter-matched").select_option("all")
    page.get_by_test_id("filter-path").fill("/greet")
    expect(rows.filter(has_text="/live-unmatched-path")).to_have_count(0, timeout=WAIT_MS)
    expect(rows.filter(has_text="/greeting").first).to_be_visible()
    # A request that arrives while the filter is on shows only when it passes.
    with httpx.Client(base_url=dashboard_server.base, timeout=10) as data:
        data.get("/live-unmatched-path")
        data.get("/greeting", headers={"X-Team": "blue"}, params={"n": "2"})
    expect(rows.filter(has_text="n=2")).to_have_count(1, timeout=WAIT_MS)
    expect(rows.filter(has_text="/live-unmatched-path")).to_have_count(0)
    screenshot(page, "requests")


def test_an_unmatched_request_shows_near_misses_and_becomes_a_mock(page, dashboard_server,
                                                                   greeting):
    with httpx.Client(base_url=dashboard_server.base, timeout=10) as data:
        missed = data.get("/greeting", headers={"X-Team": "red"})
        assert missed.status_code == 404
    open_log(page, dashboard_server)
    page.get_by_test_id("request-row").filter(has_text="/greeting").filter(
        has_text="unmatched").first.get_by_test_id("request-link").click()
    near = page.get_by_test_id("near-miss").filter(has_text=greeting)
    expect(near).to_be_visible(timeout=WAIT_MS)
    header_row = near.locator("tr", has_text="header X-Team")
    expect(header_row).to_contain_text("red")  # what the request had
    expect(header_row).to_contain_text("blue")  # what the mock expected
    expect(near.locator("tr", has_text="method")).to_contain_text("GET")
    screenshot(page, "request-detail")

    page.get_by_test_id("new-mock-body").fill('{"made": "from the log"}')
    page.get_by_test_id("create-mock").click()
    page.wait_for_url("**/#/mocks/http_*", timeout=WAIT_MS)
    new_id = page.url.rsplit("/", 1)[-1]
    assert new_id != greeting
    with httpx.Client(base_url=dashboard_server.base, timeout=10) as data:
        again = data.get("/greeting", headers={"X-Team": "red"})
    assert again.status_code == 200
    assert again.json() == {"made": "from the log"}
    latest = httpx.get(dashboard_server.admin + "/requests", params={"limit": 1},
                       headers={"X-API-Key": dashboard_server.api_key}).json()["requests"][0]
    assert latest["matchedMockId"] == new_id


def test_a_burst_keeps_at_most_500_rows_and_the_page_responsive(page, dashboard_server):
    open_log(page, dashboard_server)
    started = time.monotonic()
    with httpx.Client(base_url=dashboard_server.base, timeout=10) as data:
        for number in range(700):
            data.get(f"/burst/{number}")
            if time.monotonic() - started > 60:
                break
    rows = page.get_by_test_id("request-row")
    expect(rows.first).to_contain_text(f"/burst/{number}", timeout=WAIT_MS)
    assert rows.count() <= 500
    # The page answers promptly (no long freeze while rows were added).
    begin = time.monotonic()
    page.evaluate("1 + 1")
    assert time.monotonic() - begin < 2
