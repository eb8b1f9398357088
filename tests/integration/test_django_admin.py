"""The Django admin at ``/admin/`` of a real ``mockd start``: logging in with the superuser the
first start created, editing mocks, tables, bindings and custom operations through the admin's
forms (with their CSRF tokens), and the data plane answering the change at once; invalid JSON
or a config the schema refuses is shown at the field with nothing changed. Also the start
banner's dashboard URL."""
from __future__ import annotations

import html
import json
import queue
import re
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.helpers import MockdProcess, http_mock, make_config, start_server

CONFIG = make_config(
    http_mock("hello", "GET", "/hello", body="hi"),
    http_mock("list-users", "GET", "/users"),
    http_mock("gone", "GET", "/gone", body="still here"),
    tables=[{"name": "users", "seedData": [{"id": "1", "name": "Ada"}]}],
    extend=[{"mock": "list-users", "table": "users", "action": "list"}],
)
HELLO = {"matcher": {"method": "GET", "path": "/hello"},
         "response": {"statusCode": 200, "body": "hi"}}


def _read_banner(server: MockdProcess, timeout: float = 20.0) -> list[str]:
    """The lines ``mockd start`` printed on stdout up to ``Press Ctrl+C to stop``."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(raw.decode(errors="replace")) for raw in
                                     iter(server.proc.stdout.readline, b"")],
                     daemon=True).start()
    banner: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and "Press Ctrl+C to stop" not in banner:
        try:
            banner.append(lines.get(timeout=0.5).strip())
        except queue.Empty:
            pass
    return banner


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[MockdProcess]:
    """``mockd start`` with an API key and a table, a binding and three mocks."""
    tmp_path = tmp_path_factory.mktemp("django-admin")
    process = start_server(tmp_path, CONFIG, no_auth=False)
    try:
        process.banner = _read_banner(process)
        process.data_dir = tmp_path / "data"
        process.api_key = (process.data_dir / "admin-api-key").read_text().strip()
        yield process
    finally:
        process.stop()


def _password(server: MockdProcess) -> str:
    """The superuser's one-time password (written by a background thread at start)."""
    path = server.data_dir / "django-admin-password"
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not path.exists():
        time.sleep(0.1)
    return path.read_text().strip()


@pytest.fixture(scope="module")
def browser(server) -> Iterator[httpx.Client]:
    """An httpx client logged in to the Django admin (session and CSRF cookies)."""
    with httpx.Client(base_url=server.admin, trust_env=False, timeout=10,
                      headers={"Referer": server.admin + "/admin/"}) as client:
        client.get("/admin/login/")
        answer = client.post("/admin/login/", data={
            "username": "admin", "password": _password(server),
            "csrfmiddlewaretoken": client.cookies["csrftoken"], "next": "/admin/"})
        assert answer.status_code == 302 and answer.headers["location"] == "/admin/"
        yield client


def field_errors(page: str, field: str) -> list[str]:
    """The error texts shown at form field ``field`` of an admin page."""
    found = re.search(rf'<ul class="errorlist" id="id_{field}_error">(.*?)</ul>', page, re.S)
    if not found:
        return []
    return [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", found.group(1),
                                                         re.S)]


def form_wide_errors(page: str) -> list[str]:
    """Errors the admin shows above the form, not at a field."""
    return re.findall(r'<ul class="errorlist nonfield">(.*?)</ul>', page, re.S)


def post_mock(browser: httpx.Client, mock_id: str, config: str | dict,
              **fields: str) -> httpx.Response:
    """Submit the change form of mock ``mock_id`` with its CSRF token."""
    form = {"csrfmiddlewaretoken": browser.cookies["csrftoken"], "workspace": "local",
            "type": "http", "name": "", "description": "", "enabled": "on",
            "config": config if isinstance(config, str) else json.dumps(config), **fields}
    return browser.post(f"/admin/mocks/mock/{mock_id}/change/", data=form)


def post_definition(browser: httpx.Client, path: str, config: dict) -> httpx.Response:
    """Submit an add/change form of a table, binding or custom operation."""
    return browser.post(path, data={"csrfmiddlewaretoken": browser.cookies["csrftoken"],
                                    "workspace": "local", "config": json.dumps(config)})


def test_the_start_banner_names_the_dashboard(server):
    assert f"Dashboard: {server.admin}/" in server.banner, server.banner
    with httpx.Client(trust_env=False, timeout=10) as client:
        page = client.get(f"{server.admin}/")
    assert page.status_code == 200 and 'id="area"' in page.text


def test_the_admin_needs_its_own_login_not_the_api_key(server):
    with server.admin_client(headers={"X-API-Key": server.api_key}) as client:
        answer = client.get("/admin/mocks/mock/")
    assert answer.status_code == 302
    assert answer.headers["location"].startswith("/admin/login/")


def test_a_post_without_the_csrf_token_is_refused(server, browser):
    answer = browser.post("/admin/mocks/mock/hello/change/",
                          data={"type": "http", "enabled": "on", "config": json.dumps(HELLO)})
    assert answer.status_code == 403
    with server.client() as data:
        assert data.get("/hello").text == "hi"


def test_the_lists_show_every_kind_of_definition(browser):
    mocks = browser.get("/admin/mocks/mock/", params={"q": "hello"})
    assert mocks.status_code == 200 and "/hello" in mocks.text and "/gone" not in mocks.text
    assert "type=http" in mocks.text  # the type filter
    assert ">users<" in browser.get("/admin/tables/table/").text
    assert ">list-users<" in browser.get("/admin/tables/binding/").text
    assert browser.get("/admin/tables/customoperation/").status_code == 200
    home = browser.get("/admin/").text
    assert 'href="/#/recordings"' in home and 'href="/docs"' in home


