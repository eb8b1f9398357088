"""The config model of a ``graphql`` mock: path, schema, introspection, resolvers,
subscriptions.

Shape (every duration is ``"400ms"``, ``"5s"`` or an integer of ms; stored as int ms)::

    graphql:
      path: /graphql                   # exact path on the mock port (HTTP and WebSocket)
      schema: "type Query { ... }"     # SDL; or schemaFile: ./schema.graphql (one of both)
      introspection: false             # true: __schema / __type queries are answered
      resolvers:
        Query.user:                    # "<Type>.<field>"; any object type of the schema
          response: {id: "{{args.id}}", name: Ann}   # JSON value, strings are templates
          delay: 100ms
        Query.search:                  # variants: the first whose match fits answers
          variants:
            - match: {args: {term: "none"}}
              response: []
            - error: {message: "search is down", extensions: {code: UNAVAILABLE}}
          response: [...]              # the resolver's own fields answer when no variant fits
        Query.users: {table: users, action: list}   # answered from a table
      subscriptions:
        messageAdded:
          events: [{data: {id: 1, text: hi}, delay: 50ms}]
          timing: {fixedDelay: 1s, randomDelay: "100ms-500ms", repeat: false}
      limits:                          # cost limits of each request (defaults shown)
        maxDepth: 32                   # nesting of fields, through fragments
        maxComplexity: 10000           # estimated fields in the answer, fragments expanded
        maxAliases: 200                # aliases, fragments expanded
        timeoutMs: 1000                # time one operation may hold the event loop

A resolver is an object as above, or a list of variants (the same as ``{variants: [...]}``).
A variant is ``{match?: {args}, response?, delay?, error?: {message, path?, extensions?}}``;
a variant without ``match`` always fits. A resolver's own ``match`` gates its own answer
(and its table action): when it does not fit and no variant does, the field answers as if
it had no resolver. A field with no resolver (or whose resolver gives no ``response``)
answers a fake value of its schema type.

``schema`` / ``schemaFile`` hold SDL or introspection JSON (``{"__schema": ...}``, with or
without ``{"data": ...}``), a federation subgraph's SDL included
(:mod:`mocks.protocols.graphql.schema`).

Source: behavior notes §10 (``graphql`` row: ``path``, ``schema`` / ``schemaFile``,
``introspection`` (false), ``resolvers`` with ``response``, ``delay``, ``match: {args}``,
``error: {message, path[], extensions}``, ``subscriptions`` with ``events`` and ``timing``);
SPEC "Mock", "Templating". ``limits`` is this project's own: SPEC "Mock" does not show the
``graphql`` fields and SPEC "Limits" shows no request-size limits
(:mod:`mocks.protocols.graphql.limits` says how each figure is counted).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from mocks.core.durations import DurationMs, DurationRangeMs
from mocks.core.schema import Strict

#: Table actions a resolver may run (``custom`` runs a custom operation).
ResolverAction = Literal["list", "get", "create", "update", "patch", "delete", "custom"]


class ResolverError(Strict):
    """``error``: the field answers null and this error is added to ``errors``.

    Attributes:
        message: the error message (a template).
        path: the error's ``path`` (default: the field's own response path).
        extensions: the error's ``extensions`` object (``{code: NOT_FOUND}``).
    """

    message: str
    path: list[str | int] | None = None
    extensions: dict[str, Any] | None = None


class ResolverMatch(Strict):
    """``match``: conditions on the field's arguments; all must hold.

    ``args``: ``{name: value}``; an argument equals ``value`` when it is equal as JSON, or
    as text for scalars (``"5"`` matches ``5``); an object value matches when every key it
    gives matches (nested input objects).
    """

    args: dict[str, Any] = Field(default_factory=dict)


class ResolverVariant(Strict):
    """One way a resolver answers (see the module docstring).

    Attributes:
        match: when it applies (None: always).
        response: the field's value, a JSON value whose strings are templates
            (``{{args.<name>}}``, ``{{request.header.X}}``, ``{{faker.email}}``...); unset:
            a fake value of the field's type.
        delay: wait before answering, in ms.
        error: answer null with this error instead.
    """

    match: ResolverMatch | None = None
    response: Any = None
    delay: DurationMs = 0
    error: ResolverError | None = None


class Resolver(ResolverVariant):
    """A resolver: its own answer plus optional ``variants`` tried first, or a table action.

    Attributes:
        variants: tried in order; the first that fits answers. When none fits, the
            resolver's own ``response`` / ``error`` answers, else a fake value.
        table: answer from this table (with ``action``), like an HTTP mock's binding.
        action: ``list`` (arguments are filters), ``get`` / ``update`` / ``patch`` /
            ``delete`` (the item id is argument ``idArg``), ``create`` (the body is the
            ``input`` argument, else all arguments), ``custom`` (runs ``operation`` with the
            arguments as input).
        operation: the custom operation of action ``custom``.
        id_arg: the argument holding the item id (default ``id``).
    """

    variants: list[ResolverVariant] = Field(default_factory=list)
    table: str | None = None
    action: ResolverAction | None = None
    operation: str | None = None
    id_arg: str = Field("id", alias="idArg", min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _list_is_variants(cls, value: Any) -> Any:
        if isinstance(value, list):
            return {"variants": value}
        return value

    @model_validator(mode="after")
    def _table_and_action(self) -> "Resolver":
        if self.action is None and (self.table or self.operation):
            raise ValueError("a table resolver needs action (list, get, create, update, "
                             "patch, delete or custom)")
        if self.action == "custom":
            if not self.operation:
                raise ValueError("action 'custom' needs operation (the custom operation name)")
        elif self.action is not None and not self.table:
            raise ValueError(f"action {self.action!r} needs table (the table name)")
        return self


class SubscriptionEvent(Strict):
    """One event: ``data`` is the subscription field's value (a JSON value whose strings
    are templates), or the operation's data object ``{"<field>": value}`` when its only key
    is the field's name (behavior notes §10 "Shapes inside those configs"); ``delay`` (ms)
    replaces the timing's delay before this event."""

    data: Any = None
    delay: DurationMs | None = None


