"""The Recordings area (``#/recordings``) in Chromium: the proxy is started from the page, a
request made through it to a small loopback HTTP server shows up as a recording whose detail
shows the decoded bodies, the recording becomes a mock that the data plane serves, and the
proxy is stopped from the page."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import WAIT_MS, screenshot
from tests.helpers import free_port


class _Upstream(BaseHTTPRequestHandler):
    """Answers ``GET /greeting`` with a small JSON body."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's spelling
        body = b'{"greeting": "hello from upstream"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def upstream():
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _Upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_proxy_started_from_the_page_records_and_converts(page, dashboard_server, admin_api,
                                                         upstream, data):
    proxy_port = free_port()
    page.goto(dashboard_server.admin + "/#/recordings")
    expect(page.get_by_test_id("proxy-running")).to_have_text("stopped")
    page.fill("#proxy-port", str(proxy_port))
    page.select_option("#proxy-mode", "record")
    page.fill("#proxy-session", "e2e-session")
    page.get_by_test_id("proxy-start").click()
    expect(page.get_by_test_id("proxy-running")).to_have_text("running")
    expect(page.get_by_test_id("proxy-port-value")).to_have_text(str(proxy_port))
    expect(page.get_by_test_id("sessions")).to_contain_text("e2e-session")

    with httpx.Client(proxy=f"http://127.0.0.1:{proxy_port}", timeout=10) as client:
        answer = client.get(upstream + "/greeting")
    assert answer.json() == {"greeting": "hello from upstream"}

    # the status poll notices the new recording and the list shows it
    expect(page.get_by_test_id("proxy-count")).to_have_text("1", timeout=WAIT_MS)
    recording_id = admin_api.get("/recordings").json()["recordings"][0]["id"]
    row = page.locator("[data-testid=http-recordings] tr", has_text="/greeting")
    expect(row).to_contain_text("GET")
    expect(row).to_contain_text("200")
    page.get_by_test_id(f"recording-open-{recording_id}").click()
    expect(page.get_by_test_id("recording-response-body")).to_contain_text(
        '"greeting": "hello from upstream"')
    expect(page.get_by_test_id("recording-detail")).to_contain_text("Content-Type")

    page.select_option("#proxy-switch-mode", "passthrough")
    page.get_by_test_id("proxy-switch").click()
    expect(page.get_by_test_id("proxy-mode-value")).to_have_text("passthrough")

    page.get_by_test_id(f"recording-select-{recording_id}").check()
    page.get_by_test_id("recordings-convert").click()
    expect(page.locator("#toasts")).to_contain_text("1 mock(s) created")
    served = data.get("/greeting")
    assert served.status_code == 200 and served.json() == {"greeting": "hello from upstream"}

    page.get_by_test_id("ca-create").click()
    expect(page.get_by_test_id("proxy-ca")).to_contain_text("present")
    with page.expect_download() as download_info:
        page.get_by_test_id("ca-download").click()
    pem = open(download_info.value.path(), encoding="ascii").read()
    assert pem.startswith("-----BEGIN CERTIFICATE-----")
    assert download_info.value.suggested_filename == "mockd-ca.crt"
    screenshot(page, "recordings")
    page.get_by_test_id("proxy-stop").click()
    expect(page.get_by_test_id("proxy-running")).to_have_text("stopped")
    assert admin_api.get("/proxy/status").json()["running"] is False
