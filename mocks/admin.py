"""Django admin for mocks and workspaces (``/admin/`` on the admin port).

Every save and delete goes through the control plane (:mod:`mocks.control`), the same layer
the admin API uses: a mock is validated against the config schema of ``POST /mocks``
(:func:`mocks.control.documents.parse_mock`), written in one transaction and pushed to the
engine at once, so the next data-plane request sees it. A refusal (unknown key, wrong type, a
bad regex or template, a duplicate id, a route collision) is shown at the field it names with
nothing written (:class:`mockd_project.admin_site.ControlPlaneForm`).

Source: issue 3 "Django admin", issue 30 item 3; ARCHITECTURE seam 6; STYLE §8.
"""
from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from mockd_project.admin_site import (ControlPlaneAdmin, ControlPlaneForm, PrettyJSONField,
                                      run_change)
from mocks.config import MOCK_TYPES
from mocks.control import errors, mock_changes, workspaces
from mocks.models import DEFAULT_WORKSPACE_ID, Mock, Workspace

#: Mock fields of the API document edited by a form field of the same name.
_MOCK_FIELDS = {"id": "id", "type": "type", "name": "name", "description": "description",
                "enabled": "enabled", "workspaceId": "workspace"}
_FIRST_KEY = re.compile(r"^([^.\[]+)(?:\.|(?=\[)|$)(.*)$")
_EXAMPLE = ('{"matcher": {"method": "GET", "path": "/hello"}, '
            '"response": {"statusCode": 200, "body": "hi"}}')


class MockForm(ControlPlaneForm):
    """A mock as its SPEC fields plus the protocol object (the value of its ``http``,
    ``grpc``... key) as JSON. Saving creates or replaces the mock through
    :mod:`mocks.control.mock_changes` (``POST /mocks``, ``PUT /mocks/{id}``)."""

    type = forms.ChoiceField(choices=[(kind, kind) for kind in MOCK_TYPES])
    config = PrettyJSONField(label="Protocol configuration",
                             help_text="The value of the mock's protocol key (JSON), e.g. for "
                                       f"http: {_EXAMPLE}")

    class Meta:
        model = Mock
        fields = ["id", "workspace", "type", "name", "description", "enabled", "config"]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["id"].required = False
        self.fields["id"].help_text = "Leave empty to generate one (type_ + 16 hex digits)."
        self.fields["workspace"].required = False
        self.fields["workspace"].help_text = "Empty: the default workspace (local)."
        if self.instance.pk and not self.instance._state.adding:
            self.fields["id"].disabled = True
            self.fields["id"].help_text = ""

    def document(self) -> dict[str, Any]:
        """The mock document (SPEC "Mock") built from the cleaned fields."""
        data = self.cleaned_data
        document: dict[str, Any] = {"type": data["type"], "enabled": data["enabled"],
                                    data["type"]: data["config"]}
        for key in ("id", "name", "description"):
            if data.get(key):
                document[key] = data[key]
        workspace = data.get("workspace")
        document["workspaceId"] = workspace.pk if workspace else DEFAULT_WORKSPACE_ID
        return document

    def commit(self) -> str:
        """Create or replace the mock through the control plane; returns its id."""
        if self.instance._state.adding:
            return mock_changes.create_mock(self.document())["id"]
        return mock_changes.replace_mock(self.instance.pk, self.document())["id"]

    def field_of(self, path: str) -> tuple[str | None, str]:
        """``http.response.statusCode`` -> (``config``, ``response.statusCode``);
        ``workspaceId`` -> (``workspace``, ``""``); other paths are form-wide."""
        found = _FIRST_KEY.match(path)
        if not found:
            return None, path
        first, rest = found.group(1), found.group(2).lstrip(".")
        if first in MOCK_TYPES:
            return "config", rest
        if first in _MOCK_FIELDS:
            return _MOCK_FIELDS[first], rest
        return None, path

    def field_of_error(self, error: errors.AdminError) -> str | None:
        """Duplicate id -> ``id``; unknown workspace -> ``workspace``; no type -> ``type``;
        anything the engine refuses -> ``config``."""
        return {"duplicate_id": "id", "not_found": "workspace", "missing_type": "type",
                "route_collision": "config", "validation_error": "config"}.get(error.code)


