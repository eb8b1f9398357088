"""gRPC methods answered from tables: request message -> one table operation -> reply message.

Request side (:func:`operation_request`), from the request message's JSON form:

* the item data is the message, or the one object field inside it when it wraps a single
  record (``CreateUserRequest {User user = 1;}`` -> the ``user`` object);
* the item id (``get``, ``update``, ``patch``, ``delete``) is the table's ``idField``, else
  ``id``, else the first field whose name ends in ``Id`` (``userId``), in the item data or
  the message;
* ``list`` takes every field that is set (not its zero value) as a list parameter (filters,
  ``limit``, ``offset``, ``sort``, ``order``);
* ``custom`` runs the custom operation with the message as its ``input``.

Reply side (:func:`reply_document`): an item fills the reply message, or the reply's one
message-typed field that suits it best (``GetUserResponse {User user = 1;}``); a list fills
the reply's first repeated message field and its ``total``/``count``/``limit``/``offset``
fields when it has them. Unknown item keys are dropped. A table error ends the call:
404 -> ``NOT_FOUND``, 409 -> ``ALREADY_EXISTS``, 400/413 -> ``INVALID_ARGUMENT``, 507 ->
``RESOURCE_EXHAUSTED``, anything else ``INTERNAL``.

Source: SPEC "Tables" (every protocol reaches tables through one operation request), "SOAP
mock" (the same tables from another protocol); behavior notes §6, §10. Django-free.
"""
from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from tables.errors import TableError
from tables.store import OperationRequest, OperationResult, TableStore

from mocks.protocols.grpc.config import STATUS_CODES

#: Table error HTTP status -> gRPC status name.
_STATUS_OF_HTTP = {404: "NOT_FOUND", 409: "ALREADY_EXISTS", 400: "INVALID_ARGUMENT",
                   413: "INVALID_ARGUMENT", 422: "INVALID_ARGUMENT", 507: "RESOURCE_EXHAUSTED",
                   403: "PERMISSION_DENIED", 503: "UNAVAILABLE"}
_FIGURES = ("total", "count", "limit", "offset")


def status_of(error: TableError) -> tuple[int, str]:
    """``(status number, message)`` of a table error."""
    name = _STATUS_OF_HTTP.get(error.status, "INTERNAL")
    message = error.message + (f" ({error.hint})" if error.hint else "")
    return STATUS_CODES[name], message


def _record(document: dict[str, Any]) -> dict[str, Any]:
    objects = [value for value in document.values() if isinstance(value, dict) and value]
    if len(objects) == 1:
        scalars_set = [value for value in document.values()
                       if not isinstance(value, dict) and value not in ("", 0, False, [], None)]
        if not scalars_set:
            return objects[0]
    return document


def _item_id(record: dict[str, Any], document: dict[str, Any], id_field: str) -> str | None:
    for source in (record, document):
        for name in (id_field, "id"):
            value = source.get(name)
            if value not in (None, "", 0):
                return str(value)
    for source in (record, document):
        for name, value in source.items():
            if (name.endswith("Id") or name.endswith("_id")) and value not in (None, "", 0):
                return str(value)
    return None


def operation_request(action: str, table: str, operation: str | None,
                      document: dict[str, Any], store: TableStore) -> OperationRequest:
    """The :class:`~tables.store.OperationRequest` of one call (see the module docstring)."""
    if action == "custom":
        return OperationRequest("custom", table, body=document, operation=operation)
    if action == "list":
        query = {name: [value if isinstance(value, str) else str(value).lower()
                        if isinstance(value, bool) else str(value)]
                 for name, value in document.items()
                 if not isinstance(value, (dict, list)) and value not in ("", 0, False, None)}
        return OperationRequest("list", table, query=query)
    record = _record(document)
    if action == "create":
        return OperationRequest("create", table, body={key: value for key, value in record.items()
                                                       if value not in ("", None)})
    try:
        id_field = store.get(table).definition.id_field
    except TableError:
        id_field = "id"
    item_id = _item_id(record, document, id_field)
    body = None
    if action in ("update", "patch"):
        body = {key: value for key, value in record.items() if key != id_field}
        if action == "patch":
            body = {key: value for key, value in body.items()
                    if value not in ("", 0, False, [], None)}
    return OperationRequest(action, table, id=item_id or "", body=body)


def _fits(item: dict[str, Any], descriptor: Any) -> int:
    names = {field.name for field in descriptor.fields} | {field.json_name
                                                          for field in descriptor.fields}
    return sum(1 for key in item if key in names)


def _fill_item(item: dict[str, Any], descriptor: Any) -> dict[str, Any]:
    """The reply JSON carrying ``item``: the message itself, or its best-suited singular
    message field; keys the type lacks are dropped."""
    best_field, best = None, _fits(item, descriptor)
    for field in descriptor.fields:
        if field.type == FieldDescriptor.TYPE_MESSAGE and \
                not field.is_repeated:
            score = _fits(item, field.message_type)
            if score > best:
                best_field, best = field, score
    if best_field is None:
        return _known(item, descriptor)
    return {best_field.json_name: _known(item, best_field.message_type)}


def _known(item: dict[str, Any], descriptor: Any) -> dict[str, Any]:
    out = {}
    for key, value in item.items():
        field = descriptor.fields_by_name.get(key)
        if field is None:
            field = next((candidate for candidate in descriptor.fields
                          if candidate.json_name == key), None)
        if field is None:
            continue
        if field.type == FieldDescriptor.TYPE_MESSAGE and isinstance(value, dict) and \
                not field.message_type.GetOptions().map_entry and \
                not field.message_type.full_name.startswith("google.protobuf."):
            value = _known(value, field.message_type)
        elif field.type == FieldDescriptor.TYPE_MESSAGE and isinstance(value, list) and \
                not field.message_type.full_name.startswith("google.protobuf."):
            value = [_known(entry, field.message_type) if isinstance(entry, dict) else entry
                     for entry in value]
        out[field.json_name] = value
    return out


def reply_document(result: OperationResult, descriptor: Any) -> dict[str, Any]:
    """The reply message's JSON for a successful table ``result`` (see the module
    docstring); ``descriptor`` is the reply type."""
    if result.action == "custom":
        value = result.value
        return _fill_item(value, descriptor) if isinstance(value, dict) else {}
    if result.action == "list":
        items = result.items or []
        out: dict[str, Any] = {}
        target = next((field for field in descriptor.fields
                       if field.is_repeated
                       and field.type == FieldDescriptor.TYPE_MESSAGE
                       and not field.message_type.GetOptions().map_entry), None)
        if target is not None:
            out[target.json_name] = [_known(item, target.message_type) for item in items]
        meta = result.meta
        figures = {"total": getattr(meta, "total", len(items)), "count": len(items),
                   "limit": getattr(meta, "limit", None), "offset": getattr(meta, "offset", None)}
        for name in _FIGURES:
            field = descriptor.fields_by_name.get(name)
            if field is not None and figures.get(name) is not None and \
                    field.type != FieldDescriptor.TYPE_MESSAGE:
                out[field.json_name] = figures[name]
        return out
    item = result.item
    if result.action == "delete" or not isinstance(item, dict):
        return _fill_item(item, descriptor) if isinstance(item, dict) else {}
    return _fill_item(item, descriptor)
