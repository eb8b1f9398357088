"""The service layer of the control plane: every change to definitions goes through here.

Owns: validating admin input against the one config schema (:mod:`mocks.config`), writing
workspaces, mocks, tables, bindings and operations in ONE transaction per change, and pushing
the resulting config to the engine through ``EngineControl`` before the transaction commits,
so the very next data-plane request sees the change (ARCHITECTURE seams 1, 5 and 6).

A failed change leaves the database and the engine as they were: a validation or compile
error raises before anything is committed (the engine swaps snapshots only after a successful
compile), and if the commit itself fails after the engine took the new config, the previous
config is pushed back.

Who may call it: the admin API routers (``mocks/api.py``), the Django admin (``mocks/admin.py``),
the runner at start-up. Callers are synchronous (Django ORM); the engine is reached with
``async_to_sync`` so its methods run on the engine's event loop. Changes are serialised by one
process-wide lock.

Source: SPEC "Admin API" (Mocks, Configuration, Workspaces), "Persistence and run modes";
behavior notes §1 (Mocks, Configuration, Workspaces), §12 (base paths), §14, §15 (``-c``).
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, TypeVar

from asgiref.sync import async_to_sync
from django.db import connection, transaction
from django.db.models import Max, Q
from django.utils import timezone as django_timezone
from pydantic import ValidationError

from mockd_project.runtime import runtime
from mocks.config import MOCK_TYPES, ConfigFile, Mock as MockConfig
from mocks.core.errors import ConfigError, ConfigIssue, listed_text, validation_issues
from mocks.loader import validate_config
from mocks.engine.snapshot import compile_one
from mocks.protocols import CompileContext
from mocks.portability.exporters import resolve_bindings
from mocks.models import DEFAULT_WORKSPACE_ID, Mock, Workspace
from tables.models import Binding, CustomOperation, Table

T = TypeVar("T")

#: Mock fields PATCH may replace (behavior notes §1 "PATCH /mocks/{id}").
PATCHABLE_FIELDS = {"name": "name", "description": "description", "enabled": "enabled",
                    "parentId": "parent_id", "metaSortKey": "meta_sort_key"}

_ID_TEXT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}$")
_SLUG_SEPARATORS = re.compile(r"[\s_.\-]+")
_SLUG_DROP = re.compile(r"[^a-z0-9-]")

_change_lock = threading.RLock()


class AdminError(Exception):
    """An admin request that cannot be served; rendered as ``{error, message}`` by the one
    exception handler of the admin API (SPEC "Errors").

    Attributes:
        status: HTTP status (400, 404, 409, ...).
        code: the ``error`` code (``not_found``, ``validation_error``, ``duplicate_id``, ...).
        message: what went wrong and what to try.
        details: optional extra object rendered as ``details``.
    """

    def __init__(self, status: int, code: str, message: str,
                 details: dict[str, Any] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


def not_found(message: str = "Resource not found") -> AdminError:
    """A 404 ``not_found`` error."""
    return AdminError(404, "not_found", message)


def validation_error(message: str) -> AdminError:
    """A 400 ``validation_error`` error (the message names the field)."""
    return AdminError(400, "validation_error", message)


class ConfigValidationError(AdminError):
    """400 ``validation_error`` for a mock or config document with one or more problems.

    ``message`` lists every problem as ``<path>: <reason>`` joined by ``"; "`` (the first
    one first, so a single problem reads as it always did); the body stays the plain
    ``{error, message}`` of SPEC "Errors". The reasons are worded as the config file loader
    words them (``unknown key``, ``required field is missing``), since both come from
    :func:`mocks.core.errors.validation_issues`.

    Attributes:
        issues: the problems (:class:`~mocks.core.errors.ConfigIssue`), first one first.
    """

    def __init__(self, issues: list[ConfigIssue]):
        super().__init__(400, "validation_error", listed_text(issues, "; "))
        self.issues = issues


def _below(prefix: str, issues: list[ConfigIssue]) -> list[ConfigIssue]:
    """``issues`` with their paths moved below ``prefix`` (``[2]`` + ``http`` -> ``[2].http``)."""
    if not prefix:
        return issues
    return [ConfigIssue(f"{prefix}.{issue.path}" if issue.path else prefix, issue.reason)
            for issue in issues]


# ---------------------------------------------------------------------------- time and text


def timestamp_text(moment: datetime | None) -> str | None:
    """RFC 3339 UTC with milliseconds and ``Z``, or None."""
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def slug(name: str) -> str:
    """Base-path slug of a workspace name (behavior notes §12): lower-case alphanumerics;
    runs of space, ``_``, ``-``, ``.`` become one ``-``."""
    text = _SLUG_SEPARATORS.sub("-", name.strip().lower())
    return _SLUG_DROP.sub("", text).strip("-")


def pydantic_message(error: ValidationError, prefix: str = "") -> str:
    """Every problem of a pydantic validation as ``"<field path>: <reason>"``, joined by
    ``"; "`` (first problem first), worded as the config file loader words them."""
    return listed_text(validation_issues(error, prefix), "; ")


# ---------------------------------------------------------------------------- mock documents


def mock_document(row: Mock) -> dict[str, Any]:
    """The API shape of a stored mock (SPEC "Mock"): ``{id, type, name?, description?,
    enabled, workspaceId, parentId?, metaSortKey?, createdAt, updatedAt, <type>: {...}}``."""
    document: dict[str, Any] = {"id": row.id, "type": row.type}
    if row.name:
        document["name"] = row.name
    if row.description:
        document["description"] = row.description
    document["enabled"] = row.enabled
    document["workspaceId"] = row.workspace_id
    if row.parent_id:
        document["parentId"] = row.parent_id
    if row.meta_sort_key is not None:
        document["metaSortKey"] = row.meta_sort_key
    document["createdAt"] = timestamp_text(row.created_at)
    document["updatedAt"] = timestamp_text(row.updated_at)
    document[row.type] = row.config
    return document


def parse_mock(body: Any, *, mock_id: str | None = None, prefix: str = "") -> MockConfig:
    """Validate one mock body against the config schema, then compile it on its own.

    ``prefix`` goes before the field paths of errors (``[3]`` in a bulk body).

    Raises :class:`AdminError`: 400 ``validation_error`` (a :class:`ConfigValidationError`
    naming every wrong field) when the body is not an object or fields are wrong, 400
    ``missing_type`` when neither ``type`` nor a protocol key (nor a bare
    ``matcher``/``response``) says what kind of mock it is.
    """
    if not isinstance(body, dict):
        raise ConfigValidationError([ConfigIssue(prefix or "body",
                                                 "a mock must be a JSON object")])
    data = dict(body)
    if mock_id is not None:
        data["id"] = mock_id
    if not data.get("type") and not any(data.get(kind) is not None for kind in MOCK_TYPES) \
            and "matcher" not in data and "response" not in data:
        raise AdminError(400, "missing_type",
                         "type is required: one of " + ", ".join(MOCK_TYPES)
                         + " (or give a protocol object such as 'http')")
    issues: list[ConfigIssue] = []
    mock_id_value = data.get("id")
    if mock_id_value not in (None, "") and (not isinstance(mock_id_value, str)
                                            or not _ID_TEXT.match(mock_id_value)):
        issues.append(ConfigIssue("id", "use 1-200 letters, digits or . _ : @ + - "
                                        "(starting with a letter or digit)"))
    try:
        mock = MockConfig.model_validate(data)
    except ValidationError as error:
        issues += [issue for issue in validation_issues(error) if issue.path != "id"
                   or not issues]
        raise ConfigValidationError(_below(prefix, issues)) from None
    if issues:
        raise ConfigValidationError(_below(prefix, issues))
    compile_issues = _compile_issues(mock, prefix)
    if compile_issues:
        raise ConfigValidationError(compile_issues)
    return mock


def _compile_issues(mock: MockConfig, prefix: str = "") -> list[ConfigIssue]:
    """Compile one mock on its own so a bad regex or template is reported with its field;
    the problems found (none when it compiles), with paths below ``prefix``."""
    try:
        compile_one(mock, CompileContext(key_path=""))
    except ConfigError as error:
        return _below(prefix, [ConfigIssue(issue.path.lstrip("."), issue.reason)
                               for issue in error.errors])
    return []


def _protocol_config(mock: MockConfig) -> dict[str, Any]:
    dumped = mock.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return dumped.get(mock.type) or {}


def _listing_columns(mock_type: str, config: dict[str, Any]) -> tuple[str, str]:
    """``(path, method)`` copied out of a protocol config for listing and search."""
    if mock_type == "http":
        matcher = config.get("matcher") or {}
        return (str(matcher.get("path") or matcher.get("pathPattern") or ""),
                str(matcher.get("method") or ""))
    if mock_type in ("grpc", "mqtt") and config.get("port"):
        return f":{config['port']}", ""
    return str(config.get("path") or config.get("issuer") or ""), ""


def _apply_to_row(row: Mock, mock: MockConfig, *, keep_workspace: bool = False) -> None:
    config = _protocol_config(mock)
    row.type = mock.type
    row.name = mock.name or ""
    row.description = mock.description or ""
    row.enabled = mock.enabled
    row.parent_id = mock.parent_id or ""
    row.meta_sort_key = mock.meta_sort_key
    row.config = config
    row.path, row.method = _listing_columns(mock.type, config)
    if not keep_workspace:
        row.workspace_id = mock.workspace_id or DEFAULT_WORKSPACE_ID


def _next_position() -> int:
    highest = Mock.objects.aggregate(highest=Max("position"))["highest"]
    return 0 if highest is None else highest + 1


def _require_workspace(workspace_id: str) -> None:
    if not Workspace.objects.filter(id=workspace_id).exists():
        raise not_found(f"Workspace not found: {workspace_id!r}; create it with POST "
                        f"/workspaces or omit workspaceId")


# ---------------------------------------------------------------------------- the engine


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
            if len(_validated_mocks) > 2 * len(keys) + 100:
                live = set(keys)
                for stale in [key for key in _validated_mocks if key not in live]:
                    del _validated_mocks[stale]
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


# ---------------------------------------------------------------------------- mocks


@dataclass
class MockFilter:
    """Filters of ``GET /mocks`` (behavior notes §1): each None means "any".

    Attributes: type, enabled, search (in id, name, description, path), workspace_id,
    parent_id, limit (None = all), offset.
    """

    type: str | None = None
    enabled: bool | None = None
    search: str | None = None
    workspace_id: str | None = None
    parent_id: str | None = None
    limit: int | None = None
    offset: int = 0


def list_mocks(filters: MockFilter) -> tuple[list[dict[str, Any]], int]:
    """``(mock documents of the page, number passing the filters)`` in precedence order."""
    rows = Mock.objects.all()
    if filters.type:
        rows = rows.filter(type=filters.type)
    if filters.enabled is not None:
        rows = rows.filter(enabled=filters.enabled)
    if filters.workspace_id:
        rows = rows.filter(workspace_id=filters.workspace_id)
    if filters.parent_id is not None:
        rows = rows.filter(parent_id=filters.parent_id)
    if filters.search:
        term = filters.search
        rows = rows.filter(Q(id__icontains=term) | Q(name__icontains=term)
                           | Q(description__icontains=term) | Q(path__icontains=term))
    rows = rows.order_by("position", "created_at")
    total = rows.count()
    end = None if filters.limit is None else filters.offset + filters.limit
    return [mock_document(row) for row in rows[filters.offset:end]], total


def get_mock_row(mock_id: str) -> Mock:
    """The stored mock; raises 404 ``not_found`` "mock not found"."""
    try:
        return Mock.objects.get(id=mock_id)
    except Mock.DoesNotExist:
        raise not_found("mock not found") from None


def get_mock(mock_id: str) -> dict[str, Any]:
    """One mock document; raises 404 ``not_found``."""
    return mock_document(get_mock_row(mock_id))


def mock_exists(mock_id: str) -> bool:
    """Whether a mock with this id is stored."""
    return Mock.objects.filter(id=mock_id).exists()


def create_mock(body: Any, workspace_id: str | None = None) -> dict[str, Any]:
    """Create one mock from an admin body; returns its document.

    The workspace is the body's ``workspaceId``, else ``workspace_id`` (query), else
    ``local``. Raises :class:`AdminError` (400 ``validation_error``/``missing_type``, 404 for an
    unknown workspace, 409 ``duplicate_id``).
    """
    mock = parse_mock(body)
    if not mock.workspace_id:
        mock.workspace_id = workspace_id or DEFAULT_WORKSPACE_ID

    def change() -> Mock:
        _require_workspace(mock.workspace_id)
        if Mock.objects.filter(id=mock.id).exists():
            raise AdminError(409, "duplicate_id", f"Mock with this ID already exists: "
                                                  f"{mock.id!r}")
        now = django_timezone.now()
        row = Mock(id=mock.id, position=_next_position(), created_at=now, updated_at=now)
        _apply_to_row(row, mock)
        _check_route_collision(row)
        row.save(force_insert=True)
        return row

    return mock_document(commit_change(change, touched={mock.id}))


def replace_mock(mock_id: str, body: Any) -> dict[str, Any]:
    """PUT: full replace of a stored mock (createdAt and workspace kept unless the body names
    another workspace); 404 when missing (no upsert)."""
    row = get_mock_row(mock_id)
    mock = parse_mock(body, mock_id=mock_id)

    def change() -> Mock:
        current = get_mock_row(mock_id)
        keep = not mock.workspace_id
        if not keep:
            _require_workspace(mock.workspace_id)
        _apply_to_row(current, mock, keep_workspace=keep)
        current.updated_at = django_timezone.now()
        _check_route_collision(current)
        current.save()
        return current

    del row
    return mock_document(commit_change(change, touched={mock_id}))


def patch_mock(mock_id: str, body: Any) -> dict[str, Any]:
    """PATCH: replace ``name``, ``description``, ``enabled``, ``parentId``, ``metaSortKey``;
    merge a protocol object one level into the stored one (``null`` removes a key)."""
    if not isinstance(body, dict):
        raise validation_error("body: a patch must be a JSON object")
    document = get_mock(mock_id)
    for field in PATCHABLE_FIELDS:
        if field in body:
            if body[field] is None:
                document.pop(field, None)
            else:
                document[field] = body[field]
    for kind in MOCK_TYPES:
        if kind in body:
            patch = body[kind]
            if patch is None:
                continue
            if not isinstance(patch, dict):
                raise validation_error(f"{kind}: must be an object")
            if kind != document["type"]:
                raise validation_error(f"{kind}: this is a {document['type']} mock; patch "
                                       f"its '{document['type']}' object")
            merged = dict(document.get(kind) or {})
            for key, value in patch.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            document[kind] = merged
    for key in ("createdAt", "updatedAt"):
        document.pop(key, None)
    return replace_mock(mock_id, document)


def toggle_mock(mock_id: str) -> dict[str, Any]:
    """Flip ``enabled``; returns the mock document."""

    def change() -> Mock:
        row = get_mock_row(mock_id)
        row.enabled = not row.enabled
        row.updated_at = django_timezone.now()
        row.save(update_fields=["enabled", "updated_at"])
        return row

    return mock_document(commit_change(change, touched={mock_id}))


def delete_mock(mock_id: str) -> None:
    """Delete one mock; 404 when missing."""

    def change() -> None:
        deleted, _ = Mock.objects.filter(id=mock_id).delete()
        if not deleted:
            raise not_found("mock not found")

    commit_change(change, touched={mock_id})


def delete_mocks(mock_type: str | None = None, workspace_id: str | None = None) -> int:
    """Delete every mock (or those of one type / workspace); returns how many."""

    def change() -> int:
        rows = Mock.objects.all()
        if mock_type:
            rows = rows.filter(type=mock_type)
        if workspace_id:
            rows = rows.filter(workspace_id=workspace_id)
        return rows.delete()[0]

    return commit_change(change)


def delete_mocks_by_id(mock_ids: list[str]) -> int:
    """Delete the mocks with these ids in one change; returns how many."""

    def change() -> int:
        return Mock.objects.filter(id__in=mock_ids).delete()[0]

    return commit_change(change)


def set_enabled(mock_ids: list[str], enabled: bool) -> int:
    """Enable or disable the mocks with these ids in one change; returns how many."""

    def change() -> int:
        return Mock.objects.filter(id__in=mock_ids).update(enabled=enabled,
                                                           updated_at=django_timezone.now())

    return commit_change(change)


def bulk_create(items: Any, *, replace: bool = False,
                workspace_id: str | None = None) -> dict[str, Any]:
    """POST /mocks/bulk: create many mocks at once (all or nothing).

    ``replace`` first deletes the mocks of the target workspace. Returns ``{created, mocks}``.
    Raises 400 ``validation_error`` naming ``[i].field``, 400 ``duplicate_id`` for an id given
    twice or already stored (without ``replace``).
    """
    if not isinstance(items, list):
        raise validation_error("body: expected a JSON array of mocks")
    parsed: list[MockConfig] = []
    issues: list[ConfigIssue] = []
    for index, item in enumerate(items):
        try:
            mock = parse_mock(item, prefix=f"[{index}]")
        except ConfigValidationError as error:
            issues += error.issues  # report the problems of every item, not the first only
            continue
        except AdminError as error:
            raise AdminError(error.status, error.code, f"[{index}]: {error.message}") from None
        if not mock.workspace_id:
            mock.workspace_id = workspace_id or DEFAULT_WORKSPACE_ID
        parsed.append(mock)
    if issues:
        raise ConfigValidationError(issues)
    seen: set[str] = set()
    for index, mock in enumerate(parsed):
        if mock.id in seen:
            raise AdminError(400, "duplicate_id", f"[{index}].id: duplicate mock id {mock.id!r}")
        seen.add(mock.id)

    def change() -> list[Mock]:
        if replace:
            targets = {mock.workspace_id for mock in parsed} | {
                workspace_id or DEFAULT_WORKSPACE_ID}
            Mock.objects.filter(workspace_id__in=targets).delete()
        taken = set(Mock.objects.filter(id__in=seen).values_list("id", flat=True))
        if taken:
            raise AdminError(400, "duplicate_id",
                             f"mock ids already exist: {', '.join(sorted(taken))}; use "
                             f"?replace=true or other ids")
        position = _next_position()
        now = django_timezone.now()
        rows = []
        for offset, mock in enumerate(parsed):
            _require_workspace(mock.workspace_id)
            row = Mock(id=mock.id, position=position + offset, created_at=now, updated_at=now)
            _apply_to_row(row, mock)
            rows.append(row)
        Mock.objects.bulk_create(rows)
        return rows

    rows = commit_change(change)
    return {"created": len(rows), "mocks": [mock_document(row) for row in rows]}


def _check_route_collision(row: Mock) -> None:
    """409 ``route_collision`` when another workspace serves the same method + path."""
    if row.type != "http" or not row.path or row.path.startswith("^"):
        return
    matcher = (row.config or {}).get("matcher") or {}
    if not matcher.get("path"):
        return
    base_paths = dict(Workspace.objects.values_list("id", "base_path"))
    if len(base_paths) < 2:
        return  # one workspace: nothing to collide with
    full_path = base_paths.get(row.workspace_id, "") + matcher["path"]
    others = Mock.objects.filter(type="http").exclude(workspace_id=row.workspace_id).exclude(
        id=row.id)
    for other in others.only("id", "workspace_id", "config", "method"):
        other_matcher = (other.config or {}).get("matcher") or {}
        if not other_matcher.get("path"):
            continue
        if base_paths.get(other.workspace_id, "") + other_matcher["path"] != full_path:
            continue
        if row.method and other.method and row.method != other.method:
            continue
        raise AdminError(409, "route_collision",
                         f"{row.method or 'any method'} {full_path} is already served by mock "
                         f"{other.id!r} of workspace {other.workspace_id!r}; give this "
                         f"workspace its own basePath")


# ---------------------------------------------------------------------------- configuration


def export_config(workspace_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    """GET /config: ``{version, kind: MockCollection, name, metadata: {name}, mocks,
    statefulResources?, customOperations?}`` of one workspace (default ``local``), with tables
    and bindings in resolved form (behavior notes §1 and §13): tables are listed as
    ``statefulResources`` and each binding as its mock's ``http.statefulBinding``. A binding
    whose mock is not in the workspace stays in ``extend``. Posting the document back to
    ``POST /config`` restores the same tables and bindings."""
    workspace = workspace_id or DEFAULT_WORKSPACE_ID
    _require_workspace(workspace)
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
              for issue in _compile_issues(mock, f"mocks[{index}]")]
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
        _require_workspace(workspace)
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
    position = _next_position()
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
        _apply_to_row(row, mock)
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
        _apply_to_row(row, mock, keep_workspace=True)
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
                _apply_to_row(row, mock)
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


# ---------------------------------------------------------------------------- workspaces


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
