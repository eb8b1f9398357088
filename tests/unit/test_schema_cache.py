"""The first start's copy of the migrated admin-schema template (mockd_project/schema_cache.py):
written whole or not at all, private, never over an existing database."""
from __future__ import annotations

import stat

import pytest

from mockd_project import schema_cache


@pytest.fixture
def template(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir()
    monkeypatch.setenv("MOCKD_SCHEMA_CACHE", str(folder))
    path = schema_cache.template_path()
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 64)
    return path


def test_the_template_is_copied_whole_and_private(tmp_path, template):
    database = tmp_path / "data" / "mockd.sqlite3"
    database.parent.mkdir()
    assert schema_cache.seed_from_template(database) is None
    assert database.read_bytes() == template.read_bytes()
    assert stat.S_IMODE(database.stat().st_mode) == 0o600
    assert [path.name for path in database.parent.iterdir()] == ["mockd.sqlite3"]


def test_an_existing_database_is_never_overwritten(tmp_path, template):
    database = tmp_path / "mockd.sqlite3"
    database.write_bytes(b"mine")
    assert schema_cache.seed_from_template(database) is None
    assert database.read_bytes() == b"mine"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["cache", "mockd.sqlite3"]


def test_no_template_yet_names_the_one_to_save(tmp_path, template):
    template.unlink()
    database = tmp_path / "mockd.sqlite3"
    assert schema_cache.seed_from_template(database) == template
    assert not database.exists()
