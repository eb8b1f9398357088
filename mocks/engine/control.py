"""Engine control: the small ASGI app on the engine-control port (default first free from 4281).

The admin side drives an engine through :class:`EngineControl`; in full mode that is an
in-process call, in split mode it is HTTP to this app. Routes mirror the admin's (behavior
notes §16); this module starts with health and the config push, and grows with the features
that need it.

Source: ARCHITECTURE "Processes and ports"; behavior notes §16.
"""
from __future__ import annotations

from typing import Any

import orjson

from .app import Receive, Scope, Send, acknowledge_lifespan, read_body
from .core import Engine, utc_timestamp
from .errors import ConfigError
from .loader import validate_config
from .responses import JSON_TYPE, send_simple


class EngineControl:
    """What the admin side may ask of an engine (in-process implementation).

    Every method runs on the engine's event loop (ARCHITECTURE seam 5).
    """

    def __init__(self, engine: Engine):
        self.engine = engine

    async def health(self) -> dict[str, Any]:
        """``{"status": "healthy", "timestamp"}``."""
        return {"status": "healthy", "timestamp": utc_timestamp()}

    async def load_config(self, document: dict[str, Any]) -> dict[str, Any]:
        """Validate and load a whole config document; raises :class:`ConfigError`."""
        snapshot = self.engine.load(validate_config(document))
        return {"message": "Configuration loaded", "mocks": snapshot.mock_count}


class EngineControlApp:
    """HTTP face of :class:`EngineControl` (loopback only; no auth; not for clients)."""

    def __init__(self, control: EngineControl):
        self.control = control

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await acknowledge_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        if path == "/health" and method == "GET":
            await _answer(send, 200, await self.control.health())
        elif path == "/config" and method == "POST":
            body = await read_body(receive, 64 * 1024 * 1024, None)
            try:
                document = orjson.loads(body or b"{}")
                await _answer(send, 200, await self.control.load_config(document))
            except orjson.JSONDecodeError:
                await _answer(send, 400, {"error": "invalid_json",
                                          "message": "Invalid JSON in request body"})
            except ConfigError as error:
                await _answer(send, 400, {"error": "validation_error", "message": str(error)})
        else:
            await _answer(send, 404, {"error": "not_found", "message": "Resource not found"})


async def _answer(send: Send, status: int, payload: dict[str, Any]) -> None:
    await send_simple(send, status, [(b"content-type", JSON_TYPE)], orjson.dumps(payload))
