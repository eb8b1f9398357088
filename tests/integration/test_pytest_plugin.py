"""The mockd pytest plugin, run in inner pytest sessions (``pytester``): isolation between
tests in reset and fresh mode, session reuse, the marker (config file, mocks), verify's
failure output, record against a loopback upstream then replay with it stopped, and
pytest-xdist workers each with their own server port."""
from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

# PyYAML and the bounded loader built on it are loaded here, once: pytester's in-process runs
# drop the modules they import, and the second run's config file then met a loader of the
# first run's PyYAML ("could not determine a constructor for the tag None": the fresh-mode
# test failed whenever it ran after the reset-mode one in a process that had not loaded them).
import pytest
import yaml  # noqa: F401

import mocks.core.yamldoc  # noqa: F401

pytest_plugins = ["pytester"]

#: Inner sessions run in this process without the plugins of our own suite (Faker's loads
#: every locale, ~0.25 s of CPU a session; the outer suite runs without it too).
INNER = ("-p", "no:django", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
         "-p", "no:faker", "-q")


def config_yaml(mock_id: str, path: str, status: int) -> str:
    """A config file with one HTTP mock answering ``GET path`` with ``status`` and
    ``mock_id`` as the body."""
    return (f"mocks:\n  - id: {mock_id}\n    type: http\n    http:\n"
            f"      matcher: {{method: GET, path: {path}}}\n"
            f"      response: {{statusCode: {status}, body: {mock_id}}}\n")


MOCKS_YAML = config_yaml("base", "/base", 200)
OTHER_YAML = config_yaml("other", "/other", 201)

SESSION_TESTS = '''
import httpx
import pytest

PORTS = []


def mock(mock_id, path, status=200):
    return {"id": mock_id, "type": "http",
            "http": {"matcher": {"method": "GET", "path": path},
                     "response": {"statusCode": status, "body": mock_id}}}


def test_adds_a_mock(mockd):
    PORTS.append(mockd.port)
    mockd.add(mock("extra", "/extra"))
    assert httpx.get(mockd.url + "/extra").status_code == 200
    assert httpx.get(mockd.url + "/base").text == "base"


def test_the_added_mock_is_gone(mockd):
    PORTS.append(mockd.port)
    assert mockd.requests() == []
    assert httpx.get(mockd.url + "/extra").status_code == 404
    assert httpx.get(mockd.url + "/base").status_code == 200


@pytest.mark.mockd(mocks=[mock("marked", "/marked", 202)])
def test_marker_mocks(mockd):
    assert httpx.get(mockd.url + "/marked").status_code == 202
    assert httpx.get(mockd.url + "/base").status_code == 200


def test_marker_mocks_are_gone(mockd):
    assert httpx.get(mockd.url + "/marked").status_code == 404


@pytest.mark.mockd(config="other.yaml")
def test_marker_config(mockd):
    assert httpx.get(mockd.url + "/other").status_code == 201
    assert httpx.get(mockd.url + "/base").status_code == 404


def test_session_server_is_the_reset_one(mockd, mockd_session):
    PORTS.append(mockd_session.port)
    assert mockd.port == mockd_session.port


def test_same_port_in_reset_mode():
    assert len(set(PORTS)) == 1, PORTS


def test_verify_fails(mockd):
    [user] = mockd.add(mock("user-one", "/users/1"))
    httpx.get(mockd.url + "/users/2")
    mockd.verify(user, times=1)
'''

FRESH_TESTS = '''
import httpx

PORTS = []


def test_one(mockd):
    PORTS.append(mockd.port)
    mockd.add({"id": "extra", "type": "http",
               "http": {"matcher": {"method": "GET", "path": "/extra"},
                        "response": {"statusCode": 200, "body": "x"}}})
    assert httpx.get(mockd.url + "/extra").status_code == 200


def test_two(mockd):
    PORTS.append(mockd.port)
    assert httpx.get(mockd.url + "/extra").status_code == 404
    assert httpx.get(mockd.url + "/base").text == "base"
    assert PORTS[0] != PORTS[1]
'''


