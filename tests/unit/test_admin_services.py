"""The service layer: validation, one transaction per change, the engine told before commit,
and a failed write leaving database and engine as they were (issue 3 "Bad input")."""
from __future__ import annotations

import pytest
from django.db import DatabaseError, transaction

from mocks.control import commit, configuration, documents, errors, mock_changes, workspaces
from mocks.engine.core import Engine
from mocks.models import Mock, Workspace
from tests.helpers import http_mock, make_request

pytestmark = pytest.mark.django_db(transaction=True)



def served(engine: Engine, path: str, method: str = "GET") -> str | None:
    match = engine.snapshot.index.find(make_request(method, path))
    return match.candidate.mock_id if match else None


def test_create_mock_is_stored_and_served_at_once(engine):
    document = mock_changes.create_mock(http_mock("hello", "GET", "/hello", body="hi"))
    assert document["id"] == "hello" and document["workspaceId"] == "local"
    assert Mock.objects.get(id="hello").path == "/hello"
    assert served(engine, "/hello") == "hello"


def test_create_generates_a_typed_id():
    mock = documents.parse_mock({"type": "http", "http": {"matcher": {"path": "/x"}}})
    assert mock.id.startswith("http_") and len(mock.id) == len("http_") + 16


@pytest.mark.parametrize("body, code, text", [
    pytest.param({"name": "x"}, "missing_type", "type is required", id="no type"),
    pytest.param({"type": "http", "http": {"matcher": {"path": "x"}}}, "validation_error",
                 "http.matcher.path", id="relative path"),
    pytest.param({"type": "http", "http": {"matcher": {"pathPattern": "("}}},
                 "validation_error", "http.matcher.pathPattern", id="bad regex"),
    pytest.param({"type": "http", "http": {"matcher": {}, "response": {"statusCode": 99}}},
                 "validation_error", "http.response.statusCode", id="status out of range"),
    pytest.param({"type": "http", "bogus": 1, "http": {"matcher": {}}}, "validation_error",
                 "bogus", id="unknown field"),
    pytest.param([1], "validation_error", "body", id="not an object"),
])
def test_bad_mock_bodies_name_the_field(engine, body, code, text):
    with pytest.raises(errors.AdminError) as caught:
        mock_changes.create_mock(body)
    assert caught.value.code == code and caught.value.status == 400
    assert text in caught.value.message
    assert Mock.objects.count() == 0


def test_duplicate_id_is_409(engine):
    mock_changes.create_mock(http_mock("same", "GET", "/a"))
    with pytest.raises(errors.AdminError) as caught:
        mock_changes.create_mock(http_mock("same", "GET", "/b"))
    assert (caught.value.status, caught.value.code) == (409, "duplicate_id")


def test_failed_commit_restores_database_and_engine(engine, monkeypatch):
    mock_changes.create_mock(http_mock("keep", "GET", "/keep"))
    before = [mock.id for mock in engine.snapshot.mocks]
    real_atomic = transaction.atomic

    class CommitFails:
        """``transaction.atomic`` whose commit fails after the block (and the push) ran."""

        def __init__(self, *args, **kwargs):
            self.inner = real_atomic(*args, **kwargs)

        def __enter__(self):
            return self.inner.__enter__()

        def __exit__(self, kind, value, traceback):
            if kind is not None:
                return self.inner.__exit__(kind, value, traceback)
            error = DatabaseError("disk I/O error during commit")
            self.inner.__exit__(DatabaseError, error, None)  # rolls back
            raise error

    monkeypatch.setattr(transaction, "atomic", CommitFails)
    with pytest.raises(DatabaseError):
        mock_changes.create_mock(http_mock("lost", "GET", "/lost"))
    monkeypatch.undo()
    assert list(Mock.objects.values_list("id", flat=True)) == ["keep"]
    assert served(engine, "/lost") is None and served(engine, "/keep") == "keep"
    assert [mock.id for mock in engine.snapshot.mocks] == before


def test_compile_error_at_push_rolls_back(engine, monkeypatch):
    from mocks.core.errors import ConfigError

    def refuse(config):
        raise ConfigError("mocks[0].http", "nope")

    monkeypatch.setattr(commit, "_push", refuse)
    with pytest.raises(errors.AdminError) as caught:
        mock_changes.create_mock(http_mock("x", "GET", "/x"))
    assert caught.value.code == "validation_error"
    assert Mock.objects.count() == 0 and served(engine, "/x") is None


def test_patch_merges_the_protocol_object_one_level(engine):
    mock_changes.create_mock(http_mock("p", "GET", "/p", body="old", headers={"X-A": "1"}))
    document = mock_changes.patch_mock("p", {"name": "renamed", "http": {
        "response": {"statusCode": 201, "body": "new"}}})
    assert document["name"] == "renamed"
    assert document["http"]["matcher"] == {"method": "GET", "path": "/p"}
    assert document["http"]["response"] == {"statusCode": 201, "body": "new"}


