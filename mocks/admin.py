"""Django admin for mocks and workspaces (``/admin/`` on the admin port).

Every save and delete goes through the control plane (:mod:`mocks.control`), the same layer
the admin API uses, so an edit is validated against the config schema, written in one
transaction and pushed to the engine at once (the next data-plane request sees it). Form
errors name the field.

Source: issue 3 "Django admin"; ARCHITECTURE seam 6; STYLE §8.
"""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest

from mocks.control import documents, errors, mock_changes, workspaces
from mocks.config import MOCK_TYPES
from mocks.models import DEFAULT_WORKSPACE_ID, Mock, Workspace


class MockForm(forms.ModelForm):
    """Edits a mock as its SPEC fields plus the protocol object as JSON; ``clean`` validates
    the whole mock with the config schema."""

    type = forms.ChoiceField(choices=[(kind, kind) for kind in MOCK_TYPES])
    config = forms.JSONField(label="Protocol configuration",
                             help_text="The value of the mock's protocol key, e.g. for http: "
                                       '{"matcher": {"method": "GET", "path": "/hello"}, '
                                       '"response": {"statusCode": 200, "body": "hi"}}')

    class Meta:
        model = Mock
        fields = ["id", "workspace", "type", "name", "description", "enabled", "config"]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["id"].required = False
        self.fields["id"].help_text = "Leave empty to generate <type>_<16 hex>."
        if self.instance.pk and not self.instance._state.adding:
            self.fields["id"].disabled = True

    def document(self) -> dict[str, Any]:
        """The mock document built from the cleaned fields."""
        data = self.cleaned_data
        document: dict[str, Any] = {"type": data["type"], "enabled": data["enabled"],
                                    data["type"]: data["config"]}
        if data.get("id"):
            document["id"] = data["id"]
        if data.get("name"):
            document["name"] = data["name"]
        if data.get("description"):
            document["description"] = data["description"]
        workspace = data.get("workspace")
        document["workspaceId"] = workspace.pk if workspace else DEFAULT_WORKSPACE_ID
        return document

    def clean(self) -> dict[str, Any]:
        """Validate the mock through the service layer's parser (errors name the field)."""
        cleaned = super().clean()
        if self.errors:
            return cleaned
        if not isinstance(cleaned.get("config"), dict):
            self.add_error("config", "must be a JSON object")
            return cleaned
        try:
            documents.parse_mock(self.document())
        except errors.AdminError as error:
            raise forms.ValidationError(error.message) from None
        adding = self.instance._state.adding
        if adding and cleaned.get("id") and mock_changes.mock_exists(cleaned["id"]):
            self.add_error("id", "a mock with this id already exists")
        return cleaned

    def validate_unique(self) -> None:
        """Uniqueness of a new id is checked by the service layer (409 duplicate_id)."""


@admin.register(Mock)
class MockAdmin(admin.ModelAdmin):
    """Mocks: list, filter, edit; saves and deletes go through
    :mod:`mocks.control.mock_changes`."""

    form = MockForm
    list_display = ("id", "type", "name", "method", "path", "enabled", "workspace",
                    "updated_at")
    list_filter = ("type", "enabled", "workspace")
    search_fields = ("id", "name", "path", "description")
    ordering = ("position",)
    actions = ["enable_mocks", "disable_mocks"]

    def save_model(self, request: HttpRequest, obj: Mock, form: MockForm, change: bool) -> None:
        """Create or replace through the service layer (validated, pushed to the engine)."""
        try:
            if change:
                saved = mock_changes.replace_mock(obj.pk, form.document())
            else:
                saved = mock_changes.create_mock(form.document())
        except errors.AdminError as error:
            self.message_user(request, error.message, messages.ERROR)
            raise
        obj.pk = saved["id"]

    def delete_model(self, request: HttpRequest, obj: Mock) -> None:
        """Delete through the service layer."""
        mock_changes.delete_mock(obj.pk)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        """Delete the selected mocks in one change."""
        mock_changes.delete_mocks_by_id(list(queryset.values_list("id", flat=True)))

    @admin.action(description="Enable selected mocks")
    def enable_mocks(self, request: HttpRequest, queryset: Any) -> None:
        """Enable the selected mocks (one change)."""
        mock_changes.set_enabled(list(queryset.values_list("id", flat=True)), True)

    @admin.action(description="Disable selected mocks")
    def disable_mocks(self, request: HttpRequest, queryset: Any) -> None:
        """Disable the selected mocks (one change)."""
        mock_changes.set_enabled(list(queryset.values_list("id", flat=True)), False)


class WorkspaceForm(forms.ModelForm):
    """Name, description and base path of a workspace."""

    class Meta:
        model = Workspace
        fields = ["name", "description", "base_path"]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["base_path"].required = False
        self.fields["base_path"].help_text = ("Mocks of this workspace are served under it; "
                                              "empty on create = '/' + the name's slug.")


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    """Workspaces; the default workspace ``local`` cannot be changed or deleted."""

    form = WorkspaceForm
    list_display = ("id", "name", "base_path", "type", "updated_at")
    search_fields = ("id", "name")

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

    def save_model(self, request: HttpRequest, obj: Workspace, form: WorkspaceForm,
                   change: bool) -> None:
        """Create or update through the service layer."""
        body: dict[str, Any] = {"name": form.cleaned_data["name"],
                                "description": form.cleaned_data.get("description") or ""}
        if form.cleaned_data.get("base_path") or change:
            body["basePath"] = form.cleaned_data.get("base_path") or ""
        if change:
            saved = workspaces.update_workspace(obj.pk, body)
        else:
            saved = workspaces.create_workspace(body)
        obj.pk = saved["id"]

    def delete_model(self, request: HttpRequest, obj: Workspace) -> None:
        """Delete through the service layer."""
        workspaces.delete_workspace(obj.pk)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        """Delete each selected workspace through the service layer."""
        for workspace_id in queryset.values_list("id", flat=True):
            if workspace_id != DEFAULT_WORKSPACE_ID:
                workspaces.delete_workspace(workspace_id)
