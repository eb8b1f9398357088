"""Cost limits of GraphQL requests: what a query may ask before it runs, and how long it may
hold the server's event loop while it runs.

Before a document is validated or executed, :func:`measure_document` walks its AST once and
:func:`limit_errors` compares every operation of it (like validation, whichever operation
the request names) with the mock's ``limits``
(:class:`~mocks.protocols.graphql.config.QueryLimits`):

* **depth** (``maxDepth``): the deepest nesting of fields, counted *through* fragment spreads
  and inline fragments (a spread or an inline fragment adds no level of its own; each field
  does: ``{ me { name } }`` is 2 deep);
* **complexity** (``maxComplexity``): the estimated number of fields in the answer, with
  every fragment spread expanded: each selected field counts 1, and the fields under a list
  count once per expected item, :data:`LIST_ESTIMATE` per list wrapper (``[User]`` x3,
  ``[[Int]]`` x9), the most items a fake list holds. On an interface or a union every
  type-conditioned branch counts (an upper bound);
* **aliases** (``maxAliases``): aliased fields with every fragment spread expanded (a
  fragment holding 3 aliases, spread 4 times, counts 12).

The walk is linear in the size of the document: each fragment definition is measured once
and its figures are reused at every spread (they do not depend on where it is spread).
Figures saturate at :data:`SATURATION`, so an exponential expansion is measured without
building big numbers. A fragment that spreads itself (directly or through others) adds
nothing here and is then refused by validation ("Cannot spread fragment ... within itself").
Selections nested deeper than :data:`MAX_NESTING` levels (fields, spreads and inline
fragments together) stop the walk: that query is refused as too deep.

During execution a time budget (``timeoutMs``, kept by the executor's ``RunContext``)
bounds how long one operation holds the loop without pausing (waits of a resolver's
``delay`` do not count): every field resolution checks it, and once it is spent every
further field fails at once with :class:`BudgetSpent`, so the operation ends within about
one field's time; the caller then answers :func:`time_budget_error` instead of a partial
result.

Source: SPEC "Mock" (``graphql`` mocks; their fields are not shown) and "Limits"
(request-size limits are not shown, so these are the project's own); behavior notes §10
(``graphql`` row); the GraphQL spec §5 (validation: fragment spreads) and §6 (execution). Django-free; the functions are
pure and may run on a worker thread (they only read the schema and the document).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql import (DocumentNode, FieldNode, FragmentDefinitionNode, FragmentSpreadNode,
                     GraphQLError, GraphQLInterfaceType, GraphQLList, GraphQLNonNull,
                     GraphQLObjectType, GraphQLSchema, InlineFragmentNode,
                     OperationDefinitionNode, OperationType, SchemaMetaFieldDef,
                     TypeMetaFieldDef)

from mocks.protocols.graphql.config import QueryLimits

#: Items a list field is expected to hold in the complexity estimate (a fake list holds 2
#: or 3 items).
LIST_ESTIMATE = 3
#: Figures stop growing here (a fragment expansion can be exponential in the text's size).
SATURATION = 10 ** 12
#: Selections nested deeper than this (fields, fragment spreads and inline fragments along
#: one path) stop the measurement: the query counts as too deep. It bounds the recursion.
MAX_NESTING = 250
#: The ``extensions.code`` of an answer refused by a limit.
LIMIT_CODE = "QUERY_TOO_COMPLEX"
#: The ``extensions.code`` of an answer stopped by the time budget.
TIMEOUT_CODE = "QUERY_TIMEOUT"


@dataclass(frozen=True, slots=True)
class QueryCost:
    """The measured cost of one operation (see the module docstring).

    Attributes:
        depth: deepest nesting of fields, through fragments (``MAX_NESTING + 1`` when the
            walk stopped there).
        complexity: estimated fields in the answer, fragments expanded, lists counted
            :data:`LIST_ESTIMATE` times (at most :data:`SATURATION`).
        aliases: aliased fields, fragments expanded (at most :data:`SATURATION`).
    """

    depth: int
    complexity: int
    aliases: int


class _TooDeep(Exception):
    """The walk went past :data:`MAX_NESTING` levels."""


class _Walk:
    """One measurement of a document: fragment figures memoised by name."""

    __slots__ = ("schema", "fragments", "memo", "active")

    def __init__(self, schema: GraphQLSchema, fragments: dict[str, FragmentDefinitionNode]):
        self.schema = schema
        self.fragments = fragments
        #: fragment name -> (depth, complexity, aliases) of its selection set.
        self.memo: dict[str, tuple[int, int, int]] = {}
        #: fragments being measured (a spread of one of them is a cycle).
        self.active: set[str] = set()

    def selection_set(self, selection_set: Any, parent: Any, level: int
                      ) -> tuple[int, int, int]:
        """``(depth, complexity, aliases)`` of a selection set whose parent type is
        ``parent`` (None: unknown, for a document that will fail validation)."""
        if level > MAX_NESTING:
            raise _TooDeep
        depth = complexity = aliases = 0
        for selection in selection_set.selections:
            kind = selection.__class__
            if kind is FieldNode:
                field_type = self._field_type(parent, selection.name.value)
                factor = 1
                named = field_type
                while named is not None and named.__class__ in (GraphQLNonNull, GraphQLList):
                    if named.__class__ is GraphQLList:
                        factor *= LIST_ESTIMATE
                    named = named.of_type
                one_depth, one_complexity = 1, 1
                if selection.alias is not None:
                    aliases += 1
                if selection.selection_set is not None:
                    below = self.selection_set(selection.selection_set, named, level + 1)
                    one_depth += below[0]
                    one_complexity += factor * below[1]
                    aliases += below[2]
                depth = max(depth, one_depth)
                complexity += one_complexity
            elif kind is FragmentSpreadNode:
                below = self.fragment(selection.name.value, level)
                depth = max(depth, below[0])
                complexity += below[1]
                aliases += below[2]
            elif kind is InlineFragmentNode:
                condition = selection.type_condition
                below = self.selection_set(
                    selection.selection_set,
                    self.schema.get_type(condition.name.value) if condition else parent,
                    level + 1)
                depth = max(depth, below[0])
                complexity += below[1]
                aliases += below[2]
        return depth, min(complexity, SATURATION), min(aliases, SATURATION)

    def fragment(self, name: str, level: int) -> tuple[int, int, int]:
        """The figures of fragment ``name`` (zero for an unknown one or a cycle: validation
        reports those)."""
        known = self.memo.get(name)
        if known is not None:
            return known
        definition = self.fragments.get(name)
        if definition is None or name in self.active:
            return 0, 0, 0
        self.active.add(name)
        try:
            condition = self.schema.get_type(definition.type_condition.name.value)
            figures = self.selection_set(definition.selection_set, condition, level + 1)
        finally:
            self.active.discard(name)
        self.memo[name] = figures
        return figures

    def _field_type(self, parent: Any, name: str) -> Any:
        if name == "__schema":
            return SchemaMetaFieldDef.type
        if name == "__type":
            return TypeMetaFieldDef.type
        if parent.__class__ in (GraphQLObjectType, GraphQLInterfaceType):
            found = parent.fields.get(name)
            if found is not None:
                return found.type
        return None


def measure_document(schema: GraphQLSchema, document: DocumentNode
                     ) -> dict[str | None, QueryCost]:
    """``{operation name or None: QueryCost}`` of every operation of ``document`` (see the
    module docstring); linear in the document's size."""
    fragments = {definition.name.value: definition for definition in document.definitions
                 if definition.__class__ is FragmentDefinitionNode}
    walk = _Walk(schema, fragments)
    costs: dict[str | None, QueryCost] = {}
    roots = {OperationType.QUERY: schema.query_type, OperationType.MUTATION:
             schema.mutation_type, OperationType.SUBSCRIPTION: schema.subscription_type}
    for definition in document.definitions:
        if definition.__class__ is not OperationDefinitionNode:
            continue
        name = definition.name.value if definition.name else None
        try:
            depth, complexity, aliases = walk.selection_set(
                definition.selection_set, roots.get(definition.operation), 1)
        except _TooDeep:
            depth, complexity, aliases = MAX_NESTING + 1, 0, 0
        costs[name] = QueryCost(depth, complexity, aliases)
    return costs


