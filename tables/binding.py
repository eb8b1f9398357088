"""The HTTP adapter of tables: a bound mock answers from the table store.

Compile side (called by :func:`mocks.engine.snapshot.compile_snapshot`):

* :func:`table_configs` lists ``tables[]`` and the legacy ``statefulResources[]`` (one table
  namespace);
* :func:`collect_bindings` resolves each ``extend[].mock`` to a mock: by id, then by operation
  id (imports: ``<as>.<operationId>``), then by the literal ``"METHOD /path"``; an unknown
  reference is the config error ``extend "<ref>": mock not found`` (behavior notes §6);
* :func:`binding_of` turns ``http.statefulBinding`` into the same :class:`BindingSpec`;
* :class:`BoundAction` replaces the mock's static response. It has the ``respond`` interface
  of :class:`~mocks.core.responses.CompiledResponse`, so the data-plane app serves it like
  any other mock.

Serve side (:meth:`BoundAction.respond`): request + path parameters -> one
:class:`~tables.store.OperationRequest` -> :meth:`~tables.store.TableStore.execute` -> status,
headers and JSON bytes:

* the item id is the path parameter named by the **last** ``{param}`` of ``matcher.path``
  (``{sid}.json`` counts; a ``pathPattern`` mock uses its last named group); none or empty ->
  400 ``item ID required for <action>``;
* bodies: JSON (also without Content-Type), form-encoded (:mod:`tables.forms`), else JSON if
  it parses, else 400 ``unsupported Content-Type "…" and body is not valid JSON``; bad JSON ->
  400 ``invalid JSON body: …``; over 1 MiB -> 413 with a hint;
* query parameters of ``list`` and ``get``: those the bound mock's ``matcher.queryParams``
  names (they choose the mock) and its ``http.credentialQueryParams`` (API keys, recorded by
  the OpenAPI import) are never filters; those its ``http.declaredQueryParams`` names (the
  imported operation's query parameters) filter only when they name a field of the table's
  items; the rest go to :mod:`tables.query`;
* success status, first that applies: the transform's ``create.status``/``delete.status``,
  the bound mock's explicit ``response.statusCode``, the action's default (list/get/update/
  patch/custom 200, create 201, delete 204); error answers keep their own status;
* headers: the bound mock's ``response.headers`` (templates allowed), JSON content type
  unless they set one, ``X-Mockd-Validation-Warnings`` for non-rejecting validation issues;
  ``delayMs`` applies; the mock's ``body`` is ignored;
* transforms: the binding's ``response`` replaces the table's; without either, raw data.

No Django. Single owner: the engine loop (``respond`` never awaits between reading and writing
the store).

Source: SPEC "Extend binding", "Form-encoded bodies", "Response transform"; behavior notes §6.
"""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable

import orjson

from mocks.core.errors import ConfigError
from mocks.core.request import INVALID_JSON, MockRequest
from mocks.core.templating import (RenderContext, TemplateError, TemplateState,
                                     compile_template, resolve_seed)

from tables import errors
from tables.errors import MAX_WRITE_BYTES, TableError
from tables.forms import parse_form
from tables.store import OperationRequest, OperationResult, TableStore
from tables.transforms import CompiledTransform, compile_transform, error_body, list_envelope

if TYPE_CHECKING:
    from mocks.config import ConfigFile, Matcher, Mock, Response
    from tables.config import StatefulBinding, TableConfig

Send = Callable[[dict[str, Any]], Awaitable[None]]

JSON_TYPE = b"application/json"
WARNINGS_HEADER = b"x-mockd-validation-warnings"

#: Success status of each action when neither a transform nor the mock sets one (notes §6).
DEFAULT_STATUS = {"list": 200, "get": 200, "create": 201, "update": 200, "patch": 200,
                  "delete": 204, "custom": 200}
#: Actions whose request body is read.
BODY_ACTIONS = frozenset(("create", "update", "patch", "custom"))
#: Actions that address one item by id.
ITEM_ACTIONS = frozenset(("get", "update", "patch", "delete"))