def test_changing_a_mock_in_the_admin_changes_the_answer_at_once(server, browser):
    changed = {"matcher": {"method": "GET", "path": "/hello"},
               "response": {"statusCode": 201, "body": "changed in the admin"}}
    answer = post_mock(browser, "hello", changed, name="greeting")
    assert answer.status_code == 302, field_errors(answer.text, "config")
    with server.client() as data:
        served = data.get("/hello")
    assert (served.status_code, served.text) == (201, "changed in the admin")
    with server.admin_client(headers={"X-API-Key": server.api_key}) as admin:
        stored = admin.get("/mocks/hello").json()
    assert stored["name"] == "greeting" and stored["http"]["response"]["statusCode"] == 201


@pytest.mark.parametrize(("config", "expected"), [
    ('{"matcher": {"method": "GET", "path": "/hello"}, "response": {',
     "Enter valid JSON: Expecting property name enclosed in double quotes (line 1, column"),
    ({"matcher": {"path": "/hello"}, "response": {"statusCode": "abc", "colour": 1}},
     "response.colour: unknown key"),
    ({"matcher": {"pathPattern": "(["}, "response": {"statusCode": 200}},
     "matcher.pathPattern: "),
    ([1, 2], "must be a JSON object"),
])
def test_an_invalid_config_is_shown_at_the_field_and_changes_nothing(server, browser, config,
                                                                     expected):
    with server.client() as data:
        before = (data.get("/hello").status_code, data.get("/hello").text)
    answer = post_mock(browser, "hello", config)
    assert answer.status_code == 200
    errors = field_errors(answer.text, "config")
    assert any(error.startswith(expected) for error in errors), errors
    assert not form_wide_errors(answer.text)
    assert 'class="form-row errors field-config"' in answer.text
    with server.client() as data:
        assert (data.get("/hello").status_code, data.get("/hello").text) == before


def test_adding_a_mock_serves_it_and_a_taken_id_is_refused_at_the_id(server, browser):
    form = {"csrfmiddlewaretoken": browser.cookies["csrftoken"], "id": "", "workspace": "local",
            "type": "http", "name": "added", "description": "", "enabled": "on",
            "config": json.dumps({"matcher": {"method": "GET", "path": "/added"},
                                  "response": {"statusCode": 200, "body": "new"}})}
    created = browser.post("/admin/mocks/mock/add/", data=form)
    assert created.status_code == 302, field_errors(created.text, "config")
    with server.client() as data:
        assert data.get("/added").text == "new"
    taken = browser.post("/admin/mocks/mock/add/", data={**form, "id": "hello"})
    assert taken.status_code == 200 and field_errors(taken.text, "id")


def test_deleting_a_mock_in_the_admin_stops_serving_it(server, browser):
    confirm = browser.get("/admin/mocks/mock/gone/delete/")
    assert confirm.status_code == 200
    deleted = browser.post("/admin/mocks/mock/gone/delete/",
                           data={"csrfmiddlewaretoken": browser.cookies["csrftoken"],
                                 "post": "yes"})
    assert deleted.status_code == 302
    with server.client() as data:
        assert data.get("/gone").status_code == 404


def test_editing_a_table_reloads_its_seed_data(server, browser):
    table_id = re.search(r'href="/admin/tables/table/(\d+)/change/', browser.get(
        "/admin/tables/table/").text).group(1)
    seed = [{"id": "1", "name": "Ada"}, {"id": "2", "name": "Grace"}]
    answer = post_definition(browser, f"/admin/tables/table/{table_id}/change/",
                             {"name": "users", "seedData": seed})
    assert answer.status_code == 302, field_errors(answer.text, "config")
    with server.client() as data:
        names = sorted(item["name"] for item in data.get("/users").json()["data"])
    assert names == ["Ada", "Grace"]
    renamed = post_definition(browser, f"/admin/tables/table/{table_id}/change/",
                              {"name": "people"})
    assert renamed.status_code == 200
    assert field_errors(renamed.text, "config")[0].startswith("name: a table cannot be renamed")
    wrong = post_definition(browser, f"/admin/tables/table/{table_id}/change/",
                            {"name": "users", "idStrategy": "prefix"})
    assert field_errors(wrong.text, "config") == [
        "idStrategy 'prefix' needs idPrefix (for example 'cus_')"]


def test_a_binding_to_an_unknown_mock_is_refused_at_the_field(browser):
    before = browser.get("/admin/tables/binding/").text.count("/change/")
    answer = post_definition(browser, "/admin/tables/binding/add/",
                             {"mock": "no-such-mock", "table": "users", "action": "list"})
    assert answer.status_code == 200
    assert any("no-such-mock" in error for error in field_errors(answer.text, "config"))
    assert browser.get("/admin/tables/binding/").text.count("/change/") == before


def test_a_custom_operation_is_compiled_and_then_served(server, browser):
    bad = post_definition(browser, "/admin/tables/customoperation/add/", {
        "name": "rename", "steps": [{"type": "read", "resource": "users", "id": "input.id",
                                     "as": "user"}],
        "response": {"name": "usr.name"}})
    assert bad.status_code == 200
    assert any('"usr.name": unknown name "usr"' in error
               for error in field_errors(bad.text, "config"))
    good = post_definition(browser, "/admin/tables/customoperation/add/", {
        "name": "rename", "steps": [{"type": "read", "resource": "users", "id": "input.id",
                                     "as": "user"}],
        "response": {"name": "user.name"}})
    assert good.status_code == 302, field_errors(good.text, "config")
    with server.admin_client(headers={"X-API-Key": server.api_key}) as admin:
        ran = admin.post("/state/operations/rename/execute", json={"id": "1"})
    assert ran.status_code == 200 and ran.json()["name"] == "Ada", ran.text
