"""``mockd engine`` with a runtime folder another local user could have prepared: it does not
start, says which folder and why, and leaves the folder as it found it.

Source: behavior notes §16; docs/security.md "The engine-control port and its token".
"""
from __future__ import annotations

import os
import stat

import pytest

from tests.helpers import http_mock, make_config, run_mockd, write_config

pytestmark = pytest.mark.integration


def test_engine_refuses_a_runtime_folder_open_to_others(tmp_path):
    config = write_config(tmp_path / "mocks.yaml", make_config(http_mock("a", "GET", "/a")))
    runtime_dir = tmp_path / "run"
    (runtime_dir / "mockd").mkdir(parents=True)
    (runtime_dir / "mockd").chmod(0o777)
    result = run_mockd(["engine", "-c", str(config), "--port", "0"], tmp_path, timeout=60,
                       XDG_RUNTIME_DIR=str(runtime_dir))
    assert result.returncode == 1, result.stderr
    assert f"refusing to keep the engine token in {runtime_dir / 'mockd'}" in result.stderr
    assert "open to other users (mode 0777)" in result.stderr
    assert "Traceback" not in result.stderr
    assert stat.S_IMODE(os.lstat(runtime_dir / "mockd").st_mode) == 0o777
    assert list((runtime_dir / "mockd").iterdir()) == []
