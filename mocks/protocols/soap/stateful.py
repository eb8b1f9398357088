"""Stateful SOAP operations: the envelope's operation element -> one table operation -> the
operation's response element.

Request side (:func:`operation_request`), from the operation element read as a map
(:func:`mocks.core.xmldoc.element_to_map`):

* the item data is that map, or the one element inside it when it wraps a single record
  (``<CreateUser><user><name>Ann</name></user></CreateUser>`` -> ``{"name": "Ann"}``);
* the item id (``get``, ``update``, ``patch``, ``delete``) is the table's ``idField``, else
  ``id``, else the first field whose name ends in ``id`` (``userId``), found in the item
  data or the map;
* ``list`` takes every text field of the map as a list parameter (filters, ``limit``,
  ``offset``, ``sort``, ``order``);
* ``custom`` runs the custom operation with the map as its ``input``.

Answer side (:class:`ResponseShape`): the table's result is written into the operation's
response element. With a *shape* (the operation's static ``response`` XML, else the sample
response of its WSDL operation) the result fills it: the element whose children best match
the item's fields receives the values (repeated once per item of a list; ``total``,
``count``, ``limit``, ``offset`` siblings get the list's figures), elements the item does not
have are left out, so the answer keeps the namespaces and element names the WSDL declares.
Without one: ``<OperationResponse><field>value</field>…</OperationResponse>`` (a list puts one
``<item>`` per record and a ``<meta>``). A table error is a SOAP fault naming it
(``resource "users" item "42" not found``), ``Client`` for 4xx, ``Server`` otherwise.

Source: SPEC "SOAP mock" ("the result is serialized back as an XML SOAP response. SOAP
operations and HTTP endpoints share the same tables"), "Custom operations" (``input`` is "the
body as a map" for SOAP); behavior notes §6 (error messages), §10. Django-free.
"""
from __future__ import annotations

import copy
import re
from typing import Any

import orjson

from mocks.core.xmldoc import XmlRefused, element_to_map, local_name, parse_xml
from mocks.protocols.soap.envelope import Fault, xml_escape

from tables.errors import TableError
from tables.store import OperationRequest, OperationResult, TableStore

_NAME_START = re.compile(r"[A-Za-z_]")
_NAME_BAD = re.compile(r"[^\w.-]")
#: List figures written into shape siblings of the repeated element.
META_FIELDS = ("total", "count", "limit", "offset")


