"""Secret files and the folders that hold them, against another local user: the runtime folder
of the engine token must be a real 0700 directory of the current user, and no secret write
follows a symbolic link planted at its name.

Source: behavior notes §2 (secrets 0600 in a 0700 directory), §16 (engine token);
docs/security.md "The engine-control port and its token".
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from mockd_project import auth
from mockd_project.paths import (UnsafeDirectoryError, ensure_owned_private_dir,
                                 private_dir_problem, read_private_file, write_private_file)
from mockd_project.runner import RunOptions, StartupFailure, resolve_engine_token

VICTIM_TEXT = "the victim's own content\n"


@pytest.fixture
def runtime_dir(tmp_path, monkeypatch) -> Path:
    """The folder a generated engine token goes to when no data directory is named
    (``$XDG_RUNTIME_DIR/mockd``), not made yet."""
    monkeypatch.delenv("MOCKD_ENGINE_TOKEN", raising=False)
    monkeypatch.delenv("MOCKD_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "run").mkdir()
    return tmp_path / "run" / "mockd"


@pytest.fixture
def victim(tmp_path) -> Path:
    """A file of the user that no token write may touch."""
    path = tmp_path / "victim.txt"
    path.write_text(VICTIM_TEXT)
    path.chmod(0o644)
    return path


def _engine_token():
    return resolve_engine_token(RunOptions(full=False))


def _refusal(runtime_dir: Path) -> str:
    with pytest.raises(StartupFailure) as caught:
        _engine_token()
    assert caught.value.exit_code == 1
    message = caught.value.message
    assert str(runtime_dir) in message
    assert "--engine-token" in message and "MOCKD_ENGINE_TOKEN" in message
    assert "XDG_RUNTIME_DIR" in message and "Remove the folder" in message
    return message


def test_engine_token_runtime_dir_is_created_0700_and_the_token_0600(runtime_dir):
    token = _engine_token()
    assert token.ephemeral and token.path.parent == runtime_dir
    assert stat.S_IMODE(os.lstat(runtime_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(token.path).st_mode) == 0o600
    assert token.path.read_text().strip() == token.value
    assert [item.name for item in runtime_dir.iterdir()] == [token.path.name]  # no temp left
    token.discard()
    assert not token.path.exists()


def test_engine_token_runtime_dir_in_the_temp_dir_is_named_after_the_uid(tmp_path,
                                                                         monkeypatch):
    monkeypatch.delenv("MOCKD_ENGINE_TOKEN", raising=False)
    monkeypatch.delenv("MOCKD_DATA_DIR", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    token = _engine_token()
    assert token.path.parent == tmp_path / f"mockd-{os.getuid()}"
    token.discard()


def test_engine_token_runtime_dir_open_to_others_is_refused(runtime_dir):
    runtime_dir.mkdir()
    runtime_dir.chmod(0o777)
    message = _refusal(runtime_dir)
    assert "open to other users (mode 0777)" in message
    assert list(runtime_dir.iterdir()) == []
    assert stat.S_IMODE(os.lstat(runtime_dir).st_mode) == 0o777  # refused, not changed


def test_engine_token_runtime_dir_that_is_a_symlink_is_refused(runtime_dir, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    runtime_dir.symlink_to(elsewhere)
    assert "is a symbolic link" in _refusal(runtime_dir)
    assert list(elsewhere.iterdir()) == []


def test_engine_token_runtime_dir_that_is_a_file_is_refused(runtime_dir):
    runtime_dir.write_text("")
    assert "is not a directory" in _refusal(runtime_dir)


def test_engine_token_runtime_dir_of_another_uid_is_refused(runtime_dir, monkeypatch):
    runtime_dir.mkdir(mode=0o700)
    owner = os.lstat(runtime_dir).st_uid
    monkeypatch.setattr(os, "getuid", lambda: owner + 4242)
    assert f"belongs to uid {owner}, not to uid {owner + 4242}" in _refusal(runtime_dir)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root (CI runs as "
                                              "root); the uid check is also covered above")
def test_engine_token_runtime_dir_chowned_to_another_user_is_refused(runtime_dir):
    runtime_dir.mkdir(mode=0o700)
    os.chown(runtime_dir, 65534, 65534)
    assert "belongs to uid 65534" in _refusal(runtime_dir)


def test_engine_token_symlink_at_the_token_path_leaves_the_victim_untouched(runtime_dir,
                                                                           victim):
    runtime_dir.mkdir(mode=0o700)
    planted = runtime_dir / f"engine-{os.getpid()}.token"
    planted.symlink_to(victim)
    token = _engine_token()
    assert victim.read_text() == VICTIM_TEXT
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert not token.path.is_symlink() and token.path.read_text().strip() == token.value
    token.discard()
    assert victim.read_text() == VICTIM_TEXT


def test_engine_token_symlink_in_the_data_dir_is_neither_read_nor_followed(tmp_path, victim,
                                                                          monkeypatch):
    monkeypatch.delenv("MOCKD_ENGINE_TOKEN", raising=False)
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    (data_dir / "engine-token").symlink_to(victim)
    with pytest.raises(StartupFailure) as caught:
        resolve_engine_token(RunOptions(full=False, data_dir=str(data_dir)))
    assert str(data_dir / "engine-token") in caught.value.message
    assert victim.read_text() == VICTIM_TEXT
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644


def test_write_private_file_replaces_a_symlink_instead_of_following_it(tmp_path, victim):
    target = tmp_path / "secret"
    target.symlink_to(victim)
    write_private_file(target, "s3cret\n")
    assert victim.read_text() == VICTIM_TEXT
    assert not target.is_symlink() and target.read_text() == "s3cret\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(item.name for item in tmp_path.iterdir()) == ["secret", "victim.txt"]


def test_write_private_file_keeps_the_given_mode_whatever_the_umask(tmp_path):
    previous = os.umask(0o077)
    try:
        write_private_file(tmp_path / "pid", b"{}", mode=0o644)
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "pid").stat().st_mode) == 0o644


def test_read_private_file_refuses_a_symlink_and_narrows_the_mode(tmp_path, victim):
    link = tmp_path / "link"
    link.symlink_to(victim)
    with pytest.raises(OSError):
        read_private_file(link)
    assert read_private_file(tmp_path / "missing") == ""
    loose = tmp_path / "loose"
    loose.write_text(" value \n")
    loose.chmod(0o644)
    assert read_private_file(loose) == "value"
    assert stat.S_IMODE(loose.stat().st_mode) == 0o600


def test_ensure_owned_private_dir_accepts_its_own_folder_twice(tmp_path):
    folder = tmp_path / "a" / "mockd"
    assert ensure_owned_private_dir(folder) == folder
    assert ensure_owned_private_dir(folder) == folder
    assert private_dir_problem(folder) is None
    folder.chmod(0o750)
    with pytest.raises(UnsafeDirectoryError) as caught:
        ensure_owned_private_dir(folder)
    assert caught.value.path == folder and "mode 0750" in caught.value.problem


def test_admin_api_key_file_symlink_is_replaced_not_followed(tmp_path, victim, monkeypatch):
    monkeypatch.delenv("MOCKD_API_KEY", raising=False)
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    empty = tmp_path / "empty"
    empty.write_text("")
    (data_dir / auth.API_KEY_FILE_NAME).symlink_to(empty)  # empty: a new key is made
    key = auth.load_or_create_api_key(data_dir, announce=False)
    assert empty.read_text() == ""
    assert (data_dir / auth.API_KEY_FILE_NAME).read_text().strip() == key
    assert not (data_dir / auth.API_KEY_FILE_NAME).is_symlink()
