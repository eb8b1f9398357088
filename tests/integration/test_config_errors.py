"""Every config mistake is named, by ``mockd engine -c`` and by the admin API, with the same
wording (issue 14 item 5)."""
from __future__ import annotations

import pytest

from tests.helpers import make_config, run_mockd, start_server, write_config

pytestmark = pytest.mark.integration

#: Three mistakes in two mocks: a misspelt key, an unknown key, a status out of range.
THREE_MISTAKES = {"version": "1.0", "mocks": [
    {"id": "a", "colour": "red", "http": {"matcher": {"path": "/a", "mthod": "GET"}}},
    {"id": "b", "http": {"matcher": {"path": "/b"}, "response": {"statusCode": 999}}},
]}


@pytest.mark.parametrize("command", ["engine", "start"])
def test_startup_names_every_mistake_and_exits_2(tmp_path, command):
    config = write_config(tmp_path / "mocks.yaml", THREE_MISTAKES)
    result = run_mockd([command, "-c", str(config), "--port", "0", "--admin-port", "0",
                        "--data-dir", str(tmp_path / "data")] if command == "start" else
                       [command, "-c", str(config), "--port", "0"], tmp_path, timeout=60)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    start = next(index for index, line in enumerate(lines) if line.startswith("config error: "))
    assert lines[start] == "config error: mocks[0].http.matcher.mthod: unknown key"
    assert lines[start + 1:start + 3] == [
        "  mocks[0].colour: unknown key",
        "  mocks[1].http.response.statusCode: Input should be less than or equal to 599"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("config-errors"), make_config()) as process:
        yield process


def test_post_mocks_names_both_mistakes_with_the_file_wording(admin):
    answer = admin.post("/mocks", json={"type": "http", "colour": "red", "http": {
        "matcher": {"path": "/x", "mthod": "GET"}}})
    assert answer.status_code == 400
    body = answer.json()
    assert body == {"error": "validation_error",
                    "message": "http.matcher.mthod: unknown key; colour: unknown key"}
    assert admin.get("/mocks").json()["total"] == 0


def test_post_config_names_every_mistake(admin):
    answer = admin.post("/config", json={"config": THREE_MISTAKES})
    assert answer.status_code == 400
    assert answer.json()["message"] == (
        "mocks[0].http.matcher.mthod: unknown key; mocks[0].colour: unknown key; "
        "mocks[1].http.response.statusCode: Input should be less than or equal to 599")
