"""The admin gateway: one pure ASGI middleware in front of the Django admin application.

Order of work for every HTTP request on the admin port (behavior notes §2 and §3):
``Host`` check (400 ``host_not_allowed``, against DNS rebinding) -> static path check (404 for
``.``/``..`` segments) -> CORS preflight -> rate limit (per client IP) -> API key -> body size
(10 MiB, 413) -> the Django app. Every answer, including the gateway's own, gets the security headers, ``Vary:
Origin``, the rate-limit headers and (for loopback origins) the CORS headers; headers the
application already set (the request stream's ``Cache-Control: no-cache``) are kept.

It is pure ASGI so it costs no thread hop and sees streaming answers as they go. Django and
ninja behind it never see an unauthenticated or oversized request. For the same reason
django-prometheus never counts the gateway's own answers (nor static files, served before
Django's middleware): the gateway records those itself
(:func:`mockd_project.metrics.record_gateway_answer`).

Source: SPEC "Authentication"; behavior notes §2, §3; docs/security.md "The admin port: API
key, origins and Host".
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable
from urllib.parse import unquote, urlsplit

import orjson

from mocks.engine.hosts import LOOPBACK_ONLY, HostPolicy

from mockd_project import auth
from mockd_project.runtime import runtime

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

#: Admin request body limit in bytes (behavior notes §3 and §18).
MAX_ADMIN_BODY_SIZE = 10 * 1024 * 1024

#: Requests per second per client IP, and the burst (behavior notes §3).
RATE_PER_SECOND = 100.0
RATE_BURST = 200.0

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"x-xss-protection", b"1; mode=block"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
    (b"content-security-policy", b"default-src 'self'"),
    (b"cache-control", b"no-store"),
    (b"vary", b"Origin"),
)
CORS_METHODS = b"GET, POST, PUT, PATCH, DELETE, OPTIONS"
CORS_HEADERS = b"Content-Type, Authorization, X-API-Key"
CORS_MAX_AGE = b"86400"
_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: Paths whose pages need inline scripts and styles (Swagger UI, Django admin).
_RELAXED_CSP_PREFIXES = ("/docs", "/admin/", "/static/")


#: Methods that change nothing: a cross-origin page may send them (answers are only readable
#: by loopback origins, through CORS).
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

#: 403 body for a write from a non-loopback origin.
CROSS_ORIGIN_WRITE = {"error": "cors_forbidden",
                      "message": "Cross-origin writes are refused: the admin API accepts "
                                 "writes from loopback origins (localhost, 127.0.0.1, [::1]) "
                                 "or from clients that send no Origin header"}


def loopback_origin(origin: bytes | None) -> bool:
    """Whether an ``Origin`` is a loopback origin (``localhost``, ``127.0.0.1``, ``[::1]``,
    any port) that CORS answers may echo."""
    if not origin:
        return False
    try:
        parts = urlsplit(origin.decode("latin-1"))
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and (parts.hostname or "") in _LOOPBACK_HOSTS


@dataclass(frozen=True, slots=True)
class BucketState:
    """The outcome of one :meth:`TokenBuckets.take`, as the rate-limit headers tell it.

    Attributes:
        allowed: whether the request may go on (a token was taken).
        limit: requests a full bucket allows at once (the burst): ``X-RateLimit-Limit``.
        remaining: whole tokens left after this request: ``X-RateLimit-Remaining``; that many
            more requests are allowed right now.
        full_in: seconds until the bucket is full again (``X-RateLimit-Reset`` is now plus
            this, rounded up to a whole Unix second).
        retry_after: seconds until the next token (0 when one is left): ``Retry-After`` of a
            429, rounded up to at least 1.
    """

    allowed: bool
    limit: int
    remaining: int
    full_in: float
    retry_after: float


class TokenBuckets:
    """Per-IP token buckets: ``rate`` tokens per second up to ``burst`` (behavior notes §3 and
    §18: 100 requests/s per IP, bursts of 200).

    A new client starts with a full bucket, so ``burst`` requests in a row are allowed, then
    one every ``1/rate`` seconds. The headers derived from :class:`BucketState` tell exactly
    that: the limit is the burst, the remaining count the whole tokens left.
    """

    def __init__(self, rate: float, burst: float):
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, key: str, now: float) -> BucketState:
        """Take one token for ``key`` at monotonic time ``now`` (seconds)."""
        tokens, last = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        allowed = tokens >= 1.0
        if allowed:
            tokens -= 1.0
        if len(self._buckets) > 10000:
            self._buckets.clear()  # bounded memory; a reset only ever grants more tokens
        self._buckets[key] = (tokens, now)
        return BucketState(allowed, int(self.burst), int(tokens),
                           (self.burst - tokens) / self.rate,
                           max(0.0, 1.0 - tokens) / self.rate)


def _admin_rate_from_environment() -> float:
    raw = os.environ.get("MOCKD_ADMIN_RATE_LIMIT", "")
    try:
        return float(raw) if raw else RATE_PER_SECOND
    except ValueError:
        return RATE_PER_SECOND


class AdminGateway:
    """ASGI middleware for the admin port (see the module docstring).

    Args:
        app: the Django ASGI application (with static files).
        auth_enabled: False with ``--no-auth``. The expected key is read from
            ``runtime.api_key`` on every request so a rotated key applies at once.
        max_body_size: body limit in bytes.
        rate_per_second: per-IP rate (0 disables rate limiting; env ``MOCKD_ADMIN_RATE_LIMIT``
            sets the default).
        static_prefix: path prefix ``app`` answers without Django's middleware (static
            files, ``"/static/"``); the gateway counts those answers in the admin metrics and
            answers 404 ``not_found`` to a path below it with a ``.`` or ``..`` segment
            (:func:`static_path_escapes`), so no traversal reaches the file finders.
        hosts: the ``Host`` values answered (default: loopback names and IP addresses); any
            other gets 400 ``host_not_allowed`` before anything else is looked at.
    """

    def __init__(self, app: Any, *, auth_enabled: bool = True,
                 max_body_size: int = MAX_ADMIN_BODY_SIZE,
                 rate_per_second: float | None = None, static_prefix: str | None = None,
                 hosts: HostPolicy = LOOPBACK_ONLY):
        self.app = app
        self.static_prefix = static_prefix
        self.hosts = hosts
        self.auth_enabled = auth_enabled
        self.max_body_size = max_body_size
        rate = _admin_rate_from_environment() if rate_per_second is None else rate_per_second
        # burst = twice the rate: 100/s with a burst of 200 (behavior notes §3)
        self.buckets = TokenBuckets(rate, rate * RATE_BURST / RATE_PER_SECOND) if rate > 0 else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from mockd_project.metrics import record_gateway_answer

        started = time.perf_counter()
        method = scope["method"]
        path = scope["path"]
        headers = dict(scope["headers"])
        origin = headers.get(b"origin")
        extra: list[tuple[bytes, bytes]] = []
        if loopback_origin(origin):
            extra += [(b"access-control-allow-origin", origin),
                      (b"access-control-allow-methods", CORS_METHODS),
                      (b"access-control-allow-headers", CORS_HEADERS),
                      (b"access-control-max-age", CORS_MAX_AGE)]
        answered = {"status": 0}
        # django-prometheus measures what goes through Django's middleware; the gateway counts
        # the rest (its own answers below, static files) so each answer is counted once.
        measured_here = True
        relaxed = path.startswith(_RELAXED_CSP_PREFIXES)

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answered["status"] = message["status"]
                present = {name.lower() for name, _ in message.get("headers", [])}
                added = [(name, value) for name, value in (*SECURITY_HEADERS, *extra)
                         if name not in present
                         and not (relaxed and name == b"content-security-policy")]
                message = {**message, "headers": [*message.get("headers", []), *added]}
            await send(message)

        try:
            # Before anything else: a page on a rebound DNS name is same-origin for its
            # browser, so neither the Origin checks nor CORS would stop it from reading.
            refused_host = self.hosts.refusal(scope["headers"], "admin port")
            if refused_host is not None:
                await _json(send_with_headers, 400, refused_host)
                return
            if (self.static_prefix and path.startswith(self.static_prefix)
                    and static_path_escapes(path)):
                await _json(send_with_headers, 404, {
                    "error": "not_found",
                    "message": f"No static file at {path[:200]}: static paths may not "
                               f"contain '.' or '..' segments, backslashes or NUL bytes"})
                return
            if method == "OPTIONS" and b"access-control-request-method" in headers:
                # CORS preflight runs before authentication (behavior notes §2).
                if loopback_origin(origin):
                    await _plain(send_with_headers, 200, b"", b"text/plain")
                else:
                    await _json(send_with_headers, 403, {
                        "error": "cors_forbidden",
                        "message": "Origin not allowed; the admin API accepts loopback "
                                   "origins only"})
                return
            if origin and method not in SAFE_METHODS and not loopback_origin(origin):
                # A page on another site may send "simple" cross-origin writes (form or
                # text/plain bodies, no preflight). They are refused whether or not a key is
                # required, so --no-auth does not open the admin API to every web page.
                await _json(send_with_headers, 403, CROSS_ORIGIN_WRITE)
                return
            if self.buckets is not None:
                client = (scope.get("client") or ("unknown", 0))[0]
                state = self.buckets.take(client, time.monotonic())
                # Limit is the burst a full bucket allows and Remaining the requests still
                # allowed now, so Remaining counts down from Limit and a 429 comes at 0.
                reset = math.ceil(time.time() + state.full_in)
                extra += [(b"x-ratelimit-limit", str(state.limit).encode()),
                          (b"x-ratelimit-remaining", str(state.remaining).encode()),
                          (b"x-ratelimit-reset", str(reset).encode())]
                if not state.allowed:
                    retry = str(max(1, math.ceil(state.retry_after))).encode()
                    await _plain(send_with_headers, 429, b"Too Many Requests",
                                 b"text/plain; charset=utf-8", [(b"retry-after", retry)])
                    return
            if self.auth_enabled and not auth.is_exempt(path, method):
                presented = auth.presented_key(headers, scope.get("query_string", b""))
                if presented is None:
                    await _json(send_with_headers, 401, auth.MISSING_API_KEY)
                    return
                if not auth.key_matches(presented, runtime.api_key or ""):
                    await _json(send_with_headers, 401, auth.INVALID_API_KEY)
                    return
            declared = headers.get(b"content-length")
            if declared is not None and declared.isdigit() and int(declared) > self.max_body_size:
                await self._too_large(send_with_headers)
                return
            replay = await self._buffer_body(receive)
            if replay is None:
                await self._too_large(send_with_headers)
                return
            measured_here = bool(self.static_prefix) and path.startswith(self.static_prefix)
            await self.app(scope, replay, send_with_headers)
        finally:
            if measured_here:
                record_gateway_answer(method, answered["status"] or 500,
                                      time.perf_counter() - started)

    async def _too_large(self, send: Send) -> None:
        await _json(send, 413, {"error": "body_too_large",
                                "message": f"Request body exceeds {self.max_body_size} bytes "
                                           f"(10 MiB); send a smaller body"})

    async def _buffer_body(self, receive: Receive) -> Receive | None:
        """Read the whole body (≤ the limit) and return a ``receive`` that replays it, then
        hands over to the real one (so a later disconnect is still seen). None when too big."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                pending: list[dict[str, Any]] = [message]
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_size:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                pending = []
                break
        messages = [{"type": "http.request", "body": b"".join(chunks), "more_body": False},
                    *pending]

        async def replay() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            return await receive()

        return replay


