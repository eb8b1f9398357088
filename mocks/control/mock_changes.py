"""Mocks: list with filters, get, create (one or in bulk), replace, patch, toggle and delete,
each change through :func:`mocks.control.commit.commit_change`.

Source: SPEC "Admin API" (Mocks); behavior notes §1 (Mocks).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import CharField, Q, QuerySet
from django.db.models.functions import Cast
from django.utils import timezone as django_timezone

from mocks.config import MOCK_TYPES, Mock as MockConfig
from mocks.control.commit import commit_change
from mocks.control.documents import (apply_to_row, listed_document, mock_document,
                                     next_position, parse_mock, require_workspace)
from mocks.control.errors import AdminError, ConfigValidationError, not_found, validation_error
from mocks.core.errors import ConfigIssue
from mocks.models import DEFAULT_WORKSPACE_ID, Mock, Workspace

#: Mock fields PATCH may replace (behavior notes §1 "PATCH /mocks/{id}").
PATCHABLE_FIELDS = {"name": "name", "description": "description", "enabled": "enabled",
                    "parentId": "parent_id", "metaSortKey": "meta_sort_key"}


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


#: Columns :func:`list_mocks` reads, in the order :func:`listed_document` takes them; the
#: timestamps are read as their stored text (``created_text``, ``updated_text``: a cast
#: keeps the sqlite3 module from parsing them into datetimes).
LIST_COLUMNS = ("id", "type", "name", "description", "enabled", "workspace_id", "parent_id",
                "meta_sort_key", "created_text", "updated_text", "config")


def filtered_mocks(filters: MockFilter) -> QuerySet[Mock]:
    """The stored mocks passing ``filters`` (paging aside), in precedence order (position,
    then creation time)."""
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
    return rows.order_by("position", "created_at")


#: ``(SQL, params)`` of a :func:`list_mocks` page, by the filters it was made for (the
#: statement depends on the filters only, so the ORM compiles each shape once). Bounded.
_PAGE_SQL: dict[tuple[Any, ...], tuple[str, tuple[Any, ...]]] = {}
_PAGE_SQL_LIMIT = 256


def _page_sql(filters: MockFilter, rows: QuerySet[Mock]) -> tuple[str, tuple[Any, ...]]:
    """``(SQL, params)`` reading the columns of :data:`LIST_COLUMNS` for the page ``filters``
    asks of ``rows`` (``filtered_mocks(filters)``), compiled once per distinct filters."""
    key = (filters.type, filters.enabled, filters.search, filters.workspace_id,
           filters.parent_id, filters.limit, filters.offset)
    compiled = _PAGE_SQL.get(key)
    if compiled is None:
        end = None if filters.limit is None else filters.offset + filters.limit
        page = rows[filters.offset:end].annotate(
            created_text=Cast("created_at", CharField()), updated_text=Cast("updated_at",
                                                                            CharField()))
        sql, params = page.values_list(*LIST_COLUMNS).query.sql_with_params()
        if len(_PAGE_SQL) >= _PAGE_SQL_LIMIT:
            _PAGE_SQL.clear()
        compiled = _PAGE_SQL[key] = (sql, tuple(params))
    return compiled


def list_mocks(filters: MockFilter) -> tuple[list[dict[str, Any]], int]:
    """``(mock documents of the page, number passing the filters)`` in precedence order.

    The page is read as plain SQLite rows (no model instances, no field converters) and each
    row becomes the same document :func:`mocks.control.documents.mock_document` makes of a
    model (see :func:`listed_document`): about a tenth of the time for 1,000 mocks. A page
    with fewer rows than ``limit`` (or without a ``limit``) ends at the last row passing the
    filters, so their number is ``offset`` plus the rows read when any were read or ``offset``
    is 0; only otherwise is it counted by a second query.
    """
    rows = filtered_mocks(filters)
    if filters.limit is not None and filters.limit <= 0:
        return [], rows.count()
    sql, params = _page_sql(filters, rows)
    with connections[rows.db].cursor() as cursor:
        cursor.execute(sql, params)
        fetched = cursor.fetchall()
    reached_end = filters.limit is None or len(fetched) < filters.limit
    if reached_end and (fetched or filters.offset == 0):
        total = filters.offset + len(fetched)
    else:
        total = rows.count()
    return [listed_document(row) for row in fetched], total


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
        require_workspace(mock.workspace_id)
        if Mock.objects.filter(id=mock.id).exists():
            raise AdminError(409, "duplicate_id", f"Mock with this ID already exists: "
                                                  f"{mock.id!r}")
        now = django_timezone.now()
        row = Mock(id=mock.id, position=next_position(), created_at=now, updated_at=now)
        apply_to_row(row, mock)
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
            require_workspace(mock.workspace_id)
        apply_to_row(current, mock, keep_workspace=keep)
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
        position = next_position()
        now = django_timezone.now()
        rows = []
        for offset, mock in enumerate(parsed):
            require_workspace(mock.workspace_id)
            row = Mock(id=mock.id, position=position + offset, created_at=now, updated_at=now)
            apply_to_row(row, mock)
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
