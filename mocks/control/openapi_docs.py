"""Shared pieces of the admin API's OpenAPI document (``/openapi-admin.json``, ``/docs``).

The admin routes read their JSON bodies themselves (so bad input answers the project's own
400 ``{error, message}``, behavior notes §3, never ninja's 422); their request and response
shapes are documented through each route decorator's ``openapi_extra=`` with the helpers here:

* :func:`body` -> ``{"requestBody": ...}``: a JSON (or YAML/text) body with its schema and an
  example;
* :func:`answers` -> ``{"responses": ...}``: one entry per status code, each with an example
  and a schema (given, or derived from the example by :func:`schema_of`); an
  :func:`error_example` documents the admin error body ``{error, message, details?}``;
* ready-made errors (:data:`NO_ENGINE`, :func:`not_found`, :data:`BAD_JSON`) and examples of
  the objects many routes answer (a mock, a recording, a table item...), taken from what a
  running server answers (behavior notes §1, ``docs/admin-api.md``).

Everything here is plain dicts built once at import; nothing is computed per document build.
Status-code keys are ``int`` like ninja's own, so the decorator's extra merges into the
operation's ``responses`` instead of adding a second ``"200"`` key.
"""
from __future__ import annotations

from http import HTTPStatus
from typing import Any

JSON = "application/json"

#: The admin error body (SPEC "Errors"; behavior notes §1-§3).
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object", "title": "AdminError", "required": ["error", "message"],
    "properties": {"error": {"type": "string", "description": "machine-readable code"},
                   "message": {"type": "string", "description": "what went wrong"},
                   "details": {"type": "object", "description": "extra facts, e.g. "
                                                                "existingId"}}}

#: The mock document of the config JSON Schema (added to the components by
#: ``mockd_project/api.py``; ``mocks/control/config_schema.py``).
MOCK_SCHEMA: dict[str, Any] = {"$ref": "#/components/schemas/Mock"}
CONFIG_SCHEMA: dict[str, Any] = {"$ref": "#/components/schemas/ConfigFile"}


class ErrorExample(dict):
    """An example of the admin error body; :func:`answers` gives it :data:`ERROR_SCHEMA`."""


class Raw:
    """A non-JSON answer or body: ``text`` of ``media_type`` (YAML, SSE, PEM, Prometheus)."""

    def __init__(self, text: str, media_type: str, schema: dict[str, Any] | None = None):
        self.text = text
        self.media_type = media_type
        self.schema = schema or {"type": "string"}


def error_example(code: str, message: str, **details: Any) -> ErrorExample:
    """``{"error": code, "message": message, "details"?: {...}}`` as an example."""
    example = ErrorExample(error=code, message=message)
    if details:
        example["details"] = details
    return example


#: 503 of every route that needs the engine (behavior notes §1 "E").
NO_ENGINE = error_example("no_engine", "No engine connected")
#: 400 of every route that reads a JSON body (behavior notes §3).
BAD_JSON = error_example("invalid_json", "Invalid JSON in request body")


def not_found(message: str = "Resource not found") -> ErrorExample:
    """A 404 ``not_found`` example with ``message``."""
    return error_example("not_found", message)


def bad_request(code: str, message: str) -> ErrorExample:
    """A 400 example (``validation_error``, ``missing_config``...)."""
    return error_example(code, message)


def schema_of(example: Any) -> dict[str, Any]:
    """A JSON Schema that ``example`` satisfies: types of every key, recursively (lists by
    their first item). Used where a route has no model of its own."""
    if isinstance(example, bool):
        return {"type": "boolean"}
    if isinstance(example, int):
        return {"type": "integer"}
    if isinstance(example, float):
        return {"type": "number"}
    if isinstance(example, str):
        return {"type": "string"}
    if isinstance(example, list):
        return {"type": "array", "items": schema_of(example[0]) if example else {}}
    if isinstance(example, dict):
        return {"type": "object",
                "properties": {key: schema_of(value) for key, value in example.items()}}
    return {}


def _content(example: Any, schema: dict[str, Any] | None) -> dict[str, Any]:
    if isinstance(example, Raw):
        return {example.media_type: {"schema": example.schema, "example": example.text}}
    if isinstance(example, ErrorExample):
        return {JSON: {"schema": ERROR_SCHEMA, "example": dict(example)}}
    return {JSON: {"schema": schema if schema is not None else schema_of(example),
                   "example": example}}


