"""Engine control of tables: what the admin side may ask of an engine's table store.

:class:`TableControl` is mixed into :class:`~mocks.engine.control.EngineControl` (the one way
the admin side reaches runtime state, ARCHITECTURE seam 5); :func:`route_state` is its HTTP
face on the engine-control port, mirroring the admin routes (behavior notes §1 "State", §16):

=============================================  ============================================
``GET /state``                                 ``{resources, total, totalItems, resourceList}``
``POST /state/reset`` (``?resource=``)         ``{"status": "reset"}``
``POST /reset`` / ``POST /reset/{table}``      ``{"status": "reset", "tables": n}`` /
                                               ``{"status": "reset", "table": t}``
``GET /state/resources``                       array of resources
``POST /state/resources``                      201 ``{name, idField, message}`` (409 taken)
``GET /state/resources/{name}``                resource (404)
``POST /state/resources/{name}/reset``         ``{"status": "reset", "resource": name}``
``DELETE /state/resources/{name}``             ``{"cleared": true}`` (seeds not restored)
``POST /state/resources/{name}/unregister``    ``{deleted: true, resource, message}``
``GET /state/resources/{name}/items``          ``{data, meta}`` (list query parameters)
``GET /state/resources/{name}/items/{id}``     item (404 "Item not found")
``POST /state/resources/{name}/items``         201 item
``GET /state/operations``                      ``{operations: [{name, stepCount,
                                               consistency}], count}``
``POST /state/operations``                     201 ``{name, message}`` (replaces a same name)
``GET /state/operations/{name}``               the definition (404)
``DELETE /state/operations/{name}``            ``{deleted: true, name, message}`` (404)
``POST /state/operations/{name}/execute``      the result or ``{"success": true}``
=============================================  ============================================

Errors use the admin body ``{error, message}``: 404 ``not_found``, 409 ``conflict``,
400 ``validation_error``. A failed run (:func:`operation_error_of`): a failed ``validate``
step answers its ``errorStatus`` with ``validation_error`` and its ``errorMessage``, a
``read`` of a missing item 404 ``not_found``, anything else 400 ``execution_failed``.

Concurrency: every method runs on the engine's event loop. On the in-memory store none awaits
while touching the store, so each is atomic with respect to data-plane requests; on the Redis
store (:mod:`tables.redis_store`) each write is one Redis transaction.

No Django.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Awaitable, Callable
from urllib.parse import parse_qs

import orjson
from pydantic import ValidationError

from mocks.core.errors import ConfigError, listed_text, validation_issues

from tables import errors
from tables.errors import TableError
from tables.store import OperationRequest, TableStore
from tables.transforms import list_envelope

if TYPE_CHECKING:  # custom operations load on first use (an engine without any pays nothing)
    from tables.config import TableConfig
    from tables.operations import OperationRegistry

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]

#: A predicate on table or operation names that narrows a listing or a reset (the admin side
#: passes "belongs to workspace W", decided from the persisted definitions, because the
#: engine's config carries no workspace for tables and operations); None accepts every name.
NameFilter = Callable[[str], bool] | None

#: Message of a created resource (behavior notes §1 "State").
CREATED_MESSAGE = "Stateful resource created"
#: Message of a deleted custom operation.
OPERATION_DELETED_MESSAGE = "Custom operation deleted"


def table_config_of(document: Any) -> TableConfig:
    """A :class:`TableConfig` from an admin body (``{name, idField?, ...}``).

    Raises :class:`TableError` 400 naming every wrong field, worded as config files word
    them (``name: required field is missing; colour: unknown key``).
    """
    if not isinstance(document, dict):
        raise errors.bad_request("", "body: a table definition must be a JSON object")
    try:
        from tables.config import TableConfig

        return TableConfig.model_validate(document)
    except ValidationError as error:
        raise errors.bad_request(str(document.get("name") or ""),
                                 listed_text(validation_issues(error), "; ")) from None


class TableControl:
    """Table methods of ``EngineControl`` (needs ``self.engine`` with a ``tables`` store)."""

    engine: Any

    @property
    def table_store(self) -> TableStore:
        """The engine's :class:`~tables.store.TableStore`."""
        return self.engine.tables

    async def state_overview(self, include: NameFilter = None) -> dict[str, Any]:
        """``{resources: [{name, itemCount, seedCount, idField, parentField?}], total,
        totalItems, resourceList}`` of the tables ``include`` accepts (None: every table)."""
        return await self.table_store.overview_async(include)

    async def table_resources(self, include: NameFilter = None) -> list[dict[str, Any]]:
        """Every table ``include`` accepts (None: all) as ``{name, itemCount, seedCount,
        idField, parentField?}``."""
        return await self.table_store.resources_async(include)

    async def table_resource(self, name: str) -> dict[str, Any] | None:
        """One table's resource record, or None."""
        if name not in self.table_store.tables:
            return None
        return (await self.table_store.resources_async(lambda table: table == name))[0]

    async def reset_tables(self, name: str | None = None, include: NameFilter = None) -> int:
        """Restore seed data of table ``name`` (404 :class:`TableError`) or of every table
        ``include`` accepts (None: all); returns how many tables were reset."""
        return await self.table_store.reset_async(name, include)

    async def clear_table(self, name: str) -> int:
        """Remove every item of ``name`` without restoring seeds; returns items removed."""
        return await self.table_store.clear_async(name)

    async def register_table(self, document: Any) -> dict[str, Any]:
        """Add a table at runtime: ``{name, idField, message}``. Raises :class:`TableError`
        409 (name taken) or 400 (invalid definition)."""
        table = self.table_store.register(table_config_of(document))
        return {"name": table.name, "idField": table.definition.id_field,
                "message": CREATED_MESSAGE}

    async def unregister_table(self, name: str) -> bool:
        """Remove a table and its items; returns whether it existed."""
        return await self.table_store.unregister_async(name)

    async def table_items(self, name: str,
                          query: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
        """``{data, meta}`` of a list query over ``name`` (raw items, no transform)."""
        result = await self.table_store.execute_async(OperationRequest("list", name,
                                                                       query=query))
        if result.error is not None:
            raise result.error
        return list_envelope(result.items or [], result.meta)

    async def table_item(self, name: str, item_id: str) -> dict[str, Any]:
        """One raw item; raises :class:`TableError` 404."""
        result = await self.table_store.execute_async(OperationRequest("get", name, item_id))
        if result.error is not None:
            raise result.error
        return result.item

    async def create_table_item(self, name: str, body: Any) -> dict[str, Any]:
        """Create an item (validation and id rules as for a bound create); raises
        :class:`TableError` (404, 409, 400, 507)."""
        result = await self.table_store.execute_async(OperationRequest("create", name,
                                                                       body=body))
        if result.error is not None:
            raise result.error
        return result.item

    # ------------------------------------------------------------------ custom operations
    @property
    def operation_registry(self) -> OperationRegistry:
        """The engine's custom operations (the table store's ``custom_runner``)."""
        from tables.operations import operations_of

        return operations_of(self.table_store)

    async def custom_operations(self, include: NameFilter = None) -> dict[str, Any]:
        """``{operations: [{name, stepCount, consistency}], count}`` of the operations
        ``include`` accepts (None: all)."""
        operations = [operation.summary()
                      for operation in self.operation_registry.operations.values()
                      if include is None or include(operation.name)]
        return {"operations": operations, "count": len(operations)}

    async def custom_operation(self, name: str) -> dict[str, Any] | None:
        """The definition of operation ``name`` (camelCase document), or None."""
        operation = self.operation_registry.get(name)
        return operation.document() if operation is not None else None

    async def register_custom_operation(self, document: Any) -> dict[str, Any]:
        """Compile and add (or replace) an operation at runtime: ``{name, message}``.

        Raises :class:`TableError` 400 naming the field (``steps[1].condition: expression
        "...": unknown name "frm" ...``). The admin side persists definitions through
        :mod:`tables.services` instead; this is the headless engine's way.
        """
        from tables.operations import REGISTERED_MESSAGE, compile_operation, operation_config_of

        config = operation_config_of(document)
        try:
            operation = compile_operation(config)
        except ConfigError as error:
            raise errors.bad_request("", str(error)) from None
        self.operation_registry.register(operation)
        return {"name": operation.name, "message": REGISTERED_MESSAGE}

    async def unregister_custom_operation(self, name: str) -> bool:
        """Remove an operation; returns whether it existed."""
        return self.operation_registry.unregister(name)

    async def execute_custom_operation(self, name: str, input_value: Any) -> Any:
        """Run operation ``name`` with ``input_value``: its result or ``{"success": true}``.

        Raises :class:`TableError` 404 (unknown operation) or
        :class:`~tables.operations.OperationError` (see :func:`operation_error_of`).
        """
        from tables.operations import run_custom_operation, run_custom_operation_async

        store = self.table_store
        if store.remote:
            return await run_custom_operation_async(store, name, input_value)
        return run_custom_operation(store, name, input_value)


# ---------------------------------------------------------------------------- HTTP face

_RESOURCE = re.compile(r"^/state/resources/([^/]+)(/reset|/unregister|/items(?:/([^/]+))?)?$")
_RESET_ONE = re.compile(r"^/reset/([^/]+)$")
_OPERATION = re.compile(r"^/state/operations/([^/]+)(/execute)?$")


def admin_error_of(error: TableError, subject: str = "") -> tuple[int, dict[str, Any]]:
    """``(status, {error, message})`` of a table error on the admin surfaces.

    ``subject`` picks the admin wording of a 404: ``table`` -> ``Table not found: <name>``,
    ``item`` -> ``Item not found``; else the store's message.
    """
    if error.code == errors.NOT_FOUND:
        message = error.message
        if subject == "table":
            message = f"Table not found: {error.table}"
        elif subject == "item":
            message = "Item not found" if error.item_id else f"Table not found: {error.table}"
        return 404, {"error": "not_found", "message": message}
    if error.code == errors.CONFLICT:
        return 409, {"error": "conflict", "message": error.message}
    if error.code == errors.CAPACITY_EXCEEDED:
        return 507, {"error": "capacity_exceeded", "message": error.message}
    if error.code == errors.PAYLOAD_TOO_LARGE:
        return 413, {"error": "body_too_large", "message": error.message}
    if error.code == errors.STATE_STORE_UNAVAILABLE:
        return 503, error.body()
    body: dict[str, Any] = {"error": "validation_error", "message": error.message}
    if error.details:
        body["details"] = {"errors": error.details}
    return 400, body


def operation_error_of(error: TableError, name: str) -> tuple[int, dict[str, Any]]:
    """``(status, {error, message})`` of a failed ``execute`` (behavior notes §1): a failed
    ``validate`` -> its ``errorStatus`` + ``validation_error``; a missing item of a ``read``
    -> 404 ``not_found``; an unknown operation -> 404 ``Custom operation not found: <name>``;
    anything else -> 400 ``execution_failed``."""
    from tables.operations import OperationError

    if isinstance(error, OperationError):
        return error.status, error.admin_body()
    if error.code == errors.STATE_STORE_UNAVAILABLE:
        return 503, error.body()
    if error.code == errors.NOT_FOUND:
        return 404, {"error": "not_found", "message": f"Custom operation not found: {name}"}
    return 400, {"error": "execution_failed", "message": error.message}


async def route_operations(control: TableControl, method: str, path: str,
                           body: Callable[[], Awaitable[bytes]],
                           answer: Callable[[int, Any], Awaitable[None]]) -> None:
    """Answer a ``/state/operations…`` request of the engine-control port."""
    found = _OPERATION.match(path)
    name, tail = (found.group(1), found.group(2) or "") if found else ("", "")
    try:
        if path == "/state/operations" and method == "GET":
            await answer(200, await control.custom_operations())
        elif path == "/state/operations" and method == "POST":
            await answer(201, await control.register_custom_operation(
                orjson.loads(await body() or b"{}")))
        elif found and tail == "" and method == "GET":
            document = await control.custom_operation(name)
            if document is None:
                await answer(404, {"error": "not_found",
                                   "message": f"Custom operation not found: {name}"})
            else:
                await answer(200, document)
        elif found and tail == "" and method == "DELETE":
            if await control.unregister_custom_operation(name):
                await answer(200, {"deleted": True, "name": name,
                                   "message": OPERATION_DELETED_MESSAGE})
            else:
                await answer(404, {"error": "not_found",
                                   "message": f"Custom operation not found: {name}"})
        elif found and tail == "/execute" and method == "POST":
            raw = await body()
            input_value = orjson.loads(raw) if raw and raw.strip() else {}
            try:
                await answer(200, await control.execute_custom_operation(name, input_value))
            except TableError as error:
                status, payload = operation_error_of(error, name)
                await answer(status, payload)
        elif path == "/state/operations" or found:
            await answer(405, {"error": "method_not_allowed",
                               "message": f"{method} is not allowed here"})
        else:
            await answer(404, {"error": "not_found", "message": "Resource not found"})
    except TableError as error:
        status, payload = admin_error_of(error)
        await answer(status, payload)


async def route_state(control: TableControl, method: str, path: str, query_string: str,
                      body: Callable[[], Awaitable[bytes]],
                      answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    """Answer a ``/state…`` or ``/reset…`` request of the engine-control port.

    ``body()`` reads the request body; ``answer(status, payload)`` sends JSON. Returns False
    when ``path`` is not a table route (the caller answers 404).
    """
    if not (path == "/state" or path.startswith("/state/") or path == "/reset"
            or path.startswith("/reset/")):
        return False
    if path == "/state/operations" or path.startswith("/state/operations/"):
        await route_operations(control, method, path, body, answer)
        return True
    query = parse_qs(query_string, keep_blank_values=True)
    subject = "table"
    try:
        if path == "/state" and method == "GET":
            await answer(200, await control.state_overview())
        elif path == "/state/reset" and method == "POST":
            resource = (query.get("resource") or [None])[0]
            await control.reset_tables(resource or None)
            await answer(200, {"status": "reset"})
        elif path == "/reset" and method == "POST":
            await answer(200, {"status": "reset", "tables": await control.reset_tables()})
        elif (found := _RESET_ONE.match(path)) and method == "POST":
            await control.reset_tables(found.group(1))
            await answer(200, {"status": "reset", "table": found.group(1)})
        elif path == "/state/resources" and method == "GET":
            await answer(200, await control.table_resources())
        elif path == "/state/resources" and method == "POST":
            await answer(201, await control.register_table(orjson.loads(await body() or b"{}")))
        elif found := _RESOURCE.match(path):
            name, tail, item_id = found.group(1), found.group(2) or "", found.group(3)
            if tail == "" and method == "GET":
                resource = await control.table_resource(name)
                if resource is None:
                    raise errors.table_not_found(name)
                await answer(200, resource)
            elif tail == "" and method == "DELETE":
                await control.clear_table(name)
                await answer(200, {"cleared": True})
            elif tail == "/reset" and method == "POST":
                await control.reset_tables(name)
                await answer(200, {"status": "reset", "resource": name})
            elif tail == "/unregister" and method == "POST":
                if not await control.unregister_table(name):
                    raise errors.table_not_found(name)
                await answer(200, {"deleted": True, "resource": name,
                                   "message": "Stateful resource unregistered"})
            elif tail == "/items" and method == "GET":
                subject = "item"
                await answer(200, await control.table_items(name, query))
            elif tail == "/items" and method == "POST":
                subject = "item"
                await answer(201, await control.create_table_item(
                    name, orjson.loads(await body() or b"{}")))
            elif tail.startswith("/items/") and method == "GET":
                subject = "item"
                await answer(200, await control.table_item(name, item_id))
            else:
                await answer(405, {"error": "method_not_allowed",
                                   "message": f"{method} is not allowed here"})
        elif path in ("/state", "/state/reset", "/reset", "/state/resources"):
            await answer(405, {"error": "method_not_allowed",
                               "message": f"{method} is not allowed here"})
        else:
            await answer(404, {"error": "not_found", "message": "Resource not found"})
    except TableError as error:
        status, payload = admin_error_of(error, subject)
        await answer(status, payload)
    return True
