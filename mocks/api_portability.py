"""Admin routes of the import and export formats (django-ninja router; STYLE §8: parse, call,
return).

* ``POST /import``: any supported document (OpenAPI/Swagger, Postman, HAR, WireMock, Mockoon,
  WSDL, curl, .proto, mockd) converted and imported, or previewed with ``?dryRun=true``
  (:func:`import_document_route`);
* ``GET /openapi.json``, ``GET /openapi.yaml``: an OpenAPI 3.0 document of the HTTP mocks;
* ``GET /insomnia.json``: Insomnia collection v4 (``?format=yaml`` or ``?format=v5`` gives
  v5 YAML instead), ``GET /insomnia.yaml``: v5; both as attachment downloads.

All take ``?workspaceId=`` (default ``local``) and ``?name=``. The configuration comes from
the control plane's own export service
(:func:`mocks.control.configuration.export_config`, the one that answers ``GET /config``), and
the documents from :mod:`mocks.portability.exporters`.

Source: SPEC "Client-collection exports", "Import and export"; behavior notes §1
("Configuration and exports"), §13.
"""
from __future__ import annotations

from typing import Any

import orjson
import yaml
from django.http import HttpRequest, HttpResponse
from ninja import Query, Router

from mockd_project.runtime import runtime
from mocks.control import configuration
from mocks.control import openapi_docs as oa
from mocks.control.documents import require_workspace
from mocks.control.errors import AdminError, ConfigValidationError, validation_error
from mocks.core.errors import ConfigError
from mocks.loader import validate_config
from mocks.models import DEFAULT_WORKSPACE_ID
from mocks.portability.exporters import resolve_bindings
from mocks.portability.exporters.insomnia import insomnia_v4, insomnia_v5
from mocks.portability.exporters.openapi import openapi_document
from mocks.portability.importers import (ALIASES, FORMATS, ImportDocumentError,
                                         canonical_format, check_result, decode_text,
                                         import_document)

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


_OPENAPI = {"openapi": "3.0.3", "info": {"title": "mockd-export", "version": "1.0.0"},
            "paths": {"/api/users": {"get": {"responses": {"200": {
                "description": "OK", "content": {"application/json": {
                    "example": {"users": []}}}}}}}}}
_OPENAPI_YAML = oa.Raw("openapi: 3.0.3\ninfo:\n  title: mockd-export\n  version: 1.0.0\n"
                       "paths:\n  /api/users:\n    get:\n      responses:\n        '200':\n"
                       "          description: OK\n", "application/x-yaml")
_INSOMNIA_YAML = oa.Raw("type: collection.insomnia.rest/5.0\nname: mockd-export\n"
                        "collection:\n- name: http\n  children:\n  - name: List users\n"
                        "    method: GET\n    url: '{{ _.base_url }}/api/users'\n",
                        "application/x-yaml")


@router.get("/openapi.json", summary="OpenAPI 3.0 document of the HTTP mocks",
            openapi_extra=oa.answers({200: _OPENAPI}, {200: {"type": "object"}}))
def openapi_json(request: HttpRequest, name: str | None = None,
                 workspace_id: str | None = Query(None, alias="workspaceId")) -> HttpResponse:
    """The OpenAPI document as JSON."""
    document = openapi_document(_collection(workspace_id, name), name)
    return HttpResponse(orjson.dumps(document), content_type="application/json")


@router.get("/openapi.yaml", summary="OpenAPI 3.0 document of the HTTP mocks (YAML)",
            openapi_extra=oa.answers({200: _OPENAPI_YAML}))
def openapi_yaml(request: HttpRequest, name: str | None = None,
                 workspace_id: str | None = Query(None, alias="workspaceId")) -> HttpResponse:
    """The OpenAPI document as YAML (``application/x-yaml``)."""
    document = openapi_document(_collection(workspace_id, name), name)
    return HttpResponse(_yaml(document), content_type=YAML_TYPE)


@router.get("/insomnia.json", summary="Insomnia collection v4 (JSON); format=yaml|v5 for v5",
            openapi_extra=oa.answers({
                200: {"_type": "export", "__export_format": 4, "__export_source": "mockd",
                      "resources": [{"_id": "fld_http", "_type": "request_group",
                                     "name": "http"},
                                    {"_id": "req_http_a1b2c3d4e5f60718", "_type": "request",
                                     "parentId": "fld_http", "name": "List users",
                                     "method": "GET", "url": "{{ _.base_url }}/api/users"}]},
                400: oa.bad_request("validation_error",
                                    "format: use json, v4, yaml or v5, got 'xml'")},
                {200: {"type": "object"}},
                {200: "v4 JSON attachment (v5 YAML with ?format=yaml or v5)"}))
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


@router.get("/insomnia.yaml", summary="Insomnia collection v5 (YAML)",
            openapi_extra=oa.answers({200: _INSOMNIA_YAML}))