def body(example: Any, schema: dict[str, Any] | None = None, *, required: bool = True,
         description: str | None = None, also: dict[str, Any] | None = None
         ) -> dict[str, Any]:
    """``{"requestBody": ...}`` for ``openapi_extra``: a JSON body with ``schema`` (derived
    from ``example`` when omitted) and ``example``; a :class:`Raw` example documents a
    non-JSON body. ``also`` adds more media types (``{"application/x-yaml": Raw(...)}``)."""
    content = _content(example, schema)
    for media_type, extra in (also or {}).items():
        content[media_type] = {"schema": extra.schema, "example": extra.text}
    request_body: dict[str, Any] = {"required": required, "content": content}
    if description:
        request_body["description"] = description
    return {"requestBody": request_body}


def answers(replies: dict[int, Any], schemas: dict[int, dict[str, Any]] | None = None,
            descriptions: dict[int, str] | None = None, *, engine: bool = False
            ) -> dict[str, Any]:
    """``{"responses": ...}`` for ``openapi_extra``: per status code an example (a JSON
    value, an :func:`error_example`, a :class:`Raw` text, or ``None`` for an empty answer
    such as 204) with its schema (``schemas[status]``, else derived from the example).
    ``engine=True`` adds the 503 ``no_engine`` answer of routes that need the engine."""
    responses: dict[int, Any] = {}
    if engine:
        replies = {**replies, 503: NO_ENGINE}
    for status, example in replies.items():
        text = (descriptions or {}).get(status) or HTTPStatus(status).phrase
        if example is None:
            responses[status] = {"description": text}
            continue
        responses[status] = {"description": text,
                             "content": _content(example, (schemas or {}).get(status))}
    return {"responses": responses}


def doc(*parts: dict[str, Any]) -> dict[str, Any]:
    """The union of :func:`body` and :func:`answers` results, for ``openapi_extra``."""
    merged: dict[str, Any] = {}
    for part in parts:
        merged.update(part)
    return merged


# ---------------------------------------------------------------------------- examples
# Shapes as a running server answers them (behavior notes §1; docs/admin-api.md).

TIMESTAMP = "2026-11-27T10:00:00.000Z"

HTTP_MOCK_INPUT: dict[str, Any] = {
    "type": "http", "name": "List users",
    "http": {"matcher": {"method": "GET", "path": "/api/users"},
             "response": {"statusCode": 200, "headers": {"Content-Type": "application/json"},
                          "body": {"users": []}}}}

MOCK_EXAMPLE: dict[str, Any] = {
    "id": "http_a1b2c3d4e5f60718", "type": "http", "name": "List users", "enabled": True,
    "workspaceId": "local", "createdAt": TIMESTAMP, "updatedAt": TIMESTAMP,
    "http": HTTP_MOCK_INPUT["http"]}

WORKSPACE_EXAMPLE: dict[str, Any] = {
    "id": "ws_0123456789abcdef", "name": "Payments", "type": "local",
    "description": "Payment provider twins", "basePath": "/payments",
    "createdAt": TIMESTAMP, "updatedAt": TIMESTAMP}

RESOURCE_EXAMPLE: dict[str, Any] = {"name": "users", "itemCount": 2, "seedCount": 2,
                                    "idField": "id"}

ITEM_EXAMPLE: dict[str, Any] = {"id": "u1", "name": "Ada Lovelace",
                                "email": "ada@example.com",
                                "createdAt": "2026-11-27T10:00:00.000000000Z",
                                "updatedAt": "2026-11-27T10:00:00.000000000Z"}

RECORDING_EXAMPLE: dict[str, Any] = {
    "id": "rec_0123456789abcdef", "sessionId": "sess_0123456789abcdef",
    "timestamp": TIMESTAMP,
    "request": {"method": "GET", "url": "https://api.example.com/v1/users?page=1",
                "path": "/v1/users", "host": "api.example.com", "scheme": "https",
                "headers": {"Accept": ["application/json"]}, "body": ""},
    "response": {"statusCode": 200, "statusText": "OK",
                 "headers": {"Content-Type": ["application/json"]},
                 "body": "eyJ1c2VycyI6W119"},
    "duration": 48000000}

SESSION_EXAMPLE: dict[str, Any] = {"id": "sess_0123456789abcdef", "name": "default",
                                   "startTime": TIMESTAMP,
                                   "endTime": "2026-11-27T10:05:00.000Z", "recordingCount": 1}

REQUEST_EXAMPLE: dict[str, Any] = {
    "id": "req-1", "workspaceId": "local", "timestamp": TIMESTAMP, "protocol": "http",
    "method": "GET", "path": "/api/users", "headers": {"Accept": ["*/*"]}, "bodySize": 0,
    "remoteAddr": "127.0.0.1:38260", "matchedMockId": "http_a1b2c3d4e5f60718",
    "matchedMockID": "http_a1b2c3d4e5f60718", "statusCode": 200, "responseStatus": 200,
    "durationMs": 0.186}

MESSAGE_EXAMPLE: dict[str, Any] = {"message": "done"}
