"""Folders and dashboard preferences in SQLite through their service modules (behavior notes
§1 "Other routes": ``/folders`` CRUD, ``/preferences``)."""
from __future__ import annotations

import re

import pytest

from mocks.control import errors, folders, mock_changes, preferences, workspaces
from mocks.models import Folder, Mock
from tests.helpers import http_mock

pytestmark = pytest.mark.django_db(transaction=True)



def test_create_folder_has_the_documented_shape(engine):
    folder = folders.create_folder({"name": " Users ", "metaSortKey": 2.5})
    assert re.fullmatch(r"fld_[0-9a-f]{16}", folder["id"])
    assert folder["name"] == "Users" and folder["workspaceId"] == "local"
    assert folder["metaSortKey"] == 2.5 and "parentId" not in folder
    assert folder["createdAt"].endswith("Z") and folder["updatedAt"] == folder["createdAt"]
    assert folders.get_folder(folder["id"]) == folder


def test_folders_nest_and_list_by_parent(engine):
    top = folders.create_folder({"name": "top", "id": "top"})
    inner = folders.create_folder({"name": "inner", "parentId": "top"})
    assert inner["parentId"] == top["id"]
    assert [row["id"] for row in folders.list_folders(parent_id="top")] == [inner["id"]]
    assert [row["id"] for row in folders.list_folders(parent_id="")] == ["top"]


@pytest.mark.parametrize("body, status, code, text", [
    pytest.param({}, 400, "missing_field", "name: required field is missing",
                 id="no name"),
    pytest.param({"name": "   "}, 400, "validation_error", "name: ", id="blank name"),
    pytest.param({"name": "x", "colour": "red", "metaSortKey": "high"}, 400,
                 "validation_error", "metaSortKey: ", id="every wrong field named"),
    pytest.param({"name": "x", "parentId": "nope"}, 400, "validation_error",
                 "parentId: no folder 'nope'", id="unknown parent"),
    pytest.param({"name": "x", "workspaceId": "ws_none"}, 404, "not_found",
                 "Workspace not found", id="unknown workspace"),
    pytest.param([1], 400, "validation_error", "body: ", id="not an object"),
])
def test_bad_folder_bodies(engine, body, status, code, text):
    with pytest.raises(errors.AdminError) as caught:
        folders.create_folder(body)
    assert (caught.value.status, caught.value.code) == (status, code)
    assert text in caught.value.message
    assert Folder.objects.count() == 0


def test_unknown_keys_are_worded_as_in_config_files(engine):
    with pytest.raises(errors.AdminError) as caught:
        folders.create_folder({"name": "x", "colour": "red", "size": 1})
    assert caught.value.message == "colour: unknown key; size: unknown key"


def test_duplicate_folder_id_is_409(engine):
    folders.create_folder({"name": "a", "id": "same"})
    with pytest.raises(errors.AdminError) as caught:
        folders.create_folder({"name": "b", "id": "same"})
    assert (caught.value.status, caught.value.code) == (409, "duplicate_id")


def test_put_replaces_and_patch_merges(engine):
    parent = folders.create_folder({"name": "parent"})
    folder = folders.create_folder({"name": "a", "parentId": parent["id"], "metaSortKey": 1})
    patched = folders.update_folder(folder["id"], {"name": "renamed"}, partial=True)
    assert patched["name"] == "renamed" and patched["parentId"] == parent["id"]
    assert patched["metaSortKey"] == 1
    moved = folders.update_folder(folder["id"], {"parentId": None}, partial=True)
    assert "parentId" not in moved
    replaced = folders.update_folder(folder["id"], {"name": "b"}, partial=False)
    assert replaced["name"] == "b" and "metaSortKey" not in replaced
    with pytest.raises(errors.AdminError) as caught:
        folders.update_folder(folder["id"], {"metaSortKey": 3}, partial=False)
    assert caught.value.code == "missing_field"


def test_a_fetched_folder_can_be_sent_back(engine):
    folder = folders.create_folder({"name": "a"})
    assert folders.update_folder(folder["id"], folder, partial=False)["name"] == "a"


