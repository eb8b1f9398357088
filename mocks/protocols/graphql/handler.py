"""The handler of ``graphql`` mocks: one mock -> an HTTP route and a WebSocket route at its
exact ``path`` on the mock port.

Compiling a mock loads (and validates) its schema from ``schema`` or ``schemaFile``
(relative to the config folder, confined like ``bodyFile``; SDL, introspection JSON or a
federation subgraph's SDL, :mod:`~mocks.protocols.graphql.schema`), checks every resolver and
subscription key against the schema, compiles their templates and binds resolvers to tables
(``resolvers."Type.field": {table, action}``, or ``extend`` entries whose ``mock`` is
``<mock id>.<Type>.<field>``, handed over as ``context.binding``). The compiled executor is
shared by the HTTP action (:mod:`~mocks.protocols.graphql.http`) and the WebSocket endpoint
(:mod:`~mocks.protocols.graphql.subscriptions`).

Source: behavior notes §10 (``graphql`` row), §4 (served before HTTP mocks, subscriptions
before other WebSocket routes), §12 (served under the workspace's base path); SPEC "Mock".
"""
from __future__ import annotations

from typing import Any

from mocks.core.errors import ConfigError
from mocks.core.templating import TemplateState
from mocks.protocols import CompileContext, CompiledMock, ProtocolRoute, WebSocketRoute
from mocks.protocols.graphql.config import GraphQLMock
from mocks.protocols.graphql.executor import GraphQLExecutor
from mocks.protocols.graphql.http import ROUTE_METHODS, GraphQLHttpAction
from mocks.protocols.graphql.schema import load_schema, read_schema_file
from mocks.protocols.graphql.subscriptions import (CompiledSubscription,
                                                   GraphQLWebSocketEndpoint)


class GraphQLHandler:
    """Compiles ``graphql`` mocks (see the module docstring)."""

    mock_type = "graphql"
    config_model = GraphQLMock

    @staticmethod
    def binding_member(text: str) -> str | None:
        """``Type.field`` of an ``extend`` reference ``<mock id>.Type.field`` (one resolver
        bound to a table), else None."""
        type_name, dot, field_name = text.partition(".")
        return text if dot and type_name and field_name and "." not in field_name else None

    def compile(self, mock: Any, context: CompileContext) -> CompiledMock:
        """One :class:`~mocks.protocols.ProtocolRoute` (GET and POST answered; other methods
        405) and one :class:`~mocks.protocols.WebSocketRoute` at ``graphql.path``.

        Raises :class:`~mocks.core.errors.ConfigError` naming the key:
        ``mocks[0].graphql.schema: line 3: Syntax Error: ...`` (or ``.schemaFile``; see
        :func:`~mocks.protocols.graphql.schema.load_schema`),
        ``mocks[0].graphql.resolvers.Query.nope: type Query has no field 'nope' ...``,
        ``extend[0].mock: ...`` for a binding of a field the schema lacks, or
        ``mocks[0].graphql.subscriptions.x`` for a field the Subscription type lacks.
        """
        config: GraphQLMock = mock.graphql
        key_path = f"{context.key_path}.graphql"
        if config.schema_sdl is not None:
            loaded = load_schema(config.schema_sdl, f"{key_path}.schema")
        else:
            text = read_schema_file(config.schema_file or "", context.base_dir,
                                    context.body_file_roots, f"{key_path}.schemaFile")
            loaded = load_schema(text, f"{key_path}.schemaFile")
        schema = loaded.schema
        binding = context.binding
        if binding is not None and not isinstance(binding, dict):
            raise ConfigError(f"{binding.source}.mock",
                              f"a GraphQL mock binds one resolver at a time: use "
                              f"mock: {mock.id}.Query.<field> (or Mutation.<field>)")
        executor = GraphQLExecutor(config, loaded, key_path, binding, context.tables)
        subscriptions = {}
        for field_name, subscription in config.subscriptions.items():
            key = f"{key_path}.subscriptions.{field_name}"
            root = schema.subscription_type
            if root is None or field_name not in root.fields:
                known = ", ".join(root.fields) if root is not None else "none: the schema " \
                                                                       "has no Subscription type"
                raise ConfigError(key, f"the Subscription type has no field {field_name!r} "
                                       f"(fields: {known})")
            subscriptions[field_name] = CompiledSubscription(subscription, key, field_name)
        shared = context.shared
        state = shared.get("template_state") if shared is not None else None
        sink = shared.get("serve_event") if shared is not None else None
        endpoint = GraphQLWebSocketEndpoint(executor, subscriptions, mock.id, config.path,
                                            state or TemplateState(), sink)
        return CompiledMock(
            routes=(ProtocolRoute(path=config.path, mock_id=mock.id,
                                  action=GraphQLHttpAction(executor, mock.id),
                                  methods=ROUTE_METHODS),),
            websocket_routes=(WebSocketRoute(path=config.path, mock_id=mock.id, app=endpoint),))


#: The registered handler object (:data:`mocks.protocols.PROTOCOLS`).
HANDLER = GraphQLHandler()
