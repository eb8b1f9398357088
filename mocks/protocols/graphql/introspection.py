"""Introspection answered once per schema: GraphiQL, Postman, Apollo Sandbox and codegen
tools send the same introspection query on every page load, and for a schema of GitHub's
size (1,600 types, 30,000 fields) graphql-core takes seconds to compute its answer.

An operation is *introspection-only* (:func:`introspective_operations`) when it is a query
whose root selections are all ``__schema``, ``__type`` or ``__typename`` fields without
directives, at least one of them ``__schema`` or ``__type``. Its answer depends on the schema,
the query text, the operation name and the variables alone, so :class:`IntrospectionMemo`
computes it once per such key and keeps the answer already serialized
(``orjson.Fragment``), so a repeated query costs a dictionary look-up and a copy of bytes.

The first computation runs on a worker thread (the introspection resolvers are
graphql-core's own and only read the schema), so the event loop keeps serving meanwhile;
concurrent requests for the same key wait for the one computation. It is therefore *not*
subject to the mock's time budget (``limits.timeoutMs``, which bounds how long an operation
holds the loop): it does not hold the loop, its size is bounded by the schema (loaded by the
mock's own author) and the query's shape is bounded by the other limits (``maxDepth``,
``maxComplexity``, ``maxAliases``), checked before.

Source: behavior notes §10 (``introspection`` (false): when true, ``__schema`` / ``__type``
queries are answered); the GraphQL spec §4 (introspection). Django-free.
"""
from __future__ import annotations

import asyncio
from collections import OrderedDict
from concurrent.futures import Executor as ThreadPool
from typing import Any

import orjson
from graphql import (DocumentNode, FieldNode, GraphQLSchema, OperationDefinitionNode,
                     OperationType, experimental_execute_incrementally)
from graphql.execution import Executor

#: Distinct introspection answers kept per schema (each is the serialized answer; the full
#: introspection of GitHub's schema is about 5 MB).
INTROSPECTION_MEMO_SIZE = 8
#: Root fields of an introspection-only operation.
_META_FIELDS = frozenset({"__schema", "__type", "__typename"})

#: ``(query text, operation name, variables as JSON with sorted keys)``.
MemoKey = tuple[str, str | None, bytes]
#: ``(HTTP status, response document)``.
Answer = tuple[int, dict[str, Any]]


def introspective_operations(operations: dict[str | None, OperationDefinitionNode]
                             ) -> frozenset[str | None]:
    """The names (None: anonymous) of the introspection-only operations among
    ``operations`` (see the module docstring)."""
    found = []
    for name, operation in operations.items():
        if operation.operation is not OperationType.QUERY or operation.directives:
            continue
        selections = operation.selection_set.selections
        if selections and all(
                isinstance(selection, FieldNode) and selection.name.value in _META_FIELDS
                and not selection.directives for selection in selections) and any(
                selection.name.value != "__typename" for selection in selections):
            found.append(name)
    return frozenset(found)


def plain_execute(schema: GraphQLSchema, document: DocumentNode, **options: Any) -> Any:
    """graphql-core's execution of one operation without incremental delivery: ``@defer``
    and ``@stream`` are ignored (their fields are answered in the one result), so a schema
    that declares them serves every operation. Takes the keyword arguments of
    :func:`graphql.execute`; returns an ``ExecutionResult`` or an awaitable of one."""
    return experimental_execute_incrementally(schema, document, executor_class=Executor,
                                              **options)


class IntrospectionMemo:
    """Answers of introspection-only operations of one schema (see the module docstring),
    least recently used dropped past ``size``.

    Concurrency: owned by the engine's event loop; only :meth:`compute` runs on a worker
    thread.
    """

    __slots__ = ("schema", "size", "answers", "pending")

    def __init__(self, schema: GraphQLSchema, size: int = INTROSPECTION_MEMO_SIZE):
        self.schema = schema
        self.size = size
        self.answers: OrderedDict[MemoKey, Answer] = OrderedDict()
        #: Computations under way, by key (later requests for the key wait for them).
        self.pending: dict[MemoKey, asyncio.Future[Answer]] = {}

    def cached(self, key: MemoKey) -> Answer | None:
        """The kept answer of ``key``, or None."""
        found = self.answers.get(key)
        if found is not None:
            self.answers.move_to_end(key)
        return found

    async def answer(self, document: DocumentNode, operation_name: str | None,
                     variables: dict[str, Any] | None, key: MemoKey,
                     pool: ThreadPool) -> Answer:
        """``(status, response document)`` of the operation: kept, else computed on a
        thread of ``pool`` (once, however many requests ask meanwhile) and kept."""
        found = self.cached(key)
        if found is not None:
            return found
        pending = self.pending.get(key)
        if pending is None:
            pending = self.pending[key] = asyncio.ensure_future(
                self._compute_and_keep(document, operation_name, variables, key, pool))
        # Shielded: a client that goes away does not cancel the others' computation.
        return await asyncio.shield(pending)

    async def _compute_and_keep(self, document: DocumentNode, operation_name: str | None,
                                variables: dict[str, Any] | None, key: MemoKey,
                                pool: ThreadPool) -> Answer:
        try:
            found = await asyncio.get_running_loop().run_in_executor(
                pool, self.compute, document, operation_name, variables)
        finally:
            self.pending.pop(key, None)
        self.answers[key] = found
        if len(self.answers) > self.size:
            self.answers.popitem(last=False)
        return found

    def compute(self, document: DocumentNode, operation_name: str | None,
                variables: dict[str, Any] | None) -> Answer:
        """Run the operation: ``(200, {"data": <serialized>, "errors"?})``, or 400 with
        ``data: null`` when the request itself is wrong (variables that do not fit). Pure;
        any thread."""
        result = plain_execute(self.schema, document, variable_values=variables,
                               operation_name=operation_name)
        data = result.data
        answer: dict[str, Any] = {"data": None if data is None
                                  else orjson.Fragment(orjson.dumps(data))}
        if result.errors:
            answer["errors"] = [error.formatted for error in result.errors]
        return (400 if data is None else 200), answer
