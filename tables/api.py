"""Admin API routes of tables (django-ninja ``Router``; STYLE §8: parse, call, return).

Composed in :mod:`mockd_project.api`. Runtime state is reached through ``EngineControl``
(its :class:`~tables.control.TableControl` methods, on the engine loop; 503 ``no_engine``
without an engine); creating and unregistering a table go through :mod:`tables.services`,
which persists the definition.

=============================================  ============================================
``GET /state``                                 ``{resources, total, totalItems, resourceList}``
``POST /state/reset`` (``?resource=``)         ``{"status": "reset"}`` (without ``resource``
                                               the scenarios are reset too)
``POST /reset``                                ``{"status": "reset", "tables": n}`` (and the
                                               scenarios)
``POST /reset/{table}``                        ``{"status": "reset", "table": t}`` (404
                                               ``Table not found: t``)
``GET /state/resources``                       array of ``{name, itemCount, seedCount,
                                               idField, parentField?}``
``POST /state/resources``                      201 ``{name, idField, message}``; 409 ``conflict``
``GET /state/resources/{name}``                resource or 404
``POST /state/resources/{name}/reset``         ``{"status": "reset", "resource": name}``
``DELETE /state/resources/{name}``             ``{"cleared": true}`` (seed data not restored)
``POST /state/resources/{name}/unregister``    ``{deleted: true, resource, message}``
``GET /state/resources/{name}/items``          ``{data, meta}`` (``limit`` 100, ``offset``,
                                               ``sort`` createdAt, ``order`` desc, filters);
                                               400 ``validation_error`` for a bad number
``GET /state/resources/{name}/items/{id}``     item; 404 ``Item not found``
``POST /state/resources/{name}/items``         201 item
``PUT /state/resources/{name}/items/{id}``     the replaced item (id and ``createdAt`` kept);
                                               400 ``validation_error`` when the body is not
                                               an object or validation rejects it; 404
``DELETE /state/resources/{name}/items/{id}``  204; 404 ``Item not found``
``GET /state/operations``                      ``{operations: [{name, stepCount,
                                               consistency}], count}``
``POST /state/operations``                     201 ``{name, message: "Custom operation
                                               registered"}``; 400 naming the field
``GET /state/operations/{name}``               the definition; 404 ``Custom operation not
                                               found: <name>``
``DELETE /state/operations/{name}``            ``{deleted: true, name, message}``; 404
``POST /state/operations/{name}/execute``      body = input (may be empty); the result or
                                               ``{"success": true}``; a failed ``validate``
                                               -> its ``errorStatus`` ``validation_error``,
                                               a ``read`` of a missing item -> 404
                                               ``not_found``, else 400 ``execution_failed``
=============================================  ============================================

Every route takes ``?workspaceId=`` (behavior notes §1, §12). Creating a table or an
operation records that workspace (empty or missing: ``local``; unknown: 404 as for mocks).
Listings, ``/state`` and resetting everything narrow to it; without it they span every
workspace, like ``GET /mocks``. A route naming one table or operation answers its usual 404
when the definition belongs to another workspace. Which workspace a definition belongs to
comes from its persisted row (:mod:`tables.services`); names stay unique per engine, because
bindings and ``statefulOperation`` name tables and operations without a workspace.

Source: SPEC "Admin API" / "State"; behavior notes §1 "State (tables) and custom operations",
§12 "Workspaces".
"""
from __future__ import annotations

from typing import Any

import orjson
from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from ninja import Query, Router

from mocks.api import engine_control, json_body
from mocks.control import openapi_docs as oa
from mocks.core.queryparams import MAX_LIMIT, MAX_QUERY_INTEGER, QueryParameterError, parse_int
from mocks.control.errors import AdminError, validation_error

from tables import services
from tables.control import OPERATION_DELETED_MESSAGE, NameFilter, admin_error_of, operation_error_of
from tables.errors import TableError
from tables.store import OperationRequest

