"""Response transforms: table data reshaped to look like any target API.

A :class:`CompiledTransform` is built once from a
:class:`~tables.config.ResponseTransform` and applied to plain dicts; stored items are never
mutated (every step works on a copy). Protocol-neutral: HTTP, SOAP, GraphQL and gRPC adapters
can all use :meth:`CompiledTransform.item`; the list envelope and statuses are what HTTP uses.

Order for one item (SPEC "Response transform"): rename -> hide -> wrapAsList -> timestamps ->
inject. Resolution: a binding's transform replaces the table's; with neither the raw data is
answered (``None`` transform everywhere below means raw).

Shapes:

* list without ``list`` config: ``{"data": [items], "meta": {total, limit, offset, count,
  has_more}}``;
* list with ``list`` config: ``{**extraFields, <dataField>: [items], total, limit, offset,
  count}`` (meta names renamed by ``metaFields``, dropped with ``hideMeta``;
  ``has_more``/``hasMore`` in ``extraFields`` get the computed value);
* errors: :func:`error_body` (behavior notes §6 "Error transform").

No Django.
"""
from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from tables.errors import TableError

if TYPE_CHECKING:  # annotations only
    from tables.config import ResponseTransform
    from tables.query import ListMeta

#: Default statuses of creates and deletes (behavior notes §6).
DEFAULT_CREATE_STATUS = 201
DEFAULT_DELETE_STATUS = 204

_ITEM_PLACEHOLDER = re.compile(r"\{\{\s*item\.([A-Za-z0-9_\-]+)\s*\}\}")
_FIELD_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_\-]+)\s*\}\}")
_TIMESTAMP_FIELDS = ("createdAt", "updatedAt")


class CompiledTransform:
    """One ``response`` transform, ready to apply.

    Attributes:
        config: the transform as configured.
        create_status: status of a successful create, or None (then the default applies).
        delete_status: status of a successful delete, or None.
        delete_preserve: answer a delete but keep the item.
        has_delete_body: whether deletes answer a body (``delete.body``).
    """

    __slots__ = ("config", "_rename", "_hide", "_wrap", "_timestamp_format",
                 "_timestamp_names", "_inject", "_list", "create_status", "delete_status",
                 "delete_preserve", "_delete_body", "has_delete_body", "_errors",
                 "_changes_items")

    def __init__(self, config: ResponseTransform):
        self.config = config
        fields = config.fields
        self._rename = dict(fields.rename) if fields else {}
        self._hide = tuple(fields.hide) if fields else ()
        self._wrap = {name: (wrap.url if wrap else None)
                      for name, wrap in (fields.wrap_as_list.items() if fields else ())}
        self._inject = dict(fields.inject) if fields else {}
        timestamps = config.timestamps
        self._timestamp_format = timestamps.format if timestamps else None
        self._timestamp_names = dict(timestamps.fields) if timestamps else {}
        self._list = config.list_envelope
        self.create_status = config.create.status if config.create else None
        self.delete_status = config.delete.status if config.delete else None
        self.delete_preserve = bool(config.delete and config.delete.preserve)
        self._delete_body = config.delete.body if config.delete else None
        self.has_delete_body = self._delete_body is not None
        self._errors = config.errors
        self._changes_items = bool(self._rename or self._hide or self._wrap or self._inject
                                   or timestamps is not None)

    # ------------------------------------------------------------------ items
    def item(self, item: dict[str, Any]) -> dict[str, Any]:
        """The output form of one item: rename -> hide -> wrapAsList -> timestamps -> inject.
        Returns a new dict (or ``item`` itself when nothing changes items)."""
        if not self._changes_items:
            return item
        data = dict(item)
        for stored, output in self._rename.items():
            if stored in data:
                data[output] = data.pop(stored)
        for name in self._hide:
            data.pop(name, None)
        for name, url in self._wrap.items():
            value = data.get(name)
            if isinstance(value, list):
                envelope: dict[str, Any] = {"object": "list", "data": value, "has_more": False}
                if url:
                    envelope["url"] = _FIELD_PLACEHOLDER.sub(
                        lambda match: _parent_text(data, match), url)
                data[name] = envelope
        if self._timestamp_format is not None:
            self._timestamps(data)
        data.update(self._inject)
        return data

    def _timestamps(self, data: dict[str, Any]) -> None:
        form = self._timestamp_format
        for name in _TIMESTAMP_FIELDS:
            if name not in data:
                continue
            if form == "none":
                del data[name]
                continue
            value = data.pop(name)
            output = self._timestamp_names.get(name) or name
            data[output] = convert_timestamp(value, form)

    # ------------------------------------------------------------------ lists
    def envelope(self, items: list[dict[str, Any]], meta: ListMeta) -> dict[str, Any]:
        """The list answer for already transformed ``items`` (see the module docstring)."""
        shape = self._list
        if shape is None:
            return list_envelope(items, meta)
        result: dict[str, Any] = {}
        for key, value in shape.extra_fields.items():
            result[key] = meta.has_more if key in ("has_more", "hasMore") else value
        result[shape.data_field] = items
        if not shape.hide_meta:
            names = shape.meta_fields
            result[names.get("total") or "total"] = meta.total
            result[names.get("limit") or "limit"] = meta.limit
            result[names.get("offset") or "offset"] = meta.offset
            result[names.get("count") or "count"] = meta.count
        return result

    # ------------------------------------------------------------------ deletes
    def delete_body(self, item: dict[str, Any] | None) -> Any:
        """``delete.body`` with ``{{item.<field>}}`` filled from the deleted item, or None."""
        if self._delete_body is None:
            return None
        return _fill_item(self._delete_body, item or {})

    # ------------------------------------------------------------------ errors
    def error(self, error: TableError) -> dict[str, Any]:
        """The error body through ``errors`` (or the default body without it)."""
        return error_body(error, self)


