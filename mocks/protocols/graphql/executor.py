"""Executing GraphQL operations of one compiled ``graphql`` mock with graphql-core.

* :class:`DocumentCache`: query text -> parsed, measured and validated document (bounded
  LRU), so a repeated query is parsed and validated once. Each operation is measured against
  the mock's ``limits`` (:mod:`mocks.protocols.graphql.limits`: depth and complexity through
  fragments, aliases) *before* validation, and a long text is parsed and validated on a
  worker thread (:meth:`DocumentCache.prepare`): graphql-core's validation of some documents
  grows quadratically (many same-named fields over many fragments: 12 KB took 1.5 s).
* :class:`CompiledResolver`: one ``resolvers."Type.field"`` entry: variants tried in order
  (``match: {args}``), a templated ``response`` (``{{args.<name>}}``, ``{{request.*}}``,
  ``{{faker.*}}``...), ``delay``, ``error``, or a table action.
* :class:`GraphQLExecutor`: the schema and the resolvers; :meth:`GraphQLExecutor.execute`
  runs one operation. Answers that provably depend on nothing but the query text, the
  operation name and the variables (static responses, templates reading only ``args.*``,
  values read from those, static errors) are kept in a bounded result memo
  (:meth:`GraphQLExecutor.remembered`), so a repeated query of that kind skips execution;
  anything that reads the request, time, random or fake data, a sequence, a table, or waits
  (``delay``) runs every time. A field with no resolver reads its parent's value by field name when
  the parent is an object (a resolver's ``response``, a table item), else answers a fake
  value of its type (:mod:`mocks.protocols.graphql.fake`), seeded per field path when the
  request carries a seed (``?_mock_seed=N``, ``X-Mockd-Seed``). A resolver with a ``match``
  of its own answers only when it fits; otherwise (and no variant fits) the field answers
  as if it had no resolver.
* Introspection-only operations are answered once per schema, query text, operation name
  and variables (:meth:`GraphQLExecutor.introspect`, :mod:`mocks.protocols.graphql.
  introspection`); a federation subgraph's ``_service`` and ``_entities`` by
  :class:`BuiltinAnswer` (:mod:`mocks.protocols.graphql.federation`).
* ``@defer`` and ``@stream`` (schemas that declare them): ignored, their fields answered in
  the one result, unless the caller asks for an incremental run (:meth:`GraphQLExecutor.
  execute`, ``incremental``; the HTTP route does when the client accepts
  ``multipart/mixed``).

Concurrency: single owner (the engine loop); only the pure parse, measurement and validation
of :meth:`DocumentCache.prepare` and the first computation of an introspection answer run
on a worker thread. Only delayed resolvers await. Every field resolution checks the
operation's time budget (``limits.timeoutMs``, kept by its :class:`RunContext`), so one
operation never holds the loop much longer than that; introspection fields are graphql-core's
own and not timed (they run on the worker thread).

Source: behavior notes §10 (``graphql``: resolvers with ``response``, ``delay``,
``match: {args}``, ``error: {message, path, extensions}``; ``introspection`` (false);
"Shapes inside those configs": GraphQL resolver); §4 (seed precedence); SPEC "Templating",
"Extend binding", "Mock".
"""
from __future__ import annotations

import asyncio
import random
import re
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field as dataclass_field
from time import perf_counter
from typing import Any, Callable

import orjson
from graphql import (DocumentNode, ExecutionResult, GraphQLError, GraphQLList, GraphQLNonNull,
                     GraphQLObjectType, GraphQLSchema, OperationDefinitionNode, Source,
                     experimental_execute_incrementally, get_named_type, parse,
                     specified_rules, validate)
from graphql.pyutils import is_awaitable
from graphql.validation import NoSchemaIntrospectionCustomRule

from mocks.core.errors import ConfigError
from mocks.core.request import MockRequest
from mocks.core.templating import (RenderContext, TemplateError, TemplateState,
                                   ValueTemplate, compile_template, compile_value)
from mocks.protocols.graphql.config import (DEFAULT_TIMEOUT_MS, GraphQLMock, QueryLimits,
                                            Resolver, ResolverVariant)
