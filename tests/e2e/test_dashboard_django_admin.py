"""The Django admin in Chromium: opened from the dashboard's header, logged in with the
superuser ``mockd start`` created, a mock's answer changed through its form (CSRF token and
all, as a user submits it); invalid JSON is shown at the field and changes nothing, a valid
change is served by the data plane at once."""
from __future__ import annotations

import json
import time
from pathlib import Path


from tests.e2e.conftest import WAIT_MS, screenshot

MOCK_ID = "admin-e2e"


def _admin_password(server) -> str:
    """The one-time password of the superuser, from the server's data directory."""
    data_dir = Path(server.argv[server.argv.index("--data-dir") + 1])
    path = data_dir / "django-admin-password"
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline and not path.exists():
        time.sleep(0.1)
    return path.read_text().strip()


def _served(data) -> tuple[int, str]:
    answer = data.get("/admin-e2e")
    return answer.status_code, answer.text


def test_a_mock_changed_in_the_django_admin_is_served_at_once(page, dashboard_server,
                                                              admin_api, data):
    created = admin_api.post("/mocks", json={
        "id": MOCK_ID, "type": "http", "http": {
            "matcher": {"method": "GET", "path": "/admin-e2e"},
            "response": {"statusCode": 200, "body": "before"}}})
    assert created.status_code == 201, created.text
    assert _served(data) == (200, "before")

    page.goto(dashboard_server.admin + "/")
    with page.expect_popup() as popup_info:
        page.click("#nav a[href='/admin/']")
    admin = popup_info.value
    admin.set_default_timeout(WAIT_MS)
    admin.get_by_label("Username").fill("admin")
    admin.get_by_label("Password").fill(_admin_password(dashboard_server))
    admin.get_by_role("button", name="Log in").click()
    admin.locator("#mockd-links").wait_for()

    admin.goto(f"{dashboard_server.admin}/admin/mocks/mock/{MOCK_ID}/change/")
    editor = admin.locator("#id_config")
    editor.fill('{"matcher": {"method": "GET", "path": "/admin-e2e"}, "response": {')
    admin.get_by_role("button", name="Save", exact=True).click()
    error = admin.locator(".field-config .errorlist")
    error.wait_for()
    assert error.inner_text().startswith("Enter valid JSON")
    assert _served(data) == (200, "before")

    editor = admin.locator("#id_config")
    editor.fill(json.dumps({"matcher": {"method": "GET", "path": "/admin-e2e"},
                            "response": {"statusCode": 202, "body": "after"}}, indent=2))
    admin.get_by_role("button", name="Save and continue editing").click()
    admin.locator(".messagelist .success").wait_for()
    assert _served(data) == (202, "after")
    assert json.loads(admin.locator("#id_config").input_value())["response"]["body"] == "after"
    screenshot(admin, "django-admin")