_PATH_PARAMETER = re.compile(r"\{([^{}:]+)(?::[^{}]*)?\}")
_NAMED_GROUP = re.compile(r"\(\?P<([A-Za-z_][A-Za-z0-9_]*)>")
_METHOD_AND_PATH = re.compile(r"([A-Za-z]+)\s+(/\S*)\Z")


# ---------------------------------------------------------------------------- compile side


@dataclass(frozen=True, slots=True)
class BindingSpec:
    """One mock's binding, compiled.

    Attributes:
        table: the table name ("" for a custom operation without a table).
        action: ``list``, ``get``, ``create``, ``update``, ``patch``, ``delete``, ``custom``.
        operation: the custom operation name (``custom`` only).
        transform: the binding-level transform, or None (then the table's applies).
        source: the config key path of the binding (``extend[2]``).
    """

    table: str
    action: str
    operation: str | None
    transform: CompiledTransform | None
    source: str


def has_transform(spec: BindingSpec) -> bool:
    """Whether the binding gives a ``response`` transform that changes something (``{}``,
    "answer the raw data", changes nothing). Protocols whose answers are shaped by their own
    schema (gRPC messages, SOAP XML) refuse the others."""
    return spec.transform is not None and bool(spec.transform.config.model_fields_set)


def member_bindings(binding: Any, mock_id: str, protocol: str, part: str, reference: str,
                    members: Iterable[str], shaped_by: str) -> dict[str, BindingSpec]:
    """The ``{member: BindingSpec}`` a protocol mock receives as ``context.binding`` (see
    :func:`collect_bindings`), checked: ``{}`` without bindings.

    ``protocol`` (``gRPC``), ``part`` (``method``) and ``reference`` (the spelling to
    suggest after the mock id) word the errors; ``members`` are the parts the mock has;
    ``shaped_by`` says why a transform cannot apply. Raises
    :class:`~mocks.core.errors.ConfigError` at ``extend[i].mock`` for a binding of the whole
    mock or of a part the mock lacks, at ``extend[i].response`` for a transform that changes
    something (:func:`has_transform`).
    """
    if binding is None:
        return {}
    if not isinstance(binding, dict):
        raise ConfigError(f"{binding.source}.mock",
                          f"a {protocol} mock binds one {part} at a time: use mock: "
                          f"{mock_id}.{reference}")
    known = list(members)
    for name, spec in binding.items():
        if name not in known:
            raise ConfigError(f"{spec.source}.mock",
                              f"mock {mock_id!r} has no {part} {name.lstrip('/')!r} "
                              f"({part}s: {', '.join(m.lstrip('/') for m in known) or 'none'})")
        if has_transform(spec):
            raise ConfigError(f"{spec.source}.response",
                              f"{shaped_by}: response transforms apply to HTTP mocks; "
                              f"remove response")
    return binding


def binding_of(binding: StatefulBinding, source: str) -> BindingSpec:
    """A :class:`BindingSpec` from an ``extend[]`` entry or an ``http.statefulBinding``."""
    return BindingSpec(binding.table, binding.action, binding.operation,
                       compile_transform(binding.response), source)


def table_configs(config: ConfigFile) -> list[tuple[TableConfig, str]]:
    """``(table config, key path)`` of ``tables[]`` then ``statefulResources[]``."""
    return [*((table, f"tables[{index}]") for index, table in enumerate(config.tables)),
            *((resource, f"statefulResources[{index}]")
              for index, resource in enumerate(config.stateful_resources))]


def resolve_mock_reference(reference: str, mocks: list[Mock]) -> int | None:
    """The index of the mock ``reference`` names, or None.

    Order (behavior notes §6): mock id; operation id (``operationId`` or
    ``<as>.<operationId>`` of an imported mock); the literal ``"METHOD /path"`` against
    ``matcher.method`` + ``matcher.path``.
    """
    for index, mock in enumerate(mocks):
        if mock.id == reference:
            return index
    for index, mock in enumerate(mocks):
        operation_id = getattr(mock, "operation_id", None)
        if operation_id and reference == operation_id:
            return index
        import_as = getattr(mock, "import_as", None)
        if operation_id and import_as and reference == f"{import_as}.{operation_id}":
            return index
    found = _METHOD_AND_PATH.match(reference.strip())
    if found is not None:
        method, path = found.group(1).upper(), found.group(2)
        for index, mock in enumerate(mocks):
            matcher = mock.http.matcher if mock.type == "http" and mock.http else None
            if matcher is not None and matcher.path == path and (
                    (matcher.method or "").upper() == method):
                return index
    return None