from mocks.protocols.graphql.fake import fake_value
from mocks.protocols.graphql.fastpath import Fallback, plan_query
from mocks.protocols.graphql.federation import builtin_answers
from mocks.protocols.graphql.introspection import (Answer, MemoKey, introspective_operations,
                                                   plain_execute)
from mocks.protocols.graphql.limits import BudgetSpent, limit_errors, measure_document
from mocks.protocols.graphql.schema import LoadedSchema

#: Distinct query texts kept parsed and validated per mock.
DOCUMENT_CACHE_SIZE = 512
#: Longest query text parsed, in characters (longer ones are refused, not cached).
MAX_QUERY_LENGTH = 256 * 1024
#: Longest query text prepared on the event loop, in characters; a longer one (not yet
#: cached) is parsed, measured and validated on a worker thread, so the loop keeps serving.
INLINE_PREPARE_LENGTH = 1024
#: Worker threads preparing long query texts (shared by every mock).
PREPARE_WORKERS = 2
#: Answers kept per mock by (query text, operation name, variables) when they are pure.
RESULT_MEMO_SIZE = 1024
#: A template expression that reads only the field's arguments (``{{args.id}}``).
_ARGS_ONLY = re.compile(r"\{\{\s*args\.[A-Za-z0-9_.\[\]]+\s*\}\}")

_MISSING: Any = object()
_UNSEEDED = random.Random()


# ---------------------------------------------------------------------------- documents


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    """A parsed query text.

    Attributes:
        document: the parsed document (None when it does not parse).
        errors: parse or validation errors (empty: the document is valid for the schema).
        operations: ``{operation name or None: operation}`` of a valid document.
        plans: ``{operation name or None: QueryPlan or None}``, filled by
            :meth:`GraphQLExecutor.execute` on first use (None: graphql-core runs it).
        introspective: the names of its introspection-only operations
            (:func:`~mocks.protocols.graphql.introspection.introspective_operations`),
            answered by :meth:`GraphQLExecutor.introspect`.
    """

    document: DocumentNode | None
    errors: tuple[GraphQLError, ...]
    operations: dict[str | None, OperationDefinitionNode]
    plans: dict[str | None, Any] = dataclass_field(default_factory=dict)
    introspective: frozenset[str | None] = frozenset()

    def operation(self, name: str | None) -> OperationDefinitionNode | str:
        """The operation to run, or the message of why none can be chosen."""
        operations = self.operations
        if name:
            found = operations.get(name)
            return found if found is not None else f"Unknown operation named '{name}'."
        if len(operations) == 1:
            return next(iter(operations.values()))
        return "Must provide operation name if query contains multiple operations."


class DocumentCache:
    """Query text -> :class:`PreparedDocument`, least recently used dropped past
    ``size`` entries.

    Preparing a text: parse (at most 50,000 tokens), measure every operation against
    ``limits`` (:func:`~mocks.protocols.graphql.limits.limit_errors`; a document over a
    limit is not validated), then validate against the schema. Errors of each step are the
    prepared document's ``errors`` and are cached like a valid document.
    """

    __slots__ = ("schema", "rules", "size", "limits", "_entries")

    def __init__(self, schema: GraphQLSchema, introspection: bool,
                 size: int = DOCUMENT_CACHE_SIZE, limits: QueryLimits | None = None):
        self.schema = schema
        self.rules = tuple(specified_rules) if introspection else \
            (*specified_rules, NoSchemaIntrospectionCustomRule)
        self.size = size
        self.limits = limits if limits is not None else QueryLimits()
        self._entries: OrderedDict[str, PreparedDocument] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, text: str) -> PreparedDocument:
        """The prepared document of ``text``, prepared on the calling thread on first
        sight (:meth:`prepare` is what the request paths use)."""
        prepared = self.cached(text)
        if prepared is None:
            prepared = self._keep(text, self._prepare(text))
        return prepared

    async def prepare(self, text: str) -> PreparedDocument:
        """The prepared document of ``text``: from the cache, else prepared on the loop
        when the text is at most :data:`INLINE_PREPARE_LENGTH` characters, else on a worker
        thread (parse, measurement and validation only read the schema and the text)."""
        prepared = self.cached(text)
        if prepared is not None:
            return prepared
        if len(text) <= INLINE_PREPARE_LENGTH or len(text) > MAX_QUERY_LENGTH:
            prepared = self._prepare(text)
        else:
            prepared = await asyncio.get_running_loop().run_in_executor(
                _prepare_pool(), self._prepare, text)
        return self._keep(text, prepared)

    def cached(self, text: str) -> PreparedDocument | None:
        """The prepared document of ``text`` when it is cached, else None (nothing is
        prepared)."""
        entries = self._entries
        prepared = entries.get(text)
        if prepared is not None:
            entries.move_to_end(text)
        return prepared

    def _keep(self, text: str, prepared: PreparedDocument) -> PreparedDocument:
        if len(text) <= MAX_QUERY_LENGTH:
            entries = self._entries
            entries[text] = prepared
            if len(entries) > self.size:
                entries.popitem(last=False)
        return prepared

    def _prepare(self, text: str) -> PreparedDocument:
        if len(text) > MAX_QUERY_LENGTH:
            return PreparedDocument(None, (GraphQLError(
                f"Query text is longer than {MAX_QUERY_LENGTH} characters."),), {})
        try:
            document = parse(Source(text, "GraphQL request"), max_tokens=50_000)
        except GraphQLError as error:
            return PreparedDocument(None, (error,), {})
        # Measured before validation: validation itself grows faster than linearly with
        # some documents, and a document over a limit is refused either way.
        errors = limit_errors(measure_document(self.schema, document), self.limits)
        if not errors:
            errors = validate(self.schema, document, self.rules, max_errors=20)
        operations = {definition.name.value if definition.name else None: definition
                      for definition in document.definitions
                      if isinstance(definition, OperationDefinitionNode)}
        return PreparedDocument(document, tuple(errors), operations, {},
                                introspective_operations(operations) if not errors
                                else frozenset())


