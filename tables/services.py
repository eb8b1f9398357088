"""Service layer of table definitions on the control plane (Django side).

Creating or removing a table through the admin API persists the definition (``tables``
``Table`` rows, ARCHITECTURE seam 6) in one transaction and pushes the resulting config to
the engine through :func:`mocks.services.commit_change`; the engine then builds the runtime
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

from typing import Any

from asgiref.sync import async_to_sync
from django.db.models import Max

from mockd_project.runtime import runtime
from mocks.engine.errors import ConfigError
from mocks.models import DEFAULT_WORKSPACE_ID
from mocks.services import AdminError, commit_change, config_document, validation_error

from .control import CREATED_MESSAGE, table_config_of
from .errors import TableError
from .models import CustomOperation, Table
from .operations import REGISTERED_MESSAGE, compile_operation, operation_config_of


def _engine_has_table(name: str) -> bool:
    control = runtime.control
    if control is None:
        return False
    return async_to_sync(control.table_resource)(name) is not None


def create_table(body: Any, workspace_id: str | None = None) -> dict[str, Any]:
    """Persist a table definition and load it into the engine.

    Returns ``{name, idField, message: "Stateful resource created"}``. Raises
    :class:`AdminError` 400 ``validation_error`` (bad definition, the message names the
    field) or 409 ``conflict`` (a table of that name exists).
    """
    try:
        config = table_config_of(body)
    except TableError as error:
        raise validation_error(error.message) from None
    workspace = workspace_id or DEFAULT_WORKSPACE_ID

    def change() -> None:
        if Table.objects.filter(name=config.name).exists() or _engine_has_table(config.name):
            raise AdminError(409, "conflict", f'resource "{config.name}" already exists')
        position = (Table.objects.aggregate(highest=Max("position"))["highest"] or 0) + 1
        Table.objects.create(workspace_id=workspace, name=config.name, kind=Table.KIND_TABLE,
                             position=position, config=config_document(config))

    commit_change(change)
    return {"name": config.name, "idField": config.id_field, "message": CREATED_MESSAGE}


def delete_table(name: str) -> bool:
    """Remove a table definition (persisted or runtime-only) and its items; returns whether
    it existed. Bindings that name it then answer 404 ``resource "<name>" not found``."""
    if Table.objects.filter(name=name).exists():
        commit_change(lambda: Table.objects.filter(name=name).delete())
        return True
    control = runtime.control
    return bool(control is not None and async_to_sync(control.unregister_table)(name))


def create_operation(body: Any, workspace_id: str | None = None) -> dict[str, Any]:
    """Persist a custom operation and load it into the engine; an operation of the same name
    is replaced.

    Returns ``{name, message: "Custom operation registered"}``. Raises :class:`AdminError`
    400 ``validation_error`` whose message names the field and, for an expression, the
    expression and why (``steps[1].condition: expression "frm.balance > 0": unknown name
    "frm" (known here: input)``).
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
        # One namespace in the engine: a name is replaced wherever it was stored.
        existing = CustomOperation.objects.filter(name=config.name).first()
        document = config_document(config)
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