def test_toggle_removes_and_restores_the_mock_from_the_engine(engine):
    mock_changes.create_mock(http_mock("t", "GET", "/t"))
    assert mock_changes.toggle_mock("t")["enabled"] is False
    assert served(engine, "/t") is None
    mock_changes.toggle_mock("t")
    assert served(engine, "/t") == "t"


def test_bulk_is_all_or_nothing(engine):
    with pytest.raises(errors.AdminError) as caught:
        mock_changes.bulk_create([http_mock("a", "GET", "/a"), http_mock("a", "GET", "/b")])
    assert caught.value.code == "duplicate_id" and Mock.objects.count() == 0
    result = mock_changes.bulk_create([http_mock("a", "GET", "/a"), http_mock("b", "GET", "/b")])
    assert result["created"] == 2 and served(engine, "/b") == "b"


def test_workspace_base_path_prefixes_served_paths(engine):
    workspace = workspaces.create_workspace({"name": "Team A.b"})
    assert workspace["basePath"] == "/team-a-b" and workspace["id"].startswith("ws_")
    mock_changes.create_mock({**http_mock("w", "GET", "/users"), "workspaceId": workspace["id"]})
    mock_changes.create_mock({"id": "rx", "workspaceId": workspace["id"], "type": "http",
                              "http": {"matcher": {"pathPattern": "^/items/\\d+$"}}})
    assert served(engine, "/team-a-b/users") == "w" and served(engine, "/users") is None
    assert served(engine, "/team-a-b/items/7") == "rx"
    assert mock_changes.get_mock("w")["http"]["matcher"]["path"] == "/users"


def test_workspace_conflicts(engine):
    first = workspaces.create_workspace({"name": "alpha", "basePath": "/api"})
    with pytest.raises(errors.AdminError) as caught:
        workspaces.create_workspace({"name": "alpha"})
    assert caught.value.code == "already_exists"
    assert caught.value.details == {"existingId": first["id"]}
    with pytest.raises(errors.AdminError) as caught:
        workspaces.create_workspace({"name": "beta", "basePath": "/api/v2"})
    assert (caught.value.status, caught.value.code) == (409, "basepath_conflict")
    with pytest.raises(errors.AdminError) as caught:
        workspaces.delete_workspace("local")
    assert caught.value.status == 400


def test_import_replace_clears_only_the_target_workspace(engine):
    team = workspaces.create_workspace({"name": "team"})
    mock_changes.create_mock({**http_mock("other", "GET", "/o"), "workspaceId": team["id"]})
    mock_changes.create_mock(http_mock("old", "GET", "/old"))
    config = configuration.parse_config_document({"version": "1.0", "mocks": [
        http_mock("new", "GET", "/new")]})
    result = configuration.import_config(config, replace=True)
    assert result == {"message": "Configuration imported successfully", "imported": 1,
                      "total": 1}
    assert set(Mock.objects.values_list("id", flat=True)) == {"other", "new"}


def test_start_from_a_file_replaces_the_stored_mocks(engine):
    mock_changes.create_mock(http_mock("stored", "GET", "/stored"))
    config = configuration.parse_config_document({"version": "1.0", "mocks": [
        http_mock("from-file", "GET", "/file")]})
    assert configuration.start_from(config) == 1
    assert list(Mock.objects.values_list("id", flat=True)) == ["from-file"]
    assert configuration.start_from(None) == 1 and served(engine, "/file") == "from-file"
    assert Workspace.objects.filter(id="local").exists()


def test_same_route_in_two_workspaces_is_a_collision(engine):
    shared = workspaces.create_workspace({"name": "shared root", "basePath": ""})
    mock_changes.create_mock(http_mock("first", "GET", "/same"))
    with pytest.raises(errors.AdminError) as caught:
        mock_changes.create_mock({**http_mock("second", "GET", "/same"),
                                  "workspaceId": shared["id"]})
    assert (caught.value.status, caught.value.code) == (409, "route_collision")
    mock_changes.create_mock({**http_mock("other-method", "POST", "/same"),
                              "workspaceId": shared["id"]})
    assert served(engine, "/same", "POST") == "other-method"


def test_validation_cache_stays_bounded_under_single_mock_changes(engine):
    """A long run of admin writes (create one mock, delete the previous) keeps one served mock;
    the cache of validated mock versions must not keep one entry per write (a leak found by
    bench/soak.py: ~4 KiB per admin write).

    The cache is pruned above twice the served mocks plus 100 (102 here); 110 creates would
    leave 111 entries if nothing were ever dropped, so the run crosses the bound once and a
    leak fails the last assertion."""
    writes = 110
    mock_changes.create_mock(http_mock("m0", "GET", "/m0", body="0"))
    for number in range(1, writes + 1):
        mock_changes.create_mock(http_mock(f"m{number}", "GET", f"/m{number}", body="x"))
        mock_changes.delete_mock(f"m{number - 1}")
    assert served(engine, f"/m{writes}") == f"m{writes}"
    assert served(engine, f"/m{writes - 1}") is None
    assert len(commit._validated_mocks) <= 2 * 1 + 100