def collect_bindings(config: ConfigFile,
                     member_of: Callable[[str, str], str | None] | None = None) -> dict[int, Any]:
    """``{mock index: BindingSpec}`` from ``extend[]``; a later entry for the same mock wins.

    A reference ``<mock id>.<member>`` binds one member of a protocol mock when
    ``member_of(mock type, member text)`` names one (the protocol handler's
    ``binding_member``): a GraphQL resolver ``<id>.Query.users``, a gRPC method
    ``<id>.demo.v1.Users.CreateUser``, a SOAP operation ``<id>.CreateUser``. That mock's
    entry is then ``{member: BindingSpec}`` (one per bound member).

    Raises :class:`ConfigError` ``extend[i].mock: extend "<ref>": mock not found``.
    """
    bound: dict[int, Any] = {}
    for position, binding in enumerate(config.extend):
        index = resolve_mock_reference(binding.mock, config.mocks)
        member = None
        if index is None and member_of is not None:
            index, member = _member_reference(binding.mock, config.mocks, member_of)
        if index is None:
            raise ConfigError(f"extend[{position}].mock",
                              f'extend "{binding.mock}": mock not found')
        spec = binding_of(binding, f"extend[{position}]")
        if member is None:
            bound[index] = spec
        else:
            members = bound.get(index)
            if not isinstance(members, dict):
                members = bound[index] = {}
            members[member] = spec
    return bound


def _member_reference(reference: str, mocks: list[Mock],
                      member_of: Callable[[str, str], str | None]) -> tuple[int | None,
                                                                           str | None]:
    """``(mock index, member)`` of ``<mock id>.<member>``, else Nones (the longest mock id
    that prefixes the reference wins: ids may hold dots themselves)."""
    found: tuple[int | None, str | None] = (None, None)
    longest = -1
    for index, mock in enumerate(mocks):
        if mock.type != "http" and reference.startswith(mock.id + ".") and \
                len(mock.id) > longest:
            member = member_of(mock.type, reference[len(mock.id) + 1:])
            if member is not None:
                found, longest = (index, member), len(mock.id)
    return found


def item_id_parameter(matcher: Matcher) -> str | None:
    """The path parameter that holds the item id: the last ``{param}`` of ``matcher.path``
    (``/v1/customers/{customer}`` -> ``customer``; ``/a/{sid}.json`` -> ``sid``), else the
    last named group of ``pathPattern``, else None."""
    if matcher.path:
        names = _PATH_PARAMETER.findall(matcher.path)
        if names:
            return names[-1].strip()
    if matcher.path_pattern:
        names = _NAMED_GROUP.findall(matcher.path_pattern)
        if names:
            return names[-1]
    return None


# ---------------------------------------------------------------------------- request bodies


def read_write_body(request: MockRequest, table: str) -> Any:
    """The JSON value of a write's body; raises :class:`TableError` 413 or 400.

    Empty body -> ``{}``; no Content-Type or a JSON one -> JSON; form-encoded -> converted,
    except a body that is a JSON object or array (``curl -d '{"a":1}'`` labels JSON as a form);
    another type -> JSON when it parses, else 400.
    """
    body = request.body
    if len(body) > MAX_WRITE_BYTES:
        raise errors.too_large(table)
    if not body.strip():
        return {}
    content_type = request.headers.get("content-type", "")
    media = content_type.split(";", 1)[0].strip().lower()
    if media == "application/x-www-form-urlencoded":
        if body.lstrip()[:1] in (b"{", b"[") and request.json is not INVALID_JSON:
            return request.json
        return parse_form(body)
    value = request.json
    if value is not INVALID_JSON:
        return value
    if not media or media == "application/json" or media.endswith("+json"):
        try:
            orjson.loads(body)
        except orjson.JSONDecodeError as error:
            raise errors.bad_request(table, f"invalid JSON body: {error}") from None
    raise errors.bad_request(table, f'unsupported Content-Type "{content_type}" and body is '
                                    f"not valid JSON")


