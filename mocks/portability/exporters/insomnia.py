"""Insomnia collections of the mocks: v4 JSON (legacy) and v5 YAML (recommended).

Layout (behavior notes §1 "Client-collection export"): one workspace; one folder
``fld_<type>`` per mock type present; one request ``req_<mockId>`` per mock (a SOAP mock
with several operations gives ``req_<mockId>`` for the first and
``req_<mockId>_<operation>`` for the others); URLs ``{{ _.base_url }}<path>``; a base
environment with ``base_url`` (the mock server) and ``admin_url``. Headers added:
``Content-Type`` for JSON and XML bodies, ``Accept: text/event-stream`` for SSE mocks,
``SOAPAction`` for SOAP operations. v5 also holds sample CRUD requests per table at
``/api/<table>`` (folder ``fld_tables``).

Requests carry what the mock matches: method, path (``{id}`` written ``:id`` with a path
parameter), query parameters, header values without wildcards, and ``bodyEquals`` as the
body.

Source: SPEC "Client-collection exports", "Versioning"; behavior notes §1.
"""
from __future__ import annotations

import json
import re
import time
from datetime import datetime, timezone
from typing import Any

WORKSPACE_ID = "wrk_mockd"
ENVIRONMENT_ID = "env_mockd_base"
COOKIE_JAR_ID = "jar_mockd"
V5_TYPE = "collection.insomnia.rest/5.0"
#: Folder label of each mock type.
TYPE_LABELS = {"http": "HTTP", "graphql": "GraphQL", "grpc": "gRPC", "websocket": "WebSocket",
               "mqtt": "MQTT", "soap": "SOAP", "oauth": "OAuth", "tables": "Tables"}

_PARAMETER = re.compile(r"\{([^{}:]+)(?::[^{}]*)?\}")


def _clean_path(path: str) -> tuple[str, list[str]]:
    """``/users/{id}`` -> (``/users/:id``, [``id``])."""
    names = _PARAMETER.findall(path)
    return _PARAMETER.sub(lambda match: ":" + match.group(1), path), names


def _body_kind(text: str) -> str | None:
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            json.loads(stripped)
            return "application/json"
        except ValueError:
            return None
    if stripped.startswith("<"):
        return "application/xml"
    return None


def collection_requests(collection: dict[str, Any]) -> list[dict[str, Any]]:
    """Neutral request descriptions of every mock: ``{id, folder, name, method, url,
    headers: [(name, value)], query: [(name, value)], pathParameters: [name], body?,
    mimeType?, websocket?}``. Both versions render these."""
    requests: list[dict[str, Any]] = []
    for mock in collection.get("mocks") or []:
        mock_type = mock.get("type", "http")
        config = mock.get(mock_type) or {}
        mock_id = str(mock.get("id"))
        name = str(mock.get("name") or mock_id)
        if mock_type == "http":
            requests.append(_http_request(mock_id, name, config))
        elif mock_type == "soap":
            operations = config.get("operations") or {"": {}}
            for index, (operation, spec) in enumerate(operations.items()):
                request_id = mock_id if index == 0 else f"{mock_id}_{operation}"
                action = (spec or {}).get("soapAction", "") if isinstance(spec, dict) else ""
                envelope = ('<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/'
                            f'envelope/"><soapenv:Body><{operation or "Request"}/>'
                            "</soapenv:Body></soapenv:Envelope>")
                requests.append({
                    "id": request_id, "folder": "soap",
                    "name": f"{name} {operation}".strip(), "method": "POST",
                    "url": "{{ _.base_url }}" + str(config.get("path") or "/"),
                    "headers": [("Content-Type", "text/xml"), ("SOAPAction", str(action))],
                    "query": [], "pathParameters": [], "body": envelope,
                    "mimeType": "text/xml"})
        elif mock_type == "graphql":
            requests.append({
                "id": mock_id, "folder": "graphql", "name": name, "method": "POST",
                "url": "{{ _.base_url }}" + str(config.get("path") or "/graphql"),
                "headers": [("Content-Type", "application/json")], "query": [],
                "pathParameters": [], "body": json.dumps({"query": "{ __typename }"}),
                "mimeType": "application/graphql"})
        elif mock_type == "websocket":
            requests.append({
                "id": mock_id, "folder": "websocket", "name": name, "method": "GET",
                "url": "{{ _.ws_url }}" + str(config.get("path") or "/"), "headers": [],
                "query": [], "pathParameters": [], "websocket": True})
        elif mock_type == "oauth":
            issuer = str(config.get("issuer") or "https://mock-oauth.local").rstrip("/")
            path = re.sub(r"^[a-z]+://[^/]*", "", issuer)
            requests.append({
                "id": mock_id, "folder": "oauth", "name": f"{name} discovery", "method": "GET",
                "url": "{{ _.base_url }}" + path + "/.well-known/openid-configuration",
                "headers": [], "query": [], "pathParameters": []})
        else:  # grpc, mqtt: no HTTP request reaches them; a note keeps them visible
            port = config.get("port")
            requests.append({
                "id": mock_id, "folder": mock_type, "name": name, "method": "GET",
                "url": f"localhost:{port}" if port else "localhost", "headers": [],
                "query": [], "pathParameters": [],
                "description": f"{TYPE_LABELS.get(mock_type, mock_type)} mock on port {port}; "
                               "use a protocol client"})
    return requests