def insomnia_yaml(request: HttpRequest, name: str | None = None,
                  workspace_id: str | None = Query(None, alias="workspaceId")) -> HttpResponse:
    """The v5 collection as an ``application/x-yaml`` attachment."""
    base_url, admin_url = _urls(request)
    document = insomnia_v5(_collection(workspace_id, name), base_url, admin_url)
    return _download(_yaml(document), YAML_TYPE, "mockd-insomnia.yaml")


# ---------------------------------------------------------------------------- import

#: Rows listed by a dry run (``count`` always gives them all; ``truncated`` says when cut).
MAX_DRY_RUN_ROWS = 10_000
#: Warnings and skipped items returned at most (their counts are given when cut).
MAX_REPORTED_ITEMS = 1_000
#: Longest ``filename`` and ``as`` values accepted.
MAX_NAME_LENGTH = 255
#: Most ``var`` values of one import.
MAX_VARIABLES = 200
#: Said when a document names files beside it: the route reads none.
SELF_CONTAINED = ("POST /import takes self-contained documents only: files a document "
                  "imports or references are not read (no path from the request reaches the "
                  "server's disk); inline them, or import the file with `mockd import FILE` "
                  "(-I/--import-path DIR for .proto imports)")
#: Parts of an importer's message that name a file beside the document.
_MISSING_FILE_SIGNS = ("File not found", "was not found or had errors", "cannot be read",
                       "points to another file", "no file beside it", "leads outside")
#: The importers word their advice for the command line; the route's words instead.
_CLI_WORDS = (("import it with --format curl", "send it with ?format=curl"),
              ("pass --format", "pass ?format="), ("--format", "?format="))


def accepted_formats() -> str:
    """The ``format`` values ``POST /import`` takes, as one sentence part."""
    return f"{', '.join(FORMATS)} (aliases: {', '.join(ALIASES)})"


def _canonical(format: str | None) -> str | None:
    if format is None or not format.strip():
        return None
    try:
        return canonical_format(format)
    except ImportDocumentError:
        raise validation_error(f"format: unknown format {format[:60]!r}; use one of "
                               f"{accepted_formats()}, or omit it to detect the format "
                               f"from the content") from None


