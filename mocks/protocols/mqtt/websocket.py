"""The MQTT over WebSocket listener of a broker (``mqtt.websocket``).

:func:`serve_websocket` opens a :mod:`websockets` server whose connections carry MQTT packets
in binary messages (subprotocol ``mqtt``, or ``mqttv3.1`` as MQTT 3.1 clients name it), for
browser dashboards, MQTT.js and paho's ``transport="websockets"``. Before the upgrade is
accepted it answers:

* 404 when ``path`` is set and the request path (query string aside) is another;
* 403 when the request carries an ``Origin`` the data plane's CORS policy does not allow
  (loopback origins by default, else ``serverConfig.cors.allowOrigins`` or
  ``--cors-origins``): a page of a foreign site in a browser cannot reach the broker.
  Clients that send no ``Origin`` are admitted, and so is an ``Origin`` that is the very
  IP address and port the request was sent to (its ``Host``), as paho sends by default: no
  page can have that origin but one served by this listener, which serves none, and an IP
  address cannot be rebound by DNS;
* 400 when the client offers no MQTT subprotocol (MQTT 3.1.1 §6).

One message holds at most one packet of :data:`~mocks.protocols.mqtt.wire.MAX_PACKET_BYTES`
(plus its 5-byte fixed header); compression is off, so a message is never inflated past
that bound.

Source: behavior notes §4 (the data plane's CORS origins), §10 (``mqtt`` row); MQTT 3.1.1
§6 (WebSocket transport). Django-free.
"""
from __future__ import annotations

import ipaddress
import logging
import ssl
from http import HTTPStatus
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

from mocks.protocols.mqtt.wire import MAX_PACKET_BYTES

logger = logging.getLogger("mocks.mqtt")

#: The subprotocols offered, in order of preference.
SUBPROTOCOLS = ("mqtt", "mqttv3.1")
#: The largest WebSocket message accepted: one packet and its fixed header.
MAX_MESSAGE_BYTES = MAX_PACKET_BYTES + 5


def origin_is_host(origin: str, host: str | None) -> bool:
    """Whether ``origin`` (``http(s)://<address>[:port]``) names exactly ``host`` (the
    request's ``Host`` header) and that is an IP address, not a name."""
    try:
        parts = urlsplit(origin)
        ipaddress.ip_address((parts.hostname or "").strip("[]"))
    except ValueError:
        return False
    return (parts.scheme in ("http", "https") and host is not None
            and parts.netloc.lower() == host.strip().lower())


def upgrade_refusal(request_path: str, origin: str | None, host: str | None,
                    path: str | None,
                    origin_allowed: Callable[[str], bool]) -> tuple[HTTPStatus, str] | None:
    """``(status, text)`` refusing an upgrade at ``request_path`` from ``origin`` (None when
    the request has no ``Origin``) sent to ``host`` (the ``Host`` header), or None to go on
    (see the module docstring)."""
    if path is not None and request_path.split("?", 1)[0] != path:
        return HTTPStatus.NOT_FOUND, f"MQTT over WebSocket is served at {path}\n"
    if origin is not None and not origin_is_host(origin, host) and \
            not origin_allowed(origin):
        return (HTTPStatus.FORBIDDEN, "Origin not allowed: list it in "
                                      "serverConfig.cors.allowOrigins (or --cors-origins)\n")
    return None


async def serve_websocket(handler: Callable[[Any], Awaitable[None]], host: str | None,
                          port: int, path: str | None, ssl_context: ssl.SSLContext | None,
                          origin_allowed: Callable[[str], bool]) -> Any:
    """Start the listener on ``host:port`` (``wss`` with ``ssl_context``); ``handler`` gets
    each accepted connection. Returns the :mod:`websockets` server (``close()``,
    ``wait_closed()``). Raises ``OSError`` when the port cannot be bound."""
    from websockets.asyncio.server import serve

    def process_request(connection: Any, request: Any) -> Any:
        headers = request.headers
        refusal = upgrade_refusal(request.path, headers.get("Origin"), headers.get("Host"),
                                  path, origin_allowed)
        if refusal is None:
            return None
        logger.info("MQTT over WebSocket upgrade refused (%s): %s", refusal[0].value,
                    refusal[1].strip())
        return connection.respond(*refusal)

    return await serve(handler, host, port, ssl=ssl_context, process_request=process_request,
                       subprotocols=list(SUBPROTOCOLS), max_size=MAX_MESSAGE_BYTES,
                       compression=None, logger=logger)
