"""The dashboard's Chaos area in Chromium: a named profile applied from the page is the config
``GET /chaos`` answers, chaos turned off from the page, the fault statistics counting requests,
and a circuit breaker tripped and reset from the page (issue 30; behavior notes §1 "Chaos",
§11)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import EXPECTED_400, WAIT_MS, screenshot


@pytest.fixture(autouse=True)
def chaos_off(admin_api):
    yield
    admin_api.put("/chaos", json={"enabled": False})


def test_apply_a_profile_then_turn_chaos_off(page, dashboard_server, admin_api):
    page.goto(dashboard_server.admin + "/#/chaos")
    expect(page.get_by_test_id("chaos-state")).to_have_text("off", timeout=WAIT_MS)
    page.locator("button[data-profile='degraded']").click()
    expect(page.get_by_test_id("chaos-state")).to_have_text("on", timeout=WAIT_MS)
    expect(page.get_by_test_id("chaos-summary")).to_contain_text("errors 5% [503]")
    config = admin_api.get("/chaos").json()
    profile = admin_api.get("/chaos/profiles/degraded").json()["config"]
    assert config["enabled"] is True
    assert config["latency"] == profile["latency"]
    assert config["errorRate"]["statusCodes"] == [503]
    screenshot(page, "chaos")
    page.get_by_test_id("chaos-off").click()
    expect(page.get_by_test_id("chaos-state")).to_have_text("off", timeout=WAIT_MS)
    assert admin_api.get("/chaos").json() == {"enabled": False}


def test_trip_and_reset_a_circuit_breaker(page, dashboard_server, admin_api, data):
    assert admin_api.put("/chaos", json={"enabled": True, "rules": [{
        "pathPattern": "^/guarded", "faults": [{"type": "circuit_breaker",
                                                 "config": {"failureThreshold": 3}}]}]}
    ).status_code == 200
    admin_api.post("/chaos/stats/reset")
    page.clock.install()  # run forward to the next refresh below instead of waiting
    page.goto(dashboard_server.admin + "/#/chaos")
    breaker = page.locator("tr[data-breaker='0:0']")
    expect(breaker.get_by_test_id("breaker-state")).to_have_text("closed", timeout=WAIT_MS)
    breaker.get_by_test_id("trip-breaker").click()
    expect(breaker.get_by_test_id("breaker-state")).to_have_text("open", timeout=WAIT_MS)
    assert admin_api.get("/chaos/faults").json()["circuitBreakers"]["0:0"]["state"] == "open"
    rejected = data.get("/guarded")
    assert rejected.status_code == 503
    assert rejected.headers["X-Circuit-State"] == "open"
    # The statistics refresh by themselves (every 2 s).
    page.clock.run_for(2000)
    expect(page.locator("[data-stat='totalRequests']")).to_have_text("1", timeout=WAIT_MS)
    screenshot(page, "chaos-breaker")
    breaker.get_by_test_id("reset-breaker").click()
    expect(breaker.get_by_test_id("breaker-state")).to_have_text("closed", timeout=WAIT_MS)
    assert admin_api.get("/chaos/faults").json()["circuitBreakers"]["0:0"]["state"] == "closed"


def test_edit_the_config_as_json(page, dashboard_server, admin_api, expected_console):
    expected_console.append(EXPECTED_400)
    page.goto(dashboard_server.admin + "/#/chaos")
    expect(page.get_by_test_id("chaos-state")).to_have_text("off", timeout=WAIT_MS)
    page.get_by_test_id("edit-chaos").click()
    page.get_by_test_id("chaos-json").fill('{"enabled": true, "errorRate": {"probability": 2}}')
    page.get_by_test_id("save-chaos").click()
    expect(page.get_by_test_id("chaos-error")).to_contain_text("probability", timeout=WAIT_MS)
    assert admin_api.get("/chaos").json() == {"enabled": False}
    page.get_by_test_id("chaos-json").fill(
        '{"enabled": true, "errorRate": {"probability": 0.5, "statusCodes": [502]}}')
    page.get_by_test_id("save-chaos").click()
    expect(page.get_by_test_id("chaos-state")).to_have_text("on", timeout=WAIT_MS)
    expect(page.get_by_test_id("chaos-summary")).to_contain_text("errors 50% [502]")
    assert admin_api.get("/chaos").json()["errorRate"]["probability"] == 0.5