_pool: ThreadPoolExecutor | None = None


def _prepare_pool() -> ThreadPoolExecutor:
    """The worker threads of :meth:`DocumentCache.prepare`, made on first use."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(PREPARE_WORKERS, thread_name_prefix="mockd-graphql-prepare")
    return _pool


# ---------------------------------------------------------------------------- resolvers


class RunContext:
    """What resolvers read while one operation runs (graphql-core's ``context_value``).

    Attributes:
        request: the HTTP request (or the WebSocket upgrade request).
        seed: the request's seed, or None.
        state: the engine's template state.
        pure: stays True while every value came from the query text, the operation name
            and the variables alone (the answer may then be remembered).
        budget_ms: the operation's time budget in ms (``limits.timeoutMs``).
        deadline: when the budget's current stretch ends, a :func:`time.perf_counter`
            value in seconds (the first stretch starts now);
            :meth:`GraphQLExecutor.resolve_field` checks it.
        over_budget: set when a field found the budget spent (the answer is then
            :func:`~mocks.protocols.graphql.limits.time_budget_error`, never remembered).
    """

    __slots__ = ("request", "seed", "state", "pure", "budget_ms", "deadline", "over_budget")

    def __init__(self, request: MockRequest, seed: int | None, state: TemplateState,
                 budget_ms: int = DEFAULT_TIMEOUT_MS):
        self.request = request
        self.seed = seed
        self.state = state
        self.pure = True
        self.budget_ms = budget_ms
        self.deadline = perf_counter() + budget_ms / 1000.0
        self.over_budget = False

    def restart_budget(self) -> None:
        """Start a new stretch of the time budget: the loop was free until now (after a
        ``delay``, before a subscription event)."""
        self.deadline = perf_counter() + self.budget_ms / 1000.0

    def rng_for(self, info: Any) -> random.Random:
        """The random stream of one field: the process-wide one, or with a seed, one
        seeded by the seed and the field's response path (same seed, same values)."""
        self.pure = False  # random or fake data
        if self.seed is None:
            return _UNSEEDED
        return random.Random(f"{self.seed}:{_path_text(info.path)}")


def _path_text(path: Any) -> str:
    parts = []
    while path is not None:
        parts.append(str(path.key))
        path = path.prev
    return ".".join(reversed(parts))


def args_match(expected: Any, actual: Any) -> bool:
    """Whether an argument value fits a ``match.args`` value: equal JSON, equal text of
    scalars (``"5"`` fits ``5``), or for objects every expected key fits."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and args_match(value, actual[key]) for key, value in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            args_match(one, other) for one, other in zip(expected, actual))
    if expected == actual and type(expected) is not bool and type(actual) is not bool:
        return True
    return _text(expected) == _text(actual)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


class CompiledVariant:
    """One compiled answer of a resolver (see :class:`ResolverVariant`).

    Attributes:
        match_args: ``match.args`` (empty: always fits).
        response: the compiled ``response`` (None: not given, a fake value answers).
        static: the response value when it has no template (served as is).
        delay_seconds: the wait before answering.
        error: ``(message template, path, extensions)`` or None.
        pure: its answer depends on the field's arguments alone (no request, time, random,
            fake data or sequence in its templates; no delay).
    """

    __slots__ = ("match_args", "response", "static", "delay_seconds", "error", "pure")

    def __init__(self, variant: ResolverVariant, key: str):
        self.match_args = dict(variant.match.args) if variant.match is not None else {}
        self.delay_seconds = variant.delay / 1000.0
        self.response: ValueTemplate | None = None
        self.static: Any = _MISSING
        if "response" in variant.model_fields_set:
            try:
                self.response = compile_value(variant.response)
            except TemplateError as error:
                raise ConfigError(f"{key}.response{error.location}", error.detail) from None
            if self.response.is_static:
                self.static = variant.response
        self.error: tuple[Any, list[str | int] | None, dict[str, Any] | None] | None = None
        if variant.error is not None:
            try:
                message = compile_template(variant.error.message)
            except TemplateError as error:
                raise ConfigError(f"{key}.error.message", str(error)) from None
            self.error = (message, variant.error.path, variant.error.extensions)
        self.pure = not self.delay_seconds and _reads_only_args(
            variant.response if self.response is not None else None) and (
            variant.error is None or _reads_only_args(variant.error.message))

    @property
    def answers(self) -> bool:
        """Whether it gives a value or an error (else the field falls back to fake data)."""
        return self.response is not None or self.error is not None

    def fits(self, args: dict[str, Any]) -> bool:
        """Whether every ``match.args`` entry fits the field's arguments."""
        for name, expected in self.match_args.items():
            actual = args.get(name, _MISSING)
            if actual is _MISSING or not args_match(expected, actual):
                return False
        return True

    def value(self, args: dict[str, Any], info: Any) -> Any:
        """The field's value; raises :class:`GraphQLError` for a configured ``error``."""
        if not self.pure:
            info.context.pure = False
        if self.error is not None:
            message, path, extensions = self.error
            run: RunContext = info.context
            text = message.source if message.is_static else message.render(
                RenderContext(run.request, {}, run.seed, run.state, args))
            raise GraphQLError(text, nodes=info.field_nodes,
                               path=path if path is not None else info.path.as_list(),
                               extensions=extensions)
        if self.static is not _MISSING:
            return self.static
        run = info.context
        return self.response.render(RenderContext(  # type: ignore[union-attr]
            run.request, {}, run.seed, run.state, args))


