"""The one way a change reaches the engine: :func:`commit_change` runs a change in ONE database
transaction and pushes the resulting config to the engine through ``EngineControl`` before
the transaction commits, so the next data-plane request sees it (ARCHITECTURE seams 1, 5, 6).

A failed change leaves the database and the engine as they were: a validation or compile
error raises before anything is committed (the engine swaps snapshots only after a successful
compile), and if the commit itself fails after the engine took the new config, the previous
config is pushed back. Callers are synchronous (Django ORM); the engine is reached with
``async_to_sync`` so its methods run on the engine's event loop. Changes are serialised by one
process-wide lock.

Source: SPEC "Persistence and run modes"; behavior notes §14, §15 (``-c``).
"""
from __future__ import annotations

import re
import threading
from typing import Any, Callable, TypeVar

from asgiref.sync import async_to_sync
from django.db import connection, transaction
from pydantic import ValidationError

from mockd_project.runtime import runtime
from mocks.config import ConfigFile, Mock as MockConfig
from mocks.control.documents import mock_document, pydantic_message
from mocks.control.errors import validation_error
from mocks.core.errors import ConfigError
from mocks.loader import validate_config
from mocks.models import Mock, Workspace
from tables.models import Binding, CustomOperation, Table

T = TypeVar("T")


_change_lock = threading.RLock()


def _engine_mock(document: dict[str, Any], base_path: str) -> dict[str, Any]:
    """A mock as the engine serves it: under its workspace's base path (notes §12)."""
    if not base_path or document["type"] in ("grpc", "mqtt", "oauth"):
        return document
    mock_type = document["type"]
    config = dict(document.get(mock_type) or {})
    if mock_type == "http":
        matcher = dict(config.get("matcher") or {})
        if matcher.get("path"):
            matcher["path"] = base_path + matcher["path"]
        elif matcher.get("pathPattern"):
            pattern = matcher["pathPattern"]
            escaped = re.escape(base_path)
            matcher["pathPattern"] = ("^" + escaped + pattern[1:] if pattern.startswith("^")
                                      else escaped + pattern)
        else:
            matcher["pathPattern"] = "^" + re.escape(base_path) + "(/.*)?$"
        config["matcher"] = matcher
    elif isinstance(config.get("path"), str):
        config["path"] = base_path + config["path"]
    return {**document, mock_type: config}


def engine_config_document(include_mocks: bool = True) -> dict[str, Any]:
    """The whole stored configuration as the engine serves it (every workspace, base paths
    applied, mocks in position order); ``include_mocks=False`` leaves ``mocks`` empty."""
    mocks: list[dict[str, Any]] = []
    if include_mocks:
        base_paths = dict(Workspace.objects.values_list("id", "base_path"))
        mocks = [_engine_mock(mock_document(row), base_paths.get(row.workspace_id, ""))
                 for row in Mock.objects.order_by("position", "created_at")]
    document: dict[str, Any] = {"version": "1.0", "mocks": mocks}
    document["tables"] = [row.config for row in Table.objects.filter(kind=Table.KIND_TABLE)]
    document["statefulResources"] = [
        row.config for row in Table.objects.filter(kind=Table.KIND_STATEFUL_RESOURCE)]
    document["extend"] = [row.config for row in Binding.objects.all()]
    document["customOperations"] = [row.config for row in CustomOperation.objects.all()]
    return document


def _control() -> Any:
    return runtime.control


def _push(config: ConfigFile) -> None:
    control = _control()
    if control is not None:
        async_to_sync(control.apply_config)(config)


def _current_engine_config() -> ConfigFile | None:
    control = _control()
    if control is None:
        return None
    return async_to_sync(control.current_config)()