# ---------------------------------------------------------------------------- serve side


class BoundAction:
    """The answer of a bound mock (replaces its static response; same ``respond`` interface).

    Attributes:
        spec: the binding.
        store: the engine's table store (long-lived; the table is looked up per request, so a
            config reload or a runtime-registered table is seen at once).
        id_parameter: the path parameter holding the item id (None: no id in the path).
        explicit_status: the mock's own ``response.statusCode`` when it was given, else None.
        delay_seconds: the mock's ``delayMs`` in seconds.
        not_filters: query parameter names a ``list`` (or ``get``) never reads as filters:
            the keys of the mock's own ``matcher.queryParams`` (they choose the mock) and
            its ``credentialQueryParams`` (API keys an imported spec sends in the query).
        declared: the mock's ``declaredQueryParams`` (an imported operation's query
            parameters) less ``not_filters``: filters of a ``list`` only when some item of
            the table has that field.
    """

    __slots__ = ("spec", "store", "id_parameter", "explicit_status", "delay_seconds", "seed",
                 "not_filters", "declared", "_headers", "_static_headers", "_has_content_type")

    def __init__(self, spec: BindingSpec, store: TableStore, response: Response | None,
                 matcher: Matcher, key_path: str, credential_query_params: Iterable[str] = (),
                 declared_query_params: Iterable[str] = ()):
        self.spec = spec
        self.store = store
        self.id_parameter = item_id_parameter(matcher)
        self.not_filters = frozenset((*(matcher.query_params or {}), *credential_query_params))
        self.declared = frozenset(declared_query_params) - self.not_filters
        self.explicit_status = (response.status_code
                                if response is not None and "status_code" in
                                response.model_fields_set else None)
        self.delay_seconds = response.delay_ms / 1000.0 if response is not None else 0.0
        self.seed = response.seed if response is not None else None
        self._headers: list[tuple[bytes, Any]] = []
        self._has_content_type = False
        for name, value in ((response.headers or {}) if response is not None else {}).items():
            try:
                template = compile_template(value)
            except TemplateError as error:
                raise ConfigError(f"{key_path}.headers.{name}", str(error)) from None
            self._headers.append((name.lower().encode("latin-1"), template))
            if name.lower() == "content-type":
                self._has_content_type = True
        self._static_headers: list[tuple[bytes, bytes]] | None = None
        if all(template.is_static for _, template in self._headers):
            self._static_headers = [(name, template.render(None).encode("latin-1", "replace"))
                                    for name, template in self._headers]

    @property
    def is_static(self) -> bool:
        """Always False: every answer reads the table."""
        return False

    def operation_request(self, request: MockRequest,
                          path_params: dict[str, str]) -> OperationRequest:
        """The :class:`OperationRequest` of one HTTP request; raises :class:`TableError` for a
        missing item id or an unusable body."""
        spec = self.spec
        action = spec.action
        item_id = None
        if action in ITEM_ACTIONS:
            item_id = path_params.get(self.id_parameter) if self.id_parameter else None
            if not item_id:
                raise TableError(errors.VALIDATION_ERROR, f"item ID required for {action}",
                                 table=spec.table)
        body = None
        if action in BODY_ACTIONS:
            body = read_write_body(request, spec.table)
            if action == "custom" and isinstance(body, dict) and path_params:
                body = {**body, **path_params}  # notes §6: path params join the input
        store_action = action
        if action == "delete":
            transform = self._transform_of(None)
            if transform is not None and transform.delete_preserve:
                store_action = "get"  # `delete.preserve`: answer as a delete, keep the item
        query = request.query_all if action in ("list", "get") and request.query_string \
            else None
        if query and self.not_filters:
            query = {name: values for name, values in query.items()
                     if name not in self.not_filters}
        return OperationRequest(store_action, spec.table, item_id, body, query, path_params,
                                spec.operation, self.declared)

    def _transform_of(self, result: OperationResult | None) -> CompiledTransform | None:
        if self.spec.transform is not None:
            return self.spec.transform
        if result is not None and result.definition is not None:
            return result.definition.transform
        table = self.store.tables.get(self.spec.table)
        return table.definition.transform if table is not None else None

    def answer(self, request: MockRequest,
               path_params: dict[str, str]) -> tuple[int, bytes, list[str]]:
        """``(status, JSON body bytes or b"", warning messages)`` for one request."""
        try:
            operation = self.operation_request(request, path_params)
        except TableError as error:
            return error.status, orjson.dumps(error_body(error, self._transform_of(None))), []
        return self.answer_of(self.store.execute(operation))

    async def answer_async(self, request: MockRequest,
                           path_params: dict[str, str]) -> tuple[int, bytes, list[str]]:
        """:meth:`answer` through the store's async entry point (a shared state store)."""
        try:
            operation = self.operation_request(request, path_params)
        except TableError as error:
            return error.status, orjson.dumps(error_body(error, self._transform_of(None))), []
        return self.answer_of(await self.store.execute_async(operation))

    def answer_of(self, result: OperationResult) -> tuple[int, bytes, list[str]]:
        """``(status, JSON body bytes or b"", warning messages)`` of a store result."""
        transform = self._transform_of(result)
        warnings = [issue.message for issue in result.warnings]
        if result.error is not None:
            return result.error.status, orjson.dumps(error_body(result.error, transform)), \
                warnings
        action = self.spec.action
        if action == "list":
            items = result.items or []
            if transform is not None:
                items = [transform.item(item) for item in items]
                payload: Any = transform.envelope(items, result.meta)
            else:
                payload = list_envelope(items, result.meta)
            return self._status(None), orjson.dumps(payload), warnings
        if action == "delete":
            status = self._status(transform.delete_status if transform else None)
            body = transform.delete_body(result.item) if transform is not None else None
            return status, (b"" if body is None else orjson.dumps(body)), warnings
        if action == "custom":
            value = result.value if result.value is not None else {"success": True}
            return self._status(None), orjson.dumps(value), warnings
        item = result.item
        if transform is not None and item is not None:
            item = transform.item(item)
        override = transform.create_status if transform is not None and action == "create" \
            else None
        return self._status(override), orjson.dumps(item), warnings

    def _status(self, transform_status: int | None) -> int:
        if transform_status is not None:
            return transform_status
        if self.explicit_status is not None:
            return self.explicit_status
        return DEFAULT_STATUS[self.spec.action]

    def _render_headers(self, request: MockRequest, path_params: dict[str, str],
                        state: TemplateState) -> list[tuple[bytes, bytes]]:
        if self._static_headers is not None:
            return list(self._static_headers)
        context = RenderContext(request=request, path_params=path_params,
                                seed=resolve_seed(request, self.seed), state=state)
        return [(name, template.render(context).encode("latin-1", "replace"))
                for name, template in self._headers]

    async def respond(self, request: MockRequest, path_params: dict[str, str],
                      state: TemplateState, send: Send) -> int:
        """Answer from the table; sleeps ``delayMs`` first. Returns the status sent."""
        if self.delay_seconds:
            await asyncio.sleep(self.delay_seconds)
        if self.store.remote:
            status, body, warnings = await self.answer_async(request, path_params)
        else:
            status, body, warnings = self.answer(request, path_params)
        if status in (204, 304):
            body = b""  # these statuses carry no body (RFC 9110 §15.3.5)
        headers = self._render_headers(request, path_params, state)
        if body and not self._has_content_type:
            headers.append((b"content-type", JSON_TYPE))
        if warnings:
            text = " ".join("; ".join(warnings).split())  # one line, whatever the messages
            headers.append((WARNINGS_HEADER, text.encode("latin-1", "replace")))
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body",
                    "body": b"" if request.method == "HEAD" else body})
        return status