class TableResolver:
    """A resolver answering from a table (an ``extend`` binding of ``<mock>.<Type>.<field>``
    or ``resolvers."Type.field": {table, action}``).

    ``list``: the arguments (other than ``null`` ones) are the list filters; a list-typed
    field gets the items, another type the list envelope ``{data, meta...}``. ``get``,
    ``update``, ``patch``, ``delete``: the item id is argument ``id_arg``. Writes: the body is
    the ``input`` argument when it is an object, else the other arguments. ``delete``
    answers the removed item, or ``true`` for a ``Boolean`` field. ``custom``: the
    arguments are the operation's input. A table error is a GraphQL error whose
    ``extensions`` carry ``code`` and ``status``.
    """

    __slots__ = ("table", "action", "operation", "id_arg", "store")

    def __init__(self, table: str, action: str, operation: str | None, id_arg: str,
                 store: Any):
        self.table = table
        self.action = action
        self.operation = operation
        self.id_arg = id_arg
        self.store = store

    def value(self, args: dict[str, Any], info: Any) -> Any:
        from tables.store import OperationRequest

        info.context.pure = False  # the table changes under the same query
        action = self.action
        item_id = None
        if action in ("get", "update", "patch", "delete"):
            raw = args.get(self.id_arg)
            if raw is None:
                raise GraphQLError(f"argument '{self.id_arg}' (the item id) is required for "
                                   f"{action}", extensions={"code": "validation_error",
                                                            "status": 400})
            item_id = str(raw)
        body = None
        if action in ("create", "update", "patch"):
            given = args.get("input")
            body = dict(given) if isinstance(given, dict) else {
                name: value for name, value in args.items() if name != self.id_arg}
        elif action == "custom":
            body = dict(args)
        query = None
        if action == "list":
            query = {name: [_text(value) if not isinstance(value, list) else
                            ",".join(_text(one) for one in value)]
                     for name, value in args.items() if value is not None}
        request = OperationRequest(action, self.table, item_id, body, query, None,
                                   self.operation)
        store = self.store
        if store.remote:  # a shared store (Redis): graphql-core awaits the coroutine
            return self._answer_later(store, request, info)
        return self._answer(store.execute(request), info)

    async def _answer_later(self, store: Any, request: Any, info: Any) -> Any:
        return self._answer(await store.execute_async(request), info)

    def _answer(self, result: Any, info: Any) -> Any:
        """The field's value from an operation result; raises :class:`GraphQLError` for a
        table error."""
        action = self.action
        if result.error is not None:
            error = result.error
            raise GraphQLError(error.message, extensions={"code": error.code,
                                                          "status": error.status})
        named = info.return_type.of_type if isinstance(info.return_type, GraphQLNonNull) \
            else info.return_type
        if action == "list":
            items = result.items or []
            if isinstance(named, GraphQLList):
                return items
            from tables.transforms import list_envelope

            return list_envelope(items, result.meta)
        if action == "delete" and getattr(named, "name", "") == "Boolean":
            return True
        if action == "custom":
            return result.value
        return result.item


