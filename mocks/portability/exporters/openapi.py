"""An OpenAPI 3.0 document generated from the HTTP mocks of a collection.

One operation per path and method, the first mock in order winning (an OpenAPI document
cannot hold two answers for one operation; later ones are listed under
``x-mockd-skipped``). For each operation:

* ``operationId`` = the mock id, ``summary`` = its name;
* path: the matcher's ``path`` (``{name:.*}`` written ``{name}``), with a ``path``
  parameter per ``{name}``; mocks with only a ``pathPattern`` are skipped;
* method: the matcher's; a mock without one answers every method, so it becomes an
  operation for each of ``get``, ``post``, ``put``, ``patch``, ``delete``, ``head`` and
  ``options`` (``operationId`` ``<mock id>.<method>``) that no mock with that method
  claims on the same path (a mock with a method condition is the more specific answer);
* ``queryParams`` -> required query parameters and ``headers`` (without wildcards) ->
  required header parameters, each with its value as ``example`` and marked
  ``x-mockd-condition: true`` (the importer makes only marked examples conditions again; an
  example in someone else's document describes a request, it does not restrict one);
* the response: ``statusCode`` (for a table-bound mock without one, the action's default),
  its headers (``Content-Type`` excepted) as response headers, its body as the ``example``
  of the media type from ``Content-Type`` (else JSON for objects and JSON text, XML for
  ``<...``, else ``text/plain``). A body or header holding ``{{`` marks the response
  ``x-mockd-template: true`` and a text body is kept as written (not parsed as JSON), so the
  importer gives back the same template text;
* ``http.credentialQueryParams`` -> ``components.securitySchemes`` of ``type: apiKey,
  in: query`` (imported again as the same list);
* ``http.declaredQueryParams`` -> optional query parameters without an example (imported
  again as the same list, never as conditions).

Importing the result reproduces the behaviour: same paths, methods, conditions, statuses,
content types and bodies, templates included.

Source: SPEC "Import and export" ("openapi: an OpenAPI 3.0 document generated from the
mocks"), "Versioning"; behavior notes §1 (``GET /openapi.json|yaml``), §13.
"""
from __future__ import annotations

import json
import re
from typing import Any

from mocks.config import HTTP_METHODS

OPENAPI_VERSION = "3.0.3"
#: Default success status of a table-bound mock by action (behavior notes §6).
ACTION_STATUS = {"list": 200, "get": 200, "create": 201, "update": 200, "patch": 200,
                 "delete": 204, "custom": 200}

_PARAMETER = re.compile(r"\{([^{}:]+)(?::[^{}]*)?\}")
#: Marks a parameter that is one of the mock's matcher conditions (read by the importer).
CONDITION_EXTENSION = "x-mockd-condition"
#: Marks a response whose body or headers hold ``{{...}}`` templates (read by the importer).
TEMPLATE_EXTENSION = "x-mockd-template"


def media_type_of(body: Any, headers: dict[str, str]) -> str:
    """The response media type: the ``Content-Type`` header, else inferred from the body."""
    for name, value in headers.items():
        if name.lower() == "content-type":
            return value.split(";", 1)[0].strip() or "application/json"
    if isinstance(body, (dict, list, int, float, bool)):
        return "application/json"
    text = str(body).strip()
    if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
        return "application/json"
    if text.startswith("<"):
        return "application/xml"
    return "text/plain"


def openapi_document(collection: dict[str, Any], title: str | None = None) -> dict[str, Any]:
    """The OpenAPI 3.0 document of ``collection``'s HTTP mocks (see the module docstring)."""
    name = title or collection.get("name") or "mockd mocks"
    paths: dict[str, dict[str, Any]] = {}
    skipped: list[str] = []
    bound = _bound_actions(collection)
    exported: set[str] = set()
    any_method: list[tuple[dict[str, Any], str]] = []
    for mock in collection.get("mocks") or []:
        if mock.get("type", "http") != "http" or not isinstance(mock.get("http"), dict):
            continue
        http = mock["http"]
        matcher = http.get("matcher") or {}
        path = matcher.get("path")
        if not path:
            skipped.append(str(mock.get("id")))
            continue
        template = _PARAMETER.sub(lambda match: "{" + match.group(1) + "}", path)
        operations = paths.setdefault(template, {})
        if not matcher.get("method"):
            # Filled in after every mock with a method: those win the methods they name.
            any_method.append((mock, template))
            continue
        method = str(matcher["method"]).lower()
        if method in operations:
            skipped.append(str(mock.get("id")))
            continue
        operations[method] = _operation(mock, http, matcher, template, bound)
        exported.add(str(mock.get("id")))
    for mock, template in any_method:
        operations = paths[template]
        free = [method.lower() for method in HTTP_METHODS if method.lower() not in operations]
        if not free:
            skipped.append(str(mock.get("id")))
            continue
        for method in free:
            operation = _operation(mock, mock["http"], mock["http"].get("matcher") or {},
                                   template, bound)
            operation["operationId"] = f"{mock.get('id')}.{method}"
            operations[method] = operation
        exported.add(str(mock.get("id")))
    count = len(exported)
    document: dict[str, Any] = {
        "openapi": OPENAPI_VERSION,
        "info": {"title": name, "version": "1.0.0",
                 "description": f"Generated by mockd from {count} HTTP mock(s)."},
        "paths": {path: operations for path, operations in sorted(paths.items())
                  if operations},
    }
    credentials = sorted({str(name) for mock in collection.get("mocks") or []
                          if isinstance(mock.get("http"), dict)
                          for name in mock["http"].get("credentialQueryParams") or ()})
    if credentials:
        document["components"] = {"securitySchemes": {
            name: {"type": "apiKey", "in": "query", "name": name} for name in credentials}}
    if skipped:
        document["x-mockd-skipped"] = skipped
    return document


