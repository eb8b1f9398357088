"""Admin routes the dashboard uses besides mocks (django-ninja router; STYLE §8: parse,
call, return). Behavior notes §1 "Other routes":

* ``/folders`` CRUD: folders that group mocks (:mod:`mocks.control.folders`);
* ``GET``/``PUT /preferences``: the dashboard's preferences object
  (:mod:`mocks.control.preferences`);
* ``GET /formats``: the import and export formats with their detection rules
  (:mod:`mocks.portability.formats`);
* ``GET /templates``, ``GET /templates/{id}``: ready-made mocks per type
  (:mod:`mocks.control.mock_templates`);
* ``GET /handlers``: the registered protocol handlers (:data:`mocks.protocols.PROTOCOLS`).

All need the admin key (the admin gateway checks it before Django). Errors are raised as
:class:`~mocks.control.errors.AdminError` and rendered ``{error, message}`` by the one exception
handler of :mod:`mockd_project.api`.
"""
from __future__ import annotations

from typing import Any

import orjson
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from ninja import Query, Router

from mocks.control import errors, folders, mock_templates, preferences
from mocks.control import openapi_docs as oa
from mocks.api import json_body
from mocks.models import Mock
from mocks.portability.formats import format_catalogue
from mocks.protocols import MOCK_TYPES, PROTOCOLS

router = Router()

_FOLDER_BODY = {"type": "object", "required": ["name"], "properties": {
    "id": {"type": "string"}, "name": {"type": "string"},
    "parentId": {"type": ["string", "null"]}, "workspaceId": {"type": "string"},
    "metaSortKey": {"type": ["number", "null"]}}, "additionalProperties": False}


_FOLDER = {"id": "fld_0123456789abcdef", "name": "Payments", "workspaceId": "local",
           "createdAt": oa.TIMESTAMP, "updatedAt": oa.TIMESTAMP}
_FOLDER_MISSING = oa.not_found("Folder not found")
_PREFERENCES = {"theme": "dark", "requestLog": {"columns": ["method", "path", "status"]}}


def _json(payload: Any, status: int) -> HttpResponse:
    return HttpResponse(orjson.dumps(payload), status=status, content_type="application/json")


# ---------------------------------------------------------------------------- folders


@router.get("/folders", summary="List folders", tags=["folders"],
            openapi_extra=oa.answers({200: {"folders": [_FOLDER], "count": 1}}))
def list_folders(request: HttpRequest,
                 workspace_id: str | None = Query(None, alias="workspaceId"),
                 parent_id: str | None = Query(None, alias="parentId")) -> dict[str, Any]:
    """``{folders, count}`` in creation order; ``?workspaceId=`` one workspace's,
    ``?parentId=`` the folders directly inside one folder (empty: the root ones)."""
    listed = folders.list_folders(workspace_id, parent_id)
    return {"folders": listed, "count": len(listed)}


@router.post("/folders", summary="Create a folder", tags=["folders"],
             response={201: None}, openapi_extra=oa.doc(
                 oa.body({"name": "Payments"}, _FOLDER_BODY),
                 oa.answers({201: _FOLDER, 400: oa.bad_request(
                                 "missing_field",
                                 "name: required field is missing; give the folder a name"),
                             409: oa.error_example("duplicate_id", "A folder with id "
                                                   "'fld_0123456789abcdef' already exists")})))
def create_folder(request: HttpRequest,
                  workspace_id: str | None = Query(None, alias="workspaceId")) -> HttpResponse:
    """201 with the folder ``{id, name, parentId?, workspaceId, metaSortKey?, createdAt,
    updatedAt}``; no name -> 400 ``missing_field``; taken id -> 409 ``duplicate_id``."""
    return _json(folders.create_folder(json_body(request), workspace_id), 201)


@router.get("/folders/{folder_id}", summary="Get a folder", tags=["folders"],
            openapi_extra=oa.answers({200: _FOLDER, 404: _FOLDER_MISSING}))
def get_folder(request: HttpRequest, folder_id: str) -> dict[str, Any]:
    """The folder; 404 "Folder not found"."""
    return folders.get_folder(folder_id)


@router.put("/folders/{folder_id}", summary="Replace a folder", tags=["folders"],
            openapi_extra=oa.doc(oa.body({"name": "Payments (EU)"}, _FOLDER_BODY), oa.answers(
                {200: {**_FOLDER, "name": "Payments (EU)"}, 404: _FOLDER_MISSING})))
def replace_folder(request: HttpRequest, folder_id: str) -> dict[str, Any]:
    """The updated folder: ``name`` required, ``parentId``/``metaSortKey`` cleared when
    left out."""
    return folders.update_folder(folder_id, json_body(request), partial=False)


@router.patch("/folders/{folder_id}", summary="Update a folder", tags=["folders"],
              openapi_extra=oa.doc(
                  oa.body({"parentId": None}, {**_FOLDER_BODY, "required": []}),
                  oa.answers({200: _FOLDER, 404: _FOLDER_MISSING})))
def patch_folder(request: HttpRequest, folder_id: str) -> dict[str, Any]:
    """The updated folder: only the keys given change (``parentId: null`` -> the root)."""
    return folders.update_folder(folder_id, json_body(request), partial=True)