class EventRoot:
    """The root value of one subscription event: its root field answers
    ``produce(args, info)`` (the event's ``data`` rendered with the field's arguments)."""

    __slots__ = ("produce",)

    def __init__(self, produce: Callable[[dict[str, Any], Any], Any]):
        self.produce = produce


class CompiledResolver:
    """One ``resolvers."Type.field"`` entry, compiled (variants first, then its own answer,
    then a table action).

    Attributes:
        variants: the compiled ``variants``, tried in order.
        own: the resolver's own answer (its ``match``, ``response``, ``error``, ``delay``),
            or None when it gives none of them.
        gated: the resolver has a ``match`` of its own: when it does not fit (and no variant
            does), the field answers as if there were no resolver (no table action either;
            behavior notes §10 "Shapes inside those configs").
        table: the table action, or None.
    """

    __slots__ = ("variants", "own", "gated", "table")

    def __init__(self, variants: tuple[Any, ...], own: Any, table: TableResolver | None):
        self.variants = variants
        self.gated = bool(own is not None and own.match_args)
        self.own = own
        self.table = table

    @classmethod
    def of(cls, resolver: Resolver, key: str, table: TableResolver | None
           ) -> "CompiledResolver":
        """The compiled resolver of config entry ``key``; raises :class:`ConfigError` for a
        bad template."""
        variants = tuple(CompiledVariant(variant, f"{key}.variants[{index}]")
                         for index, variant in enumerate(resolver.variants))
        own = CompiledVariant(resolver, key)
        keep = own.answers or own.delay_seconds or own.match_args
        return cls(variants, own if keep else None, table)

    def choose(self, args: dict[str, Any]) -> CompiledVariant | None:
        """The first variant that fits ``args``, else the resolver's own answer when its
        ``match`` fits (or it has none), else None."""
        for variant in self.variants:
            if variant.fits(args):
                return variant
        own = self.own
        if own is not None and (not self.gated or own.fits(args)):
            return own
        return None


class BuiltinAnswer:
    """An answer the mock gives without a resolver in the config (a federation subgraph's
    ``_service`` and ``_entities``): ``produce(args)`` is the field's value. Quacks like a
    :class:`CompiledVariant` that always fits and depends on the arguments alone."""

    __slots__ = ("produce",)

    match_args: dict[str, Any] = {}
    delay_seconds = 0.0
    answers = True
    pure = True

    def __init__(self, produce: Callable[[dict[str, Any]], Any]):
        self.produce = produce

    def fits(self, args: dict[str, Any]) -> bool:
        """Always."""
        return True

    def value(self, args: dict[str, Any], info: Any) -> Any:
        """The field's value."""
        return self.produce(args)


