"""Security rules as units: the engine-control gate, admin key exemptions by exact route,
``bodyFile``/``dataFile`` confinement, the engine token's sources and file, and secrets kept
out of non-terminal output (behavior notes §2, §15, §16)."""
from __future__ import annotations

import asyncio
import io
import os
import stat
from pathlib import Path

import httpx
import pytest

from mocks.config import Response
from mocks.core.errors import ConfigError
from mocks.core.responses import CompiledResponse, outside_roots
from mocks.core.templating import TemplateState
from mocks.engine.control import EngineControl, EngineControlApp
from mocks.engine.core import Engine
from mocks.loader import validate_config
from mockd_project import auth
from mockd_project.runner import RunOptions, StartupFailure, body_file_roots, resolve_engine_token
from tests.helpers import http_mock, make_config, make_request

TOKEN = "s3cret-token"


# ---------------------------------------------------------------------------- engine control


def _ask(method: str, path: str, headers: dict[str, str], body: bytes = b"") -> httpx.Response:
    app = EngineControlApp(EngineControl(Engine()), TOKEN)

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://localhost") as client:
            return await client.request(method, path, headers=headers, content=body)

    return asyncio.run(go())


JSON = {"Content-Type": "application/json"}
GOOD = {"X-Engine-Token": TOKEN}


@pytest.mark.parametrize("method, headers, status, error", [
    pytest.param("POST", {"Origin": "http://evil.example", "Content-Type": "text/plain", **GOOD},
                 403, "origin_refused", id="cross-origin text/plain POST"),
    pytest.param("GET", {"Origin": "http://localhost:4290", **GOOD}, 403, "origin_refused",
                 id="any Origin, even loopback, even with the token"),
    pytest.param("POST", {"Origin": "null"}, 403, "origin_refused",
                 id="Origin refused before the token is looked at"),
    pytest.param("POST", JSON, 401, "missing_engine_token", id="no token"),
    pytest.param("GET", {"X-Engine-Token": ""}, 401, "missing_engine_token", id="empty token"),
    pytest.param("GET", {"X-Engine-Token": TOKEN + "x"}, 401, "invalid_engine_token",
                 id="wrong token"),
    pytest.param("POST", {"Content-Type": "text/plain", **GOOD}, 415, "unsupported_media_type",
                 id="text/plain body"),
    pytest.param("PUT", {"Content-Type": "application/x-www-form-urlencoded", **GOOD}, 415,
                 "unsupported_media_type", id="form body"),
    pytest.param("PATCH", GOOD, 415, "unsupported_media_type", id="no Content-Type"),
    pytest.param("POST", {"Content-Type": "application/json; charset=utf-8", **GOOD}, 200,
                 None, id="JSON with charset"),
    pytest.param("GET", GOOD, 200, None, id="GET with the token"),
])
def test_engine_control_gate(method, headers, status, error):
    answer = _ask(method, "/config" if method != "GET" else "/health", headers,
                  b'{"version": "1.0", "mocks": []}' if method != "GET" else b"")
    if error is None:
        assert answer.status_code == status, answer.text
    else:
        assert (answer.status_code, answer.json()["error"]) == (status, error)
        assert set(answer.json()) == {"error", "message"}
        assert TOKEN not in answer.text


def test_engine_control_app_needs_a_token():
    with pytest.raises(ValueError):
        EngineControlApp(EngineControl(Engine()), "")


# ---------------------------------------------------------------------------- admin exemptions


