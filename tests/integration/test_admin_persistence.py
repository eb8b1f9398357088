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


def _define(server, suffix: str = "") -> None:
    """Mocks ``kept{suffix}`` (toggled off and on again) and ``team-mock{suffix}`` in a new
    workspace ``Team{suffix}`` with the base path ``/team{suffix}``."""
    with server.admin_client() as admin:
        assert admin.post("/mocks", json=http_mock(f"kept{suffix}", "GET", f"/kept{suffix}",
                                                   body=f"still here{suffix}")
                          ).status_code == 201
        workspace = admin.post("/workspaces", json={"name": f"Team{suffix}",
                                                    "basePath": f"/team{suffix}"})
        assert workspace.status_code == 201
        assert admin.post("/mocks", json={**http_mock(f"team-mock{suffix}", "GET", "/t",
                                                      body=f"team{suffix}"),
                                          "workspaceId": workspace.json()["id"]}
                          ).status_code == 201
        assert admin.post(f"/mocks/kept{suffix}/toggle").json()["mock"]["enabled"] is False
        assert admin.post(f"/mocks/kept{suffix}/toggle").json()["mock"]["enabled"] is True
    with server.client() as client:
        client.get(f"/kept{suffix}")


def _check(server, ids: list[str], workspaces: list[str]) -> None:
    """What survived: every mock and workspace, served; the request log starts empty."""
    with server.admin_client() as admin:
        # runtime data does not survive: the request log starts empty
        assert admin.get("/requests").json()["total"] == 0
        assert [mock["id"] for mock in admin.get("/mocks").json()["mocks"]] == ids
        assert [workspace["name"] for workspace in admin.get("/workspaces").json()["workspaces"]] == [
            "Default", *workspaces]
    with server.client() as client:
        for workspace in workspaces:
            suffix = workspace.removeprefix("Team")
            assert client.get(f"/kept{suffix}").text == f"still here{suffix}"
            assert client.get(f"/team{suffix}/t").text == f"team{suffix}"


def test_definitions_survive_a_restart_after_sigterm_and_after_sigkill(tmp_path):
    """Definitions made just before a SIGTERM are there on the next start; so are those made
    just before a SIGKILL of that next server (nothing left to a clean exit)."""
    data_dir = tmp_path / "data"
    with start_server(_directory(tmp_path, "first"), None, data_dir=data_dir) as first:
        _define(first)
        first.stop(signal.SIGTERM)
    with start_server(_directory(tmp_path, "second"), None, data_dir=data_dir) as second:
        _check(second, ["kept", "team-mock"], ["Team"])
        _define(second, "2")
        second.stop(signal.SIGKILL)
    with start_server(_directory(tmp_path, "third"), None, data_dir=data_dir) as third:
        _check(third, ["kept", "team-mock", "kept2", "team-mock2"], ["Team", "Team2"])


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


def test_no_persist_writes_no_database_and_no_recordings(tmp_path):
    """``--no-persist``: a mock and a recording session are served and listed from memory;
    the data dir gets no database and no recordings folder."""
    data_dir = tmp_path / "data"
    with start_server(tmp_path, None, data_dir=data_dir, extra_args=["--no-persist"]) as server:
        with server.admin_client() as admin:
            assert admin.post("/mocks", json=http_mock("mem", "GET", "/mem", body="m")
                              ).status_code == 201
            assert admin.get("/mocks/mem").status_code == 200
            assert admin.post("/sessions", json={"name": "kept in memory"}).status_code == 201
            assert [session["name"] for session in admin.get("/sessions").json()] == \
                ["kept in memory"]
        with server.client() as client:
            assert client.get("/mem").text == "m"
    assert not list(data_dir.glob("*.sqlite3*"))
    assert not list(data_dir.glob("recordings*"))
