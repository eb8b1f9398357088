"""Builders of mock definitions: one function per mock type, each returning the config
format's mock dict (SPEC "Mock"), ready for ``MockServer(mocks=[...])`` or
``server.add(...)``.

They are thin: every keyword maps to a documented config key, and ``**extra`` keywords are
added to the protocol block as they are (snake_case names are turned into the config's
camelCase: ``response_mode`` -> ``responseMode``). Nothing is validated here; the server
validates with the config schema and raises :class:`~mockd.errors.MockConfigError` naming the
key.

Example::

    from mockd import MockServer, http

    with MockServer(mocks=[http("GET", "/health", json={"ok": True}, id="health")]) as server:
        assert server.client().get("/health").json() == {"ok": True}
"""
from __future__ import annotations

import socket
from typing import Any, Mapping

__all__ = ["free_port", "graphql", "grpc", "http", "mqtt", "oauth", "soap", "sse",
           "websocket"]

Mock = dict[str, Any]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _extra(values: Mapping[str, Any]) -> dict[str, Any]:
    return {_camel(key): value for key, value in values.items() if value is not None}


def _mock(mock_type: str, block: dict[str, Any], id: str | None, name: str | None,
          enabled: bool = True) -> Mock:
    mock: Mock = {"type": mock_type}
    if id is not None:
        mock["id"] = id
    if name is not None:
        mock["name"] = name
    if not enabled:
        mock["enabled"] = False
    mock[mock_type] = block
    return mock


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (for the gRPC and MQTT mocks, which need a port
    of their own). Another process could take it before the server binds it; the server
    then fails to start naming the port."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _response(status: int, body: Any, json: Any, headers: Mapping[str, str] | None,
              delay_ms: int | None) -> dict[str, Any]:
    if body is not None and json is not None:
        raise ValueError("give body= or json=, not both")
    response: dict[str, Any] = {"statusCode": status}
    answer_headers = dict(headers or {})
    if json is not None:
        if not any(key.lower() == "content-type" for key in answer_headers):
            answer_headers["Content-Type"] = "application/json"
        response["body"] = json
    elif body is not None:
        response["body"] = body
    if answer_headers:
        response["headers"] = answer_headers
    if delay_ms:
        response["delayMs"] = delay_ms
    return response