@pytest.mark.parametrize("method, path, exempt", [
    pytest.param("DELETE", "/mocks/app.js", False, id="delete by .js suffix"),
    pytest.param("GET", "/mocks/x.css", False, id="read by .css suffix"),
    pytest.param("GET", "/mocks/page.html", False, id="read by .html suffix"),
    pytest.param("GET", "/favicon.ico", False, id="icon outside the static prefix"),
    pytest.param("GET", "/static/app.js", True, id="static asset"),
    pytest.param("HEAD", "/static/css/x.css", True, id="static asset HEAD"),
    pytest.param("POST", "/static/app.js", False, id="static prefix, unsafe method"),
    pytest.param("GET", "/staticfoo", False, id="prefix needs its slash"),
    pytest.param("GET", "/", True, id="dashboard shell"),
    pytest.param("GET", "/index.html", True, id="index"),
    pytest.param("GET", "/manifest.json", True, id="manifest"),
    pytest.param("GET", "/docs", True, id="Swagger UI"),
    pytest.param("GET", "/openapi-admin.json", True, id="OpenAPI document"),
    pytest.param("GET", "/health", True, id="health"),
    pytest.param("HEAD", "/metrics", True, id="metrics HEAD"),
    pytest.param("POST", "/health", False, id="health, unsafe method"),
    pytest.param("DELETE", "/", False, id="root, unsafe method"),
    pytest.param("GET", "/admin/", True, id="Django admin"),
    pytest.param("POST", "/admin/login/", True, id="Django admin login"),
    pytest.param("GET", "/admin/api-key", False, id="admin API route under /admin/"),
    pytest.param("POST", "/admin/api-key/rotate", False, id="key rotation"),
    pytest.param("OPTIONS", "/mocks/app.js", True, id="preflight"),
])
def test_admin_exemption_is_by_exact_route(method, path, exempt):
    assert auth.is_exempt(path, method) is exempt


# ---------------------------------------------------------------------------- bodyFile


@pytest.fixture
def tree(tmp_path):
    """``tmp_path/config`` (allowed), ``tmp_path/data`` (allowed), ``tmp_path/secret.txt``."""
    (tmp_path / "config").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "config" / "ok.txt").write_text("ok")
    (tmp_path / "data" / "kept.txt").write_text("kept")
    (tmp_path / "secret.txt").write_text("secret")
    return tmp_path


def _roots(tree: Path) -> tuple[Path, ...]:
    return ((tree / "config").resolve(), (tree / "data").resolve())


def _compile(tree: Path, body_file: str, roots=None) -> CompiledResponse:
    return CompiledResponse(Response.model_validate({"bodyFile": body_file}),
                            "mocks[0].http.response", tree / "config",
                            _roots(tree) if roots is None else roots)


@pytest.mark.parametrize("body_file", [
    pytest.param("../secret.txt", id="dot-dot escape"),
    pytest.param("sub/../../secret.txt", id="escape through a subfolder"),
    pytest.param("/etc/hostname", id="absolute path elsewhere"),
    pytest.param("link.txt", id="symlink leading out"),
])
def test_body_file_outside_the_roots_is_a_config_error_naming_the_key(tree, body_file):
    os.symlink(tree / "secret.txt", tree / "config" / "link.txt")
    with pytest.raises(ConfigError) as caught:
        _compile(tree, body_file)
    assert caught.value.path == "mocks[0].http.response.bodyFile"
    assert "outside" in caught.value.reason
    assert "--allow-body-files-anywhere" in caught.value.reason


@pytest.mark.parametrize("body_file", ["ok.txt", "./ok.txt", "{data}/kept.txt",
                                       "missing-is-checked-when-served.txt"])
def test_body_file_inside_the_config_folder_or_data_dir_compiles(tree, body_file):
    _compile(tree, body_file.replace("{data}", str(tree / "data")))


def test_no_roots_allow_any_body_file(tree):
    response = _compile(tree, "../secret.txt", roots=())
    assert response.render(make_request(), {}, TemplateState())[2] == b"secret"


def test_body_file_swapped_for_a_symlink_leading_out_answers_502(tree):
    response = _compile(tree, "ok.txt")
    assert response.render(make_request(), {}, TemplateState())[2] == b"ok"
    (tree / "config" / "ok.txt").unlink()
    os.symlink(tree / "secret.txt", tree / "config" / "ok.txt")
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    assert asyncio.run(response.respond(make_request(), {}, TemplateState(), send)) == 502
    assert b"secret" not in sent[1]["body"] and b"body_file_error" in sent[1]["body"]


