"""The admin routes that connection-style protocols share: one router factory.

SSE, WebSocket, gRPC and MQTT (and SOAP's list and status) answer the same kinds of admin
questions about what the engine serves: a list of what runs, the status of one of them, the
open connections, one connection, closing it, statistics, and the connections of one mock.
Each protocol's ``api.py`` describes its routes as :class:`Route` values and calls
:func:`connection_router`, which builds the ninja ``Router`` (STYLE §8: parse, call, return)
and then gets the protocol's own extra routes.

Every call runs on the engine loop through ``EngineControl`` (ARCHITECTURE seam 5); without
an engine: 503 ``no_engine``. A route with ``missing`` answers 404 ``not_found`` with that
message when its call returns None; a route with ``require_mock`` answers 404 ``Mock not
found`` for an unknown mock id before calling.

Admin side only (imports ninja and the control plane); the engine never imports it.
Source: SPEC "Admin API" ("SSE connections"; "WebSocket, gRPC, MQTT and SOAP
administration"); behavior notes §1.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from django.http import HttpRequest
from ninja import Router

from mocks.control import errors
from mocks.control import openapi_docs as oa
from mocks.api import engine_control

_PLACEHOLDER = re.compile(r"{(\w+)}")


@dataclass(frozen=True, slots=True)
class Route:
    """One shared admin route of a protocol.

    Attributes:
        path: the URL path; its ``{name}`` placeholders become string path parameters passed
            to ``call`` in order (``/grpc/connections/{call_id}``).
        summary: the OpenAPI summary.
        call: ``async call(control, *path values) -> dict | None``, or the name of an
            ``EngineControl`` method called as ``control.<name>(*path values)``.
        doc: the OpenAPI description (the answer's shape).
        missing: the 404 message when ``call`` returns None; None: never 404.
        require_mock: the first path value is a mock id that must exist (404 ``Mock not
            found``).
        example: the 200 answer shown in the OpenAPI document (a true answer's shape).
    """

    path: str
    summary: str
    call: str | Callable[..., Awaitable[Any]]
    doc: str = ""
    missing: str | None = None
    require_mock: bool = False
    example: Any = None


def _view(route: Route, name: str) -> Callable[..., Awaitable[Any]]:
    names = _PLACEHOLDER.findall(route.path)

    async def view(request: HttpRequest, **values: str) -> Any:
        control = engine_control()
        arguments = [values[key] for key in names]
        if route.require_mock and not await control.has_mock(arguments[0]):
            raise errors.not_found("Mock not found")
        if isinstance(route.call, str):
            found = await getattr(control, route.call)(*arguments)
        else:
            found = await route.call(control, *arguments)
        if found is None and route.missing is not None:
            raise errors.not_found(route.missing)
        return found

    # ninja reads the path parameters from the signature: give each placeholder its name.
    view.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                           annotation=HttpRequest)]
        + [inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, annotation=str)
           for key in names],
        return_annotation=dict[str, Any])
    view.__name__ = name
    view.__doc__ = route.doc or route.summary
    return view


def connection_router(tag: str, *, overview: Route | None = None,
                      summary: Route | None = None, connections: Route | None = None,
                      stats: Route | None = None, connection: Route | None = None,
                      close: Route | None = None, status: Route | None = None,
                      mock_connections: Route | None = None,
                      close_mock_connections: Route | None = None) -> Router:
    """A ninja ``Router`` tagged ``tag`` holding the given routes: ``close`` and
    ``close_mock_connections`` answer ``DELETE``, the others ``GET``.

    Routes are added in the order of the parameters, so a fixed path (``.../stats``) comes
    before a sibling with a placeholder (``.../{id}``), and ``/<kind>/connections/{id}``
    before ``/<kind>/{id}/status``. Operation ids are ``<tag>_<role>``
    (``grpc_connections``). The caller adds its protocol's other routes to the returned
    router.
    """
    router = Router(tags=[tag])
    prefix = tag.replace("-", "_")
    roles = {"overview": overview, "summary": summary, "connections": connections,
             "stats": stats, "connection": connection, "close": close, "status": status,
             "mock_connections": mock_connections,
             "close_mock_connections": close_mock_connections}
    for role, route in roles.items():
        if route is None:
            continue
        add_route(router, "DELETE" if role.startswith("close") else "GET",
                  f"{prefix}_{role}", route)
    return router


def add_route(router: Router, method: str, operation_id: str, route: Route) -> None:
    """Add ``route`` to ``router`` for HTTP ``method`` (``GET``, ``DELETE``...) under
    ``operation_id``, with the 404 rules of :class:`Route`."""
    replies: dict[int, Any] = {200: route.example if route.example is not None else {}}
    if route.missing is not None:
        replies[404] = oa.not_found(route.missing)
    elif route.require_mock:
        replies[404] = oa.not_found("Mock not found")
    router.add_api_operation(route.path, [method], _view(route, operation_id),
                             summary=route.summary, operation_id=operation_id,
                             openapi_extra=oa.answers(replies, engine=True))