def _reads_only_args(value: Any) -> bool:
    """Whether every template expression in the strings of ``value`` is ``args.<path>``."""
    if isinstance(value, str):
        return "{{" not in _ARGS_ONLY.sub("", value)
    if isinstance(value, dict):
        return all(_reads_only_args(key) and _reads_only_args(item)
                   for key, item in value.items())
    if isinstance(value, list):
        return all(_reads_only_args(item) for item in value)
    return True


def _delayed(seconds: float, produce: Callable[[], Any], run: RunContext) -> Any:
    async def later() -> Any:
        await asyncio.sleep(seconds)
        run.restart_budget()
        value = produce()
        return await value if _is_awaitable(value) else value  # a table on Redis

    return later()


# ---------------------------------------------------------------------------- executor


class GraphQLExecutor:
    """The schema and resolvers of one ``graphql`` mock (see the module docstring).

    Args:
        config: the mock's ``graphql`` block.
        schema: its built schema.
        key_path: ``mocks[i].graphql`` (errors name keys below it).
        bindings: ``{"Type.field": BindingSpec}`` from ``extend`` (may be empty).
        tables: the engine's table store (None: a throw-away one).

    Raises :class:`ConfigError` for a resolver of a field the schema lacks, a bad template
    or a binding of a field the schema lacks.
    """

    def __init__(self, config: GraphQLMock, schema: LoadedSchema | GraphQLSchema,
                 key_path: str, bindings: dict[str, Any] | None = None, tables: Any = None):
        loaded = schema if isinstance(schema, LoadedSchema) else LoadedSchema(schema, "", "SDL")
        schema = loaded.schema
        #: The loaded schema (its introspection memo, federation additions, text).
        self.loaded = loaded
        self.schema = schema
        #: The schema declares ``@defer`` or ``@stream`` (see :meth:`execute`).
        self.incremental = loaded.incremental
        self.introspection = config.introspection
        #: The mock's ``limits`` (checked by :attr:`documents`; ``timeout_ms`` is the time
        #: budget of each :class:`RunContext`).
        self.limits = config.limits
        self.documents = DocumentCache(schema, config.introspection, limits=config.limits)
        #: ``(query text, operation name, variables JSON) -> (status, response document)``.
        self.memo: OrderedDict[tuple[str, str | None, bytes], tuple[int, dict[str, Any]]] = \
            OrderedDict()
        if tables is None and (bindings or config.binds_tables):
            from tables.store import TableStore

            tables = TableStore()
        #: ``{type name: {field name: CompiledResolver}}``.
        self.resolvers: dict[str, dict[str, CompiledResolver]] = {}
        for key, resolver in config.resolvers.items():
            where = f"{key_path}.resolvers.{key}"
            _field_of(schema, key, where)
            table = None
            if resolver.action is not None:
                table = TableResolver(resolver.table or "", resolver.action, resolver.operation,
                                      resolver.id_arg, tables)
            self._add(key, CompiledResolver.of(resolver, where, table))
        for key, spec in (bindings or {}).items():
            _field_of(schema, key, spec.source + ".mock")
            current = self._resolver(key)
            table = TableResolver(spec.table, spec.action, spec.operation,
                                  config.resolvers[key].id_arg if key in config.resolvers
                                  else "id", tables)
            if current is None:
                current = CompiledResolver((), None, None)
                self._add(key, current)
            current.table = table
        if loaded.federation is not None:
            for key, produce in builtin_answers(loaded.federation, loaded.text).items():
                if self._resolver(key) is None:
                    self._add(key, CompiledResolver((), BuiltinAnswer(produce), None))

    def field_allowed(self, type_name: str, field_name: str) -> bool:
        """Whether a :class:`~mocks.protocols.graphql.fastpath.QueryPlan` may resolve this
        field: False when its resolver waits (``delay``) or writes to a table."""
        resolver = self.resolvers.get(type_name, {}).get(field_name)
        if resolver is None:
            return True
        answers = (*resolver.variants, resolver.own) if resolver.own else resolver.variants
        if any(answer.delay_seconds for answer in answers):
            return False
        return resolver.table is None or resolver.table.action in ("get", "list")

    def has_resolver(self, type_name: str, field_name: str) -> bool:
        """Whether ``Type.field`` has a resolver (else :meth:`resolve_field` answers the
        parent object's entry of that name, or a fake value)."""
        return field_name in self.resolvers.get(type_name, {})

    def _add(self, key: str, resolver: CompiledResolver) -> None:
        type_name, _, field_name = key.partition(".")
        self.resolvers.setdefault(type_name, {})[field_name] = resolver

    def _resolver(self, key: str) -> CompiledResolver | None:
        type_name, _, field_name = key.partition(".")
        return self.resolvers.get(type_name, {}).get(field_name)

    # -------------------------------------------------------------- graphql-core callbacks

    def resolve_field(self, parent: Any, info: Any, **args: Any) -> Any:
        """graphql-core's field resolver: configured resolver, else the parent's value by
        field name, else a fake value of the field's type (a subscription event's root
        field: the event's value)."""
        run = info.context
        if perf_counter() > run.deadline:
            run.over_budget = True
            raise BudgetSpent(f"the time budget of {run.budget_ms} ms is spent")
        if parent.__class__ is EventRoot:
            return parent.produce(args, info)
        by_field = self.resolvers.get(info.parent_type.name)
        if by_field is not None:
            resolver = by_field.get(info.field_name)
            if resolver is not None:
                variant = resolver.choose(args)
                if variant is not None and variant.answers:
                    if variant.delay_seconds:
                        return _delayed(variant.delay_seconds,
                                        lambda: variant.value(args, info), run)
                    return variant.value(args, info)
                table = resolver.table
                if table is not None and (variant is not None or not resolver.gated):
                    if variant is not None and variant.delay_seconds:
                        return _delayed(variant.delay_seconds, lambda: table.value(args, info),
                                        run)
                    return table.value(args, info)
                if variant is not None and variant.delay_seconds:
                    run.pure = False
                    return _delayed(variant.delay_seconds,
                                    lambda: self._default(parent, info), run)
        return self._default(parent, info)

    def _default(self, parent: Any, info: Any) -> Any:
        if type(parent) is dict:
            value = parent.get(info.field_name, _MISSING)
            if value is not _MISSING:
                return value
        return fake_value(info.return_type, info.field_name, info.context.rng_for(info),
                          self.schema)

    def resolve_type(self, value: Any, info: Any, abstract_type: Any) -> str | None:
        """The object type of an interface or union value: its ``__typename``, else the
        possible type sharing most keys with it."""
        possible = self.schema.get_possible_types(abstract_type)
        if isinstance(value, dict):
            name = value.get("__typename")
            if isinstance(name, str):
                return name
            if value and possible:
                keys = value.keys()
                return max(possible, key=lambda kind: len(keys & kind.fields.keys())).name
        if possible:
            return info.context.rng_for(info).choice(possible).name
        return None

    # -------------------------------------------------------------- running

    def remembered(self, key: tuple[str, str | None, bytes]) -> tuple[int, dict[str, Any]] | None:
        """The remembered ``(status, response document)`` of a pure answer, or None."""
        found = self.memo.get(key)
        if found is not None:
            self.memo.move_to_end(key)
        return found

    def remember(self, key: tuple[str, str | None, bytes], answer: tuple[int, dict[str, Any]]
                 ) -> None:
        """Keep a pure answer (the least recently used one goes past
        :data:`RESULT_MEMO_SIZE`)."""
        self.memo[key] = answer
        if len(self.memo) > RESULT_MEMO_SIZE:
            self.memo.popitem(last=False)

    def execute(self, document: DocumentNode, operation_name: str | None,
                variables: dict[str, Any] | None, run: RunContext,
                root_value: Any = None, prepared: PreparedDocument | None = None,
                variables_key: bytes | None = None, incremental: bool = False) -> Any:
        """Run one operation of a valid ``document``: an :class:`ExecutionResult`, or an
        awaitable of one when a resolver waits (``delay``). ``variables_key``: the
        variables as JSON with sorted keys, when the caller has it.

        With ``prepared`` (the document's :class:`PreparedDocument`) and no ``root_value``,
        a query of the common shape runs on its :class:`~mocks.protocols.graphql.fastpath.
        QueryPlan` (made once per operation), graphql-core running whatever the plan does
        not answer exactly (:class:`~mocks.protocols.graphql.fastpath.Fallback`).

        ``@defer`` and ``@stream`` are ignored (their fields come in the one result) unless
        ``incremental``: then graphql-core's incremental executor runs it, and an operation
        that defers or streams something gives an ``ExperimentalIncrementalExecutionResults``
        (an initial result and an async iterator of the later ones)."""
        if incremental:
            return experimental_execute_incrementally(
                self.schema, document, root_value=root_value, context_value=run,
                variable_values=variables, operation_name=operation_name,
                field_resolver=self.resolve_field, type_resolver=self.resolve_type,
                is_awaitable=_is_awaitable)
        if prepared is not None and root_value is None:
            plans = prepared.plans
            if operation_name in plans:
                plan = plans[operation_name]
            else:
                operation = prepared.operation(operation_name)
                plan = plans[operation_name] = plan_query(
                    self.schema, operation, self.field_allowed, self.has_resolver) \
                    if not isinstance(operation, str) else None
            if plan is not None:
                try:
                    return plan.run(self.resolve_field, run, variables, variables_key)
                except Fallback:
                    pass
        return plain_execute(self.schema, document, root_value=root_value, context_value=run,
                             variable_values=variables, operation_name=operation_name,
                             field_resolver=self.resolve_field,
                             type_resolver=self.resolve_type, is_awaitable=_is_awaitable)

    async def introspect(self, query: str, prepared: PreparedDocument, name: str | None,
                         variables: dict[str, Any] | None,
                         variables_key: bytes | None = None) -> Answer:
        """``(status, response document)`` of an introspection-only operation ``name`` of
        ``prepared`` (one of ``prepared.introspective``), computed once per schema, query
        text, operation name and variables
        (:class:`~mocks.protocols.graphql.introspection.IntrospectionMemo`; not subject to
        the time budget: the first computation runs on a worker thread)."""
        key: MemoKey = (query, name, variables_key if variables_key is not None else
                        orjson.dumps(variables, option=orjson.OPT_SORT_KEYS))
        return await self.loaded.introspection.answer(
            prepared.document, name, variables, key, _prepare_pool())  # type: ignore[arg-type]


