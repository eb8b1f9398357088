"""Service layer of table definitions on the control plane (Django side).

Creating or removing a table through the admin API persists the definition (``tables``
``Table`` rows, ARCHITECTURE seam 6) in one transaction and pushes the resulting config to
the engine through :func:`mocks.control.commit.commit_change`; the engine then builds the runtime
table from its seed data (runtime items never touch the database).

Who may call it: :mod:`tables.api` (synchronous operations; they run in Django's thread
pool, and ``commit_change`` reaches the engine loop with ``async_to_sync``).

Custom operations follow the same path: registering one (``POST /state/operations``)
validates and compiles it first (every expression checked), then writes or replaces its
``CustomOperation`` row and pushes the config; the engine compiles it into its snapshot.

Source: SPEC "State" (creating a resource at runtime: ``{name, idField?}`` -> 201; custom
operations); behavior notes §1 "State (tables) and custom operations".
"""
from __future__ import annotations

from typing import Any, Callable

from asgiref.sync import async_to_sync
from django.db.models import Max

from mockd_project.runtime import runtime
from mocks.core.errors import ConfigError
from mocks.models import DEFAULT_WORKSPACE_ID, Workspace
from mocks.control.commit import commit_change
from mocks.control.configuration import config_document
from mocks.control.errors import AdminError, not_found, validation_error

from tables.control import CREATED_MESSAGE, table_config_of
from tables.errors import TableError
from tables.models import CustomOperation, Table
from tables.operations import REGISTERED_MESSAGE, compile_operation, operation_config_of


def _engine_has_table(name: str) -> bool:
    control = runtime.control
    if control is None:
        return False
    return async_to_sync(control.table_resource)(name) is not None


def require_workspace(workspace_id: str) -> None:
    """Raise :class:`AdminError` 404 ``not_found`` when workspace ``workspace_id`` does not
    exist (the wording of creating a mock in an unknown workspace,
    :mod:`mocks.control.documents`)."""
    if not Workspace.objects.filter(id=workspace_id).exists():
        raise not_found(f"Workspace not found: {workspace_id!r}; create it with POST "
                        f"/workspaces or omit workspaceId")


def _owner_filter(model: Any, workspace_id: str | None) -> Callable[[str], bool] | None:
    """A name predicate "the definition belongs to ``workspace_id``", or None (no filter)
    when ``workspace_id`` is empty or missing: like ``GET /mocks``, a listing without
    ``workspaceId`` spans every workspace (behavior notes §1, §12).

    The persisted rows say which workspace a definition belongs to; a name the engine knows
    without a row (registered on a headless engine's control port) counts as ``local``.
    """
    if not workspace_id:
        return None
    owners = dict(model.objects.values_list("name", "workspace_id"))
    return lambda name: owners.get(name, DEFAULT_WORKSPACE_ID) == workspace_id


def table_filter(workspace_id: str | None) -> Callable[[str], bool] | None:
    """Predicate on table names of workspace ``workspace_id`` (None: every table)."""
    return _owner_filter(Table, workspace_id)


def operation_filter(workspace_id: str | None) -> Callable[[str], bool] | None:
    """Predicate on custom operation names of workspace ``workspace_id`` (None: all)."""
    return _owner_filter(CustomOperation, workspace_id)


def create_table(body: Any, workspace_id: str | None = None) -> dict[str, Any]:
    """Persist a table definition in workspace ``workspace_id`` (empty or missing:
    ``local``) and load it into the engine.

    Returns ``{name, idField, message: "Stateful resource created"}``. Raises
    :class:`AdminError` 400 ``validation_error`` (bad definition, the message names the
    field), 404 ``not_found`` (unknown workspace) or 409 ``conflict`` (a table of that name
    exists in any workspace: the engine has one table namespace, bindings name tables
    without a workspace).
    """
    try:
        config = table_config_of(body)
    except TableError as error:
        raise validation_error(error.message) from None
    workspace = workspace_id or DEFAULT_WORKSPACE_ID

    def change() -> None:
        require_workspace(workspace)
        if Table.objects.filter(name=config.name).exists() or _engine_has_table(config.name):
            raise AdminError(409, "conflict", f'resource "{config.name}" already exists')
        position = (Table.objects.aggregate(highest=Max("position"))["highest"] or 0) + 1
        Table.objects.create(workspace_id=workspace, name=config.name, kind=Table.KIND_TABLE,
                             position=position, config=config_document(config))

    commit_change(change)
    return {"name": config.name, "idField": config.id_field, "message": CREATED_MESSAGE}


def delete_table(name: str) -> bool:
    """Remove a table definition (persisted or runtime-only) and its items; returns whether
    it existed. Bindings that name it then answer 404 ``resource "<name>" not found``.
    The caller checks the workspace first (:func:`table_filter`)."""
    if Table.objects.filter(name=name).exists():
        commit_change(lambda: Table.objects.filter(name=name).delete())
        return True
    control = runtime.control
    return bool(control is not None and async_to_sync(control.unregister_table)(name))


def create_operation(body: Any, workspace_id: str | None = None) -> dict[str, Any]:
    """Persist a custom operation and load it into the engine; an operation of the same name
    is replaced.

    The operation belongs to workspace ``workspace_id`` (empty or missing: ``local``).

    Returns ``{name, message: "Custom operation registered"}``. Raises :class:`AdminError`
    400 ``validation_error`` whose message names the field and, for an expression, the
    expression and why (``steps[1].condition: expression "frm.balance > 0": unknown name
    "frm" (known here: input)``); 404 ``not_found`` for an unknown workspace; 409
    ``conflict`` when another workspace has an operation of that name (the engine has one
    operation namespace: mocks name operations without a workspace).
    """
    try:
        config = operation_config_of(body)
        compile_operation(config)
    except TableError as error:
        raise validation_error(error.message) from None
    except ConfigError as error:
        raise validation_error(str(error)) from None
    workspace = workspace_id or DEFAULT_WORKSPACE_ID

    def change() -> None:
        require_workspace(workspace)
        # One namespace in the engine: replacing is only for the same workspace, so one
        # workspace cannot silently rewrite another's operation.
        existing = CustomOperation.objects.filter(name=config.name).first()
        document = config_document(config)
        if existing is not None and existing.workspace_id != workspace:
            raise AdminError(409, "conflict",
                             f'custom operation "{config.name}" already exists in workspace '
                             f'"{existing.workspace_id}"')
        if existing is not None:
            existing.config = document
            existing.save(update_fields=["config"])
            return
        position = (CustomOperation.objects.aggregate(highest=Max("position"))["highest"]
                    or 0) + 1
        CustomOperation.objects.create(workspace_id=workspace, name=config.name,
                                       position=position, config=document)

    commit_change(change)
    return {"name": config.name, "message": REGISTERED_MESSAGE}


def delete_operation(name: str) -> bool:
    """Remove a custom operation (persisted or runtime-only); returns whether it existed.
    Bindings that name it then answer 404 ``custom operation "<name>" not found``."""
    if CustomOperation.objects.filter(name=name).exists():
        commit_change(lambda: CustomOperation.objects.filter(name=name).delete())
        return True
    control = runtime.control
    return bool(control is not None
                and async_to_sync(control.unregister_custom_operation)(name))