def test_reset_mode_isolation_markers_and_verify_output(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmockd_config = mocks.yaml\n")
    pytester.path.joinpath("mocks.yaml").write_text(MOCKS_YAML)
    pytester.path.joinpath("other.yaml").write_text(OTHER_YAML)
    pytester.makepyfile(test_inner=SESSION_TESTS)
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(passed=7, failed=1)
    # verify's failure, as pytest reports it: the mock, the counts and the near miss.
    result.stdout.fnmatch_lines([
        "*_ test_verify_fails _*",
        "E*VerificationError: mock 'user-one' (GET /users/1) was expected exactly 1 time(s)"
        " but was called 0 time(s)*",
        "E *Unmatched requests, newest first*",
        "E *GET /users/2 -> 404*path expected \"/users/1\", got \"/users/2\"*",
    ])


def test_fresh_mode_gives_each_test_its_own_server(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmockd_config = mocks.yaml\nmockd_isolation = fresh\n")
    pytester.path.joinpath("mocks.yaml").write_text(MOCKS_YAML)
    pytester.makepyfile(test_inner=FRESH_TESTS)
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(passed=2)


def test_a_bad_isolation_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmockd_isolation = sometimes\n")
    pytester.makepyfile(test_inner="def test_x(): pass\n")
    result = pytester.runpytest_inprocess(*INNER)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "mockd_isolation must be one of reset, fresh" in result.stderr.str()


class _Upstream(http.server.BaseHTTPRequestHandler):
    """A loopback JSON service that counts the requests it served."""

    served: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        type(self).served.append(self.path)
        user_id = self.path.rsplit("/", 1)[-1]
        body = json.dumps({"id": int(user_id), "name": f"user {user_id}"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


RECORDED_TESTS = '''
import pytest

UPSTREAM = "{upstream}"


@pytest.mark.mockd(upstream=UPSTREAM)
def test_users(mockd):
    with mockd.http_client(timeout=10) as client:
        assert client.get("/users/1").json() == {{"id": 1, "name": "user 1"}}
        assert client.get("/users/7").json() == {{"id": 7, "name": "user 7"}}
    assert mockd.recording == {recording}
'''


def test_record_then_replay_with_the_upstream_stopped(pytester: pytest.Pytester) -> None:
    _Upstream.served = []
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    thread = threading.Thread(target=upstream.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{upstream.server_port}"
    try:
        pytester.makepyfile(test_inner=RECORDED_TESTS.format(upstream=url, recording=True))
        recorded = pytester.runpytest_inprocess(*INNER, "--mockd-record")
        recorded.assert_outcomes(passed=1)
        assert _Upstream.served == ["/users/1", "/users/7"]
    finally:
        upstream.shutdown()
        upstream.server_close()
        thread.join(10)
    cassette = pytester.path / "cassettes" / "test_users.yaml"
    assert cassette.is_file()
    assert "path: /users/7" in cassette.read_text()

    pytester.makepyfile(test_inner=RECORDED_TESTS.format(upstream=url, recording=False))
    replayed = pytester.runpytest_inprocess(*INNER)
    replayed.assert_outcomes(passed=1)
    assert _Upstream.served == ["/users/1", "/users/7"]


def test_a_missing_cassette_names_the_record_flag(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner='''
import pytest

@pytest.mark.mockd(upstream="http://127.0.0.1:9")
def test_never_recorded(mockd):
    pass
''')
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert "test_never_recorded.yaml" in output
    assert "--mockd-record" in output


def test_xdist_workers_have_their_own_ports(pytester: pytest.Pytester,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    out = pytester.path / "ports"
    out.mkdir()
    pytester.makepyfile(test_inner=f'''
import os
import pytest

@pytest.mark.parametrize("n", range(6))
def test_port(mockd, n):
    worker = os.environ["PYTEST_XDIST_WORKER"]
    with open(os.path.join({str(out)!r}, worker), "a") as handle:
        handle.write(f"{{mockd.port}}\\n")
''')
    # Only the two plugins under test: autoloading every installed plugin (pytest-django,
    # hypothesis, schemathesis, playwright...) in the runner and both workers costs ~4 s CPU.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess("-p", "mockd.pytest_plugin", "-p", "xdist.plugin",
                                           "-p", "no:cacheprovider", "-q", "-n", "2",
                                           timeout=120)
    result.assert_outcomes(passed=6)
    ports = {path.name: set(path.read_text().split()) for path in Path(out).iterdir()}
    assert sorted(ports) == ["gw0", "gw1"], ports
    # Reset mode: one server per worker, on a port of its own.
    assert all(len(found) == 1 for found in ports.values()), ports
    assert ports["gw0"] != ports["gw1"]