def static_path_escapes(path: str) -> bool:
    """Whether a request path (as the server decoded it) has a ``.`` or ``..`` segment, a
    backslash or a NUL byte, before or after one more round of percent-decoding (Django's
    static handler decodes the path again): such a path may leave the static folders once a
    finder normalises it, so it is answered 404 before any lookup (``GET /static/../x``,
    ``/static/%2e%2e/x``, ``/static/%252e%252e/x``)."""
    for candidate in (path, unquote(path)):
        if "\\" in candidate or "\x00" in candidate or any(
                segment in (".", "..") for segment in candidate.split("/")):
            return True
    return False


async def _plain(send: Send, status: int, body: bytes, content_type: bytes,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type),
                            (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


async def _json(send: Send, status: int, payload: dict[str, Any]) -> None:
    await _plain(send, status, orjson.dumps(payload), b"application/json")


def build_admin_application(*, auth_enabled: bool,
                            hosts: HostPolicy = LOOPBACK_ONLY) -> AdminGateway:
    """The whole admin-port ASGI app: gateway -> static files -> Django (ninja API, Django
    admin; its middleware chain in one thread hop, :mod:`mockd_project.admin_handler`). ``hosts``: the ``Host`` values answered (:class:`AdminGateway`). Django must
    already be set up. This is the only way the admin port is served (``manage.py
    runserver`` refuses to run)."""
    import django
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    from mockd_project.admin_handler import AdminASGIHandler

    django.setup(set_prefix=False)  # what get_asgi_application() does first
    django_app = ASGIStaticFilesHandler(AdminASGIHandler())
    return AdminGateway(django_app, auth_enabled=auth_enabled, hosts=hosts,
                        static_prefix=django_app.base_url.path or None)