def _item_data(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        return {}
    if len(data) == 1:
        (only,) = data.values()
        if isinstance(only, dict):
            return only
    return data


def _item_id(data: dict[str, Any], record: dict[str, Any], id_field: str) -> str | None:
    for source in (record, data):
        for name in (id_field, "id"):
            value = source.get(name)
            if isinstance(value, str) and value:
                return value
    for source in (record, data):
        for name, value in source.items():
            if name.lower().endswith("id") and isinstance(value, str) and value:
                return value
    return None


def operation_request(action: str, table: str, operation: str | None, data: Any,
                      store: TableStore) -> OperationRequest:
    """The :class:`~tables.store.OperationRequest` of one SOAP call (see the module
    docstring); ``data`` is the operation element as a map."""
    if action == "custom":
        return OperationRequest("custom", table, body=data if isinstance(data, dict) else {},
                                operation=operation)
    record = _item_data(data)
    if action == "list":
        query = {name: [value] for name, value in (data or {}).items()
                 if isinstance(value, str)} if isinstance(data, dict) else {}
        return OperationRequest("list", table, query=query)
    if action == "create":
        return OperationRequest("create", table, body=dict(record))
    try:
        id_field = store.get(table).definition.id_field
    except TableError:
        id_field = "id"
    item_id = _item_id(data if isinstance(data, dict) else {}, record, id_field)
    body = None
    if action in ("update", "patch"):
        body = {name: value for name, value in record.items() if name != id_field}
    return OperationRequest(action, table, id=item_id, body=body)


def table_fault(error: TableError) -> Fault:
    """A table error as a SOAP fault: its message as the reason, ``Client`` for 4xx
    (``Server`` otherwise), detail ``<error><code/><resource/><id/><status/></error>``."""
    parts = [f"<code>{xml_escape(error.code)}</code>"]
    if error.table:
        parts.append(f"<resource>{xml_escape(error.table)}</resource>")
    if error.item_id:
        parts.append(f"<id>{xml_escape(error.item_id)}</id>")
    parts.append(f"<status>{error.status}</status>")
    if error.hint:
        parts.append(f"<hint>{xml_escape(error.hint)}</hint>")
    code = "soap:Client" if 400 <= error.status < 500 else "soap:Server"
    return Fault(code, error.message, f"<error>{''.join(parts)}</error>")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return str(value)
    return orjson.dumps(value).decode()


def xml_name(name: str) -> str:
    """``name`` as an XML element name (bad characters -> ``_``; a leading digit gets ``_``)."""
    cleaned = _NAME_BAD.sub("_", str(name)) or "_"
    return cleaned if _NAME_START.match(cleaned) else "_" + cleaned


def _plain_fields(record: dict[str, Any]) -> str:
    out = []
    for name, value in record.items():
        tag = xml_name(name)
        if isinstance(value, dict):
            out.append(f"<{tag}>{_plain_fields(value)}</{tag}>")
        elif isinstance(value, list):
            out.extend(f"<{tag}>{_plain_fields(item) if isinstance(item, dict) else xml_escape(_text(item))}</{tag}>"
                       for item in value)
        elif value is not None:
            out.append(f"<{tag}>{xml_escape(_text(value))}</{tag}>")
    return "".join(out)


class ResponseShape:
    """How one operation writes a table result (see the module docstring).

    Args:
        operation: the operation name (the generic wrapper is ``<operation>Response``).
        shape: XML of the response element to fill (None: the generic form).
        namespace: the generic wrapper's default namespace (``""``: none).
    """

    def __init__(self, operation: str, shape: str | None, namespace: str = ""):
        self.operation = operation
        self.namespace = namespace
        self.shape = None
        if shape:
            try:
                self.shape = parse_xml(shape)
            except XmlRefused:
                self.shape = None

    def render(self, result: OperationResult) -> bytes:
        """The body content for a successful ``result``."""
        if result.action == "list":
            items = [dict(item) for item in result.items or []]
            meta = result.meta
            figures = {name: getattr(meta, name, None) for name in META_FIELDS} if meta else {}
            return self._list(items, {name: value for name, value in figures.items()
                                      if value is not None})
        if result.action == "custom":
            value = result.value
            record = value if isinstance(value, dict) else (
                {"success": True} if value is None else {"result": value})
        elif result.action == "delete":
            record = {"success": True}
            if result.item:
                record = {**result.item, "success": True}
        else:
            record = dict(result.item or {})
        return self._single(record)

    # ------------------------------------------------------------------ generic
    def _wrapper(self, inner: str) -> bytes:
        name = f"{xml_name(self.operation)}Response"
        namespace = f' xmlns="{xml_escape(self.namespace)}"' if self.namespace else ""
        return f"<{name}{namespace}>{inner}</{name}>".encode()

    # ------------------------------------------------------------------ shaped
    def _single(self, record: dict[str, Any]) -> bytes:
        if self.shape is not None:
            root = copy.deepcopy(self.shape)
            container = _best_container(root, record)
            if container is not None:
                _fill(container, record)
                return _serialize(root)
        return self._wrapper(_plain_fields(record))

    def _list(self, items: list[dict[str, Any]], figures: dict[str, Any]) -> bytes:
        if self.shape is not None:
            root = copy.deepcopy(self.shape)
            sample = dict.fromkeys(_union_keys(items), "")
            container = _best_container(root, sample) if sample else None
            if container is not None and container is not root:
                parent = container.getparent()
                position = parent.index(container)
                parent.remove(container)
                for offset, item in enumerate(items):
                    copy_of = copy.deepcopy(container)
                    _fill(copy_of, item)
                    parent.insert(position + offset, copy_of)
                _fill_figures(root, figures, parent)
                return _serialize(root)
        inner = "".join(f"<item>{_plain_fields(item)}</item>" for item in items)
        meta = "".join(f"<{name}>{value}</{name}>" for name, value in figures.items())
        return self._wrapper(f"{inner}<meta>{meta}</meta>")


def _union_keys(items: list[dict[str, Any]]) -> list[str]:
    keys: dict[str, None] = {}
    for item in items:
        keys.update(dict.fromkeys(item))
    return list(keys)


def _elements(element: Any) -> list[Any]:
    return [child for child in element if isinstance(child.tag, str)]


def _best_container(root: Any, record: dict[str, Any]) -> Any:
    """The element (shallowest among the best) whose children's names best match the
    fields of ``record``; None when no child name matches."""
    best, best_score = None, 0
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        score = sum(1 for child in _elements(element) if local_name(child.tag) in record)
        if score > best_score:
            best, best_score = element, score
    return best


def _fill(container: Any, record: dict[str, Any]) -> None:
    """Set the children of ``container`` from ``record``: a matching leaf gets the text, a
    matching element with children is filled from a nested object (a list repeats it); a
    child ``record`` has no value for is removed."""
    for child in _elements(container):
        name = local_name(child.tag)
        value = record.get(name)
        if value is None:
            container.remove(child)
            continue
        values = value if isinstance(value, list) else [value]
        position = container.index(child)
        container.remove(child)
        for offset, each in enumerate(values):
            element = copy.deepcopy(child)
            if isinstance(each, dict) and _elements(element):
                _fill(element, each)
            else:
                for grandchild in _elements(element):
                    element.remove(grandchild)
                element.text = _text(each)
            container.insert(position + offset, element)


def _fill_figures(root: Any, figures: dict[str, Any], list_parent: Any) -> None:
    """Write list figures into same-named leaves outside the repeated records; leaves that
    are neither records nor figures are removed."""
    for element in list(root.iter()):
        if not isinstance(element.tag, str) or element is list_parent:
            continue
        if _elements(element) or element.getparent() is None:
            continue
        if any(ancestor is list_parent for ancestor in element.iterancestors()):
            continue
        name = local_name(element.tag)
        if name in figures:
            element.text = _text(figures[name])
        elif element.getparent() is not None:
            element.getparent().remove(element)


def _serialize(root: Any) -> bytes:
    from lxml import etree

    return etree.tostring(root, encoding="UTF-8").removeprefix(
        b"<?xml version='1.0' encoding='UTF-8'?>\n")


def execute(store: TableStore, request: OperationRequest) -> OperationResult:
    """Run ``request`` on the shared tables (never raises for a table error)."""
    return store.execute(request)
