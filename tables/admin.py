"""Django admin for tables, extend bindings and custom operations (``/admin/tables/``).

Each definition is edited as its config-file object (``tables[i]``, ``extend[i]``,
``customOperations[i]``) in one JSON field, validated by the same models as the config file
and the admin API (:class:`tables.config.TableConfig`, :class:`tables.config.ExtendBinding`,
:class:`tables.operations_config.CustomOperationConfig`, and the expression compiler for
operations), with each problem shown at that field as ``<key path>: <reason>``.

Saving goes through the control plane: a new table or operation through
:mod:`tables.services` (``POST /state/resources``, ``POST /state/operations``); an edit, a
binding and every delete through :func:`mocks.control.commit.commit_change`, which validates
the whole resulting config, writes it in one transaction and pushes it to the engine, so the
next data-plane request sees it. Renaming a table or an operation is refused (bindings and
mocks name them): add the new one and delete the old.

Source: SPEC "Table", "Extend binding", "Custom operation"; issue 30 item 3.
"""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Max
from pydantic import BaseModel, ValidationError

from mockd_project.admin_site import ControlPlaneAdmin, ControlPlaneForm, PrettyJSONField
from mocks.control.commit import commit_change
from mocks.control.configuration import config_document
from mocks.control.errors import AdminError, ConfigValidationError
from mocks.core.errors import ConfigError, ConfigIssue, validation_issues
from mocks.models import DEFAULT_WORKSPACE_ID
from tables import services
from tables.config import ExtendBinding, StatefulResourceConfig, TableConfig
from tables.models import Binding, CustomOperation, Table
from tables.operations import compile_operation
from tables.operations_config import CustomOperationConfig


def _validated(model: type[BaseModel], document: Any) -> Any:
    """``document`` as ``model``; raises :class:`ConfigValidationError` naming every wrong
    key (``idStrategy: ...``)."""
    try:
        return model.model_validate(document)
    except ValidationError as error:
        raise ConfigValidationError(validation_issues(error)) from None


def _next_position(model: Any) -> int:
    return (model.objects.aggregate(highest=Max("position"))["highest"] or 0) + 1


class DefinitionForm(ControlPlaneForm):
    """The workspace and the JSON config object of one definition; every control-plane
    problem is shown at ``config`` (the workspace's own at ``workspace``)."""

    config = PrettyJSONField(label="Definition (JSON)")

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["workspace"].required = False
        self.fields["workspace"].help_text = "Empty: the default workspace (local)."

    @property
    def adding(self) -> bool:
        """Whether the form creates a new definition."""
        return self.instance._state.adding

    def workspace_id(self) -> str:
        """The chosen workspace's id (``local`` when none was chosen)."""
        workspace = self.cleaned_data.get("workspace")
        return workspace.pk if workspace else DEFAULT_WORKSPACE_ID

    def field_of(self, path: str) -> tuple[str | None, str]:
        """Every key path belongs to ``config``."""
        return "config", path

    def field_of_error(self, error: AdminError) -> str | None:
        """An unknown workspace -> ``workspace``; anything else -> ``config``."""
        if error.status == 404 and "Workspace" in error.message:
            return "workspace"
        return "config"

    def refuse_rename(self, old: str, new: str, what: str) -> None:
        """Raise a ``name`` issue when an edit renames the definition."""
        if not self.adding and old != new:
            raise ConfigValidationError([ConfigIssue(
                "name", f"a {what} cannot be renamed here (bindings and mocks name it): add "
                        f"one named {new!r}, then delete {old!r}")])


class TableForm(DefinitionForm):
    """A table (``tables[i]``, or a legacy ``statefulResources[i]``)."""

    class Meta:
        model = Table
        fields = ["workspace", "config"]

    def commit(self) -> int:
        """Create through :func:`tables.services.create_table`; an edit replaces the stored
        definition in one change. Returns the row id."""
        kind = self.instance.kind if not self.adding else Table.KIND_TABLE
        model = StatefulResourceConfig if kind == Table.KIND_STATEFUL_RESOURCE else TableConfig
        parsed = _validated(model, self.cleaned_data["config"])
        if self.adding:
            services.create_table(self.cleaned_data["config"], self.workspace_id())
            return Table.objects.get(name=parsed.name, kind=Table.KIND_TABLE).pk
        self.refuse_rename(self.instance.name, parsed.name, "table")
        row_id, workspace = self.instance.pk, self.workspace_id()

        def change() -> None:
            services.require_workspace(workspace)
            Table.objects.filter(pk=row_id).update(workspace_id=workspace,
                                                   config=config_document(parsed))

        commit_change(change)
        return row_id


