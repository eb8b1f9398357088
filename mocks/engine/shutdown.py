"""Ending every open connection cleanly when the server stops (SIGTERM, SIGINT).

:func:`end_connections` is what the runner awaits once its listeners stop accepting, before
the listener services (gRPC servers, MQTT brokers) stop and before the HTTP servers close
what is left:

* SSE, chunked and NDJSON streams and the admin's request-log streams are stopped with the
  reason ``server_stopping``; an SSE stream sends ``event: shutdown`` (data ``server shutting
  down``) and then ends its response, the others just end their response;
* WebSocket connections get a close frame 1001 "server shutting down" (going away), sent by
  each connection's own writer, and a bounded wait for the closing handshakes to finish.

gRPC calls in progress end with status UNAVAILABLE when their server stops (the server's
shutdown cancels them), and MQTT brokers close their clients' TCP connections (an MQTT
3.1.1 session has no server-sent DISCONNECT); both happen in the listener services'
``stop()``, which the runner calls after this.

Source: issue 33 item 5; docs/operations.md "Shutdown and crash safety". Runs on the
engine's event loop; Django-free.
"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

logger = logging.getLogger("mockd.shutdown")

#: Close code and reason of the WebSocket connections still open when the server stops.
WEBSOCKET_CLOSE_CODE = 1001
WEBSOCKET_CLOSE_REASON = "server shutting down"
#: Seconds the closing handshakes of WebSocket connections may take before the HTTP server
#: closes what is left (the whole stop must stay well under 5 s).
WEBSOCKET_CLOSE_WAIT = 1.0


async def end_connections(control: Any, wait_seconds: float = WEBSOCKET_CLOSE_WAIT,
                          ) -> dict[str, int]:
    """End the open streams and WebSocket connections of ``control``'s engine (an
    :class:`~mocks.engine.control.EngineControl`); returns ``{"streams": n,
    "websocket": n}``, how many of each were asked to end. Waits at most ``wait_seconds``
    for WebSocket connections to finish closing. Never raises."""
    ended = {"streams": 0, "websocket": 0}
    try:
        ended["streams"] = control.stop_streams()
    except Exception:  # noqa: BLE001 - the stop goes on for the other connections
        logger.exception("ending the open streams failed")
    hub = (control.engine.shared_state or {}).get("websocket")
    if hub is None:  # no WebSocket mock was ever compiled: no connection to close
        return ended
    try:
        ended["websocket"] = hub.close_all(list(hub.connections.values()),
                                           WEBSOCKET_CLOSE_CODE, WEBSOCKET_CLOSE_REASON)
    except Exception:  # noqa: BLE001
        logger.exception("closing the WebSocket connections failed")
        return ended
    deadline = time.monotonic() + wait_seconds
    while hub.connections and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return ended