router = Router(tags=["state"])

#: Numeric pagination parameters of the items list: ``name -> (minimum, maximum)``. The list
#: itself falls back to a default for an unusable value; the admin route says what is wrong.
PAGE_PARAMETERS = {"limit": (1, MAX_LIMIT), "offset": (0, MAX_QUERY_INTEGER),
                   "page": (0, MAX_QUERY_INTEGER), "per_page": (1, MAX_LIMIT),
                   "page_size": (1, MAX_LIMIT)}


def _json(payload: Any, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(payload), status=status, content_type="application/json")


def _admin_error(error: TableError, subject: str = "table") -> AdminError:
    status, payload = admin_error_of(error, subject)
    return AdminError(status, payload["error"], payload["message"], payload.get("details"))


def _query_lists(request: HttpRequest) -> dict[str, list[str]]:
    return {name: request.GET.getlist(name) for name in request.GET}


def check_page_parameters(query: dict[str, list[str]]) -> None:
    """Refuse a :data:`PAGE_PARAMETERS` value (its first one) that is not a whole number in
    its bounds: 400 ``validation_error`` ``"<name>: <reason>"`` (SPEC "Limits", "Errors")."""
    first = {name: values[0] for name, values in query.items()
             if name in PAGE_PARAMETERS and values}
    for name, (minimum, maximum) in PAGE_PARAMETERS.items():
        try:
            parse_int(first, name, None, minimum=minimum, maximum=maximum)
        except QueryParameterError as error:
            raise validation_error(str(error)) from None


def _workspace_query() -> Any:
    return Query(None, alias="workspaceId",
                 description="Workspace id; empty or missing: every workspace (listings) or "
                             "local (creation)")


async def _table_filter(workspace_id: str | None) -> NameFilter:
    if not workspace_id:
        return None  # no scoping asked: skip the thread hop to the database
    # The owners are read from the database, which async views reach through a thread.
    return await sync_to_async(services.table_filter)(workspace_id)


async def _require_table_in(name: str, workspace_id: str | None) -> None:
    """404 ``Table not found: <name>`` when ``workspaceId`` names a workspace the table does
    not belong to (a table of another workspace is invisible there)."""
    include = await _table_filter(workspace_id)
    if include is not None and not include(name):
        raise AdminError(404, "not_found", f"Table not found: {name}")


_TABLE_MISSING = oa.not_found("Table not found: users")
_ITEM_MISSING = oa.not_found("Item not found")
_OPERATION_MISSING = oa.not_found("Custom operation not found: transfer")
_TABLE_BODY = {"name": "users", "idField": "id",
               "seedData": [{"id": "u1", "name": "Ada Lovelace", "email": "ada@example.com"}]}
_OPERATION_BODY = {
    "name": "transfer", "consistency": "atomic",
    "steps": [{"type": "validate", "condition": "(input.amount ?? 0) > 0",
               "errorMessage": "amount must be a positive number of cents"},
              {"type": "read", "resource": "accounts", "id": "input.from", "as": "source"},
              {"type": "update", "resource": "accounts", "id": "source.id",
               "set": {"balance": "source.balance - input.amount"}, "as": "debited"}],
    "response": {"balance": "debited.balance"}}


@router.get("/state", summary="State overview", openapi_extra=oa.answers({
    200: {"resources": [oa.RESOURCE_EXAMPLE], "total": 1, "totalItems": 2,
          "resourceList": ["users"]}}, engine=True))
