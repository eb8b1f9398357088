"""Definitions survive a restart (SIGTERM and SIGKILL); ``-c`` is the starting point;
``--no-persist`` keeps everything in memory (ARCHITECTURE seam 6; behavior notes §15)."""
from __future__ import annotations

import signal

import pytest

from tests.helpers import http_mock, make_config, start_server

pytestmark = pytest.mark.integration


def _directory(base, name):
    path = base / name
    path.mkdir()
    return path


def _define(server) -> None:
    with server.admin_client() as admin:
        assert admin.post("/mocks", json=http_mock("kept", "GET", "/kept", body="still here")
                          ).status_code == 201
        workspace = admin.post("/workspaces", json={"name": "Team", "basePath": "/team"})
        assert workspace.status_code == 201
        assert admin.post("/mocks", json={**http_mock("team-mock", "GET", "/t", body="team"),
                                          "workspaceId": workspace.json()["id"]}
                          ).status_code == 201
        assert admin.post("/mocks/kept/toggle").json()["mock"]["enabled"] is False
        assert admin.post("/mocks/kept/toggle").json()["mock"]["enabled"] is True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_definitions_survive_a_restart(tmp_path, sig):
    data_dir = tmp_path / "data"
    with start_server(_directory(tmp_path, "first"), None, data_dir=data_dir) as first:
        _define(first)
        with first.client() as client:
            client.get("/kept")
        first.stop(sig)
    with start_server(_directory(tmp_path, "second"), None, data_dir=data_dir) as second:
        with second.admin_client() as admin:
            # runtime data does not survive: the request log starts empty
            assert admin.get("/requests").json()["total"] == 0
            ids = [mock["id"] for mock in admin.get("/mocks").json()["mocks"]]
            assert ids == ["kept", "team-mock"]
            assert [workspace["name"] for workspace in admin.get("/workspaces").json()["workspaces"]] == [
                "Default", "Team"]
        with second.client() as client:
            assert client.get("/kept").text == "still here"
            assert client.get("/team/t").text == "team"


def test_config_file_is_the_starting_point(tmp_path):
    data_dir = tmp_path / "data"
    with start_server(_directory(tmp_path, "first"), None, data_dir=data_dir) as first:
        with first.admin_client() as admin:
            admin.post("/mocks", json=http_mock("stored", "GET", "/stored"))
    config = make_config(http_mock("from-file", "GET", "/file", body="file"))
    with start_server(_directory(tmp_path, "second"), config, data_dir=data_dir) as second:
        with second.admin_client() as admin:
            assert [mock["id"] for mock in admin.get("/mocks").json()["mocks"]] == ["from-file"]
            admin.post("/mocks", json=http_mock("added", "GET", "/added", body="added"))
    with start_server(_directory(tmp_path, "third"), None, data_dir=data_dir) as third:
        with third.admin_client() as admin:
            assert [mock["id"] for mock in admin.get("/mocks").json()["mocks"]] == ["from-file",
                                                                              "added"]


def test_no_persist_writes_no_database(tmp_path):
    data_dir = tmp_path / "data"
    with start_server(tmp_path, None, data_dir=data_dir, extra_args=["--no-persist"]) as server:
        with server.admin_client() as admin:
            assert admin.post("/mocks", json=http_mock("mem", "GET", "/mem", body="m")
                              ).status_code == 201
            assert admin.get("/mocks/mem").status_code == 200
        with server.client() as client:
            assert client.get("/mem").text == "m"
    assert not list(data_dir.glob("*.sqlite3*"))
