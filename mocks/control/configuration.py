"""Whole configurations: export a workspace as a config document and import one (merge or
replace), with tables, bindings and custom operations, through
:func:`mocks.control.commit.commit_change`.

Source: SPEC "Admin API" (Configuration); behavior notes §1 (Configuration), §13, §15.
"""
from __future__ import annotations

import json
from typing import Any

from django.db.models import Max
from django.utils import timezone as django_timezone

from mocks.config import ConfigFile
from mocks.control.commit import commit_change, sync_engine
from mocks.control.documents import (apply_to_row, mock_compile_issues, mock_document,
                                     next_position, require_workspace)
from mocks.control.errors import ConfigValidationError, validation_error
from mocks.control.workspaces import ensure_default_workspace
from mocks.core.errors import ConfigError
from mocks.loader import validate_config
from mocks.models import DEFAULT_WORKSPACE_ID, Mock, Workspace
from mocks.portability.exporters import resolve_bindings
from tables.models import Binding, CustomOperation, Table

def export_config(workspace_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    """GET /config: ``{version, kind: MockCollection, name, metadata: {name}, mocks,
    statefulResources?, customOperations?}`` of one workspace (default ``local``), with tables
    and bindings in resolved form (behavior notes §1 and §13): tables are listed as
    ``statefulResources`` and each binding as its mock's ``http.statefulBinding``. A binding
    whose mock is not in the workspace stays in ``extend``. Posting the document back to
    ``POST /config`` restores the same tables and bindings."""
    workspace = workspace_id or DEFAULT_WORKSPACE_ID
    require_workspace(workspace)
    label = name or "mockd-export"
    document: dict[str, Any] = {"version": "1.0", "kind": "MockCollection", "name": label,
                                "metadata": {"name": label}}
    document["mocks"] = [mock_document(row) for row in
                         Mock.objects.filter(workspace_id=workspace).order_by("position",
                                                                              "created_at")]
    tables = Table.objects.filter(workspace_id=workspace)
    for key, rows in (("tables", tables.filter(kind=Table.KIND_TABLE)),
                      ("extend", Binding.objects.filter(workspace_id=workspace)),
                      ("statefulResources", tables.filter(kind=Table.KIND_STATEFUL_RESOURCE)),
                      ("customOperations",
                       CustomOperation.objects.filter(workspace_id=workspace))):
        configs = [row.config for row in rows]
        if configs:
            document[key] = configs
    return resolve_bindings(document)


def parse_config_document(data: Any) -> ConfigFile:
    """Validate a config document (``{version, mocks, ...}``); 400 ``validation_error`` naming
    the key path (``mocks[2].http.matcher.path: ...``)."""
    if not isinstance(data, dict):
        raise validation_error("config: must be an object with a 'mocks' list")
    try:
        config = validate_config(data)
    except ConfigError as error:
        raise ConfigValidationError(error.errors) from None
    issues = [issue for index, mock in enumerate(config.mocks)
              for issue in mock_compile_issues(mock, f"mocks[{index}]")]
    if issues:
        raise ConfigValidationError(issues)
    return config


def import_config(config: ConfigFile, *, replace: bool = False,
                  workspace_id: str | None = None) -> dict[str, Any]:
    """POST /config: merge (or with ``replace`` swap) a config into one workspace.

    Mocks with a stored id are replaced in place, new ones appended; tables, bindings,
    operations and legacy stateful resources are replaced by name (all of the workspace's with
    ``replace``). Returns ``{message, imported, total, statefulResources?}``.
    """
    workspace = workspace_id or DEFAULT_WORKSPACE_ID

    def change() -> dict[str, Any]:
        require_workspace(workspace)
        if replace:
            _clear_workspace(workspace)
        _store_definitions(config, workspace)
        total = Mock.objects.filter(workspace_id=workspace).count()
        result: dict[str, Any] = {"message": "Configuration imported successfully",
                                  "imported": len(config.mocks), "total": total}
        if config.stateful_resources:
            result["statefulResources"] = len(config.stateful_resources)
        return result

    return commit_change(change)


def _clear_workspace(workspace: str) -> None:
    Mock.objects.filter(workspace_id=workspace).delete()
    Table.objects.filter(workspace_id=workspace).delete()
    Binding.objects.filter(workspace_id=workspace).delete()
    CustomOperation.objects.filter(workspace_id=workspace).delete()


def _store_definitions(config: ConfigFile, workspace: str) -> None:
    now = django_timezone.now()
    position = next_position()
    # One query for the existing rows and two bulk writes: a 10,000-mock import must not cost
    # 20,000 round trips.
    ids = [mock.id for mock in config.mocks]
    existing = {row.id: row for row in _rows_by_id(ids)}
    new_rows, changed_rows = [], []
    for mock in config.mocks:
        row = existing.get(mock.id)
        if row is None:
            row = Mock(id=mock.id, position=position, created_at=now)
            position += 1
            new_rows.append(row)
        else:
            changed_rows.append(row)
        row.updated_at = now
        mock.workspace_id = workspace
        apply_to_row(row, mock)
    Mock.objects.bulk_create(new_rows, batch_size=500)
    Mock.objects.bulk_update(changed_rows, ["type", "name", "description", "enabled",
                                            "parent_id", "meta_sort_key", "config", "path",
                                            "method", "workspace_id", "updated_at"],
                             batch_size=500)
    _store_named(Table, config.tables, workspace, Table.KIND_TABLE)
    _store_named(Table, config.stateful_resources, workspace, Table.KIND_STATEFUL_RESOURCE)
    if config.extend:
        start = Binding.objects.aggregate(highest=Max("position"))["highest"] or 0
        Binding.objects.bulk_create([Binding(workspace_id=workspace, position=start + index + 1,
                                             config=config_document(binding))
                                     for index, binding in enumerate(config.extend)])
    _store_named(CustomOperation, config.custom_operations, workspace, None)


def _rows_by_id(ids: list[str]) -> list[Mock]:
    """Stored mocks with these ids (queried in chunks under SQLite's variable limit)."""
    rows: list[Mock] = []
    for start in range(0, len(ids), 500):
        rows.extend(Mock.objects.filter(id__in=ids[start:start + 500]))
    return rows


def config_document(item: Any) -> dict[str, Any]:
    """A config object as stored JSON: typed models (tables, bindings) as their camelCase
    document with only the keys given, plain dicts as they are."""
    if hasattr(item, "model_dump"):
        return item.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return item


def _store_named(model: Any, items: list[Any], workspace: str,
                 kind: str | None) -> None:
    start = model.objects.aggregate(highest=Max("position"))["highest"] or 0
    for index, item in enumerate(items):
        item = config_document(item)
        name = str(item.get("name") or f"unnamed-{index}")
        lookup: dict[str, Any] = {"workspace_id": workspace, "name": name}
        if kind is not None:
            lookup["kind"] = kind
        model.objects.update_or_create(**lookup, defaults={"config": item,
                                                           "position": start + index + 1})


def _definition_key(row: Mock) -> str:
    """What a stored mock row defines, without its id, place and timestamps."""
    return json.dumps([row.type, row.name, row.description, row.enabled, row.config],
                      sort_keys=True, default=str)


def stored_mocks_beside(config: ConfigFile) -> list[str]:
    """Ids of the stored mocks that are not among ``config``'s mocks, neither by id nor by
    definition (a file mock without an id gets a new one on every load): mocks added at run
    time, or by an earlier file. In stored order; reads only."""
    file_ids = {mock.id for mock in config.mocks}
    file_keys = set()
    for mock in config.mocks:
        row = Mock()
        apply_to_row(row, mock, keep_workspace=True)
        file_keys.add(_definition_key(row))
    return [row.id for row in Mock.objects.exclude(id__in=file_ids).order_by("position", "id")
            if _definition_key(row) not in file_keys]


def start_from(config: ConfigFile | None, *, merge: bool = False) -> int:
    """Start-up (behavior notes §15): with ``-c`` the file is the starting point (stored mocks
    and table definitions are replaced by the file's); without, the stored definitions are
    loaded. With ``merge`` (``--merge``) the stored mocks of :func:`stored_mocks_beside` are
    kept after the file's, with their extend bindings, and stored tables and custom operations
    the file does not name; a stored mock with the id (or the definition) of a file mock is
    replaced by the file's. Pushes the result to the engine; returns the number of mocks
    loaded."""
    ensure_default_workspace()
    if config is not None:
        kept = stored_mocks_beside(config) if merge else []

        def change() -> None:
            Mock.objects.exclude(id__in=kept).delete()
            if merge:
                kept_ids = set(kept)
                Binding.objects.filter(id__in=[
                    binding.id for binding in Binding.objects.all()
                    if (binding.config or {}).get("mock") not in kept_ids]).delete()
                rows = Mock.objects.in_bulk(kept)
                for position, mock_id in enumerate(kept, start=len(config.mocks)):
                    rows[mock_id].position = position
                Mock.objects.bulk_update(list(rows.values()), ["position"])
            else:
                Table.objects.all().delete()
                Binding.objects.all().delete()
                CustomOperation.objects.all().delete()
            now = django_timezone.now()
            for position, mock in enumerate(config.mocks):
                workspace = mock.workspace_id or DEFAULT_WORKSPACE_ID
                if not Workspace.objects.filter(id=workspace).exists():
                    workspace = DEFAULT_WORKSPACE_ID
                row = Mock(id=mock.id, position=position, created_at=now, updated_at=now)
                mock.workspace_id = workspace
                apply_to_row(row, mock)
                row.save(force_insert=True)
            _store_named(Table, config.tables, DEFAULT_WORKSPACE_ID, Table.KIND_TABLE)
            _store_named(Table, config.stateful_resources, DEFAULT_WORKSPACE_ID,
                         Table.KIND_STATEFUL_RESOURCE)
            first = (Binding.objects.aggregate(highest=Max("position"))["highest"] or 0) + 1 \
                if merge else 0
            Binding.objects.bulk_create([
                Binding(workspace_id=DEFAULT_WORKSPACE_ID, position=first + index,
                        config=config_document(binding))
                for index, binding in enumerate(config.extend)])
            _store_named(CustomOperation, config.custom_operations, DEFAULT_WORKSPACE_ID, None)

        commit_change(change)
    else:
        sync_engine()
    return Mock.objects.count()