def sync_engine() -> dict[str, Any]:
    """Push the stored configuration to the engine; returns the engine's answer.

    Raises :class:`AdminError` 400 ``validation_error`` when it does not compile.
    """
    global _last_config
    with _change_lock:
        _last_config = None  # what the engine holds is decided here, not by the last change
        config, _ = _validated_engine_config()
        control = _control()
        if control is None:
            return {"message": "No engine connected", "mocks": len(config.mocks)}
        try:
            return async_to_sync(control.apply_config)(config)
        except ConfigError as error:
            raise validation_error(str(error)) from None


#: Validated engine-side mocks by ``(id, updated_at, enabled, base path)``. Every write in this
#: module bumps ``updated_at``, so a change re-reads and re-validates only the mocks it touched
#: (a light query lists the keys; full rows are fetched only for keys not cached).
_validated_mocks: dict[tuple[str, Any, bool, str], MockConfig] = {}

#: Above this many uncached mocks the full table is read instead of an ``IN (...)`` list.
_FETCH_BY_ID_LIMIT = 500


_VERSION_COLUMNS = "id, CAST(updated_at AS TEXT), enabled, workspace_id"


def _mock_version_rows(mock_ids: list[str] | None = None) -> list[tuple[str, str, int, str]]:
    """``(id, updated_at, enabled, workspace id)`` of every stored mock in serving order, or
    of the mocks in ``mock_ids`` (any order; missing ids are left out).

    Read with plain SQL: the values only serve as cache keys, and skipping the ORM's per-row
    conversions (``updated_at`` parsed into a datetime) keeps this cheap with 10,000 stored
    mocks. ``CAST``: an expression column has no declared type, so no converter runs.
    """
    table = connection.ops.quote_name(Mock._meta.db_table)
    with connection.cursor() as cursor:
        if mock_ids is None:
            cursor.execute(f"SELECT {_VERSION_COLUMNS} FROM {table} "
                           f"ORDER BY position, created_at")
        else:
            marks = ", ".join(["%s"] * len(mock_ids))
            cursor.execute(f"SELECT {_VERSION_COLUMNS} FROM {table} WHERE id IN ({marks})",
                           mock_ids)
        return cursor.fetchall()


_MockKey = tuple[str, str, int, str]

#: The engine-side mocks of the last successful change, in serving order: ``id -> (version
#: key, validated mock)``; None until the first change (and after a failed one), which then
#: reads every stored mock's key. Changes that name the mocks they touch (create, replace,
#: patch, toggle, delete of one mock) update a copy of it from those rows alone, so their cost
#: does not grow with the number of stored mocks. Guarded by ``_change_lock``.
_engine_mocks: dict[str, tuple[_MockKey, MockConfig]] = {}
#: The config of the last successful change (None: unknown), and the engine control it was
#: pushed to (another engine starts from scratch).
_last_config: ConfigFile | None = None
_engine_mocks_of: Any = None


def _validate_rows(keys: list[_MockKey], position_of: Callable[[str], int]) -> None:
    """Validate the stored mocks whose ``keys`` are not cached into ``_validated_mocks``.

    ``position_of(id)`` gives a mock's index for error paths (``mocks[3]...``; only called
    for an error). Raises :class:`ConfigError`.
    """
    missing = {key[0]: key for key in keys if key not in _validated_mocks}
    if not missing:
        return
    rows = (Mock.objects.filter(id__in=list(missing))
            if len(missing) <= _FETCH_BY_ID_LIMIT else Mock.objects.all())
    for row in rows:
        key = missing.get(row.id)
        if key is None:
            continue
        try:
            mock = MockConfig.model_validate(_engine_mock(mock_document(row), key[3]))
        except ValidationError as error:
            raise ConfigError("", pydantic_message(
                error, f"mocks[{position_of(row.id)}]")) from None
        _validated_mocks[key] = mock


def _forget_stale_validations(engine_mocks: dict[str, tuple[_MockKey, MockConfig]]) -> None:
    """Drop the cached validations of mock versions no longer served (deleted mocks, older
    versions of changed ones) once the cache holds more than twice the served mocks plus 100,
    so it stays bounded however many single-mock changes are made (amortised O(1) each)."""
    if len(_validated_mocks) > 2 * len(engine_mocks) + 100:
        live = {key for key, _ in engine_mocks.values()}
        for stale in [key for key in _validated_mocks if key not in live]:
            del _validated_mocks[stale]


