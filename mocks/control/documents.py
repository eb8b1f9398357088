"""Mocks as documents: a stored row as the API shape (SPEC "Mock"), a posted body parsed and
validated against the one config schema (:mod:`mocks.config`), ids, workspace checks and the
RFC 3339 timestamps and base-path slugs the answers use.

Source: SPEC "Mock", "Admin API" (Mocks); behavior notes §1, §12.
"""
from __future__ import annotations

from datetime import datetime, timezone
import json
import re
from typing import Any

from django.db.models import Max
from django.utils.dateparse import parse_datetime
from django.utils.timezone import is_naive as timezone_is_naive
import orjson
from pydantic import ValidationError

from mocks.config import MOCK_TYPES, Mock as MockConfig
from mocks.control.errors import AdminError, ConfigValidationError, issues_below, not_found
from mocks.core.errors import ConfigError, ConfigIssue, listed_text, validation_issues
from mocks.engine.snapshot import compile_one
from mocks.models import DEFAULT_WORKSPACE_ID, Mock, Workspace
from mocks.protocols import CompileContext

_ID_TEXT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}$")


_SLUG_SEPARATORS = re.compile(r"[\s_.\-]+")


_SLUG_DROP = re.compile(r"[^a-z0-9-]")


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


def stored_timestamp_text(stored: str | None) -> str | None:
    """:func:`timestamp_text` of a datetime column as SQLite holds it (Django writes UTC as
    ``YYYY-MM-DD HH:MM:SS[.ffffff]``), without building a datetime; another form is parsed.
    """
    if stored is None:
        return None
    size = len(stored)
    if size == 26 and stored[10] == " " and stored[19] == ".":
        return f"{stored[:10]}T{stored[11:23]}Z"
    if size == 19 and stored[10] == " ":
        return f"{stored[:10]}T{stored[11:]}.000Z"
    moment = parse_datetime(stored)
    if moment is not None and timezone_is_naive(moment):
        moment = moment.replace(tzinfo=timezone.utc)
    return timestamp_text(moment)


def stored_config(stored: Any) -> Any:
    """The protocol config of a ``config`` column as SQLite holds it (JSON text), loaded as
    the model's JSONField loads it; orjson first, ``json`` for what orjson refuses (NaN)."""
    if not isinstance(stored, (str, bytes)):
        return stored
    try:
        return orjson.loads(stored)
    except orjson.JSONDecodeError:
        return json.loads(stored)


def listed_document(row: tuple[Any, ...]) -> dict[str, Any]:
    """:func:`mock_document` of a plain row of the mocks table, its columns in the order of
    :data:`mocks.control.mock_changes.LIST_COLUMNS` (id, type, name, description, enabled,
    workspace_id, parent_id, meta_sort_key, created_at, updated_at, config), as SQLite
    returns them: the same keys, values and order, built without a model instance."""
    (mock_id, mock_type, name, description, enabled, workspace_id, parent_id, meta_sort_key,
     created_at, updated_at, config) = row
    document: dict[str, Any] = {"id": mock_id, "type": mock_type}
    if name:
        document["name"] = name
    if description:
        document["description"] = description
    document["enabled"] = bool(enabled)
    document["workspaceId"] = workspace_id
    if parent_id:
        document["parentId"] = parent_id
    if meta_sort_key is not None:
        document["metaSortKey"] = float(meta_sort_key)
    document["createdAt"] = stored_timestamp_text(created_at)
    document["updatedAt"] = stored_timestamp_text(updated_at)
    document[mock_type] = stored_config(config)
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
        raise ConfigValidationError(issues_below(prefix, issues)) from None
    if issues:
        raise ConfigValidationError(issues_below(prefix, issues))
    compile_issues = mock_compile_issues(mock, prefix)
    if compile_issues:
        raise ConfigValidationError(compile_issues)
    return mock


def mock_compile_issues(mock: MockConfig, prefix: str = "") -> list[ConfigIssue]:
    """Compile one mock on its own so a bad regex or template is reported with its field;
    the problems found (none when it compiles), with paths below ``prefix``."""
    try:
        compile_one(mock, CompileContext(key_path=""))
    except ConfigError as error:
        return issues_below(prefix, [ConfigIssue(issue.path.lstrip("."), issue.reason)
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


def apply_to_row(row: Mock, mock: MockConfig, *, keep_workspace: bool = False) -> None:
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


def next_position() -> int:
    highest = Mock.objects.aggregate(highest=Max("position"))["highest"]
    return 0 if highest is None else highest + 1


def require_workspace(workspace_id: str) -> None:
    if not Workspace.objects.filter(id=workspace_id).exists():
        raise not_found(f"Workspace not found: {workspace_id!r}; create it with POST "
                        f"/workspaces or omit workspaceId")