async def state_overview(request: HttpRequest,
                         workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{resources: [{name, itemCount, seedCount, idField, parentField?}], total, totalItems,
    resourceList}`` (of one workspace with ``workspaceId``)."""
    return await engine_control().state_overview(await _table_filter(workspace_id))


@router.post("/state/reset", summary="Reset all tables (or ?resource=) to seed data",
             openapi_extra=oa.answers({200: {"status": "reset"}, 404: _TABLE_MISSING},
                                      engine=True))
async def reset_state(request: HttpRequest, resource: str | None = Query(None),
                      workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{"status": "reset"}``; an unknown ``resource`` (or one of another workspace) -> 404."""
    control = engine_control()
    try:
        if resource:
            await _require_table_in(resource, workspace_id)
            await control.reset_tables(resource)
        else:
            # Scenario states are runtime state too: a full reset puts them back in Started.
            await control.reset_scenarios(workspace_id or None)
            await control.reset_tables(None, await _table_filter(workspace_id))
    except TableError as error:
        raise _admin_error(error) from None
    return {"status": "reset"}


@router.post("/reset", summary="Reset every table to seed data", openapi_extra=oa.answers(
    {200: {"status": "reset", "tables": 2}}, engine=True))
async def reset_all(request: HttpRequest,
                    workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{"status": "reset", "tables": <count>}`` (the workspace's tables with
    ``workspaceId``)."""
    control = engine_control()
    await control.reset_scenarios(workspace_id or None)
    count = await control.reset_tables(None, await _table_filter(workspace_id))
    return {"status": "reset", "tables": count}


@router.post("/reset/{table}", summary="Reset one table to seed data",
             openapi_extra=oa.answers({200: {"status": "reset", "table": "users"},
                                       404: _TABLE_MISSING}, engine=True))
async def reset_one(request: HttpRequest, table: str,
                    workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{"status": "reset", "table": <name>}``; unknown -> 404 ``Table not found: <name>``."""
    control = engine_control()
    await _require_table_in(table, workspace_id)
    try:
        await control.reset_tables(table)
    except TableError as error:
        raise _admin_error(error) from None
    return {"status": "reset", "table": table}


@router.get("/state/resources", summary="List tables", openapi_extra=oa.answers(
    {200: [oa.RESOURCE_EXAMPLE]}, engine=True))
async def list_resources(request: HttpRequest,
                         workspace_id: str | None = _workspace_query()) -> Any:
    """Array of ``{name, itemCount, seedCount, idField, parentField?}``."""
    return _json(await engine_control().table_resources(await _table_filter(workspace_id)))


@router.post("/state/resources", summary="Create a table", response={201: None},
             openapi_extra=oa.doc(oa.body(_TABLE_BODY, {
                 "type": "object", "required": ["name"], "description": "a table definition "
                 "(the config file's tables[] entry)",
                 "properties": {"name": {"type": "string"},
                                "idField": {"type": "string", "default": "id"},
                                "idStrategy": {"type": "string"},
                                "seedData": {"type": "array", "items": {"type": "object"}}}}),
                 oa.answers({201: {"name": "users", "idField": "id",
                                   "message": "Stateful resource created"},
                             400: oa.BAD_JSON,
                             409: oa.error_example("conflict",
                                                   'resource "users" already exists')})))
def create_resource(request: HttpRequest,
                    workspace_id: str | None = _workspace_query()) -> HttpResponse:
    """Body: a table definition (``name`` required, ``idField`` default ``id``, any other
    table key). 201 ``{name, idField, message: "Stateful resource created"}``; 409
    ``conflict`` when the name is taken (in any workspace); 404 for an unknown workspace;
    400 ``validation_error`` naming the field."""
    engine_control()
    return _json(services.create_table(json_body(request), workspace_id), 201)


@router.get("/state/resources/{name}", summary="One table", openapi_extra=oa.answers(
    {200: oa.RESOURCE_EXAMPLE, 404: _TABLE_MISSING}, engine=True))
async def get_resource(request: HttpRequest, name: str,
                       workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{name, itemCount, seedCount, idField, parentField?}``; 404 when unknown."""
    control = engine_control()
    await _require_table_in(name, workspace_id)
    resource = await control.table_resource(name)
    if resource is None:
        raise AdminError(404, "not_found", f"Table not found: {name}")
    return resource


@router.post("/state/resources/{name}/reset", summary="Reset one table to seed data",
             openapi_extra=oa.answers({200: {"status": "reset", "resource": "users"},
                                       404: _TABLE_MISSING}, engine=True))
async def reset_resource(request: HttpRequest, name: str,
                         workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{"status": "reset", "resource": <name>}``; 404 when unknown."""
    control = engine_control()
    await _require_table_in(name, workspace_id)
    try:
        await control.reset_tables(name)
    except TableError as error:
        raise _admin_error(error) from None
    return {"status": "reset", "resource": name}


@router.delete("/state/resources/{name}", summary="Clear a table (seed data not restored)",
               openapi_extra=oa.answers({200: {"cleared": True}, 404: _TABLE_MISSING},
                                        engine=True))
async def clear_resource(request: HttpRequest, name: str,
                         workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{"cleared": true}``; 404 when unknown."""
    control = engine_control()
    await _require_table_in(name, workspace_id)
    try:
        await control.clear_table(name)
    except TableError as error:
        raise _admin_error(error) from None
    return {"cleared": True}


@router.post("/state/resources/{name}/unregister", summary="Remove a table definition",
             openapi_extra=oa.answers({
                 200: {"deleted": True, "resource": "users",
                       "message": "Stateful resource unregistered"},
                 404: _TABLE_MISSING}))
def unregister_resource(request: HttpRequest, name: str,
                        workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{deleted: true, resource, message}``; 404 when unknown (or of another workspace)."""
    engine_control()
    include = services.table_filter(workspace_id)
    if (include is not None and not include(name)) or not services.delete_table(name):
        raise AdminError(404, "not_found", f"Table not found: {name}")
    return {"deleted": True, "resource": name, "message": "Stateful resource unregistered"}


@router.get("/state/resources/{name}/items", summary="Items of a table",
            openapi_extra=oa.answers({
                200: {"data": [oa.ITEM_EXAMPLE],
                      "meta": {"total": 1, "limit": 100, "offset": 0, "count": 1,
                               "has_more": False}},
                404: _TABLE_MISSING}, engine=True))
async def list_items(request: HttpRequest, name: str,
                     workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{data, meta: {total, limit, offset, count, has_more}}``; list query parameters as on
    a bound list (``limit`` 100, ``offset``, ``sort`` createdAt, ``order`` desc, filters)."""
    control = engine_control()
    await _require_table_in(name, workspace_id)
    query = _query_lists(request)
    # workspaceId scopes the route; it is not a field filter on the items.
    query.pop("workspaceId", None)
    check_page_parameters(query)
    try:
        return await control.table_items(name, query)
    except TableError as error:
        raise _admin_error(error, "item") from None


@router.get("/state/resources/{name}/items/{item_id}", summary="One item",
            openapi_extra=oa.answers({200: oa.ITEM_EXAMPLE, 404: _ITEM_MISSING}, engine=True))
async def get_item(request: HttpRequest, name: str, item_id: str,
                   workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """The stored item; 404 ``Item not found``."""
    control = engine_control()
    await _require_table_in(name, workspace_id)
    try:
        return await control.table_item(name, item_id)
    except TableError as error:
        raise _admin_error(error, "item") from None


@router.post("/state/resources/{name}/items", summary="Create an item", response={201: None},
             openapi_extra=oa.doc(
                 oa.body({"name": "Ada Lovelace", "email": "ada@example.com"},
                         {"type": "object", "description": "the item; the id is generated "
                                                           "when absent"}),
                 oa.answers({201: oa.ITEM_EXAMPLE, 400: oa.BAD_JSON, 404: _TABLE_MISSING},
                            engine=True)))
async def create_item(request: HttpRequest, name: str,
                      workspace_id: str | None = _workspace_query()) -> HttpResponse:
    """Body: the item's fields. 201 with the stored item; 409 when the id exists; 400 when
    validation rejects it."""
    body = json_body(request)
    control = engine_control()
    await _require_table_in(name, workspace_id)
    try:
        item = await control.create_table_item(name, body)
    except TableError as error:
        raise _admin_error(error, "item") from None
    return _json(item, 201)


async def _write_item(control: Any, action: str, name: str, item_id: str,
                      body: Any = None) -> Any:
    """Run ``update`` or ``delete`` of item ``item_id`` of table ``name`` on the engine's
    table store, with the rules of a bound ``update``/``delete`` (validation, id and
    ``createdAt`` kept) and none of a binding's transforms. Runs on the engine loop (the
    admin API shares it); the in-memory store awaits nothing while touching the items. Raises
    :class:`AdminError` 404 ``Item not found`` / ``Table not found: <name>``, 400
    ``validation_error``."""
    result = await control.table_store.execute_async(OperationRequest(action, name, item_id,
                                                                      body=body))
    if result.error is not None:
        raise _admin_error(result.error, "item")
    return result.item


@router.put("/state/resources/{name}/items/{item_id}", summary="Replace an item",
            openapi_extra=oa.doc(
                oa.body({"name": "Ada King", "email": "ada@example.com"},
                        {"type": "object", "description": "the new item (its id is kept)"}),
                oa.answers({200: {**oa.ITEM_EXAMPLE, "name": "Ada King"}, 400: oa.BAD_JSON,
                            404: _ITEM_MISSING}, engine=True)))
async def update_item(request: HttpRequest, name: str, item_id: str,
                      workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """Body: the item's new fields (a JSON object; an id field in it is ignored). 200 with
    the stored item (data replaced, id and ``createdAt`` kept, ``updatedAt`` now); 400
    ``validation_error`` when the body is not an object or the table's validation rejects
    it; 404 ``Item not found`` or ``Table not found: <name>``. Used by the dashboard's
    Tables area (behavior notes §1 "State", §6 ``update``)."""
    body = json_body(request)
    control = engine_control()
    await _require_table_in(name, workspace_id)
    return await _write_item(control, "update", name, item_id, body)


@router.delete("/state/resources/{name}/items/{item_id}", summary="Delete an item",
               response={204: None}, openapi_extra=oa.answers({204: None, 404: _ITEM_MISSING},
                                                              engine=True))
async def delete_item(request: HttpRequest, name: str, item_id: str,
                      workspace_id: str | None = _workspace_query()) -> HttpResponse:
    """204 with no body; 404 ``Item not found`` or ``Table not found: <name>``. Used by the
    dashboard's Tables area (behavior notes §6 ``delete``)."""
    control = engine_control()
    await _require_table_in(name, workspace_id)
    await _write_item(control, "delete", name, item_id)
    return HttpResponse(status=204)


# ---------------------------------------------------------------------------- custom operations


def _operation_not_found(name: str) -> AdminError:
    return AdminError(404, "not_found", f"Custom operation not found: {name}")


async def _operation_filter(workspace_id: str | None) -> NameFilter:
    if not workspace_id:
        return None  # no scoping asked: skip the thread hop to the database
    # The owners are read from the database, which async views reach through a thread.
    return await sync_to_async(services.operation_filter)(workspace_id)


async def _require_operation_in(name: str, workspace_id: str | None) -> None:
    """404 ``Custom operation not found: <name>`` when ``workspaceId`` names a workspace the
    operation does not belong to."""
    include = await _operation_filter(workspace_id)
    if include is not None and not include(name):
        raise _operation_not_found(name)


@router.get("/state/operations", summary="List custom operations", openapi_extra=oa.answers(
    {200: {"operations": [{"name": "transfer", "stepCount": 3, "consistency": "atomic"}],
           "count": 1}}, engine=True))
async def list_operations(request: HttpRequest,
                          workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{operations: [{name, stepCount, consistency}], count}``."""
    return await engine_control().custom_operations(await _operation_filter(workspace_id))


@router.post("/state/operations", summary="Register a custom operation",
             response={201: None}, openapi_extra=oa.doc(
                 oa.body(_OPERATION_BODY, {
                     "type": "object", "required": ["name", "steps"],
                     "description": "a custom operation (the config file's "
                                    "customOperations[] entry)",
                     "properties": {"name": {"type": "string"},
                                    "consistency": {"type": "string",
                                                    "enum": ["best_effort", "atomic"]},
                                    "steps": {"type": "array", "items": {"type": "object"}},
                                    "response": {"type": "object"}}}),
                 oa.answers({201: {"name": "transfer", "message": "Custom operation registered"},
                             400: oa.BAD_JSON})))
def create_operation(request: HttpRequest,
                     workspace_id: str | None = _workspace_query()) -> HttpResponse:
    """Body: a custom operation (``name``, ``consistency``, ``steps``, ``response``). 201
    ``{name, message: "Custom operation registered"}`` (a same-named one of the same
    workspace is replaced; of another workspace -> 409 ``conflict``); 404 for an unknown
    workspace; 400 ``validation_error`` naming the field, the expression and why."""
    engine_control()
    return _json(services.create_operation(json_body(request), workspace_id), 201)


@router.get("/state/operations/{name}", summary="One custom operation",
            openapi_extra=oa.answers({200: _OPERATION_BODY, 404: _OPERATION_MISSING},
                                     engine=True))
async def get_operation(request: HttpRequest, name: str,
                        workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """The definition (camelCase); 404 ``Custom operation not found: <name>``."""
    control = engine_control()
    await _require_operation_in(name, workspace_id)
    document = await control.custom_operation(name)
    if document is None:
        raise _operation_not_found(name)
    return document


@router.delete("/state/operations/{name}", summary="Delete a custom operation",
               openapi_extra=oa.answers({
                   200: {"deleted": True, "name": "transfer",
                         "message": OPERATION_DELETED_MESSAGE},
                   404: _OPERATION_MISSING}))
def delete_operation(request: HttpRequest, name: str,
                     workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{deleted: true, name, message}``; 404 when unknown (or of another workspace)."""
    engine_control()
    include = services.operation_filter(workspace_id)
    if (include is not None and not include(name)) or not services.delete_operation(name):
        raise _operation_not_found(name)
    return {"deleted": True, "name": name, "message": OPERATION_DELETED_MESSAGE}


@router.post("/state/operations/{name}/execute", summary="Run a custom operation",
             openapi_extra=oa.doc(
                 oa.body({"from": "acc_alice", "to": "acc_bob", "amount": 500},
                         {"type": "object", "description": "the operation's input (may be "
                                                           "empty)"}, required=False),
                 oa.answers({200: {"balance": 9500},
                             400: oa.error_example("validation_error",
                                                   "amount must be a positive number of "
                                                   "cents"),
                             404: _OPERATION_MISSING}, engine=True)))
async def execute_operation(request: HttpRequest, name: str,
                            workspace_id: str | None = _workspace_query()) -> Any:
    """Body: the operation's input (JSON; may be empty). The result, or ``{"success": true}``
    without a ``response``. Failures: a ``validate`` step -> its ``errorStatus``
    ``validation_error`` with its ``errorMessage``; a ``read`` of a missing item -> 404
    ``not_found``; an unknown operation (or one of another workspace) -> 404; anything else
    -> 400 ``execution_failed`` naming the step."""
    input_value = json_body(request) if request.body.strip() else {}
    control = engine_control()
    await _require_operation_in(name, workspace_id)
    try:
        result = await control.execute_custom_operation(name, input_value)
    except TableError as error:
        status, payload = operation_error_of(error, name)
        raise AdminError(status, payload["error"], payload["message"]) from None
    return _json(result)
