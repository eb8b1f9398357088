"""The one way in for a protocol: the handler interface and the registry of mock types.

Every mock type is served by a *handler* (STYLE §5; ARCHITECTURE "Protocol handlers"):

* ``mock_type``: the ``type`` of the mocks it serves (``http``, ``oauth``, ...);
* ``config_model``: the pydantic model of the mock's protocol block (``mock.<type>``); the
  ``Mock`` schema of :mod:`mocks.config` is built from these models, so the published JSON
  Schema and the admin docs show every block;
* ``compile(mock, context) -> CompiledMock``: what the mock serves: HTTP match candidates,
  exact or prefix data-plane routes, WebSocket routes and listener services (ports of their
  own, such as gRPC or MQTT). Raises :class:`~mocks.core.errors.ConfigError` naming the key;
* optionally ``binding_member(text) -> str | None``: for a type whose parts bind to tables one
  by one (GraphQL resolvers, gRPC methods, SOAP operations), the part an ``extend`` reference
  ``<mock id>.<text>`` names (see :func:`binding_member`).

A new protocol is a new folder ``mocks/protocols/<name>/`` (or an app such as ``oidc/``) whose
handler object is listed once in :data:`PROTOCOLS` by import string. Import strings are
resolved once (:func:`load_handlers` at start-up); a handler that fails to import is an error
at start (:class:`HandlerImportError`), never a silently dead type. Types listed with no
handler yet (``handler=None``) are stored, listed and exported but serve nothing.

Runtime state a handler must keep across recompiles (an identity provider's tokens, open
connections) lives in ``context.state``: the engine's ``protocol_state`` entry of that mock id,
freed when the mock leaves the config. Listener services are started, restarted when their
``definition`` changes, and stopped by the engine's
:class:`~mocks.engine.listeners.ListenerSupervisor` on the engine's event loop.

Who may call it: :mod:`mocks.config` (config models), :mod:`mocks.engine.snapshot` (compile),
the runner (:func:`load_handlers`). Imports nothing else of the project at module level.
Django-free.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import (TYPE_CHECKING, Any, Awaitable, Callable, Hashable, Iterable, Protocol,
                    runtime_checkable)

if TYPE_CHECKING:  # pragma: no cover
    from pydantic import BaseModel


@dataclass(frozen=True, slots=True)
class ProtocolRoute:
    """One data-plane path served by a protocol handler (identity provider, GraphQL, SOAP).

    Attributes:
        path: the exact request path (``/oauth/token``).
        mock_id: the mock that owns the route (request log, verification).
        action: an object with ``async respond(request, path_params, template_state, send)
            -> status``: the same interface as a static response.
        methods: the methods it answers (empty = all).
        prefix: when True the route answers every path *below* ``path`` that no HTTP mock
            matched (e.g. the identity provider's 404 for unknown endpoints under its issuer
            path); such routes never shadow a mock.
    """

    path: str
    mock_id: str
    action: Any
    methods: frozenset[str] = frozenset()
    prefix: bool = False


@dataclass(frozen=True, slots=True)
class WebSocketRoute:
    """One WebSocket endpoint on the mock port.

    Attributes:
        path: the exact request path of the upgrade (``/ws/chat``).
        mock_id: the mock that owns it.
        app: a raw ASGI application for ``websocket`` scopes:
            ``async app(scope, receive, send)``; it accepts or closes the connection itself.
            When a new snapshot no longer holds this app (its mock changed or is gone), the
            engine calls its ``retire()`` if it has one (WebSocket clients get close 1012).
        pattern: full-match regex for a path with ``{name}`` captures (None: ``path`` is
            exact); consulted only when no exact path matches.
    """

    path: str
    mock_id: str
    app: Callable[[dict[str, Any], Any, Any], Awaitable[None]]
    pattern: re.Pattern[str] | None = None


@runtime_checkable
class ListenerService(Protocol):
    """A listener with a port of its own (a gRPC server, an MQTT broker, the recording proxy).

    Attributes:
        name: unique key of the listener across the snapshot (``grpc:50051``); two services
            with the same name are the same listener.
        definition: a hashable value describing everything the listener serves; when the
            next snapshot's service of the same ``name`` has an equal definition the running
            listener is kept, otherwise it is stopped and the new one started.

    ``start`` binds and begins serving (raises ``OSError`` when the port is taken);
    ``stop`` releases the port within about a second; ``health`` returns a JSON-able dict
    with at least ``{"status": "running" | "stopped" | "failed"}``.

    Optional capabilities: ``merged(other)`` returns one service serving both when two mocks
    give a service of the same ``name`` (gRPC mocks sharing a port; without it the first
    mock's service is kept); ``adopt(replacement)`` lets a running listener serve the answers
    of an equal-definition replacement without a restart.
    """

    name: str
    definition: Hashable

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def health(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class CompileContext:
    """What a handler gets besides the mock when it compiles one.

    Attributes:
        key_path: the mock's config path (``mocks[3]``); errors name keys below it.
        order: the mock's position in the config (the last precedence tie-breaker).
        base_dir: folder that relative files (``bodyFile``, ``dataFile``) resolve against.
        state: the engine's runtime state of this mock id (kept across recompiles, dropped
            with the mock); a throw-away dict when compiling only to validate.
        tables: the engine's :class:`~tables.store.TableStore` (None when validating only).
        binding: the table binding of this mock from the config's ``extend`` list, if any.
        body_file_roots: folders a ``bodyFile`` may be read from (empty: anywhere).
        scenarios: the engine's scenario store
            (:class:`~mocks.protocols.http.scenarios.ScenarioStore`; None when validating
            only).
        shared: the engine's state shared by all mocks of a protocol (None when validating
            only): the engine puts ``template_state`` (sequences), ``serve_event`` (a
            callable taking :class:`~mocks.engine.core.ServeEvent` keyword arguments, for
            the request log, verification and metrics) and ``chaos`` (a callable returning
            the live :class:`~chaos.injector.ChaosInjector`, None while chaos is off; see
            :func:`chaos.injector.before_call`) in it; a handler keeps its own
            engine-wide objects under its mock type (the WebSocket connection hub).
    """

    key_path: str
    order: int = 0
    base_dir: Path = Path(".")
    state: dict[str, Any] = field(default_factory=dict)
    tables: Any = None
    binding: Any = None
    body_file_roots: tuple[Path, ...] = ()
    scenarios: Any = None
    shared: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class CompiledMock:
    """Everything one mock serves, as produced by its handler.

    Attributes:
        candidates: HTTP match candidates (:class:`~mocks.protocols.http.matcher.Candidate`)
            for the engine's method + path index.
        routes: data-plane routes consulted before HTTP mocks (exact) or after them (prefix).
        websocket_routes: WebSocket endpoints on the mock port.
        services: listeners with ports of their own.
    """

    candidates: tuple[Any, ...] = ()
    routes: tuple[ProtocolRoute, ...] = ()
    websocket_routes: tuple[WebSocketRoute, ...] = ()
    services: tuple[ListenerService, ...] = ()


#: What a mock that serves nothing compiles to.
NOTHING = CompiledMock()


@runtime_checkable
class ProtocolHandler(Protocol):
    """The interface every mock type implements (see the module docstring)."""

    mock_type: str
    config_model: type[BaseModel]

    def compile(self, mock: Any, context: CompileContext) -> CompiledMock: ...


@dataclass(frozen=True, slots=True)
class ProtocolEntry:
    """One mock type in the registry.

    Attributes:
        mock_type: the ``type`` value.
        config_model: ``"module:Class"`` of the protocol block's pydantic model.
        handler: ``"module:attribute"`` of the handler object, or None while the type is not
            served yet.
        admin_router: ``"module:attribute"`` of the protocol's admin routes (a ninja
            ``Router`` in its folder's ``api.py``), mounted by the admin API; None: none.
        cli: ``"module:attribute"`` of the protocol's click command or group (its folder's
            ``cli.py``), added to ``mockd`` under its own name, imported only when that
            command runs; None: none.
        control_routes: ``"module:attribute"`` of the protocol's engine-control routes,
            registered by the engine-control app without importing the protocol's server;
            None: none.

    Every target is an import string, resolved only when used: listing the registry imports
    no protocol.
    """

    mock_type: str
    config_model: str
    handler: str | None
    admin_router: str | None = None
    cli: str | None = None
    control_routes: str | None = None


#: Every mock type, in the order the SPEC lists them ("Mock": ``type``).
PROTOCOLS: tuple[ProtocolEntry, ...] = (
    # An HTTP mock's SSE streams are served by streaming/, whose admin routes are the
    # http type's.
    ProtocolEntry("http", "mocks.protocols.http.config:HttpMock",
                  "mocks.protocols.http.handler:HANDLER",
                  # `mockd http add`, whose --sse* flags come from streaming/cli.py
                  cli="mockd_project.cli_client:http_group",
                  admin_router="mocks.protocols.streaming.api:router"),
    ProtocolEntry("graphql", "mocks.protocols.graphql.config:GraphQLMock",
                  "mocks.protocols.graphql.handler:HANDLER"),
    ProtocolEntry("grpc", "mocks.protocols.grpc.config:GrpcMock",
                  "mocks.protocols.grpc.handler:HANDLER",
                  cli="mocks.protocols.grpc.cli:grpc_group",
                  admin_router="mocks.protocols.grpc.api:router",
                  control_routes="mocks.protocols.grpc.control:control_routes"),
    ProtocolEntry("websocket", "mocks.protocols.websocket.config:WebSocketMock",
                  "mocks.protocols.websocket.handler:HANDLER",
                  cli="mocks.protocols.websocket.cli:websocket_group",
                  admin_router="mocks.protocols.websocket.api:router",
                  control_routes="mocks.protocols.websocket.control:control_routes"),
    ProtocolEntry("mqtt", "mocks.protocols.mqtt.config:MqttMock",
                  "mocks.protocols.mqtt.handler:HANDLER",
                  cli="mocks.protocols.mqtt.cli:mqtt_group",
                  admin_router="mocks.protocols.mqtt.api:router",
                  control_routes="mocks.protocols.mqtt.control:route_mqtt"),
    ProtocolEntry("soap", "mocks.protocols.soap.config:SoapMock",
                  "mocks.protocols.soap.handler:HANDLER",
                  cli="mocks.protocols.soap.cli:soap_group",
                  admin_router="mocks.protocols.soap.api:router",
                  control_routes="mocks.protocols.soap.control:route_soap"),
    ProtocolEntry("oauth", "oidc.config:OAuthConfig", "oidc.engine:HANDLER",
                  cli="oidc.cli:oauth_group"),
)

#: The ``type`` values a mock may have.
MOCK_TYPES: tuple[str, ...] = tuple(entry.mock_type for entry in PROTOCOLS)

_ENTRIES = {entry.mock_type: entry for entry in PROTOCOLS}
_handlers: dict[str, ProtocolHandler | None] = {}


class HandlerImportError(RuntimeError):
    """A registered handler or config model cannot be imported (or is not a handler).

    ``str(error)`` names the mock type, the import string and the cause.
    """


def _resolve(target: str, mock_type: str) -> Any:
    module_name, _, attribute = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise HandlerImportError(f"protocol {mock_type!r}: cannot import {target}: "
                                 f"{error}") from error


def resolve_target(target: str, mock_type: str) -> Any:
    """The object an entry's import string ``"module:attribute"`` names (``cli``,
    ``control_routes``, ``admin_router``...), importing its module now.

    Raises :class:`HandlerImportError` naming ``mock_type``, the string and the cause.
    """
    return _resolve(target, mock_type)


def config_models() -> dict[str, type[BaseModel]]:
    """``{mock type: config model class}`` in registry order.

    Raises :class:`HandlerImportError` when a model cannot be imported.
    """
    return {entry.mock_type: _resolve(entry.config_model, entry.mock_type)
            for entry in PROTOCOLS}


def handler_for(mock_type: str) -> ProtocolHandler | None:
    """The handler of ``mock_type`` (resolved once and cached), or None while the type has
    none. Raises :class:`HandlerImportError` when the registered handler cannot be imported,
    is not a :class:`ProtocolHandler`, or declares another type or config model."""
    if mock_type in _handlers:
        return _handlers[mock_type]
    entry = _ENTRIES.get(mock_type)
    handler = None
    if entry is not None and entry.handler is not None:
        handler = _resolve(entry.handler, mock_type)
        if not isinstance(handler, ProtocolHandler):
            raise HandlerImportError(f"protocol {mock_type!r}: {entry.handler} does not "
                                     f"implement the ProtocolHandler interface")
        if handler.mock_type != mock_type:
            raise HandlerImportError(f"protocol {mock_type!r}: {entry.handler} serves "
                                     f"{handler.mock_type!r}")
        if handler.config_model is not _resolve(entry.config_model, mock_type):
            raise HandlerImportError(f"protocol {mock_type!r}: {entry.handler} declares "
                                     f"another config model than {entry.config_model}")
    _handlers[mock_type] = handler
    return handler


def binding_member(mock_type: str, text: str) -> str | None:
    """The member of a ``mock_type`` mock that an ``extend`` reference ``<mock id>.<text>``
    binds to a table, as the handler's optional ``binding_member(text)`` names it (a
    GraphQL ``Type.field``, a gRPC ``/package.Service/Method``, a SOAP operation), or None
    when the type binds whole mocks only or ``text`` names no member.

    The handler then receives ``context.binding`` as ``{member: BindingSpec}`` and reports
    a member its mock lacks as a :class:`~mocks.core.errors.ConfigError` at
    ``extend[i].mock``. Source: SPEC "Extend binding"; behavior notes §6.
    """
    handler = handler_for(mock_type)
    read_member = getattr(handler, "binding_member", None)
    return read_member(text) if read_member is not None else None


def admin_routers() -> list[Any]:
    """The admin routers the registry names (``admin_router``), in registry order: ninja
    ``Router`` objects the admin API (:mod:`mockd_project.api`) mounts at its root. Imports
    each protocol's ``api.py`` now, so only the admin side calls it.

    Raises :class:`HandlerImportError` when one cannot be imported.
    """
    return [_resolve(entry.admin_router, entry.mock_type)
            for entry in PROTOCOLS if entry.admin_router is not None]


def load_handlers(mock_types: Iterable[str] | None = None) -> dict[str, ProtocolHandler]:
    """Resolve the handlers of ``mock_types`` now (every registered one when None); the
    runner calls it before serving with the types its config uses.

    The other handlers are only *found* (their module located, not executed), so a broken
    install is still an error at start while a protocol's libraries (grpc, amqtt, lxml,
    graphql-core) load with its first mock. Returns ``{mock type: handler}`` for the
    resolved types that have one. Raises :class:`HandlerImportError` for the first one that
    cannot be loaded or found.
    """
    wanted = set(MOCK_TYPES if mock_types is None else mock_types)
    for entry in PROTOCOLS:
        if entry.handler is not None and entry.mock_type not in wanted:
            module_name = entry.handler.partition(":")[0]
            try:
                found = importlib.util.find_spec(module_name) is not None
            except (ImportError, ValueError) as error:
                raise HandlerImportError(f"protocol {entry.mock_type!r}: cannot import "
                                         f"{entry.handler}: {error}") from error
            if not found:
                raise HandlerImportError(f"protocol {entry.mock_type!r}: cannot import "
                                         f"{entry.handler}: no module named {module_name!r}")
    loaded = {entry.mock_type: handler_for(entry.mock_type) for entry in PROTOCOLS
              if entry.mock_type in wanted}
    return {mock_type: handler for mock_type, handler in loaded.items() if handler is not None}