def _bound_actions(collection: dict[str, Any]) -> dict[str, str]:
    """``{mock id: action}`` of table-bound mocks (``extend`` or ``statefulBinding``)."""
    actions = {str(binding.get("mock")): str(binding.get("action"))
               for binding in collection.get("extend") or [] if isinstance(binding, dict)}
    for mock in collection.get("mocks") or []:
        binding = (mock.get("http") or {}).get("statefulBinding") if isinstance(
            mock.get("http"), dict) else None
        if isinstance(binding, dict) and binding.get("action"):
            actions[str(mock.get("id"))] = str(binding["action"])
    return actions


def _operation(mock: dict[str, Any], http: dict[str, Any], matcher: dict[str, Any],
               template: str, bound: dict[str, str]) -> dict[str, Any]:
    operation: dict[str, Any] = {"operationId": str(mock.get("id"))}
    if mock.get("name"):
        operation["summary"] = str(mock["name"])
    parameters = [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
                  for name in _PARAMETER.findall(template)]
    for name, value in (matcher.get("queryParams") or {}).items():
        if not isinstance(value, str):
            continue  # a matcher object ({contains: ...}) has no single example value
        parameters.append({"name": name, "in": "query", "required": True,
                           "schema": {"type": "string"}, "example": str(value),
                           CONDITION_EXTENSION: True})
    conditions = matcher.get("queryParams") or {}
    for name in http.get("declaredQueryParams") or ():
        if name not in conditions:  # a parameter is listed once (the condition wins)
            parameters.append({"name": str(name), "in": "query", "schema": {"type": "string"}})
    for name, value in (matcher.get("headers") or {}).items():
        if not isinstance(value, str) or "*" in value:
            continue  # a wildcard or a matcher object has no single example value
        parameters.append({"name": name, "in": "header", "required": True,
                           "schema": {"type": "string"}, "example": str(value),
                           CONDITION_EXTENSION: True})
    if parameters:
        operation["parameters"] = parameters
    response = http.get("response") or (http.get("responses") or [{}])[0]
    action = bound.get(str(mock.get("id")))
    status = response.get("statusCode") or (ACTION_STATUS.get(action, 200) if action else 200)
    headers = {str(key): str(value) for key, value in (response.get("headers") or {}).items()}
    answer: dict[str, Any] = {"description": _description(mock, action)}
    others = {key: value for key, value in headers.items() if key.lower() != "content-type"}
    if others:
        answer["headers"] = {key: {"schema": {"type": "string"}, "example": value}
                             for key, value in others.items()}
    body = response.get("body")
    templated = _has_template(body) or _has_template(others)
    if templated and action is None:
        answer[TEMPLATE_EXTENSION] = True
    if response.get("bodyBase64") and action is None:
        # Bytes: OpenAPI's base64 string format, imported back as bodyBase64.
        media = media_type_of(None, headers) if any(
            key.lower() == "content-type" for key in headers) else "application/octet-stream"
        answer["content"] = {media: {"schema": {"type": "string", "format": "byte"},
                                     "example": response["bodyBase64"]}}
    elif body is not None and body != "" and action is None:
        media = media_type_of(body, headers)
        example = body
        if isinstance(body, str) and "json" in media and not templated:
            try:
                example = json.loads(body)
            except ValueError:
                example = body
        answer["content"] = {media: {"example": example}}
    elif headers and any(key.lower() == "content-type" for key in headers):
        answer["content"] = {media_type_of(None, headers): {}}
    operation["responses"] = {str(status): answer}
    return operation


def _has_template(value: Any) -> bool:
    """Whether a string inside ``value`` (a body or a header map) holds ``{{``."""
    if isinstance(value, str):
        return "{{" in value
    if isinstance(value, dict):
        return any(_has_template(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_template(item) for item in value)
    return False


def _description(mock: dict[str, Any], action: str | None) -> str:
    if action:
        return f"Answered from a table ({action})"
    return str(mock.get("description") or mock.get("name") or "Mock response")