def _matcher(method: str | None, path: str | None, query: Mapping[str, Any] | None,
             match_headers: Mapping[str, Any] | None,
             matcher: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if method:
        out["method"] = method.upper()
    if path is not None:
        out["path"] = path
    if query:
        out["queryParams"] = dict(query)
    if match_headers:
        out["headers"] = dict(match_headers)
    out.update(_extra(matcher))
    return out


def http(method: str | None, path: str | None, *, status: int = 200, body: Any = None,
         json: Any = None, headers: Mapping[str, str] | None = None,
         query: Mapping[str, Any] | None = None,
         match_headers: Mapping[str, Any] | None = None, delay_ms: int | None = None,
         id: str | None = None, name: str | None = None, priority: int | None = None,
         enabled: bool = True, **matcher: Any) -> Mock:
    """An ``http`` mock (SPEC "HTTP mock").

    Args:
        method: the method to match (any case), or None for any.
        path: the path to match; ``{name}`` segments capture path parameters
            (``/users/{id}``); None for any path.
        status: the answer's status code.
        body: the answer's body (text, or data sent as JSON); templates such as
            ``{{request.pathParam.id}}`` are rendered.
        json: data to answer as JSON (sets ``Content-Type: application/json`` unless
            ``headers`` gives one); not together with ``body``.
        headers: the answer's headers.
        query: query parameters the request must carry (``{"page": "2"}``).
        match_headers: headers the request must carry.
        delay_ms: milliseconds to wait before answering.
        id, name: the mock's id (generated when None) and display name.
        priority: higher wins when several mocks match.
        enabled: False keeps the mock defined but not served.
        **matcher: more matcher keys (``body_contains``, ``body_json_path``,
            ``path_pattern``, ...), in snake_case or camelCase.

    Example::

        http("POST", "/orders", status=201, json={"id": 1}, body_contains="sku", id="order")
    """
    block: dict[str, Any] = {"matcher": _matcher(method, path, query, match_headers, matcher),
                             "response": _response(status, body, json, headers, delay_ms)}
    if priority is not None:
        block["priority"] = priority
    return _mock("http", block, id, name, enabled)


def sse(path: str, events: list[Any], *, method: str = "GET", interval_ms: int | None = None,
        loop: bool | None = None, id: str | None = None, name: str | None = None,
        **extra: Any) -> Mock:
    """An ``http`` mock answering a Server-Sent Events stream (docs/streaming.md).

    Args:
        path: the path to match.
        events: the events, each a dict (``{"type": "tick", "data": {...}, "id": "1"}``) or
            plain data (sent as an event's ``data``).
        method: the method to match.
        interval_ms: milliseconds between events (``timing.fixedDelay``).
        loop: send the events again after the last (``lifecycle``'s loop setting is left to
            ``extra`` when more control is needed).
        **extra: more keys of the ``sse`` block (``resume``, ``lifecycle``, ``generator``).

    Example::

        sse("/events", [{"type": "tick", "data": {"n": 1}}, {"data": "done"}], interval_ms=10)
    """
    block: dict[str, Any] = {"events": [event if isinstance(event, dict) else {"data": event}
                                        for event in events]}
    if interval_ms is not None:
        block["timing"] = {"fixedDelay": interval_ms}
    if loop is not None:
        block.setdefault("lifecycle", {})["loop"] = loop
    block.update(_extra(extra))
    http_block = {"matcher": {"method": method.upper(), "path": path}, "sse": block}
    return _mock("http", http_block, id, name)


def websocket(path: str, *, echo: bool = False, matchers: list[dict[str, Any]] | None = None,
              default_response: Any = None, subprotocols: list[str] | None = None,
              id: str | None = None, name: str | None = None, **extra: Any) -> Mock:
    """A ``websocket`` mock (docs/websocket.md).

    Args:
        path: the path clients connect to.
        echo: send every message back (``echoMode``).
        matchers: ``[{"match": {"type": "exact", "value": "ping"}, "response": {"type":
            "text", "value": "pong"}}]``.
        default_response: the answer to a message no matcher takes (text, or a response
            dict ``{"type": "json", "value": {...}}``).
        subprotocols: subprotocols offered.
        **extra: more keys of the ``websocket`` block (``scenario``, ``heartbeat``, ...).

    Example::

        websocket("/ws", matchers=[{"match": {"type": "exact", "value": "ping"},
                                    "response": {"type": "text", "value": "pong"}}])
    """
    block: dict[str, Any] = {"path": path}
    if echo:
        block["echoMode"] = True
    if matchers:
        block["matchers"] = matchers
    if default_response is not None:
        block["defaultResponse"] = (default_response if isinstance(default_response, dict)
                                    else {"type": "text", "value": default_response})
    if subprotocols:
        block["subprotocols"] = subprotocols
    block.update(_extra(extra))
    return _mock("websocket", block, id, name)


def graphql(path: str, schema: str, resolvers: Mapping[str, Any] | None = None, *,
            introspection: bool = False, id: str | None = None, name: str | None = None,
            **extra: Any) -> Mock:
    """A ``graphql`` mock (docs/graphql.md).

    Args:
        path: the endpoint path (``/graphql``).
        schema: the schema SDL.
        resolvers: ``{"Query.user": {"response": {...}}}`` (a value that is not a dict is
            taken as the ``response``).
        introspection: answer introspection queries.
        **extra: more keys of the ``graphql`` block (``subscriptions``, ``limits``).

    Example::

        graphql("/graphql", "type Query { hello: String }", {"Query.hello": "world"})
    """
    block: dict[str, Any] = {"path": path, "schema": schema}
    if resolvers:
        block["resolvers"] = {field: (value if isinstance(value, dict)
                                      else {"response": value})
                              for field, value in resolvers.items()}
    if introspection:
        block["introspection"] = True
    block.update(_extra(extra))
    return _mock("graphql", block, id, name)


def grpc(proto: str, services: Mapping[str, Any], *, port: int | None = None,
         reflection: bool = False, id: str | None = None, name: str | None = None,
         **extra: Any) -> Mock:
    """A ``grpc`` mock (docs/grpc.md): a gRPC server on a port of its own.

    Args:
        proto: the ``.proto`` text (``protoContent``).
        services: ``{"pkg.Greeter": {"methods": {"SayHello": {"response": {...}}}}}``;
            a method's value that has none of ``response``, ``responses``, ``error``,
            ``variants`` is taken as the ``response``.
        port: the port (default: a free one, :func:`free_port`); ``server.grpc_port()``
            and ``server.grpc_channel()`` find it.
        reflection: serve the reflection service.
        **extra: more keys of the ``grpc`` block (``protoFile``, ``importPaths``).

    Example::

        grpc(PROTO, {"demo.Greeter": {"methods": {"SayHello": {"message": "hi"}}}})
    """
    answer_keys = {"response", "responses", "error", "variants", "delay", "streamDelay",
                   "match", "statefulResource", "statefulAction", "operation"}
    shaped: dict[str, Any] = {}
    for service, definition in services.items():
        methods = dict(definition.get("methods", {}))
        shaped[service] = {**definition, "methods": {
            method: (value if isinstance(value, dict) and answer_keys & set(value)
                     else {"response": value})
            for method, value in methods.items()}}
    block: dict[str, Any] = {"port": port or free_port(), "protoContent": proto,
                             "services": shaped}
    if reflection:
        block["reflection"] = True
    block.update(_extra(extra))
    return _mock("grpc", block, id, name)


def mqtt(topics: list[Any] | None = None, *, port: int | None = None,
         id: str | None = None, name: str | None = None, **extra: Any) -> Mock:
    """An ``mqtt`` mock (docs/mqtt.md): an MQTT broker on a port of its own.

    Args:
        topics: ``[{"topic": "sensors/+", "onPublish": {"response": {"payload": "ok"}}}]``;
            a plain string is a topic with no behaviour of its own.
        port: the port (default: a free one); ``server.mqtt_port()`` and
            ``server.mqtt_client()`` find it.
        **extra: more keys of the ``mqtt`` block (``auth``, ``websocket``, ``tls``).

    Example::

        mqtt([{"topic": "ping", "onPublish": {"response": {"topic": "pong", "payload": "hi"}}}])
    """
    block: dict[str, Any] = {"port": port or free_port(),
                             "topics": [topic if isinstance(topic, dict) else {"topic": topic}
                                        for topic in topics or []]}
    block.update(_extra(extra))
    return _mock("mqtt", block, id, name)


def soap(path: str, operations: Mapping[str, Any], *, wsdl: str | None = None,
         id: str | None = None, name: str | None = None, **extra: Any) -> Mock:
    """A ``soap`` mock (docs/soap.md).

    Args:
        path: the service path.
        operations: ``{"GetUser": {"soapAction": "...", "response": "<GetUserResponse>..."}}``;
            a string value is taken as the ``response``.
        wsdl: the WSDL document, inline (``wsdlFile`` through ``extra``).
        **extra: more keys of the ``soap`` block.

    Example::

        soap("/soap", {"Ping": "<PingResponse><ok>true</ok></PingResponse>"})
    """
    block: dict[str, Any] = {"path": path, "operations": {
        operation: (value if isinstance(value, dict) else {"response": value})
        for operation, value in operations.items()}}
    if wsdl is not None:
        block["wsdl"] = wsdl
    block.update(_extra(extra))
    return _mock("soap", block, id, name)


def oauth(*, issuer: str | None = None, clients: list[dict[str, Any]] | None = None,
          users: list[dict[str, Any]] | None = None, id: str | None = None,
          name: str | None = None, **extra: Any) -> Mock:
    """An ``oauth`` mock: an OpenID Connect identity provider (docs/oidc.md).

    Args:
        issuer: the issuer URL; its path is where the endpoints are served
            (``http://127.0.0.1:<port>/oauth`` serves ``/oauth/token``, ...).
        clients: ``[{"clientId": "app", "clientSecret": "s"}]`` (default: one client
            ``test-client`` / ``test-secret``).
        users: ``[{"username": "ada", "password": "pw", "claims": {...}}]``.
        **extra: more keys of the ``oauth`` block (``tokenExpiry``, ``defaultScopes``).

    Example::

        oauth(issuer=f"{server.url}/oauth", users=[{"username": "ada", "password": "pw"}])
    """
    block: dict[str, Any] = {"clients": clients or [{"clientId": "test-client",
                                                     "clientSecret": "test-secret"}]}
    if issuer is not None:
        block["issuer"] = issuer
    if users:
        block["users"] = users
    block.update(_extra(extra))
    return _mock("oauth", block, id, name)
