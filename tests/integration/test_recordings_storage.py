"""Recording storage seen from outside: a small ``recording.maxBytes`` keeps the newest
recordings and drops the oldest; recordings (HTTP and SOAP) survive a restart on the same
data dir; the store's files are private.

Source: SPEC "Limits" (stream recording storage ``maxBytes``, ``warnPercent``), "Admin-side
records" (recording configuration).
"""
from __future__ import annotations

import stat

import pytest

from tests.helpers import start_server
from tests.integration.test_recordings_api import origin, record_through_proxy  # noqa: F401
from tests.integration.test_soap_recordings import call, calc_config

pytestmark = pytest.mark.integration


def test_cap_drops_the_oldest_and_recordings_survive_a_restart(tmp_path, origin):  # noqa: F811
    config = {**calc_config(), "recording": {"maxBytes": 8000, "warnPercent": 50}}
    data_dir = tmp_path / "data"
    paths = tuple(f"/users/{number}" for number in range(20))
    with start_server(tmp_path, config, data_dir=data_dir) as server:
        session_id, _ = record_through_proxy(server, origin, "capped", paths)
        with server.admin_client() as admin:
            listing = admin.get("/recordings", params={"limit": 100}).json()
            kept = [row["request"]["path"] for row in listing["recordings"]]
            assert 0 < len(kept) < 20, kept
            assert kept == list(paths[-len(kept):])  # the newest, in order; the oldest gone
            assert admin.get("/sessions").json()[0]["recordingCount"] == len(kept)
            assert admin.post("/soap/calc/record/start").status_code == 200
            with server.client() as data:
                assert call(data, "/soap/calc", "Ping").status_code == 200
            soap = admin.get("/soap-recordings").json()["recordings"]
            assert len(soap) == 1
        log = server.log()
        assert "recording storage at" in log  # the one warning at warnPercent
        assert log.count("recording storage at") == 1
    for path in [data_dir / "recordings.sqlite3"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with start_server(tmp_path, config, data_dir=data_dir) as again, \
            again.admin_client() as admin:
        listing = admin.get("/recordings", params={"session": session_id}).json()
        assert [row["request"]["path"] for row in listing["recordings"]] == kept
        assert admin.get("/soap-recordings").json()["recordings"] == soap
        assert admin.get(f"/sessions/{session_id}").json()["name"] == "capped"
