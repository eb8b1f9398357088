"""A lean executor for the common GraphQL query, with graphql-core as the fallback.

graphql-core's ``execute`` spends most of a mock's answer on machinery a plain query does not
need (an execution context, field collection, resolve info and value completion through
generic code paths: about 85 µs for a 6-field query). :class:`QueryPlan` covers the shape
most mock traffic has and answers it with the same resolvers (``GraphQLExecutor.
resolve_field``) and the same value completion rules:

* a ``query`` operation whose selections are plain fields (aliases allowed, ``__typename``
  allowed): no fragments, no ``@include``/``@skip`` or other directives, no field selected
  twice under one response key, no introspection field other than ``__typename``;
* every selected field has an object, scalar or enum type (under list and non-null
  wrappers): no interfaces or unions;
* no selected field has a resolver with a ``delay`` or a table action that writes.

A plan is built once per query text and operation (kept with the parsed document) or found
not to apply (None). Running it: variables and arguments are coerced by graphql-core's own
``get_variable_values`` / ``get_argument_values`` (once per distinct variable set, at most
:data:`MAX_COERCED_VARIABLES` kept per plan); a field without a resolver whose parent is an
object holding its name takes that value without a call (what the resolver would answer);
leaf values are serialized by each type's own ``serialize`` (so ``"42"`` for an ``Int`` gives
42, as graphql-core does), the common cases inline (:meth:`_Runner.leaf`). Anything the plan
does not reproduce exactly raises :class:`Fallback`, and the caller runs graphql-core on the
same request instead: a resolver error (errors, paths and null propagation are
graphql-core's), a null for a non-null type, a value that does not serialize, a list that is
not a ``list``, an awaitable value, invalid variables. Since only queries without table writes
are planned, running the resolvers again has no effect beyond drawing new random values (and
advancing a ``{{sequence}}`` once more when a query fails that way).

Equal output to graphql-core for every planned query is checked by a differential test over
a 30-type schema (``tests/unit/test_graphql_fastpath.py``).

Source: issue "GraphQL mocks" (benchmark: a 5-field query); GraphQL spec §6 (execution:
fields in selection order, ``__typename``, value completion). Django-free.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import isfinite
from typing import Any, Callable

import orjson
from graphql import (ExecutionResult, FieldNode, GraphQLBoolean, GraphQLEnumType, GraphQLFloat,
                     GraphQLID, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType,
                     GraphQLScalarType, GraphQLSchema, GraphQLString, OperationDefinitionNode,
                     OperationType)
from graphql.execution.values import get_argument_values, get_variable_values
from graphql.pyutils import Path, Undefined, is_awaitable

#: Distinct variable sets kept coerced per plan, and the longest (JSON bytes) kept.
MAX_COERCED_VARIABLES = 64
MAX_COERCED_VARIABLES_BYTES = 4096
_MISSING: Any = object()
#: Values resolvers return that are never awaitable.
_PLAIN_TYPES = frozenset((dict, list, str, int, float, bool, type(None)))


class Fallback(Exception):
    """The plan cannot answer this request exactly: run graphql-core instead."""


@dataclass(slots=True)
class FieldInfo:
    """What a resolver reads of graphql-core's ``GraphQLResolveInfo`` (same attribute
    names)."""

    field_name: str
    field_nodes: tuple[FieldNode, ...]
    return_type: Any
    parent_type: GraphQLObjectType
    path: Path
    context: Any
    schema: GraphQLSchema


@dataclass(slots=True)
class _Field:
    """One selected field: response key, name, its node (as ``field_nodes``), definition
    (None for ``__typename``), constant arguments (None: coerced per request), the plan of
    its selections (object types), and ``direct``: it has no resolver, so its value is the
    parent object's entry of the same name when there is one (the executor's default)."""

    key: str
    name: str
    nodes: tuple[FieldNode, ...]
    definition: Any
    args: dict[str, Any] | None
    selections: tuple[_Field, ...] | None
    direct: bool = False


class QueryPlan:
    """The plan of one query operation (see the module docstring); build it with
    :func:`plan_query`."""

    __slots__ = ("schema", "operation", "root", "fields", "variables_needed", "coerced",
                 "enum_names")

    def __init__(self, schema: GraphQLSchema, operation: OperationDefinitionNode,
                 root: GraphQLObjectType, fields: tuple[_Field, ...]):
        self.schema = schema
        self.operation = operation
        self.root = root
        self.fields = fields
        self.variables_needed = bool(operation.variable_definitions)
        #: variables JSON (sorted keys) -> (coerced values, {id(field): its arguments}),
        #: for repeated variables.
        self.coerced: dict[bytes, tuple[Any, dict[int, dict[str, Any]]]] = {}
        #: enum type -> {internal value: name} (see :meth:`_Runner.leaf`).
        self.enum_names: dict[Any, dict[Any, str]] = {}

    def run(self, resolve: Callable[..., Any], context: Any,
            variables: dict[str, Any] | None,
            variables_key: bytes | None = None) -> ExecutionResult:
        """``ExecutionResult(data)`` of the operation, every field resolved by ``resolve``
        (``resolve(parent, info, **args)``) and completed as graphql-core does.
        ``variables_key``: ``variables`` as JSON with sorted keys, when the caller has it.
        Raises :class:`Fallback` (see the module docstring)."""
        coerced = None
        arguments: dict[int, dict[str, Any]] = {}
        if self.variables_needed or variables:
            key = variables_key if variables_key is not None else orjson.dumps(
                variables, option=orjson.OPT_SORT_KEYS) if variables else b"null"
            known = self.coerced.get(key)
            if known is None:
                coerced = get_variable_values(self.schema,
                                              self.operation.variable_definitions or (),
                                              variables or {})
                if isinstance(coerced, list):
                    raise Fallback  # graphql-core reports the variable errors
                if len(self.coerced) < MAX_COERCED_VARIABLES and \
                        len(key) <= MAX_COERCED_VARIABLES_BYTES:
                    self.coerced[key] = (coerced, arguments)
            else:
                coerced, arguments = known
        runner = _Runner(resolve, context, coerced, self.schema, self.enum_names, arguments)
        return ExecutionResult(runner.fields(self.root, None, self.fields, None), None)


@dataclass(slots=True)
class _Runner:
    resolve: Callable[..., Any]
    context: Any
    variables: Any
    schema: GraphQLSchema
    enum_names: dict[Any, dict[Any, str]]
    #: id(field) -> its coerced arguments under these variables (filled as they are met).
    arguments: dict[int, dict[str, Any]]

    def fields(self, parent_type: GraphQLObjectType, parent: Any, fields: tuple[_Field, ...],
               path: Path | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        type_name = parent_type.name
        for field in fields:
            if field.definition is None:  # __typename
                out[field.key] = type_name
                continue
            field_path = Path(path, field.key, type_name)
            if field.direct and parent.__class__ is dict:
                value = parent.get(field.name, _MISSING)
                if value is not _MISSING:
                    out[field.key] = self.complete(field.definition.type, value, field,
                                                   field_path)
                    continue
            args = field.args
            if args is None:
                args = self.arguments.get(id(field))
                if args is None:
                    try:
                        args = get_argument_values(field.definition, field.nodes[0],
                                                   self.variables)
                    except Exception:  # noqa: BLE001 - graphql-core reports it
                        raise Fallback from None
                    self.arguments[id(field)] = args
            return_type = field.definition.type
            info = FieldInfo(field.name, field.nodes, return_type, parent_type, field_path,
                             self.context, self.schema)
            try:
                value = self.resolve(parent, info, **args)
            except Exception:  # noqa: BLE001 - errors and their paths are graphql-core's
                raise Fallback from None
            if value.__class__ not in _PLAIN_TYPES and is_awaitable(value):
                close = getattr(value, "close", None)
                if close is not None:
                    close()  # never awaited: graphql-core's run makes its own
                raise Fallback
            out[field.key] = self.complete(return_type, value, field, field_path)
        return out

    def complete(self, return_type: Any, value: Any, field: _Field, path: Path) -> Any:
        if return_type.__class__ is GraphQLNonNull:
            completed = self.complete(return_type.of_type, value, field, path)
            if completed is None:
                raise Fallback  # null propagation is graphql-core's
            return completed
        if value is None:
            return None
        kind = return_type.__class__
        if kind is GraphQLList:
            if value.__class__ is not list:
                raise Fallback
            item_type = return_type.of_type
            return [self.complete(item_type, item, field, Path(path, index, None))
                    for index, item in enumerate(value)]
        if kind is GraphQLObjectType:
            return self.fields(return_type, value, field.selections or (), path)
        return self.leaf(return_type, value)

    def leaf(self, return_type: Any, value: Any) -> Any:
        """``return_type.serialize(value)`` (graphql-core's rules), with the common cases
        answered without the call: a ``str`` for ``String`` and ``ID``, an ``int`` for
        ``ID`` (its text) and a 32-bit ``Int``, a finite ``float`` for ``Float``, a ``bool``
        for ``Boolean``, an enum's internal value (its name)."""
        cls = value.__class__
        if return_type is GraphQLString or return_type is GraphQLID:
            if cls is str:
                return value
            if cls is int and return_type is GraphQLID:
                return str(value)
        elif return_type is GraphQLInt:
            if cls is int and -2147483648 <= value <= 2147483647:
                return value
        elif return_type is GraphQLFloat:
            if cls is float and isfinite(value):
                return value
        elif return_type is GraphQLBoolean:
            if cls is bool:
                return value
        elif return_type.__class__ is GraphQLEnumType and cls is str:
            names = self.enum_names.get(return_type)
            if names is None:
                names = self.enum_names[return_type] = {
                    enum_value.value: name for name, enum_value in return_type.values.items()
                    if enum_value.value.__class__ is str}
            name = names.get(value)
            if name is not None:
                return name
        try:
            serialized = return_type.serialize(value)
        except Exception:  # noqa: BLE001 - graphql-core reports it
            raise Fallback from None
        if serialized is None or serialized is Undefined:
            raise Fallback
        return serialized


def plan_query(schema: GraphQLSchema, operation: OperationDefinitionNode,
               field_allowed: Callable[[str, str], bool],
               has_resolver: Callable[[str, str], bool] = lambda kind, name: True
               ) -> QueryPlan | None:
    """The plan of ``operation``, or None when it is not a query the plan answers exactly
    (see the module docstring). ``field_allowed(type name, field name)`` is False for a
    field whose resolver waits or writes to a table; ``has_resolver(type name, field name)``
    is False for a field the resolver answers with the parent object's entry of that name
    when the parent is a dict holding it (that value is then read without a call)."""
    if operation.operation is not OperationType.QUERY or operation.directives:
        return None
    root = schema.query_type
    if root is None:
        return None
    fields = _plan_fields(schema, root, operation.selection_set, field_allowed, has_resolver,
                          0)
    return QueryPlan(schema, operation, root, fields) if fields is not None else None


def _plan_fields(schema: GraphQLSchema, parent: GraphQLObjectType, selection_set: Any,
                 field_allowed: Callable[[str, str], bool],
                 has_resolver: Callable[[str, str], bool],
                 depth: int) -> tuple[_Field, ...] | None:
    if selection_set is None or depth > 64:
        return None
    planned: list[_Field] = []
    keys: set[str] = set()
    for selection in selection_set.selections:
        if selection.__class__ is not FieldNode or selection.directives:
            return None
        name = selection.name.value
        key = selection.alias.value if selection.alias else name
        if key in keys:
            return None  # merging fields under one key is graphql-core's
        keys.add(key)
        if name == "__typename":
            if selection.arguments:
                return None
            planned.append(_Field(key, name, (selection,), None, {}, None))
            continue
        if name.startswith("__"):
            return None
        definition = parent.fields.get(name)
        if definition is None or not field_allowed(parent.name, name):
            return None
        named = definition.type
        while named.__class__ in (GraphQLNonNull, GraphQLList):
            named = named.of_type
        selections = None
        if named.__class__ is GraphQLObjectType:
            selections = _plan_fields(schema, named, selection.selection_set, field_allowed,
                                      has_resolver, depth + 1)
            if selections is None:
                return None
        elif named.__class__ not in (GraphQLScalarType, GraphQLEnumType) or \
                selection.selection_set is not None:
            return None
        # Arguments written as literals (no variables) and no defaults to apply: coerced
        # once here; anything else per request.
        args = None
        if not selection.arguments and not definition.args:
            args = {}
        planned.append(_Field(key, name, (selection,), definition, args, selections,
                              not has_resolver(parent.name, name)))
    return tuple(planned)
