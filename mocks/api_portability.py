"""Admin routes of the export formats (django-ninja router; STYLE §8: parse, call, return).

* ``GET /openapi.json``, ``GET /openapi.yaml``: an OpenAPI 3.0 document of the HTTP mocks;
* ``GET /insomnia.json``: Insomnia collection v4 (``?format=yaml`` or ``?format=v5`` gives
  v5 YAML instead), ``GET /insomnia.yaml``: v5; both as attachment downloads.

All take ``?workspaceId=`` (default ``local``) and ``?name=``. The configuration comes from
the control plane's own export service
(:func:`mocks.control.configuration.export_config`, the one that answers ``GET /config``), and
the documents from :mod:`mocks.portability.exporters`.

Source: SPEC "Client-collection exports", "Import and export"; behavior notes §1
("Configuration and exports").
"""
from __future__ import annotations

from typing import Any

import orjson
import yaml
from django.http import HttpRequest, HttpResponse
from ninja import Query, Router

from mockd_project.runtime import runtime
from mocks.control import configuration
from mocks.portability.exporters import resolve_bindings
from mocks.portability.exporters.insomnia import insomnia_v4, insomnia_v5
from mocks.portability.exporters.openapi import openapi_document
from mocks.control.errors import validation_error

router = Router(tags=["export"])

YAML_TYPE = "application/x-yaml"


def _collection(workspace_id: str | None, name: str | None) -> dict[str, Any]:
    return resolve_bindings(configuration.export_config(workspace_id, name))


def _yaml(document: Any) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


def _urls(request: HttpRequest) -> tuple[str, str]:
    """``(base_url, admin_url)`` of the collection environment: ``base_url`` is
    ``http://localhost:<admin port - 10>`` as behavior notes §1 specify (4290 -> 4280, the
    default pair); users with other ports edit the environment's one variable."""
    admin_port = runtime.ports.get("admin")
    if not admin_port:
        try:
            admin_port = int(request.get_port())
        except (TypeError, ValueError):
            admin_port = 4290
    return f"http://localhost:{admin_port - 10}", f"http://localhost:{admin_port}"


def _download(content: bytes | str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@router.get("/openapi.json", summary="OpenAPI 3.0 document of the HTTP mocks")
def openapi_json(request: HttpRequest, name: str | None = None,
                 workspace_id: str | None = Query(None, alias="workspaceId")) -> HttpResponse:
    """The OpenAPI document as JSON."""
    document = openapi_document(_collection(workspace_id, name), name)
    return HttpResponse(orjson.dumps(document), content_type="application/json")


@router.get("/openapi.yaml", summary="OpenAPI 3.0 document of the HTTP mocks (YAML)")
def openapi_yaml(request: HttpRequest, name: str | None = None,
                 workspace_id: str | None = Query(None, alias="workspaceId")) -> HttpResponse:
    """The OpenAPI document as YAML (``application/x-yaml``)."""
    document = openapi_document(_collection(workspace_id, name), name)
    return HttpResponse(_yaml(document), content_type=YAML_TYPE)


@router.get("/insomnia.json", summary="Insomnia collection v4 (JSON); format=yaml|v5 for v5")
def insomnia_json(request: HttpRequest, format: str | None = None, name: str | None = None,
                  workspace_id: str | None = Query(None, alias="workspaceId")) -> HttpResponse:
    """v4 JSON; ``?format=yaml`` or ``?format=v5`` answers the v5 YAML collection."""
    wanted = (format or "json").lower()
    if wanted in ("yaml", "yml", "v5"):
        return insomnia_yaml(request, name=name, workspace_id=workspace_id)
    if wanted not in ("json", "v4"):
        raise validation_error(f"format: use json, v4, yaml or v5, got {format!r}")
    base_url, admin_url = _urls(request)
    document = insomnia_v4(_collection(workspace_id, name), base_url, admin_url)
    return _download(orjson.dumps(document, option=orjson.OPT_INDENT_2), "application/json",
                     "mockd-insomnia.json")


@router.get("/insomnia.yaml", summary="Insomnia collection v5 (YAML)")
def insomnia_yaml(request: HttpRequest, name: str | None = None,
                  workspace_id: str | None = Query(None, alias="workspaceId")) -> HttpResponse:
    """The v5 collection as an ``application/x-yaml`` attachment."""
    base_url, admin_url = _urls(request)
    document = insomnia_v5(_collection(workspace_id, name), base_url, admin_url)
    return _download(_yaml(document), YAML_TYPE, "mockd-insomnia.yaml")