def _http_request(mock_id: str, name: str, config: dict[str, Any]) -> dict[str, Any]:
    matcher = config.get("matcher") or {}
    path = str(matcher.get("path") or "")
    if not path:
        pattern = str(matcher.get("pathPattern") or "/")
        path = pattern.lstrip("^").rstrip("$") if re.fullmatch(r"\^?/[\w/.-]*\$?", pattern) \
            else "/"
    url_path, names = _clean_path(path)
    headers = [(str(key), str(value)) for key, value in (matcher.get("headers") or {}).items()
               if "*" not in str(value)]
    request: dict[str, Any] = {
        "id": mock_id, "folder": "http", "name": name,
        "method": str(matcher.get("method") or "GET").upper(),
        "url": "{{ _.base_url }}" + url_path, "headers": headers,
        "query": [(str(key), str(value)) for key, value in
                  (matcher.get("queryParams") or {}).items()],
        "pathParameters": names}
    body = matcher.get("bodyEquals")
    if isinstance(body, str) and body:
        request["body"] = body
        kind = _body_kind(body)
        if kind:
            request["mimeType"] = kind
            if not any(key.lower() == "content-type" for key, _ in headers):
                headers.append(("Content-Type", kind))
    if config.get("sse") is not None:
        headers.append(("Accept", "text/event-stream"))
    return request


def _urls(base_url: str, admin_url: str) -> dict[str, str]:
    return {"base_url": base_url, "admin_url": admin_url,
            "ws_url": re.sub(r"^http", "ws", base_url)}


def insomnia_v4(collection: dict[str, Any], base_url: str, admin_url: str,
                now: datetime | None = None) -> dict[str, Any]:
    """Insomnia export format 4 (JSON): ``{_type: export, __export_format: 4,
    __export_date, __export_source, resources: [workspace, environment, folders,
    requests]}``."""
    moment = now or datetime.now(timezone.utc)
    name = str(collection.get("name") or "mockd")
    resources: list[dict[str, Any]] = [
        {"_id": WORKSPACE_ID, "_type": "workspace", "parentId": None, "name": name,
         "description": "Requests for the mocks served by mockd", "scope": "collection"},
        {"_id": ENVIRONMENT_ID, "_type": "environment", "parentId": WORKSPACE_ID,
         "name": "Base Environment", "data": _urls(base_url, admin_url)},
    ]
    requests = collection_requests(collection)
    for folder in dict.fromkeys(request["folder"] for request in requests):
        resources.append({"_id": f"fld_{folder}", "_type": "request_group",
                          "parentId": WORKSPACE_ID, "name": TYPE_LABELS.get(folder, folder)})
    for position, request in enumerate(requests):
        resource: dict[str, Any] = {
            "_id": f"req_{request['id']}",
            "_type": "websocket_request" if request.get("websocket") else "request",
            "parentId": f"fld_{request['folder']}", "name": request["name"],
            "method": request["method"], "url": request["url"],
            "headers": [{"name": key, "value": value} for key, value in request["headers"]],
            "parameters": [{"name": key, "value": value} for key, value in request["query"]],
            "pathParameters": [{"name": key, "value": ""} for key in request["pathParameters"]],
            "metaSortKey": position}
        if request.get("body") is not None:
            resource["body"] = {"mimeType": request.get("mimeType") or "text/plain",
                                "text": request["body"]}
        if request.get("description"):
            resource["description"] = request["description"]
        resources.append(resource)
    return {"_type": "export", "__export_format": 4,
            "__export_date": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "__export_source": "mockd", "resources": resources}