def test_engine_applies_its_body_file_roots_on_load(tree):
    engine = Engine()
    engine.body_file_roots = _roots(tree)
    config = validate_config(make_config(
        http_mock("a", "GET", "/a"),
        http_mock("leak", "GET", "/leak", response={"bodyFile": "../secret.txt"})))
    with pytest.raises(ConfigError) as caught:
        engine.load(config, base_dir=tree / "config")
    assert str(caught.value).startswith("mocks[1].http.response.bodyFile: ")


def test_chunked_data_file_is_confined_too(tree):
    engine = Engine()
    engine.body_file_roots = _roots(tree)
    config = validate_config(make_config({"id": "c", "type": "http", "http": {
        "matcher": {"method": "GET", "path": "/c"},
        "chunked": {"dataFile": "../secret.txt"}}}))
    with pytest.raises(ConfigError) as caught:
        engine.load(config, base_dir=tree / "config")
    assert str(caught.value).startswith("mocks[0].http.chunked.dataFile: ")


def test_outside_roots_resolves_dot_dot_and_symlinks(tree):
    roots = _roots(tree)
    assert outside_roots(tree / "config" / "ok.txt", roots) is None
    assert outside_roots(tree / "config" / ".." / "secret.txt", roots) == \
        (tree / "secret.txt").resolve()
    assert outside_roots(Path("/etc/hostname"), ()) is None


def test_body_file_roots_are_the_config_folder_and_the_data_dirs_files_folder(tmp_path):
    config = tmp_path / "cfg" / "mocks.yaml"
    options = RunOptions(config=str(config), data_dir=str(tmp_path / "d"))
    roots = body_file_roots(options)
    assert roots == ((tmp_path / "cfg").resolve(), (tmp_path / "d" / "files").resolve())
    assert (tmp_path / "d").resolve() in roots.denied
    assert body_file_roots(RunOptions(data_dir=str(tmp_path / "d"))) == (
        (tmp_path / "d" / "files").resolve(),)
    options.allow_body_files_anywhere = True
    anywhere = body_file_roots(options)
    assert anywhere == () and (tmp_path / "d").resolve() in anywhere.denied


# ---------------------------------------------------------------------------- engine token


def test_engine_token_flag_wins_over_environment_and_file(tmp_path, monkeypatch):
    monkeypatch.setenv("MOCKD_ENGINE_TOKEN", "from-env")
    options = RunOptions(full=False, engine_token="from-flag", data_dir=str(tmp_path))
    assert resolve_engine_token(options).value == "from-flag"
    options.engine_token = None
    token = resolve_engine_token(options)
    assert (token.value, token.describe()) == ("from-env", "from MOCKD_ENGINE_TOKEN")
    assert not any(tmp_path.iterdir())


def test_engine_token_is_generated_once_0600_in_a_0700_data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("MOCKD_ENGINE_TOKEN", raising=False)
    data_dir = tmp_path / "new" / "mockd"
    options = RunOptions(full=False, data_dir=str(data_dir))
    first = resolve_engine_token(options)
    path = data_dir / "engine-token"
    assert first.path == path and first.describe() == f"stored in {path}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert len(first.value) >= 32 and first.value not in repr(first)
    assert resolve_engine_token(options).value == first.value


def test_engine_token_file_that_cannot_be_written_is_one_clear_failure(tmp_path, monkeypatch):
    monkeypatch.delenv("MOCKD_ENGINE_TOKEN", raising=False)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StartupFailure) as caught:
        resolve_engine_token(RunOptions(full=False, data_dir=str(blocker / "mockd")))
    assert caught.value.exit_code == 1 and "--engine-token" in caught.value.message


# ---------------------------------------------------------------------------- secrets in output


def test_secrets_are_shown_only_on_a_terminal(tmp_path):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    with open(tmp_path / "log", "w") as log_file:
        assert auth.shows_secrets(log_file) is False
    assert auth.shows_secrets(io.StringIO()) is False
    assert auth.shows_secrets(Terminal()) is True
    path = tmp_path / "admin-api-key"
    assert auth.api_key_announcement("mk_x", path, show=False) == \
        f"Admin API key: stored in {path}"
    assert auth.api_key_announcement("mk_x", path, show=True) == "Admin API key: mk_x"
