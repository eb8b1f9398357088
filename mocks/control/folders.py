"""Folders: how the dashboard groups mocks (behavior notes §1 "Other routes": ``/folders``).

Owns: the ``Folder`` rows of :mod:`mocks.models` and the rules around them. A folder is
``{id, name, parentId?, workspaceId, metaSortKey?, createdAt, updatedAt}``; mocks belong to
one through their ``parentId``, folders nest the same way inside one workspace. Deleting a
folder moves its mocks and its sub-folders to the root (their ``parentId`` is cleared) in
the same transaction.

Who may call it: the admin API (:mod:`mocks.api_extras`). Every write runs in one
transaction; the delete goes through :func:`mocks.control.commit.commit_change`, so the engine's
copy of the moved mocks is updated before the commit like any other mock change. Folders
themselves are not served, so creating, renaming or moving one does not touch the engine.
"""
from __future__ import annotations

import re
import secrets
from typing import Any

from django.db import transaction
from django.utils import timezone as django_timezone
from pydantic import Field, ValidationError, field_validator

from mocks.control import commit, errors
from mocks.core.errors import ConfigIssue, validation_issues
from mocks.core.schema import Strict
from mocks.models import DEFAULT_WORKSPACE_ID, Folder, Mock, Workspace
from mocks.control.documents import timestamp_text
from mocks.control.errors import AdminError, ConfigValidationError

#: Client-chosen folder ids: letters, digits and ``. _ : @ + -``, 1-64 characters.
_FOLDER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,63}$")
#: Folder names are at most this long (characters).
MAX_NAME_LENGTH = 200


class FolderBody(Strict):
    """The body of ``POST``/``PUT``/``PATCH /folders``.

    Attributes:
        id: only on create: the folder id (default ``fld_<16 hex>``).
        name: the name shown in the dashboard (required on create and PUT).
        parent_id: ``parentId``: the folder it sits in (same workspace), None for the root.
        workspace_id: ``workspaceId``: the folder's workspace (create only; default the
            ``?workspaceId=`` query, else ``local``); a folder never changes workspace.
        meta_sort_key: ``metaSortKey``: the dashboard's sort position.
        created_at, updated_at: accepted (so a fetched folder can be sent back) and ignored.
    """

    id: str | None = Field(None, pattern=_FOLDER_ID.pattern)
    name: str | None = Field(None, min_length=1, max_length=MAX_NAME_LENGTH)
    parent_id: str | None = Field(None, alias="parentId")
    workspace_id: str | None = Field(None, alias="workspaceId", min_length=1)
    meta_sort_key: float | None = Field(None, alias="metaSortKey")
    created_at: str | None = Field(None, alias="createdAt")
    updated_at: str | None = Field(None, alias="updatedAt")

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("give the folder a name that is not blank")
        return value.strip() if value is not None else None


def new_folder_id() -> str:
    """A fresh folder id ``fld_<16 hex>``."""
    return f"fld_{secrets.token_hex(8)}"


def folder_document(row: Folder) -> dict[str, Any]:
    """The API shape of a folder: ``{id, name, parentId?, workspaceId, metaSortKey?,
    createdAt, updatedAt}``."""
    document: dict[str, Any] = {"id": row.id, "name": row.name}
    if row.parent_id:
        document["parentId"] = row.parent_id
    document["workspaceId"] = row.workspace_id
    if row.meta_sort_key is not None:
        document["metaSortKey"] = row.meta_sort_key
    document["createdAt"] = timestamp_text(row.created_at)
    document["updatedAt"] = timestamp_text(row.updated_at)
    return document


def list_folders(workspace_id: str | None = None,
                 parent_id: str | None = None) -> list[dict[str, Any]]:
    """Folders in creation order; ``workspace_id`` keeps one workspace's, ``parent_id`` the
    folders directly inside one folder (``""`` the root ones)."""
    rows = Folder.objects.all()
    if workspace_id:
        rows = rows.filter(workspace_id=workspace_id)
    if parent_id is not None:
        rows = rows.filter(parent_id=parent_id)
    return [folder_document(row) for row in rows]


def get_folder(folder_id: str) -> dict[str, Any]:
    """One folder; raises 404 ``not_found`` "Folder not found"."""
    return folder_document(_folder_row(folder_id))


def create_folder(body: Any, workspace_id: str | None = None) -> dict[str, Any]:
    """``POST /folders``: a new folder; returns its document.

    Raises :class:`AdminError`: 400 ``missing_field`` without a name, 400
    ``validation_error`` naming every wrong field (unknown keys, a ``parentId`` that is not
    a folder of the same workspace), 404 for an unknown workspace, 409 ``duplicate_id``.
    """
    fields = _parse(body, creating=True)
    workspace = fields.workspace_id or workspace_id or DEFAULT_WORKSPACE_ID
    folder_id = fields.id or new_folder_id()
    with transaction.atomic():
        _require_workspace(workspace)
        if Folder.objects.filter(id=folder_id).exists():
            raise AdminError(409, "duplicate_id", f"A folder with id {folder_id!r} already "
                                                  f"exists; choose another id or omit it")
        parent = fields.parent_id or ""
        _check_parent(parent, workspace, None)
        now = django_timezone.now()
        row = Folder(id=folder_id, workspace_id=workspace, name=fields.name or "",
                     parent_id=parent, meta_sort_key=fields.meta_sort_key,
                     created_at=now, updated_at=now)
        row.save(force_insert=True)
    return folder_document(row)