def insomnia_v5(collection: dict[str, Any], base_url: str, admin_url: str,
                now: datetime | None = None) -> dict[str, Any]:
    """Insomnia collection format 5 (to be dumped as YAML): ``{type:
    collection.insomnia.rest/5.0, name, meta, collection: [folders with children],
    cookieJar, environments}``, plus a ``Tables`` folder of sample CRUD requests."""
    stamp = int((now.timestamp() if now else time.time()) * 1000)
    name = str(collection.get("name") or "mockd")
    folders: dict[str, dict[str, Any]] = {}
    for position, request in enumerate(collection_requests(collection)):
        folder = folders.setdefault(request["folder"], _v5_folder(request["folder"], stamp))
        folder["children"].append(_v5_request(request, position, stamp))
    tables = [table.get("name") for key in ("tables", "statefulResources")
              for table in collection.get(key) or [] if isinstance(table, dict)]
    if tables:
        folder = folders.setdefault("tables", _v5_folder("tables", stamp))
        for table in tables:
            for index, (label, method, suffix, body) in enumerate((
                    ("List", "GET", "", None), ("Create", "POST", "", "{}"),
                    ("Get", "GET", "/:id", None), ("Update", "PUT", "/:id", "{}"),
                    ("Delete", "DELETE", "/:id", None))):
                request = {"id": f"{table}_{label.lower()}", "folder": "tables",
                           "name": f"{label} {table}", "method": method,
                           "url": "{{ _.base_url }}/api/" + str(table) + suffix,
                           "headers": [("Content-Type", "application/json")] if body else [],
                           "query": [], "pathParameters": ["id"] if suffix else []}
                if body:
                    request.update(body=body, mimeType="application/json")
                folder["children"].append(_v5_request(request, index, stamp))
    return {
        "type": V5_TYPE, "name": name,
        "meta": {"id": WORKSPACE_ID, "created": stamp, "modified": stamp,
                 "description": "Requests for the mocks served by mockd"},
        "collection": list(folders.values()),
        "cookieJar": {"name": "Default Jar",
                      "meta": {"id": COOKIE_JAR_ID, "created": stamp, "modified": stamp}},
        "environments": {"name": "Base Environment",
                         "meta": {"id": ENVIRONMENT_ID, "created": stamp, "modified": stamp,
                                  "isPrivate": False},
                         "data": _urls(base_url, admin_url)},
    }


def _v5_folder(folder: str, stamp: int) -> dict[str, Any]:
    return {"name": TYPE_LABELS.get(folder, folder),
            "meta": {"id": f"fld_{folder}", "created": stamp, "modified": stamp,
                     "sortKey": -len(folder)}, "children": []}


def _v5_request(request: dict[str, Any], position: int, stamp: int) -> dict[str, Any]:
    item: dict[str, Any] = {
        "url": request["url"], "name": request["name"],
        "meta": {"id": f"req_{request['id']}", "created": stamp, "modified": stamp,
                 "isPrivate": False, "sortKey": position},
        "method": request["method"],
        "headers": [{"name": key, "value": value} for key, value in request["headers"]]}
    if request.get("body") is not None:
        item["body"] = {"mimeType": request.get("mimeType") or "text/plain",
                        "text": request["body"]}
    if request["query"]:
        item["parameters"] = [{"name": key, "value": value} for key, value in request["query"]]
    if request["pathParameters"]:
        item["pathParameters"] = [{"name": key, "value": ""} for key in
                                  request["pathParameters"]]
    if request.get("description"):
        item["description"] = request["description"]
    item["settings"] = {"renderRequestBody": True, "encodeUrl": True,
                        "followRedirects": "global", "cookies": {"send": True, "store": True},
                        "rebuildPath": True}
    return item