def test_a_folder_cannot_move_into_itself_or_below_itself(engine):
    top = folders.create_folder({"name": "top"})
    child = folders.create_folder({"name": "child", "parentId": top["id"]})
    for parent in (top["id"], child["id"]):
        with pytest.raises(errors.AdminError) as caught:
            folders.update_folder(top["id"], {"parentId": parent}, partial=True)
        assert "cannot be moved into itself" in caught.value.message


def test_a_folder_keeps_its_workspace(engine):
    workspace = workspaces.create_workspace({"name": "Team"})
    folder = folders.create_folder({"name": "a"}, workspace_id=workspace["id"])
    assert folder["workspaceId"] == workspace["id"]
    with pytest.raises(errors.AdminError) as caught:
        folders.update_folder(folder["id"], {"workspaceId": "local"}, partial=True)
    assert caught.value.message.startswith("workspaceId: a folder stays in its workspace")
    with pytest.raises(errors.AdminError):  # a parent from another workspace
        folders.create_folder({"name": "b", "parentId": folder["id"]})


def test_delete_moves_mocks_and_subfolders_to_the_root(engine):
    folder = folders.create_folder({"name": "a"})
    inner = folders.create_folder({"name": "inner", "parentId": folder["id"]})
    mock_changes.create_mock({**http_mock("inside", "GET", "/inside"), "parentId": folder["id"]})
    mock_changes.create_mock({**http_mock("outside", "GET", "/outside"), "parentId": inner["id"]})
    before = mock_changes.get_mock("inside")["updatedAt"]
    assert folders.delete_folder(folder["id"]) == {"movedMocks": 1, "movedFolders": 1}
    assert not Folder.objects.filter(id=folder["id"]).exists()
    moved = mock_changes.get_mock("inside")
    assert "parentId" not in moved and moved["updatedAt"] >= before
    assert mock_changes.get_mock("outside")["parentId"] == inner["id"]
    assert "parentId" not in folders.get_folder(inner["id"])
    # the engine's copy follows the database
    served = {mock.id: mock for mock in engine.snapshot.config.mocks}
    assert served["inside"].parent_id is None and served["outside"].parent_id == inner["id"]
    with pytest.raises(errors.AdminError) as caught:
        folders.delete_folder(folder["id"])
    assert caught.value.status == 404 and caught.value.message == "Folder not found"


def test_deleting_a_workspace_deletes_its_folders(engine):
    workspace = workspaces.create_workspace({"name": "Gone"})
    folders.create_folder({"name": "a"}, workspace_id=workspace["id"])
    workspaces.delete_workspace(workspace["id"])
    assert Folder.objects.count() == 0 and Mock.objects.count() == 0


# ---------------------------------------------------------------------------- preferences


def test_preferences_start_empty_and_round_trip(db):
    assert preferences.get_preferences() == {}
    stored = {"theme": "dark", "columns": {"id": 120}, "recent": ["a", "b"]}
    assert preferences.put_preferences(stored) == stored
    assert preferences.get_preferences() == stored
    assert preferences.put_preferences({"theme": "light"}) == {"theme": "light"}
    assert preferences.get_preferences() == {"theme": "light"}  # replaced, not merged


@pytest.mark.parametrize("value, status, code", [
    pytest.param([1, 2], 400, "validation_error", id="array"),
    pytest.param("dark", 400, "validation_error", id="string"),
    pytest.param(None, 400, "validation_error", id="null"),
    pytest.param({"blob": "x" * (64 * 1024)}, 413, "body_too_large", id="over 64 KiB"),
])
def test_bad_preferences_are_refused_and_nothing_changes(db, value, status, code):
    preferences.put_preferences({"kept": True})
    with pytest.raises(errors.AdminError) as caught:
        preferences.put_preferences(value)
    assert (caught.value.status, caught.value.code) == (status, code)
    assert preferences.get_preferences() == {"kept": True}


def test_preferences_of_exactly_64_kib_are_kept(db):
    value = {"blob": ""}
    value["blob"] = "x" * (preferences.MAX_PREFERENCES_BYTES - len('{"blob":""}'))
    assert preferences.put_preferences(value) == value