#: Types of the values resolvers return that are never awaitable (JSON-like data).
_PLAIN_TYPES = frozenset((dict, list, str, int, float, bool, type(None)))


def _is_awaitable(value: Any) -> bool:
    """graphql-core's ``is_awaitable`` with a shortcut for plain data: the executor asks it
    of every field's value (and list item), and resolvers return JSON-like data except for
    a ``delay`` (a coroutine), which the full check still sees."""
    return value.__class__ not in _PLAIN_TYPES and is_awaitable(value)


def _field_of(schema: GraphQLSchema, key: str, where: str) -> Any:
    """The field ``Type.field`` of ``schema``; raises :class:`ConfigError` at ``where``."""
    type_name, _, field_name = key.partition(".")
    kind = schema.type_map.get(type_name)
    if not isinstance(kind, GraphQLObjectType):
        objects = sorted(name for name, value in schema.type_map.items()
                         if isinstance(value, GraphQLObjectType) and not name.startswith("__"))
        raise ConfigError(where, f"the schema has no object type {type_name!r} "
                                 f"(object types: {', '.join(objects)})")
    field = kind.fields.get(field_name)
    if field is None:
        raise ConfigError(where, f"type {type_name} has no field {field_name!r} "
                                 f"(fields: {', '.join(kind.fields)})")
    return field


async def run_to_result(outcome: Any) -> ExecutionResult:
    """``outcome`` of :meth:`GraphQLExecutor.execute`, awaited when it is awaitable."""
    if is_awaitable(outcome):
        return await outcome
    return outcome


def result_document(result: ExecutionResult) -> dict[str, Any]:
    """The response document ``{data, errors?}`` of an execution result."""
    document: dict[str, Any] = {"data": result.data}
    if result.errors:
        document["errors"] = [error.formatted for error in result.errors]
    return document


def named_type_name(output_type: Any) -> str:
    """The name of the named type under list and non-null wrappers."""
    return get_named_type(output_type).name