@router.delete("/folders/{folder_id}", summary="Delete a folder", tags=["folders"],
               response={204: None}, openapi_extra=oa.answers({204: None,
                                                               404: _FOLDER_MISSING}))
def delete_folder(request: HttpRequest, folder_id: str) -> HttpResponse:
    """204; the folder's mocks and sub-folders move to the root; 404 when missing."""
    folders.delete_folder(folder_id)
    return HttpResponse(status=204)


# ---------------------------------------------------------------------------- preferences


@router.get("/preferences", summary="Dashboard preferences", tags=["dashboard"],
            openapi_extra=oa.answers({200: _PREFERENCES}, {200: {"type": "object"}}))
def get_preferences(request: HttpRequest) -> dict[str, Any]:
    """The stored preferences object (``{}`` until the first PUT)."""
    return preferences.get_preferences()


@router.put("/preferences", summary="Replace the dashboard preferences", tags=["dashboard"],
            openapi_extra=oa.doc(oa.body(_PREFERENCES, {"type": "object"}), oa.answers(
                {200: _PREFERENCES, 400: oa.BAD_JSON},  {200: {"type": "object"}})))
def put_preferences(request: HttpRequest) -> dict[str, Any]:
    """The stored object; not an object -> 400 ``validation_error``; over 64 KiB of JSON
    -> 413 ``body_too_large``."""
    return preferences.put_preferences(json_body(request))


# ---------------------------------------------------------------------------- catalogues


@router.get("/formats", summary="Import and export formats", tags=["dashboard"],
            openapi_extra=oa.answers({200: {
                "import": [{"name": "har", "title": "HAR (HTTP Archive)", "aliases": [],
                            "detected": True, "detectionOrder": 2,
                            "detection": "a .har file, or an object with a 'log' key"}],
                "export": [{"name": "openapi", "title": "OpenAPI 3.0",
                            "description": "An OpenAPI 3.0 document of the HTTP mocks",
                            "aliases": [], "cli": True,
                            "routes": ["GET /openapi.json", "GET /openapi.yaml"],
                            "mediaTypes": ["application/json", "application/x-yaml"]}],
                "detectionOrder": ["wsdl", "har", "mockd", "openapi", "postman", "mockoon",
                                   "wiremock", "proto"]}}))
def formats(request: HttpRequest) -> dict[str, Any]:
    """``{import: [{name, title, aliases, detected, detectionOrder?, detection}], export:
    [{name, title, description, aliases, cli, routes, mediaTypes}], detectionOrder}``."""
    return format_catalogue()


_TEMPLATE = {"id": "http-json", "type": "http", "name": "JSON REST answer",
             "description": "GET answers a fixed JSON list with 200 and Content-Type "
                            "application/json.",
             "mock": {"type": "http", "name": "List products", "http": {
                 "matcher": {"method": "GET", "path": "/api/products"},
                 "response": {"statusCode": 200,
                              "headers": {"Content-Type": "application/json"},
                              "body": [{"id": 1, "name": "Keyboard", "price": 49.9}]}}}}


@router.get("/templates", summary="Mock templates", tags=["dashboard"],
            openapi_extra=oa.answers({200: {"templates": [_TEMPLATE], "count": 1}}))
def templates(request: HttpRequest, type: str | None = None) -> dict[str, Any]:
    """``{templates: [{id, type, name, description, mock, config?}], count}``; ``?type=``
    keeps one mock type's (an unknown type -> 400 ``validation_error``)."""
    if type is not None and type not in MOCK_TYPES:
        raise errors.validation_error(f"type: unknown mock type {type!r}; use one of "
                                      f"{', '.join(MOCK_TYPES)}")
    listed = mock_templates.list_templates(type)
    return {"templates": listed, "count": len(listed)}


@router.get("/templates/{template_id}", summary="One mock template", tags=["dashboard"],
            openapi_extra=oa.answers({200: _TEMPLATE,
                                      404: oa.not_found("Template not found")}))
def template(request: HttpRequest, template_id: str) -> dict[str, Any]:
    """The template; 404 "Template not found"."""
    found = mock_templates.get_template(template_id)
    if found is None:
        raise errors.not_found("Template not found")
    return found


@router.get("/handlers", summary="Protocol handlers", tags=["dashboard"],
            openapi_extra=oa.answers({200: {"handlers": [{
                "type": "http", "served": True, "configModel": "HttpMock", "mocks": 3,
                "templates": 11}], "count": 1}}))
def handlers(request: HttpRequest) -> dict[str, Any]:
    """``{handlers: [{type, served, configModel, mocks, templates}], count}`` in registry
    order: ``served`` is whether mocks of the type answer anything yet, ``configModel`` the
    name of the model of its protocol block (a schema in ``/openapi-admin.json``), ``mocks``
    how many stored mocks have the type, ``templates`` how many templates it has."""
    counts = dict(Mock.objects.values_list("type").annotate(count=Count("id")))
    listed = [{"type": entry.mock_type, "served": entry.handler is not None,
               "configModel": entry.config_model.rpartition(":")[2],
               "mocks": counts.get(entry.mock_type, 0),
               "templates": len(mock_templates.list_templates(entry.mock_type))}
              for entry in PROTOCOLS]
    return {"handlers": listed, "count": len(listed)}