def _validated_engine_config(
        touched: set[str] | None = None,
) -> tuple[ConfigFile, dict[str, tuple[_MockKey, MockConfig]]]:
    """The stored configuration as a validated :class:`ConfigFile` for the engine, and the
    ``id -> (key, mock)`` map it was built from (to keep as ``_engine_mocks`` once the change
    commits).

    ``touched``: the ids of the only mocks the change may have created, edited or deleted;
    None re-reads the key of every stored mock. A created mock is placed last (its position
    is the highest). Raises :class:`AdminError` 400 when the result does not validate.
    """
    base_paths = dict(Workspace.objects.values_list("id", "base_path"))
    try:
        engine_mocks = None
        if touched is not None and _last_config is not None and _engine_mocks_of is _control():
            engine_mocks = dict(_engine_mocks)
            found = {row[0]: row for row in _mock_version_rows(sorted(touched))}
            keys = [(mock_id, updated_at, enabled, base_paths.get(workspace_id, ""))
                    for mock_id, updated_at, enabled, workspace_id in found.values()]
            _validate_rows(keys, lambda mock_id: list(engine_mocks).index(mock_id)
                           if mock_id in engine_mocks else len(engine_mocks))
            for mock_id in touched - found.keys():
                engine_mocks.pop(mock_id, None)
            for key in keys:
                engine_mocks[key[0]] = (key, _validated_mocks[key])
            if len(engine_mocks) != Mock.objects.count():
                engine_mocks = None  # written behind this module's back: read everything
            else:
                _forget_stale_validations(engine_mocks)
                # Only mocks changed: tables, bindings and operations are the last config's.
                config = _last_config.model_copy(update={
                    "mocks": [mock for _, mock in engine_mocks.values()]})
                return config, engine_mocks
        if engine_mocks is None:
            keys = [(mock_id, updated_at, enabled, base_paths.get(workspace_id, ""))
                    for mock_id, updated_at, enabled, workspace_id in _mock_version_rows()]
            _validate_rows(keys, lambda mock_id: next(
                index for index, key in enumerate(keys) if key[0] == mock_id))
            engine_mocks = {key[0]: (key, _validated_mocks[key]) for key in keys}
            _forget_stale_validations(engine_mocks)
        config = validate_config({**engine_config_document(include_mocks=False), "mocks": []})
    except ConfigError as error:
        raise validation_error(str(error)) from None
    config.mocks = [mock for _, mock in engine_mocks.values()]
    return config, engine_mocks


def commit_change(change: Callable[[], T], touched: set[str] | None = None) -> T:
    """Run ``change`` (ORM writes) in one transaction and push the result to the engine.

    ``touched`` names the mocks the change may create, edit or delete when it touches no
    other definition (see :func:`_validated_engine_config`); None for any other change.
    The engine takes the new config just before the commit; any error before that rolls the
    database back and leaves the engine untouched; a failing commit restores the engine's
    previous config. Raises :class:`AdminError` for invalid results.
    """
    global _engine_mocks, _engine_mocks_of, _last_config
    with _change_lock:
        previous = (_last_config if _last_config is not None and _engine_mocks_of is _control()
                    else _current_engine_config())
        pushed = False
        try:
            with transaction.atomic():
                result = change()
                config, engine_mocks = _validated_engine_config(touched)
                try:
                    _push(config)
                except ConfigError as error:
                    raise validation_error(str(error)) from None
                pushed = True
        except BaseException:
            _last_config = None  # the next change re-reads every key
            if pushed and previous is not None:
                _push(previous)
            raise
        _engine_mocks, _engine_mocks_of, _last_config = engine_mocks, _control(), config
        return result