class SubscriptionTiming(Strict):
    """``timing``: the wait before each event and whether the list starts over.

    Attributes:
        fixed_delay: wait before each event, ms (default 1000).
        random_delay: ``"100ms-500ms"``: a random extra wait in that range, ms.
        repeat: false (send the events once, then complete), true (start over until the
            client stops), or a number of rounds.
    """

    fixed_delay: DurationMs = Field(1000, alias="fixedDelay")
    random_delay: DurationRangeMs | None = Field(None, alias="randomDelay")
    repeat: bool | int = False

    @field_validator("repeat")
    @classmethod
    def _repeat_positive(cls, value: bool | int) -> bool | int:
        if not isinstance(value, bool) and value < 1:
            raise ValueError("repeat must be true, false or a number of rounds >= 1")
        return value


class Subscription(Strict):
    """``subscriptions.<field>``: the events of one subscription field.

    ``events`` absent: three fake events of the field's type, one per ``timing`` delay.
    """

    events: list[SubscriptionEvent] | None = None
    timing: SubscriptionTiming = Field(default_factory=SubscriptionTiming)


#: Default and largest ``limits.maxDepth``: graphql-core executes a level of nesting in a few
#: Python frames, so far deeper queries would reach the interpreter's recursion limit.
DEFAULT_MAX_DEPTH = 32
MAX_MAX_DEPTH = 100
#: Default ``limits.maxComplexity`` (estimated fields in the answer).
DEFAULT_MAX_COMPLEXITY = 10_000
#: Default ``limits.maxAliases`` (aliases, fragments expanded).
DEFAULT_MAX_ALIASES = 200
#: Default ``limits.timeoutMs`` (ms one operation may hold the event loop).
DEFAULT_TIMEOUT_MS = 1000


class QueryLimits(Strict):
    """``limits``: the cost limits every request of the mock is checked against, before it
    runs (depth, complexity, aliases; a request over one is answered 400 with a GraphQL
    error naming the key) and while it runs (``timeoutMs``). Over HTTP and WebSocket alike.

    Attributes:
        max_depth: ``maxDepth``, the deepest nesting of fields, counted through fragment
            spreads and inline fragments (1 to 100; default 32).
        max_complexity: ``maxComplexity``, the estimated number of fields in the answer,
            fragments expanded, each list counted as 3 items (>= 1; default 10,000).
        max_aliases: ``maxAliases``, aliased fields, fragments expanded (>= 0; default 200).
        timeout_ms: ``timeoutMs``, in milliseconds: how long one operation may hold the
            server's event loop without pausing (waits of a ``delay`` do not count); past
            it the operation stops and answers a GraphQL error (1 ms to 24 h, or a duration
            such as ``"2s"``; default 1000).
    """

    max_depth: int = Field(DEFAULT_MAX_DEPTH, alias="maxDepth", ge=1, le=MAX_MAX_DEPTH,
                           strict=True)
    max_complexity: int = Field(DEFAULT_MAX_COMPLEXITY, alias="maxComplexity", ge=1,
                                strict=True)
    max_aliases: int = Field(DEFAULT_MAX_ALIASES, alias="maxAliases", ge=0, strict=True)
    timeout_ms: DurationMs = Field(DEFAULT_TIMEOUT_MS, alias="timeoutMs")

    @field_validator("timeout_ms")
    @classmethod
    def _timeout_positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError("timeoutMs must be at least 1 ms (raise it to allow longer "
                             "queries; it cannot be switched off)")
        return value


class GraphQLMock(Strict):
    """The ``graphql`` block of a mock (see the module docstring)."""

    path: str
    schema_sdl: str | None = Field(None, alias="schema")
    schema_file: str | None = Field(None, alias="schemaFile")
    introspection: bool = False
    resolvers: dict[str, Resolver] = Field(default_factory=dict)
    subscriptions: dict[str, Subscription] = Field(default_factory=dict)
    limits: QueryLimits = Field(default_factory=QueryLimits)

    @field_validator("path")
    @classmethod
    def _path_absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"path must start with '/', got {value!r}")
        return value

    @field_validator("resolvers")
    @classmethod
    def _resolver_keys(cls, value: dict[str, Resolver]) -> dict[str, Resolver]:
        for key in value:
            type_name, dot, field_name = key.partition(".")
            if not dot or not type_name or not field_name or "." in field_name:
                raise ValueError(f"resolver key {key!r} must be '<Type>.<field>', "
                                 f"e.g. 'Query.user'")
        return value

    @model_validator(mode="after")
    def _one_schema(self) -> "GraphQLMock":
        if (self.schema_sdl is None) == (self.schema_file is None):
            raise ValueError("give the schema as SDL text (schema) or a file (schemaFile), "
                             "exactly one of them")
        return self

    @property
    def binds_tables(self) -> bool:
        """Whether a resolver answers from a table or custom operation."""
        return any(resolver.action is not None for resolver in self.resolvers.values())
