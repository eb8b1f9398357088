"""CORS for the data plane: header echo on answers and preflight for unmatched ``OPTIONS``.

Source: behavior notes §4 ("CORS on by default: echo ``http://localhost:<any>`` /
``http://127.0.0.1:<any>`` origins (or a configured list; ``*`` if configured); methods ``GET,
POST, PUT, PATCH, DELETE, OPTIONS, HEAD``; headers ``Content-Type, Authorization,
X-Requested-With, Accept, Origin``; max-age 86400. OPTIONS: a matching mock answers, else 200
for an allowed origin, else 403 (also without ``Origin``)"; ``serverConfig.cors {enabled,
allowOrigins, allowMethods, allowHeaders, exposeHeaders, allowCredentials, maxAge}``,
``--cors-origins``).

Requests without an ``Origin`` header (every non-browser client) pay one header lookup.
"""
from __future__ import annotations

from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

from mocks.core.errors import ConfigError

Send = Callable[[dict[str, Any]], Awaitable[None]]

DEFAULT_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS, HEAD"
DEFAULT_HEADERS = "Content-Type, Authorization, X-Requested-With, Accept, Origin"
DEFAULT_MAX_AGE = 86400
_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback_origin(origin: str) -> bool:
    """``http(s)://localhost|127.0.0.1|[::1]`` with any port."""
    try:
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and (parts.hostname or "") in _LOOPBACK_HOSTS
    except ValueError:
        return False


def _text(value: Any, key: str) -> str:
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    if isinstance(value, str):
        return value
    raise ConfigError(f"serverConfig.cors.{key}", "expected a list of strings or one string")


class CorsPolicy:
    """A compiled ``serverConfig.cors`` block.

    Attributes:
        enabled: False turns CORS off (no headers; unmatched OPTIONS get the no-match 404).
        origins: allowed origins; empty means "loopback origins" (the default).
        allow_any: ``*`` was configured.
    Raises :class:`ConfigError` (``serverConfig.cors.<key>``) for a malformed block.
    """

    def __init__(self, block: dict[str, Any] | None = None, origins: list[str] | None = None):
        block = dict(block or {})
        if not isinstance(block, dict):
            raise ConfigError("serverConfig.cors", "expected a mapping")
        self.enabled = bool(block.get("enabled", True))
        configured = origins if origins is not None else block.get("allowOrigins") or []
        if isinstance(configured, str):
            configured = [item.strip() for item in configured.split(",") if item.strip()]
        self.allow_any = "*" in configured
        self.origins = frozenset(origin.rstrip("/") for origin in configured if origin != "*")
        self.allow_credentials = bool(block.get("allowCredentials", False))
        methods = _text(block.get("allowMethods", DEFAULT_METHODS), "allowMethods")
        headers = _text(block.get("allowHeaders", DEFAULT_HEADERS), "allowHeaders")
        expose = block.get("exposeHeaders")
        max_age = block.get("maxAge", DEFAULT_MAX_AGE)
        if not isinstance(max_age, int) or isinstance(max_age, bool) or max_age < 0:
            raise ConfigError("serverConfig.cors.maxAge", "expected a whole number of seconds")
        self._common: list[tuple[bytes, bytes]] = [(b"vary", b"Origin")]
        if self.allow_credentials:
            self._common.append((b"access-control-allow-credentials", b"true"))
        if expose:
            self._common.append((b"access-control-expose-headers",
                                 _text(expose, "exposeHeaders").encode("latin-1")))
        self._preflight = [(b"access-control-allow-methods", methods.encode("latin-1")),
                           (b"access-control-allow-headers", headers.encode("latin-1")),
                           (b"access-control-max-age", str(max_age).encode())]

    def allowed(self, origin: str) -> bool:
        """Whether answers to ``origin`` carry CORS headers."""
        if self.allow_any:
            return True
        if self.origins:
            return origin.rstrip("/") in self.origins
        return is_loopback_origin(origin)

    def headers(self, origin: str) -> list[tuple[bytes, bytes]]:
        """The CORS headers of any answer to an allowed ``origin``."""
        echoed = b"*" if self.allow_any and not self.allow_credentials else origin.encode(
            "latin-1", "replace")
        return [(b"access-control-allow-origin", echoed), *self._common]

    def preflight_headers(self) -> list[tuple[bytes, bytes]]:
        """The extra headers of a preflight answer (methods, headers, max-age)."""
        return list(self._preflight)

    def wrap(self, send: Send, origin: str) -> Send:
        """``send`` with this policy's headers added to the response start message.

        The start message is copied, never changed in place: static answers reuse theirs.
        """
        extra = self.headers(origin)

        async def send_with_cors(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        return send_with_cors


def compile_cors(config: Any, origins_override: list[str] | None = None) -> CorsPolicy:
    """The policy of a validated config (``serverConfig.cors``, a
    :class:`mocks.server_config.CorsConfig`), default when absent."""
    server_config = getattr(config, "server_config", None)
    cors = getattr(server_config, "cors", None)
    block = cors.model_dump(by_alias=True, exclude_none=True) if cors is not None else None
    return CorsPolicy(block, origins_override)