def update_folder(folder_id: str, body: Any, *, partial: bool) -> dict[str, Any]:
    """``PUT`` (``partial=False``: name required; ``parentId`` and ``metaSortKey`` cleared
    when absent) or ``PATCH`` (``partial=True``: only the keys given; ``null`` clears) of a
    folder; returns the updated document.

    Raises :class:`AdminError`: 404 "Folder not found", 400 ``missing_field`` (PUT without
    a name), 400 ``validation_error`` (wrong fields, another workspace, a parent that is the
    folder itself or one of its sub-folders).
    """
    fields = _parse(body, creating=not partial)
    given = fields.model_fields_set
    with transaction.atomic():
        row = _folder_row(folder_id, for_update=True)
        issues: list[ConfigIssue] = []
        if fields.id is not None and fields.id != folder_id:
            issues.append(ConfigIssue("id", f"a folder keeps its id ({folder_id!r})"))
        if fields.workspace_id is not None and fields.workspace_id != row.workspace_id:
            issues.append(ConfigIssue("workspaceId", f"a folder stays in its workspace "
                                                     f"({row.workspace_id!r})"))
        if issues:
            raise ConfigValidationError(issues)
        if not partial or "name" in given:
            row.name = fields.name or row.name
        if not partial or "parent_id" in given:
            parent = fields.parent_id or ""
            _check_parent(parent, row.workspace_id, folder_id)
            row.parent_id = parent
        if not partial or "meta_sort_key" in given:
            row.meta_sort_key = fields.meta_sort_key
        row.updated_at = django_timezone.now()
        row.save()
    return folder_document(row)


def delete_folder(folder_id: str) -> dict[str, int]:
    """``DELETE /folders/{id}``: remove the folder; its mocks and sub-folders move to the
    root (``parentId`` cleared, ``updatedAt`` now). Returns ``{movedMocks, movedFolders}``.

    Raises :class:`AdminError` 404 "Folder not found".
    """
    _folder_row(folder_id)
    moved = set(Mock.objects.filter(parent_id=folder_id).values_list("id", flat=True))

    def change() -> dict[str, int]:
        row = _folder_row(folder_id, for_update=True)
        now = django_timezone.now()
        mocks = Mock.objects.filter(parent_id=folder_id).update(parent_id="", updated_at=now)
        folders = Folder.objects.filter(parent_id=folder_id).update(parent_id="",
                                                                    updated_at=now)
        row.delete()
        return {"movedMocks": mocks, "movedFolders": folders}

    return commit.commit_change(change, touched=moved)


# ---------------------------------------------------------------------------- helpers


def _parse(body: Any, *, creating: bool) -> FolderBody:
    if not isinstance(body, dict):
        raise ConfigValidationError([ConfigIssue("body", "a folder must be a JSON object")])
    if creating and body.get("name") is None:
        raise AdminError(400, "missing_field", "name: required field is missing; give the "
                                               "folder a name")
    try:
        return FolderBody.model_validate(body)
    except ValidationError as error:
        raise ConfigValidationError(validation_issues(error)) from None


def _folder_row(folder_id: str, *, for_update: bool = False) -> Folder:
    rows = Folder.objects.select_for_update() if for_update else Folder.objects
    try:
        return rows.get(id=folder_id)
    except Folder.DoesNotExist:
        raise errors.not_found("Folder not found") from None


def _require_workspace(workspace_id: str) -> None:
    if not Workspace.objects.filter(id=workspace_id).exists():
        raise errors.not_found(f"Workspace not found: {workspace_id!r}; create it with POST "
                               f"/workspaces or omit workspaceId")


def _check_parent(parent_id: str, workspace_id: str, folder_id: str | None) -> None:
    """400 unless ``parent_id`` is empty or a folder of ``workspace_id`` that is neither
    ``folder_id`` nor inside it (a folder cannot contain itself)."""
    if not parent_id:
        return
    parents = dict(Folder.objects.filter(workspace_id=workspace_id).values_list("id",
                                                                                 "parent_id"))
    if parent_id not in parents:
        raise ConfigValidationError([ConfigIssue(
            "parentId", f"no folder {parent_id!r} in workspace {workspace_id!r}; create it "
                        f"first or leave parentId out for the root")])
    seen: set[str] = set()
    current = parent_id
    while current and current not in seen:
        if current == folder_id:
            raise ConfigValidationError([ConfigIssue(
                "parentId", "a folder cannot be moved into itself or one of its sub-folders")])
        seen.add(current)
        current = parents.get(current, "")
