"""Restarting with ``-c``: mocks added at run time are left out, and the start banner says
so; ``--merge`` keeps them beside the file's (a stored mock with a file mock's id is replaced
by the file's). Servers run on free loopback ports with an isolated HOME; detached ones are
stopped with ``mockd stop``.
"""
from __future__ import annotations

import json
import queue
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.helpers import free_port, http_mock, make_config, run_mockd, start_server, write_config

pytestmark = pytest.mark.integration

CONFIG = make_config(
    http_mock("from-file", "GET", "/from-file", body="file"),
    {"matcher": {"method": "GET", "path": "/short"}, "response": {"body": "short"}},
    http_mock("list-things", "GET", "/things", response={}),
    tables=[{"name": "things", "seedData": [{"id": "t1"}]}],
    extend=[{"mock": "list-things", "table": "things", "action": "list"}])
NOTE = "2 mocks added at run time are not loaded because -c was given; use --merge to keep them"


def _start(tmp_path: Path, *extra: str) -> list[str]:
    config = tmp_path / "mocks.yaml"
    if not config.exists():
        write_config(config, CONFIG)
    started = run_mockd(["start", "-d", "-c", str(config), "--data-dir", str(tmp_path / "data"),
                         "--no-auth", "--port", str(free_port()), "--admin-port",
                         str(free_port()), *extra], tmp_path)
    assert started.returncode == 0, started.stdout + started.stderr
    return started.stdout.splitlines()


def _listed(tmp_path: Path) -> dict[str, str]:
    done = run_mockd(["list", "--json", "-w"], tmp_path)
    assert done.returncode == 0, done.stderr
    return {row["id"]: row.get("path") for row in json.loads(done.stdout)}


def _stop(tmp_path: Path) -> None:
    stopped = run_mockd(["stop"], tmp_path)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def _serve(tmp_path: Path, path: str) -> str:
    document = json.loads((tmp_path / ".mockd" / "mockd.pid").read_text())
    port = document["components"]["engine"]["port"]
    with httpx.Client(trust_env=False, timeout=10) as client:
        return client.get(f"http://127.0.0.1:{port}{path}").text


def test_restart_with_config_drops_runtime_mocks_unless_merge(tmp_path):
    try:
        first = _start(tmp_path)
        assert not any("added at run time" in line for line in first)
        for path in ("/runtime-1", "/runtime-2"):
            added = run_mockd(["http", "add", "--path", path, "-b", "rt"], tmp_path)
            assert added.returncode == 0, added.stderr
        changed = run_mockd(["http", "add", "--path", "/from-file", "-b", "changed"], tmp_path)
        assert changed.returncode == 0 and changed.stdout.startswith("Updated mock: from-file")
        _stop(tmp_path)

        merged = _start(tmp_path, "--merge")
        assert "Loaded 5 mocks" in merged
        assert not any("added at run time" in line for line in merged)
        listed = _listed(tmp_path)
        assert sorted(listed.values()) == ["/from-file", "/runtime-1", "/runtime-2", "/short",
                                           "/things"]
        assert _serve(tmp_path, "/from-file") == "file"  # the file's mock replaced the edit
        assert [item["id"] for item in json.loads(_serve(tmp_path, "/things"))["data"]] == ["t1"]
        _stop(tmp_path)

        # Merging again does not pile up copies of the file's mock without an id.
        again = _start(tmp_path, "--merge")
        assert "Loaded 5 mocks" in again
        _stop(tmp_path)

        replaced = _start(tmp_path)
        assert NOTE in replaced
        assert sorted(_listed(tmp_path).values()) == ["/from-file", "/short", "/things"]

        # The foreground banner says the same: two mocks added again at run time, then a
        # foreground start from the file (no second server just to store them).
        for path in ("/runtime-3", "/runtime-4"):
            added = run_mockd(["http", "add", "--path", path, "-b", "rt"], tmp_path)
            assert added.returncode == 0, added.stderr
        _stop(tmp_path)
        banner = foreground_banner(tmp_path)
        assert NOTE in banner, banner
    finally:
        run_mockd(["stop"], tmp_path)


def foreground_banner(tmp_path: Path) -> list[str]:
    """The stdout lines of a foreground ``mockd start -c`` on ``tmp_path``'s data dir, up to
    ``Press Ctrl+C to stop`` (bounded by a 20 s deadline); the server is stopped after."""
    with start_server(tmp_path, CONFIG, data_dir=tmp_path / "data") as server:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(raw.decode()) for raw in
                                         iter(server.proc.stdout.readline, b"")],
                         daemon=True).start()
        banner: list[str] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "Press Ctrl+C to stop" not in banner:
            try:
                banner.append(lines.get(timeout=0.5).strip())
            except queue.Empty:
                pass
    return banner


def test_merge_needs_a_config_file(tmp_path):
    refused = run_mockd(["start", "--merge", "--data-dir", str(tmp_path / "data")], tmp_path)
    assert refused.returncode == 2
    assert "--merge needs -c/--config" in refused.stderr
