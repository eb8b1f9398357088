"""What a config from someone else may reach: environment variables, remote imports, files and
YAML aliases (docs/security.md "Environment variables in configs", "Remote imports", "Files a
config may read", "Bad input")."""
from __future__ import annotations

import http.server
import logging
import threading
from pathlib import Path

import pytest

from mocks.core import environment
from mocks.core.environment import allow_environment, expand_environment
from mocks.core.errors import ConfigError
from mocks.core.responses import FileRoots, body_file_path, outside_roots
from mocks.core.yamldoc import MAX_ALIAS_NODES, DocumentTooLarge, safe_load_bounded
from mocks.loader import load_config_file, parse_config_text
from mockd_project.runner import RunOptions, body_file_roots


@pytest.fixture(autouse=True)
def _fresh_policy(monkeypatch):
    """Each test starts with no --allow-env names, no MOCKD_ALLOW_ENV and no warnings sent."""
    monkeypatch.delenv("MOCKD_ALLOW_ENV", raising=False)
    monkeypatch.setattr(environment, "_warned", set())
    monkeypatch.setattr(environment, "_expanded", {})
    allow_environment(())
    yield
    allow_environment(())


# ---------------------------------------------------------------------------- environment


def test_other_variables_stay_as_written_and_are_warned_about_once(caplog):
    env = {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI", "MOCKD_REGION": "eu-1"}
    with caplog.at_level(logging.WARNING, logger="mockd.config"):
        text = expand_environment("a=${AWS_SECRET_ACCESS_KEY} b=$AWS_SECRET_ACCESS_KEY "
                                  "c=${MOCKD_REGION}", env)
        expand_environment("${AWS_SECRET_ACCESS_KEY}", env)
    assert text == "a=${AWS_SECRET_ACCESS_KEY} b=$AWS_SECRET_ACCESS_KEY c=eu-1"
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1
    assert "AWS_SECRET_ACCESS_KEY" in warnings[0] and "--allow-env" in warnings[0]
    assert "wJalrXUtnFEMI" not in warnings[0]


def test_mockd_secrets_are_not_expanded_by_the_mockd_glob():
    env = {"MOCKD_API_KEY": "admin-key-value", "MOCKD_ENGINE_TOKEN": "engine-token-value"}
    assert expand_environment("${MOCKD_API_KEY} ${MOCKD_ENGINE_TOKEN}", env) == \
        "${MOCKD_API_KEY} ${MOCKD_ENGINE_TOKEN}"
    allow_environment(["MOCKD_*"])
    assert expand_environment("${MOCKD_API_KEY}", env) == "${MOCKD_API_KEY}"
    allow_environment(["MOCKD_API_KEY"])  # an exact name is a knowing choice
    assert expand_environment("${MOCKD_API_KEY}", env) == "admin-key-value"


def test_allow_env_flag_names_and_globs_and_the_environment_list():
    env = {"API_HOST": "api.test", "API_PORT": "8080", "TOKEN": "t0ken-value",
           "HOME": "/root"}
    allow_environment(["API_*"])
    assert expand_environment("${API_HOST}:$API_PORT/$TOKEN", env) == "api.test:8080/$TOKEN"
    env["MOCKD_ALLOW_ENV"] = "TOKEN, OTHER"
    assert expand_environment("${TOKEN} ${HOME}", env) == "t0ken-value ${HOME}"


def test_a_config_cannot_widen_the_list(tmp_path, monkeypatch):
    monkeypatch.setenv("SECRET_FOR_TEST", "do-not-serve")
    path = tmp_path / "mocks.yaml"
    path.write_text("serverConfig: {}\nx-allow-env: [SECRET_FOR_TEST]\nMOCKD_ALLOW_ENV: x\n"
                    "mocks:\n  - matcher: {path: /s}\n    response: {body: '${SECRET_FOR_TEST}'}\n")
    with pytest.raises(ConfigError):
        load_config_file(path)  # an unknown top-level key is refused, not obeyed
    path.write_text("mocks:\n  - matcher: {path: /s}\n    response: {body: '${SECRET_FOR_TEST}'}\n")
    assert load_config_file(path).mocks[0].http.response.body == "${SECRET_FOR_TEST}"


def test_errors_show_the_reference_not_the_expanded_value(tmp_path):
    env = {"MOCKD_FIXTURES": "/srv/private-fixture-folder"}
    expanded = expand_environment("bodyFile: ${MOCKD_FIXTURES}/a.json", env)
    assert "/srv/private-fixture-folder" in expanded
    with pytest.raises(ConfigError) as caught:
        body_file_path("/srv/private-fixture-folder/a.json", tmp_path,
                       FileRoots([tmp_path.resolve()]), "mocks[0].http.response.bodyFile")
    assert "/srv/private-fixture-folder" not in str(caught.value)
    assert "${MOCKD_FIXTURES}/a.json" in str(caught.value)


def test_body_file_paths_expand_only_allowed_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("SOME_DIR", str(tmp_path))
    path = body_file_path("$SOME_DIR/x.json", tmp_path, (), "k")
    assert path == tmp_path / "$SOME_DIR" / "x.json"


# ---------------------------------------------------------------------------- remote imports


class _Recorder(http.server.BaseHTTPRequestHandler):
    """A stand-in for the attacker's server: records every path it is asked for."""

    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        type(self).seen.append(self.path)
        body = (b'{"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": '
                b'{"/pets": {"get": {"operationId": "listPets", "responses": {"200": '
                b'{"description": "ok"}}}}}}')
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def listener():
    _Recorder.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _import_config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "mocks.yaml"
    path.write_text(f"imports:\n  - url: '{url}/spec.json?t=${{GITHUB_TOKEN}}'\n    as: pets\n")
    return path


def test_remote_imports_are_refused_without_the_flag(tmp_path, listener, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secretvalue")
    with pytest.raises(ConfigError) as caught:
        load_config_file(_import_config(tmp_path, listener))
    assert caught.value.path == "imports[0].url"
    assert "--allow-remote-imports" in caught.value.reason
    assert _Recorder.seen == []


def test_allowed_remote_imports_never_carry_other_variables(tmp_path, listener, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secretvalue")
    config = load_config_file(_import_config(tmp_path, listener), allow_remote_imports=True)
    assert [mock.id for mock in config.mocks] == ["pets.listPets"]
    assert len(_Recorder.seen) == 1
    assert "ghp_secretvalue" not in _Recorder.seen[0]
    assert "GITHUB_TOKEN" in _Recorder.seen[0]


# ---------------------------------------------------------------------------- files


@pytest.fixture
def data_dir(tmp_path):
    folder = tmp_path / "data"
    (folder / "files").mkdir(parents=True)
    (folder / "tls").mkdir()
    for name in ("admin-api-key", "secret-key", "django-admin-password", "engine-token",
                 "mockd.sqlite3", "tls/localhost-key.pem"):
        (folder / name).write_text("secret\n")
    (folder / "files" / "upload.json").write_text("{}")
    return folder


@pytest.mark.parametrize("name", ["admin-api-key", "secret-key", "django-admin-password",
                                  "engine-token", "mockd.sqlite3", "tls/localhost-key.pem"])
@pytest.mark.parametrize("anywhere", [False, True], ids=["confined", "anywhere"])
def test_the_data_dir_is_never_a_body_file_root(tmp_path, data_dir, name, anywhere):
    config = tmp_path / "cfg" / "mocks.yaml"
    roots = body_file_roots(RunOptions(config=str(config), data_dir=str(data_dir),
                                       allow_body_files_anywhere=anywhere))
    with pytest.raises(ConfigError) as caught:
        body_file_path(str(data_dir / name), config.parent, roots, "mocks[0].http.bodyFile")
    assert caught.value.path == "mocks[0].http.bodyFile"
    assert "never served" in caught.value.reason
    assert body_file_path(str(data_dir / "files" / "upload.json"), config.parent, roots,
                          "k") == data_dir / "files" / "upload.json"


def test_a_config_inside_the_data_dir_cannot_read_its_neighbours(data_dir):
    config = data_dir / "mocks.yaml"
    roots = body_file_roots(RunOptions(config=str(config), data_dir=str(data_dir)))
    with pytest.raises(ConfigError):
        body_file_path("admin-api-key", data_dir, roots, "k")
    with pytest.raises(ConfigError):
        body_file_path("tls/localhost-key.pem", data_dir, roots, "k")


def test_secret_file_names_are_refused_anywhere_and_through_symlinks(tmp_path, data_dir):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "engine-4242.token").write_text("t")
    (elsewhere / "innocent.txt").symlink_to(data_dir / "admin-api-key")
    roots = FileRoots((), [data_dir.resolve()])
    assert outside_roots(elsewhere / "engine-4242.token", roots) is not None
    assert outside_roots(elsewhere / "innocent.txt", roots) == (data_dir / "admin-api-key")
    assert outside_roots(elsewhere / "any.json", roots) is None


def test_grpc_import_paths_are_confined(tmp_path):
    from mocks.engine.snapshot import compile_snapshot
    from mocks.loader import validate_config

    pytest.importorskip("grpc_tools")
    (tmp_path / "svc.proto").write_text('syntax = "proto3"; package p; message M {}\n'
                                        'service S { rpc Get (M) returns (M); }\n')
    roots = FileRoots([tmp_path.resolve()], [])
    for folder, allowed in (("/", False), ("/etc", False), (str(tmp_path), True),
                            ("/usr/include", True)):
        config = validate_config({"mocks": [{"id": "g", "type": "grpc", "grpc": {
            "port": 50999, "protoFile": "svc.proto", "importPaths": [folder]}}]})
        if allowed:
            compile_snapshot(config, base_dir=tmp_path, body_file_roots=roots)
            continue
        with pytest.raises(ConfigError) as caught:
            compile_snapshot(config, base_dir=tmp_path, body_file_roots=roots)
        assert caught.value.path == "mocks[0].grpc.importPaths[0]"


# ---------------------------------------------------------------------------- YAML


def _alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_a_yaml_alias_bomb_is_a_config_error():
    text = _alias_bomb(7)  # 9**8 values from 500 bytes
    assert len(text) < 600
    with pytest.raises(ConfigError) as caught:
        parse_config_text(text, "bomb.yaml")
    assert "bomb.yaml" in str(caught.value) and "alias" in str(caught.value)
    with pytest.raises(DocumentTooLarge):
        safe_load_bounded(_alias_bomb(9))


def test_ordinary_aliases_and_merge_keys_still_load():
    text = ("x-defaults: &defaults {statusCode: 200, headers: {X-A: b}}\n"
            "mocks:\n" + "".join(f"  - matcher: {{path: /p{index}}}\n"
                                 f"    response: {{<<: *defaults, body: b{index}}}\n"
                                 for index in range(200)))
    data = parse_config_text(text)
    assert data["mocks"][199]["response"] == {"statusCode": 200, "headers": {"X-A": "b"},
                                              "body": "b199"}
    shared = "shared: &s [" + ", ".join(["1"] * 1000) + "]\nuse: [" + \
        ", ".join(["*s"] * (MAX_ALIAS_NODES // 1001 - 1)) + "]\n"
    safe_load_bounded(shared)  # just under the bound


def test_yaml_that_contains_itself_or_nests_too_deep_is_refused():
    with pytest.raises(ConfigError):
        parse_config_text("a: &a [*a]\n")
    with pytest.raises(ConfigError):
        parse_config_text("a: " + "[" * 300 + "]" * 300 + "\n")
