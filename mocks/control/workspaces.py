"""Workspaces: the default ``local`` one, list, get, create, update and delete, with their base
paths (behavior notes §12); each change through :func:`mocks.control.commit.commit_change`.

Source: SPEC "Admin API" (Workspaces); behavior notes §1 (Workspaces), §12.
"""
from __future__ import annotations

from typing import Any

from django.utils import timezone as django_timezone

from mocks.control.commit import commit_change
from mocks.control.documents import slug, timestamp_text
from mocks.control.errors import AdminError, not_found, validation_error
from mocks.models import DEFAULT_WORKSPACE_ID, Workspace

def ensure_default_workspace() -> Workspace:
    """The default workspace ``local`` (created when missing)."""
    now = django_timezone.now()
    workspace, _ = Workspace.objects.get_or_create(
        id=DEFAULT_WORKSPACE_ID, defaults={"name": "Default", "type": "local",
                                           "base_path": "", "created_at": now,
                                           "updated_at": now})
    return workspace


def workspace_document(row: Workspace) -> dict[str, Any]:
    """``{id, name, type, description?, basePath, createdAt, updatedAt}``."""
    document: dict[str, Any] = {"id": row.id, "name": row.name, "type": row.type}
    if row.description:
        document["description"] = row.description
    document.update(basePath=row.base_path, createdAt=timestamp_text(row.created_at),
                    updatedAt=timestamp_text(row.updated_at))
    return document


def list_workspaces() -> list[dict[str, Any]]:
    """Every workspace, the default first."""
    ensure_default_workspace()
    rows = sorted(Workspace.objects.all(), key=lambda row: (row.id != DEFAULT_WORKSPACE_ID,
                                                            row.created_at, row.id))
    return [workspace_document(row) for row in rows]


def get_workspace(workspace_id: str) -> dict[str, Any]:
    """One workspace; 404 "Workspace not found"."""
    return workspace_document(_workspace_row(workspace_id))


def _workspace_row(workspace_id: str) -> Workspace:
    try:
        return Workspace.objects.get(id=workspace_id)
    except Workspace.DoesNotExist:
        raise not_found("Workspace not found") from None


def _workspace_fields(body: Any, *, creating: bool) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise validation_error("body: a workspace must be a JSON object")
    fields: dict[str, Any] = {}
    if "name" in body or creating:
        name = body.get("name")
        if not isinstance(name, str) or not name.strip():
            raise AdminError(400, "missing_field" if name is None else "validation_error",
                             "name: a non-empty name is required")
        fields["name"] = name.strip()
    if body.get("type") is not None:
        if body["type"] != "local":
            raise validation_error(f"type: only 'local' workspaces are supported, "
                                   f"got {body['type']!r}")
        fields["type"] = "local"
    if "description" in body:
        description = body["description"]
        if description is not None and not isinstance(description, str):
            raise validation_error("description: must be a string")
        fields["description"] = description or ""
    if body.get("basePath") is not None:
        base_path = body["basePath"]
        if not isinstance(base_path, str) or (base_path and (
                not base_path.startswith("/") or base_path.endswith("/")
                or any(character.isspace() for character in base_path))):
            raise validation_error("basePath: must start with '/', not end with '/', and "
                                   "contain no spaces (e.g. '/team-a')")
        fields["base_path"] = base_path
    return fields


def _check_base_path(base_path: str, exclude_id: str | None) -> None:
    if not base_path:
        return
    for other in Workspace.objects.exclude(id=exclude_id).exclude(base_path=""):
        shorter, longer = sorted((base_path, other.base_path), key=len)
        if longer == shorter or longer.startswith(shorter + "/"):
            raise AdminError(409, "basepath_conflict",
                             f"basePath {base_path!r} overlaps workspace {other.name!r} "
                             f"({other.base_path!r}); choose a distinct basePath")


def _check_name(name: str, exclude_id: str | None) -> None:
    existing = Workspace.objects.filter(name=name).exclude(id=exclude_id).first()
    if existing is not None:
        raise AdminError(409, "already_exists", f"A workspace named {name!r} already exists",
                         details={"existingId": existing.id})


def create_workspace(body: Any) -> dict[str, Any]:
    """POST /workspaces ``{name, type?, description?, basePath?}``; basePath defaults to
    ``"/" + slug(name)``. 409 ``already_exists`` (with ``details.existingId``) or
    ``basepath_conflict``."""
    fields = _workspace_fields(body, creating=True)
    fields.setdefault("base_path", "/" + (slug(fields["name"]) or "workspace"))
    from mocks.config import new_mock_id

    def change() -> Workspace:
        _check_name(fields["name"], None)
        _check_base_path(fields["base_path"], None)
        now = django_timezone.now()
        row = Workspace(id=new_mock_id("ws"), created_at=now, updated_at=now,
                        **{"type": "local", **fields})
        row.save(force_insert=True)
        return row

    return workspace_document(commit_change(change))


def update_workspace(workspace_id: str, body: Any) -> dict[str, Any]:
    """PUT /workspaces/{id}: replace the given fields; the default workspace cannot be
    modified (400)."""
    if workspace_id == DEFAULT_WORKSPACE_ID:
        raise validation_error("cannot modify the default workspace")
    _workspace_row(workspace_id)
    fields = _workspace_fields(body, creating=False)

    def change() -> Workspace:
        row = _workspace_row(workspace_id)
        if "name" in fields:
            _check_name(fields["name"], workspace_id)
        if "base_path" in fields:
            _check_base_path(fields["base_path"], workspace_id)
        for key, value in fields.items():
            setattr(row, key, value)
        row.updated_at = django_timezone.now()
        row.save()
        return row

    return workspace_document(commit_change(change))


def delete_workspace(workspace_id: str) -> None:
    """DELETE /workspaces/{id} (and its mocks and tables); the default workspace cannot be
    deleted (400); 404 when missing."""
    if workspace_id == DEFAULT_WORKSPACE_ID:
        raise validation_error("cannot delete the default workspace")

    def change() -> None:
        _workspace_row(workspace_id).delete()

    commit_change(change)