def _base_name(filename: str | None) -> str:
    """The last part of ``filename`` (only its extension and stem are used: detection, a
    .proto mock's id); 400 when too long."""
    name = (filename or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    if len(name) > MAX_NAME_LENGTH:
        raise validation_error(f"filename: at most {MAX_NAME_LENGTH} characters")
    return name


def _variables(pairs: list[str] | None) -> dict[str, str]:
    values: dict[str, str] = {}
    for pair in pairs or []:
        name, separator, value = pair.partition("=")
        if not separator or not name.strip():
            raise validation_error(f"var: expected NAME=VALUE, got {pair[:60]!r}")
        values[name.strip()] = value
    if len(values) > MAX_VARIABLES:
        raise validation_error(f"var: at most {MAX_VARIABLES} variables")
    return values


def _document_error(error: ImportDocumentError) -> AdminError:
    """400 ``validation_error`` with the importer's ``<format>: <where>: <reason>`` in the
    route's words, plus :data:`SELF_CONTAINED` when a file beside the document was wanted."""
    message = str(error)
    for cli_words, api_words in _CLI_WORDS:
        message = message.replace(cli_words, api_words)
    if any(sign in message for sign in _MISSING_FILE_SIGNS):
        message = f"{message.rstrip('.')}. {SELF_CONTAINED}"
    return validation_error(message)


def _capped(items: list[Any], key: str, answer: dict[str, Any]) -> None:
    if items:
        answer[key] = items[:MAX_REPORTED_ITEMS]
        if len(items) > MAX_REPORTED_ITEMS:
            answer[f"{key}Count"] = len(items)


@router.post("/import", summary="Import a document of any supported format", tags=["import"],
             openapi_extra=oa.doc(
                 oa.body(oa.Raw("curl -X POST https://api.example.com/v1/users "
                                "-H 'Content-Type: application/json' -d '{\"name\": \"Ada\"}'",
                                "text/plain"),
                         description="the document as text; ?format= names it when it "
                                     "cannot be detected (curl needs format=curl)",
                         also={"application/json": oa.Raw(
                                   '{"version": "1.0", "mocks": []}', "application/json"),
                               "application/x-yaml": oa.Raw(
                                   "openapi: 3.0.3\ninfo: {title: Shop, version: '1'}\n"
                                   "paths: {}\n", "application/x-yaml"),
                               "application/xml": oa.Raw(
                                   "<definitions xmlns=\"http://schemas.xmlsoap.org/wsdl/\"/>",
                                   "application/xml")}),
                 oa.answers({201: {"imported": 1, "total": 1, "format": "curl",
                                   "replace": False},
                             200: {"dryRun": True, "format": "curl", "count": 1,
                                   "mocks": [{"id": "http_a1b2c3d4e5f60718", "type": "http",
                                              "method": "POST", "path": "/v1/users"}]},
                             400: oa.bad_request("validation_error",
                                                 "body: the document to import is empty; "
                                                 "send its text as the request body")},
                            descriptions={200: "?dryRun=true: what would be imported",
                                          201: "Imported"}, engine=True)))
def import_document_route(
        request: HttpRequest, format: str | None = None,
        dry_run: bool = Query(False, alias="dryRun"), replace: bool = False,
        workspace_id: str | None = Query(None, alias="workspaceId"),
        filename: str | None = None,
        include_static: bool = Query(False, alias="includeStatic"),
        as_prefix: str | None = Query(None, alias="as"),
        var: list[str] | None = Query(None),
        grpc_port: int | None = Query(None, alias="grpcPort", ge=1, le=65535)) -> Any:
    """Convert the raw document in the body and import it, as ``mockd import`` does
    (behavior notes §13).

    Query: ``format`` (a name or alias of behavior notes §13; detected from the content and
    the ``filename`` extension when omitted; curl needs ``format=curl``), ``dryRun``,
    ``replace`` (empty the workspace first), ``workspaceId`` (default ``local``),
    ``filename`` (only its last part is used, for detection), ``includeStatic`` (HAR: keep
    scripts, styles, images, fonts), ``as`` (id namespace: ``<as>.<operationId>``), ``var``
    (Postman ``NAME=VALUE``, repeatable), ``grpcPort`` (.proto: the mocks' port, default
    50051). Body: the document as text (JSON, YAML, XML or curl commands; UTF-8, or UTF-16
    with a BOM); at most the admin body limit (10 MiB; larger is 413 at the gateway).

    Answers: dry run -> 200 ``{dryRun: true, format, count, mocks: [{id, name, method,
    path}], skipped?, warnings?, tables?}`` (nothing changes); otherwise the converted mocks,
    tables and bindings are stored in one transaction and handed to the engine as ``POST
    /config`` does (:func:`mocks.control.configuration.import_config`) -> 201 ``{imported,
    total, format, replace, skipped?, warnings?}``. Items of a third-party document that
    cannot be converted are skipped and listed (partial import); a mockd collection is all
    or nothing and checked exactly as ``POST /config`` checks it.

    Errors: 400 ``validation_error``: an empty body, an unknown ``format`` (the message lists
    the accepted ones), a document that cannot be imported (``<format>: <where>: <reason>``;
    a document that imports other files says that only self-contained documents are taken
    here: nothing is read from the server's disk), a converted mock the schema refuses;
    404 for an unknown workspace; 503 ``no_engine`` when no engine is connected.
    """
    chosen = _canonical(format)
    name = _base_name(filename)
    if as_prefix is not None and (not as_prefix.strip() or len(as_prefix) > MAX_NAME_LENGTH):
        raise validation_error(f"as: 1 to {MAX_NAME_LENGTH} characters")
    variables = _variables(var)
    workspace = workspace_id or DEFAULT_WORKSPACE_ID
    require_workspace(workspace)
    if not dry_run and runtime.control is None:
        raise AdminError(503, "no_engine", "No engine connected")
    text = decode_text(request.body or b"")
    if not text.strip():
        raise validation_error("body: the document to import is empty; send its text as the "
                               "request body")
    try:
        # Checked below: a mockd collection exactly as POST /config checks it (all or
        # nothing), another format's mocks as `mockd import` checks them (an item that does
        # not validate or compile is skipped).
        result = import_document(
            text, chosen, as_prefix, filename=name, source=name or "<request body>",
            include_static=include_static, variables=variables, grpc_port=grpc_port,
            check=False)
        if result.format != "mockd":
            check_result(result)
    except ImportDocumentError as error:
        raise _document_error(error) from None
    if result.format == "mockd":
        config = configuration.parse_config_document(result.config_document())
    else:
        if not (result.mocks or result.tables):
            first = result.skipped[0] if result.skipped else {"item": "", "reason": ""}
            raise validation_error(f"{result.format}: nothing could be imported: "
                                   f"{len(result.skipped)} items skipped; first: "
                                   f"{first['item']}: {first['reason']}")
        try:
            config = validate_config(result.config_document())
        except ConfigError as error:
            raise ConfigValidationError(error.errors) from None
    if dry_run:
        rows = result.summary()
        answer: dict[str, Any] = {"dryRun": True, "format": result.format, "count": len(rows),
                                  "mocks": rows[:MAX_DRY_RUN_ROWS]}
        if len(rows) > MAX_DRY_RUN_ROWS:
            answer["truncated"] = True
        tables = len(result.tables) + len(result.stateful_resources)
        if tables:
            answer["tables"] = tables
    else:
        stored = configuration.import_config(config, replace=replace, workspace_id=workspace)
        answer = {"imported": stored["imported"], "total": stored["total"],
                  "format": result.format, "replace": replace}
    _capped(result.skipped, "skipped", answer)
    _capped(result.warnings, "warnings", answer)
    if dry_run:
        return answer
    return HttpResponse(orjson.dumps(answer), status=201, content_type="application/json")
