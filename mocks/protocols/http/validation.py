"""Per-mock request validation (``http.validation``): check the request, then answer.

:func:`compile_request_validation` turns the config block into a :class:`RequestValidator`
once, at load; :func:`validating_action` wraps the mock's action so that every request is
checked before the action runs. Mocks without ``http.validation`` get no wrapper.

The rules are those of table validation (:mod:`tables.validation`, reused, not copied):

* body (location ``body``): ``fields``, ``required`` and the ``schema`` properties over the
  JSON body; an empty body counts as ``{}``; a body that is not JSON is one ``invalid_json``
  issue (the field rules are then skipped); the schema's root ``type`` is code ``schema`` and
  ``additionalProperties: false`` reports each other top-level key as ``unknown_field``;
* ``pathParams`` / ``queryParams`` / ``headers`` (locations ``path`` / ``query`` /
  ``header``): text values (first query value; header names without case), parsed for
  ``type: integer|number|boolean``.

Answers: a rejection (``strict``: any issue; ``permissive``: a ``required`` issue; ``warn``:
never) is ``failStatus`` (400) ``application/problem+json``::

    {"type": "validation_error", "title": "Request Validation Failed", "status": 400,
     "detail": "<the one message> | <N> validation errors",
     "errors": [{field, location, code, message, received?, expected?, hint?}, ...]}

Issues that do not reject go, joined with ``; ``, to the ``X-Mockd-Validation-Warnings``
header of the mock's own answer.

No Django (engine side). Source: behavior notes §7.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import ValidationError

from tables.binding import WARNINGS_HEADER
from tables.validation import (ValidationIssue, check_document, check_parameters,
                               compile_fields, mode_rejects, rules_from_schema, type_matches)

from mocks.protocols.streaming.sender import StreamAction
from mocks.core.errors import ConfigError
from mocks.core.request import INVALID_JSON, MockRequest
from mocks.core.responses import Send, json_body, send_simple

PROBLEM_TYPE = b"application/problem+json"

#: Examples shown in the hint of a ``format`` issue.
FORMAT_EXAMPLES = {"email": "user@example.com", "uuid": "550e8400-e29b-41d4-a716-446655440000",
                   "date": "2024-01-15", "datetime": "2024-01-15T10:30:00Z",
                   "date-time": "2024-01-15T10:30:00Z", "uri": "https://example.com/path",
                   "url": "https://example.com/path", "ipv4": "192.168.1.1",
                   "ipv6": "2001:db8::1", "ip": "192.168.1.1", "hostname": "api.example.com"}

_JSON_TYPE_NAMES = ("string", "number", "integer", "boolean", "array", "object")


class RequestValidator:
    """One mock's ``http.validation``, compiled.

    Attributes:
        mode: ``strict``, ``warn`` or ``permissive``.
        fail_status: status of a rejection.
    """

    __slots__ = ("mode", "fail_status", "_fields", "_required", "_reads_body",
                 "_schema_type", "_allowed_keys", "_path_params", "_query_params", "_headers")

    def __init__(self, config: Any, key_path: str):
        """``config`` is a :class:`mocks.config.RequestValidation`; ``key_path`` names it in
        errors (``mocks[2].http.validation``).

        Raises :class:`ConfigError` when a ``schema`` property does not make a valid rule
        (``mocks[2].http.validation.schema``: ``properties.email.pattern: ...``).
        """
        self.mode: str = config.mode
        self.fail_status: int = config.fail_status
        fields: dict[str, Any] = {}
        required: list[str] = list(config.required)
        schema = config.json_schema or {}
        if schema:
            try:
                schema_fields, schema_required = rules_from_schema(schema)
            except ValidationError as error:
                first = error.errors(include_url=False)[0]
                where = ".".join(str(part) for part in first.get("loc", ()))
                reason = str(first.get("msg", "invalid rule")).removeprefix("Value error, ")
                raise ConfigError(f"{key_path}.schema",
                                  f"{where}: {reason}" if where else reason) from None
            fields.update(schema_fields)
            required += [name for name in schema_required if name not in required]
        # Explicit `fields` win over rules derived from the schema, as in tables.
        fields.update(config.fields)
        self._fields = compile_fields(fields)
        self._required = tuple(required)
        kind = schema.get("type")
        self._schema_type = kind if kind in _JSON_TYPE_NAMES else None
        self._allowed_keys: frozenset[str] | None = None
        if schema.get("additionalProperties") is False:
            self._allowed_keys = frozenset(
                [*(schema.get("properties") or {}), *(name.split(".")[0] for name in fields),
                 *(name.split(".")[0] for name in required)])
        self._reads_body = bool(self._fields or self._required or self._schema_type
                                or self._allowed_keys is not None)
        self._path_params = tuple(config.path_params.items())
        self._query_params = tuple(config.query_params.items())
        # Request header names arrive lower-cased; compare the configured names the same way.
        self._headers = tuple((name.lower(), rule) for name, rule in config.headers.items())

    def check(self, request: MockRequest, path_params: dict[str, str]) -> list[ValidationIssue]:
        """Every issue of ``request`` (body, path, query, headers, in that order), each with a
        hint. Never raises."""
        issues: list[ValidationIssue] = []
        if self._reads_body:
            self._check_body(request, issues)
        if self._path_params:
            check_parameters(self._path_params, path_params, "path", issues)
        if self._query_params:
            check_parameters(self._query_params, request.query, "query", issues)
        if self._headers:
            check_parameters(self._headers, request.headers, "header", issues)
        return [issue if issue.hint is not None else
                dataclasses.replace(issue, hint=hint_for(issue)) for issue in issues]

    def _check_body(self, request: MockRequest, issues: list[ValidationIssue]) -> None:
        if not request.body.strip():
            body: Any = {}  # no body: every required field is simply missing
        else:
            body = request.json
            if body is INVALID_JSON:
                issues.append(ValidationIssue("", "body", "invalid_json",
                                              "request body is not valid JSON"))
                return
        if self._schema_type is not None and not type_matches(self._schema_type, body):
            issues.append(ValidationIssue("", "body", "schema",
                                          f"request body must be a JSON {self._schema_type}",
                                          expected=self._schema_type))
            return
        if self._allowed_keys is not None and isinstance(body, dict):
            for name in body:
                if name not in self._allowed_keys:
                    issues.append(ValidationIssue(name, "body", "unknown_field",
                                                  f"{name} is not an allowed field"))
        check_document(body, self._fields, self._required, False, issues)

    def rejects(self, issues: list[ValidationIssue]) -> bool:
        """Whether ``issues`` reject the request under :attr:`mode`."""
        return mode_rejects(self.mode, issues)

    def problem(self, issues: list[ValidationIssue]) -> bytes:
        """The problem+json body of a rejection (shape in the module docstring)."""
        detail = issues[0].message if len(issues) == 1 else f"{len(issues)} validation errors"
        return json_body({"type": "validation_error", "title": "Request Validation Failed",
                          "status": self.fail_status, "detail": detail,
                          "errors": [issue.as_dict() for issue in issues]})


def hint_for(issue: ValidationIssue) -> str | None:
    """How to fix ``issue``, in words (None when the message says it all)."""
    field, code = issue.field, issue.code
    where = {"body": "the JSON body", "path": "the URL path", "query": "the query string",
             "header": "the request headers"}.get(issue.location, issue.location)
    if code == "required":
        return f"add {field} to {where}"
    if code == "type":
        return f"send {field} as {issue.expected}"
    if code == "format":
        example = FORMAT_EXAMPLES.get(str(issue.expected).lower())
        return f"for example {example}" if example else None
    if code == "enum":
        return f"use one of {issue.expected}"
    if code == "invalid_json":
        return 'send a JSON document, for example {"name": "value"}'
    if code == "schema":
        return "check the request body against the mock's schema"
    if code == "unknown_field":
        return f"remove {field} from the body"
    return None


def warnings_header(issues: list[ValidationIssue]) -> tuple[bytes, bytes]:
    """``X-Mockd-Validation-Warnings``: the messages joined with ``; `` on one line (the same
    form table bindings use)."""
    text = " ".join("; ".join(issue.message for issue in issues).split())
    return WARNINGS_HEADER, text.encode("latin-1", "replace")


def _adding_header(send: Send, header: tuple[bytes, bytes]) -> Send:
    """``send`` that adds ``header`` to the response start; the message is copied because
    static responses reuse one pre-built start message for every request."""

    async def send_with_header(message: dict[str, Any]) -> None:
        if message.get("type") == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), header]}
        await send(message)

    return send_with_header


async def _reject(validator: RequestValidator, request: MockRequest,
                  issues: list[ValidationIssue], send: Send) -> int:
    await send_simple(send, validator.fail_status, [(b"content-type", PROBLEM_TYPE)],
                      validator.problem(issues), head=request.method == "HEAD")
    return validator.fail_status


class ValidatingAction:
    """Checks the request with ``validator``, then answers with ``action`` (anything with
    ``async respond(request, path_params, template_state, send) -> status``)."""

    __slots__ = ("validator", "action")

    def __init__(self, validator: RequestValidator, action: Any):
        self.validator = validator
        self.action = action

    async def respond(self, request: MockRequest, path_params: dict[str, str], state: Any,
                      send: Send) -> int:
        """The rejection, or the action's answer (with the warnings header when the request
        had issues that did not reject). Returns the status sent."""
        issues = self.validator.check(request, path_params)
        if not issues:
            return await self.action.respond(request, path_params, state, send)
        if self.validator.rejects(issues):
            return await _reject(self.validator, request, issues, send)
        return await self.action.respond(request, path_params, state,
                                         _adding_header(send, warnings_header(issues)))


class ValidatingStreamAction(StreamAction):
    """:class:`ValidatingAction` for SSE and chunked mocks: the data-plane app serves a
    :class:`StreamAction` through :meth:`stream` (it needs ``receive``), so the wrapper must
    be one too."""

    def __init__(self, validator: RequestValidator, action: StreamAction):
        self.validator = validator
        self.action = action
        self.kind = action.kind

    async def stream(self, request: Any, path_params: dict[str, str], mock_id: str,
                     engine: Any, receive: Any, send: Send) -> int:
        """The rejection, or the stream (with the warnings header for non-rejecting
        issues). Returns the status sent."""
        issues = self.validator.check(request, path_params)
        if not issues:
            return await self.action.stream(request, path_params, mock_id, engine, receive,
                                            send)
        if self.validator.rejects(issues):
            return await _reject(self.validator, request, issues, send)
        return await self.action.stream(request, path_params, mock_id, engine, receive,
                                        _adding_header(send, warnings_header(issues)))


def compile_request_validation(config: Any, key_path: str) -> RequestValidator | None:
    """A :class:`RequestValidator` for ``http.validation`` (None when absent).
    Raises :class:`ConfigError` naming the offending key."""
    return RequestValidator(config, key_path) if config is not None else None


def validating_action(validator: RequestValidator | None, action: Any) -> Any:
    """``action`` wrapped to validate first; ``action`` itself when there is no validator
    (a mock without ``http.validation`` pays nothing)."""
    if validator is None:
        return action
    if isinstance(action, StreamAction):
        return ValidatingStreamAction(validator, action)
    return ValidatingAction(validator, action)