def _amount(value: int, prefix: str = "") -> str:
    return f"more than {SATURATION:,}" if value >= SATURATION else f"{prefix}{value:,}"


def limit_errors(costs: dict[str | None, QueryCost], limits: QueryLimits
                 ) -> list[GraphQLError]:
    """One :class:`GraphQLError` per limit an operation goes over (empty: all fit).

    Each message names the figure, the limit and the config key that raises it; ``extensions`` carry
    ``{code: QUERY_TOO_COMPLEX, limit: <key>, max, actual}``.
    """
    errors: list[GraphQLError] = []
    for name, cost in costs.items():
        which = f"Operation '{name}'" if name else "The query"
        depth = f"nests fields and fragments more than {MAX_NESTING}" \
            if cost.depth > MAX_NESTING else f"nests fields {cost.depth}"
        checks = (
            ("maxDepth", cost.depth, limits.max_depth,
             f"{which} {depth} levels deep (fragments included)"),
            ("maxComplexity", cost.complexity, limits.max_complexity,
             f"{which} would answer {_amount(cost.complexity, 'about ')} fields (fragments "
             f"expanded, each list counted as {LIST_ESTIMATE} items)"),
            ("maxAliases", cost.aliases, limits.max_aliases,
             f"{which} uses {_amount(cost.aliases)} aliases (fragments expanded)"),
        )
        for key, actual, maximum, text in checks:
            if actual > maximum:
                errors.append(GraphQLError(
                    f"{text}; this mock answers at most {maximum:,}. Simplify the query, or "
                    f"raise graphql.limits.{key} in the mock's config.",
                    extensions={"code": LIMIT_CODE, "limit": key, "max": maximum,
                                "actual": actual}))
    return errors


class BudgetSpent(Exception):
    """Raised by a field resolution once the operation's time budget is spent (graphql-core
    turns it into a field error; the caller answers :func:`time_budget_error` instead)."""


def time_budget_error(budget_ms: int) -> dict[str, Any]:
    """The formatted GraphQL error of an operation stopped by its time budget."""
    return {"message": f"The query exceeded its time budget of {budget_ms} ms and was "
                       f"stopped. Simplify the query, or raise graphql.limits.timeoutMs in the "
                       f"mock's config.",
            "extensions": {"code": TIMEOUT_CODE, "limit": "timeoutMs", "max": budget_ms}}