@admin.register(Table)
class TableAdmin(ControlPlaneAdmin):
    """Tables: name, kind, workspace, seed size; search by name; filter by kind and
    workspace. Runtime items are not edited here (the dashboard's Tables area and
    ``/state/resources/{name}/items`` are)."""

    form = TableForm
    list_display = ("name", "kind", "workspace", "id_field", "seed_items", "position")
    list_filter = ("kind", "workspace")
    search_fields = ("name",)

    @admin.display(description="id field")
    def id_field(self, row: Table) -> str:
        """The table's ``idField``."""
        return str((row.config or {}).get("idField") or "id")

    @admin.display(description="seed items")
    def seed_items(self, row: Table) -> int:
        """How many items ``seedData`` holds."""
        seed = (row.config or {}).get("seedData")
        return len(seed) if isinstance(seed, list) else 0

    def delete_definitions(self, objs: list[Table]) -> None:
        """Remove each table (definition and items) through :mod:`tables.services`."""
        for row in objs:
            services.delete_table(row.name)


class BindingForm(DefinitionForm):
    """An extend binding (``extend[i]``: ``mock``, ``table``, ``action``...)."""

    class Meta:
        model = Binding
        fields = ["workspace", "config"]

    def commit(self) -> int:
        """Create or replace the binding in one change (the engine compiles the whole
        config, so a binding naming an unknown mock or table is refused). Returns the row id."""
        parsed = _validated(ExtendBinding, self.cleaned_data["config"])
        document, workspace = config_document(parsed), self.workspace_id()
        row_id = self.instance.pk

        def change() -> int:
            services.require_workspace(workspace)
            if row_id is None:
                return Binding.objects.create(workspace_id=workspace, config=document,
                                              position=_next_position(Binding)).pk
            Binding.objects.filter(pk=row_id).update(workspace_id=workspace, config=document)
            return row_id

        return commit_change(change)


@admin.register(Binding)
class BindingAdmin(ControlPlaneAdmin):
    """Extend bindings: mock, table, action, operation; search by any of them."""

    form = BindingForm
    list_display = ("id", "bound_mock", "table", "action", "operation", "workspace")
    list_filter = ("workspace",)
    search_fields = ("config",)

    @admin.display(description="mock")
    def bound_mock(self, row: Binding) -> str:
        """The ``mock`` reference (id, operation id or ``"METHOD /path"``)."""
        return str((row.config or {}).get("mock") or "")

    @admin.display(description="table")
    def table(self, row: Binding) -> str:
        """The bound table."""
        return str((row.config or {}).get("table") or "")

    @admin.display(description="action")
    def action(self, row: Binding) -> str:
        """The action (``list``, ``get``, ``create``..., ``custom``)."""
        return str((row.config or {}).get("action") or "")

    @admin.display(description="operation")
    def operation(self, row: Binding) -> str:
        """The custom operation of a ``custom`` action."""
        return str((row.config or {}).get("operation") or "")

    def delete_definitions(self, objs: list[Binding]) -> None:
        """Delete the bindings in one change."""
        ids = [row.pk for row in objs]
        commit_change(lambda: Binding.objects.filter(pk__in=ids).delete())


class CustomOperationForm(DefinitionForm):
    """A custom operation (``customOperations[i]``: ``name``, ``steps``, ``response``)."""

    class Meta:
        model = CustomOperation
        fields = ["workspace", "config"]

    def commit(self) -> int:
        """Validate and compile the operation (every expression), then register it through
        :func:`tables.services.create_operation` (same name: replaced). Returns the row id."""
        parsed = _validated(CustomOperationConfig, self.cleaned_data["config"])
        try:
            compile_operation(parsed)
        except ConfigError as error:
            raise ConfigValidationError(error.errors) from None
        self.refuse_rename(self.instance.name, parsed.name, "custom operation")
        if not self.adding and self.workspace_id() != self.initial.get("workspace"):
            raise AdminError(400, "validation_error", "an operation keeps its workspace: add "
                                                      "it to the other workspace instead")
        services.create_operation(self.cleaned_data["config"], self.workspace_id())
        return CustomOperation.objects.get(name=parsed.name).pk

    def field_of_error(self, error: AdminError) -> str | None:
        """The workspace rule -> ``workspace``; others as :class:`DefinitionForm`."""
        if "keeps its workspace" in error.message:
            return "workspace"
        return super().field_of_error(error)


@admin.register(CustomOperation)
class CustomOperationAdmin(ControlPlaneAdmin):
    """Custom operations: name, step count, workspace; search by name."""

    form = CustomOperationForm
    list_display = ("name", "steps", "workspace", "position")
    list_filter = ("workspace",)
    search_fields = ("name",)

    @admin.display(description="steps")
    def steps(self, row: CustomOperation) -> int:
        """How many steps the operation has."""
        steps = (row.config or {}).get("steps")
        return len(steps) if isinstance(steps, list) else 0

    def delete_definitions(self, objs: list[CustomOperation]) -> None:
        """Remove each operation through :mod:`tables.services`."""
        for row in objs:
            services.delete_operation(row.name)