def _parent_text(data: dict[str, Any], match: re.Match[str]) -> str:
    value = data.get(match.group(1))
    return value if isinstance(value, str) else match.group(0)


def _fill_item(value: Any, item: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = _ITEM_PLACEHOLDER.fullmatch(value)
        if whole is not None and whole.group(1) in item:
            return item[whole.group(1)]  # a lone placeholder keeps the field's JSON type

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in item:
                return match.group(0)
            field = item[name]
            if isinstance(field, bool):
                return "true" if field else "false"
            return "" if field is None else str(field)

        return _ITEM_PLACEHOLDER.sub(replace, value)
    if isinstance(value, dict):
        return {key: _fill_item(child, item) for key, child in value.items()}
    if isinstance(value, list):
        return [_fill_item(child, item) for child in value]
    return value


def convert_timestamp(value: Any, form: str) -> Any:
    """A stored RFC 3339 timestamp in ``form``: ``unix`` (int seconds), ``iso8601`` (RFC 3339
    with whole seconds, ``Z``), ``rfc3339`` (unchanged). Unparsable values stay as they are."""
    if form in ("rfc3339", None) or not isinstance(value, str):
        return value
    from tables.query import time_nanoseconds  # list queries' module, loaded on first use

    nanoseconds = time_nanoseconds(value)
    if nanoseconds is None:
        return value
    seconds = nanoseconds // 1_000_000_000
    if form == "unix":
        return seconds
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def list_envelope(items: list[dict[str, Any]], meta: ListMeta) -> dict[str, Any]:
    """The default list answer ``{"data": items, "meta": {total, limit, offset, count,
    has_more}}``."""
    return {"data": items, "meta": meta.as_dict()}


def error_body(error: TableError, transform: CompiledTransform | None) -> dict[str, Any]:
    """The body of a table error, through the transform's ``errors`` when it has one.

    Without ``fields`` the object holds the non-empty ``message``, ``resource``, ``id``,
    ``field``; with ``fields`` only the listed sources (``message``, ``resource``, ``id``,
    ``field``, ``type`` from ``typeMap``, ``code`` from ``codeMap``) under their output
    names; ``inject`` adds constants; ``wrap`` nests it all under one key.
    """
    errors = transform._errors if transform is not None else None
    if errors is None or error.status == 503:  # state store down: one shape everywhere
        return error.body()
    sources: dict[str, Any] = {"message": error.message, "resource": error.table,
                               "id": error.item_id, "field": error.field}
    if error.code in errors.type_map:
        sources["type"] = errors.type_map[error.code]
    if error.code in errors.code_map:
        sources["code"] = errors.code_map[error.code]
    shaped: dict[str, Any] = {}
    if errors.fields:
        for source, output in errors.fields.items():
            value = sources.get(source)
            if value not in (None, ""):
                shaped[output] = value
    else:
        for source in ("message", "resource", "id", "field"):
            if sources[source]:
                shaped[source] = sources[source]
    shaped.update(errors.inject)
    if errors.wrap:
        return {errors.wrap: shaped}
    return shaped


def compile_transform(config: ResponseTransform | None) -> CompiledTransform | None:
    """A :class:`CompiledTransform`, or None for no transform (raw data)."""
    return CompiledTransform(config) if config is not None else None