@admin.register(Mock)
class MockAdmin(ControlPlaneAdmin):
    """Mocks: list (type, method, path, state, workspace), search, filters, edit; saves,
    deletes and the enable/disable actions go through :mod:`mocks.control.mock_changes`."""

    form = MockForm
    list_display = ("id", "type", "name", "method", "path", "enabled", "workspace",
                    "updated_at")
    list_display_links = ("id", "name")
    list_filter = ("type", "enabled", "workspace")
    search_fields = ("id", "name", "path", "description")
    ordering = ("position",)
    list_per_page = 100
    actions = ["enable_mocks", "disable_mocks"]

    def delete_definitions(self, objs: list[Mock]) -> None:
        """Delete the mocks in one change."""
        mock_changes.delete_mocks_by_id([obj.pk for obj in objs])

    @admin.action(description="Enable selected mocks")
    def enable_mocks(self, request: HttpRequest, queryset: Any) -> None:
        """Enable the selected mocks (one change)."""
        ids = list(queryset.values_list("id", flat=True))
        run_change(lambda: mock_changes.set_enabled(ids, True), request, self,
                   f"Enabled {len(ids)} mock(s).")

    @admin.action(description="Disable selected mocks")
    def disable_mocks(self, request: HttpRequest, queryset: Any) -> None:
        """Disable the selected mocks (one change)."""
        ids = list(queryset.values_list("id", flat=True))
        run_change(lambda: mock_changes.set_enabled(ids, False), request, self,
                   f"Disabled {len(ids)} mock(s).")


class WorkspaceForm(ControlPlaneForm):
    """Name, description and base path of a workspace; saved through
    :mod:`mocks.control.workspaces` (``POST /workspaces``, ``PUT /workspaces/{id}``)."""

    class Meta:
        model = Workspace
        fields = ["name", "description", "base_path"]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["base_path"].required = False
        self.fields["base_path"].help_text = ("Mocks of this workspace are served under it; "
                                              "empty on create = '/' + the name's slug.")

    def commit(self) -> str:
        """Create or update the workspace; returns its id."""
        data = self.cleaned_data
        body: dict[str, Any] = {"name": data["name"], "description": data.get("description")
                                or ""}
        adding = self.instance._state.adding
        if data.get("base_path") or not adding:
            body["basePath"] = data.get("base_path") or ""
        if adding:
            return workspaces.create_workspace(body)["id"]
        return workspaces.update_workspace(self.instance.pk, body)["id"]

    def field_of_error(self, error: errors.AdminError) -> str | None:
        """Name and base-path conflicts and messages that start with a field name."""
        if error.code == "already_exists" or error.message.startswith("name"):
            return "name"
        if error.code == "basepath_conflict" or error.message.startswith("basePath"):
            return "base_path"
        if error.message.startswith("description"):
            return "description"
        return None


@admin.register(Workspace)
class WorkspaceAdmin(ControlPlaneAdmin):
    """Workspaces; the default workspace ``local`` cannot be changed or deleted."""

    form = WorkspaceForm
    list_display = ("id", "name", "base_path", "type", "updated_at")
    search_fields = ("id", "name", "base_path")

    def has_delete_permission(self, request: HttpRequest, obj: Workspace | None = None) -> bool:
        """No deleting the default workspace."""
        if obj is not None and obj.pk == DEFAULT_WORKSPACE_ID:
            return False
        return super().has_delete_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Workspace | None = None) -> bool:
        """No changing the default workspace."""
        if obj is not None and obj.pk == DEFAULT_WORKSPACE_ID:
            return False
        return super().has_change_permission(request, obj)

    def delete_definitions(self, objs: list[Workspace]) -> None:
        """Delete each workspace (and its mocks) through the service layer; the default
        workspace is skipped."""
        for workspace in objs:
            if workspace.pk != DEFAULT_WORKSPACE_ID:
                workspaces.delete_workspace(workspace.pk)
