"""A client of one remote engine's control port, and the wire form of what it exchanges.

:class:`RemoteEngine` speaks to :class:`~mocks.engine.control.EngineControlApp` over HTTP
(behavior notes §16): every request carries ``X-Engine-Token``, bodies are JSON, no
``Origin`` header is ever sent, and every call is bounded in time (:data:`CONNECT_TIMEOUT`,
:data:`CALL_TIMEOUT`, :data:`PUSH_TIMEOUT` seconds). It offers the subset of
``EngineControl`` the admin merges across engines (request log, verification, traffic
counters, status) and the config push (``POST /config?version=N``).

:func:`join_admin` is the engine side of split mode: ``mockd engine --join URL`` registers the
engine with an admin (``POST /engines``, admin API key) and repeats the registration every
:data:`JOIN_INTERVAL` seconds, so an admin that restarted or missed the engine learns of it
again and pushes it the current config.

Django-free (runs in ``mockd engine`` and on the admin's event loop).
Source: ARCHITECTURE "Processes and ports", "Scale"; behavior notes §1 "Other routes"
(``/engines``), §16; issue 32 items 1 and 3.
"""
from __future__ import annotations

import asyncio
import hmac
import logging
import threading
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlencode

import orjson

if TYPE_CHECKING:  # httpx loads on the first call: an engine that never calls out skips it
    import httpx

logger = logging.getLogger("mockd.engines")

#: Seconds to open a connection to an engine.
CONNECT_TIMEOUT = 2.0
#: Seconds a read or a small command may take.
CALL_TIMEOUT = 5.0
#: Seconds a config push may take (a large config compiles on the engine before it answers).
PUSH_TIMEOUT = 30.0
#: Seconds between two registrations of a joined engine (``--join``).
JOIN_INTERVAL = 5.0
#: Header carrying the engine token (behavior notes §16).
TOKEN_HEADER = "X-Engine-Token"


class EngineCallError(Exception):
    """A call to a remote engine failed: not reachable, timed out, or an answer other than
    2xx. ``status`` is the HTTP status (None when no answer came); ``code`` the engine's
    ``error`` code when it sent one (``validation_error`` for a config it refused)."""

    def __init__(self, message: str, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code


class RemoteEngine:
    """HTTP client of one engine-control port.

    Args:
        url: the engine-control base URL (``http://127.0.0.1:4281``); no trailing slash needed.
        token: the engine token; never logged.

    One ``httpx.AsyncClient`` per event loop (made on first use on that loop), so the admin
    may call from its serving loop and a start-up loop alike. Every method raises
    :class:`EngineCallError` on failure.
    """

    def __init__(self, url: str, token: str):
        self.url = url.rstrip("/")
        self._token = token
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def has_token(self, token: str) -> bool:
        """Whether ``token`` is the one this client sends (constant-time compare)."""
        return hmac.compare_digest(token.encode("utf-8"), self._token.encode("utf-8"))

    def __repr__(self) -> str:
        return f"RemoteEngine({self.url!r})"

    def _http(self) -> httpx.AsyncClient:
        import httpx

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = httpx.AsyncClient(
                base_url=self.url, trust_env=False, headers={TOKEN_HEADER: self._token},
                timeout=httpx.Timeout(CALL_TIMEOUT, connect=CONNECT_TIMEOUT),
                limits=httpx.Limits(max_connections=8, max_keepalive_connections=2))
            self._loop = loop
        return self._client

    async def close(self) -> None:
        """Close the client of the running loop (a later call opens a new one)."""
        client, self._client = self._client, None
        if client is not None and self._loop is asyncio.get_running_loop():
            await client.aclose()

    async def call(self, method: str, path: str, *, query: dict[str, Any] | None = None,
                   body: bytes | None = None, timeout: float = CALL_TIMEOUT) -> Any:
        """One request; returns the decoded JSON answer. Raises :class:`EngineCallError`."""
        import httpx

        if query:
            path = f"{path}?{urlencode(query)}"
        headers = {"Content-Type": "application/json"} if body is not None else None
        try:
            answer = await self._http().request(method, path, content=body, headers=headers,
                                                timeout=httpx.Timeout(timeout,
                                                                      connect=CONNECT_TIMEOUT))
        except httpx.HTTPError as error:
            raise EngineCallError(f"{method} {self.url}{path.split('?')[0]}: "
                                  f"{type(error).__name__} {error}".rstrip()) from None
        try:
            payload = orjson.loads(answer.content) if answer.content else None
        except orjson.JSONDecodeError:
            payload = None
        if answer.status_code >= 300:
            code = payload.get("error") if isinstance(payload, dict) else None
            message = payload.get("message") if isinstance(payload, dict) else None
            raise EngineCallError(f"{method} {self.url}{path.split('?')[0]}: "
                                  f"{answer.status_code} {message or answer.reason_phrase}",
                                  answer.status_code, code)
        return payload

    # ------------------------------------------------------------------ commands
    async def health(self) -> dict[str, Any]:
        """``{status, timestamp, configVersion}`` of the engine."""
        return await self.call("GET", "/health")

    async def push(self, document: bytes, version: int) -> dict[str, Any]:
        """Load a whole config (``document``: its JSON bytes) as ``version``; returns
        ``{message, mocks}``."""
        return await self.call("POST", "/config", query={"version": version}, body=document,
                               timeout=PUSH_TIMEOUT)

    async def status(self) -> dict[str, Any]:
        """The engine's ``GET /status`` (see ``EngineControl.status``)."""
        return await self.call("GET", "/status")

    async def traffic(self) -> dict[str, Any]:
        """The engine's traffic counters in the shape of ``TrafficCounters.snapshot``."""
        return traffic_from_json(await self.call("GET", "/traffic"))

    async def requests(self, query: dict[str, Any]) -> dict[str, Any]:
        """``{requests, count, total}`` for a ``GET /requests`` query."""
        return await self.call("GET", "/requests", query=query)

    async def request(self, entry_id: str) -> dict[str, Any] | None:
        """One request-log entry, or None when the engine has none with that id."""
        try:
            return await self.call("GET", f"/requests/{entry_id}")
        except EngineCallError as error:
            if error.status == 404:
                return None
            raise

    async def clear_requests(self) -> int:
        """Clear the engine's request log; returns how many entries went."""
        return int((await self.call("DELETE", "/requests")).get("cleared", 0))

    async def verification(self, mock_id: str) -> dict[str, Any]:
        """``{mockId, callCount, firstCalledAt?, lastCalledAt?}``; a mock the engine does not
        know counts 0 calls."""
        try:
            return await self.call("GET", f"/mocks/{mock_id}/verify")
        except EngineCallError as error:
            if error.status == 404:
                return {"mockId": mock_id, "callCount": 0}
            raise

    async def invocations(self, mock_id: str, limit: int, offset: int = 0) -> dict[str, Any]:
        """``{invocations, count, total}`` of one mock, oldest first."""
        try:
            return await self.call("GET", f"/mocks/{mock_id}/invocations",
                                   query={"limit": limit, "offset": offset})
        except EngineCallError as error:
            if error.status == 404:
                return {"invocations": [], "count": 0, "total": 0}
            raise

    async def clear_invocations(self, mock_id: str) -> int:
        """Forget one mock's calls; returns how many."""
        try:
            answer = await self.call("DELETE", f"/mocks/{mock_id}/invocations")
        except EngineCallError as error:
            if error.status == 404:
                return 0
            raise
        return int(answer.get("cleared", 0))


def filter_query(filters: Any, limit: int, offset: int = 0) -> dict[str, Any]:
    """The ``GET /requests`` query of a :class:`~mocks.engine.requestlog.RequestFilter`, with
    the page replaced by ``limit``/``offset`` (a merge asks every engine for the first
    ``offset + limit`` entries)."""
    query: dict[str, Any] = {"limit": limit, "offset": offset}
    for key, name in (("method", "method"), ("path", "path"), ("matched", "matched"),
                      ("status", "status"), ("protocol", "protocol"),
                      ("workspace_id", "workspaceId")):
        value = getattr(filters, key)
        if value is not None:
            query[name] = value
    if filters.has_error is not None:
        query["hasError"] = "true" if filters.has_error else "false"
    if filters.unmatched_only:
        query["unmatchedOnly"] = "true"
    query.update(filters.extra or {})
    return query


def traffic_to_json(snapshot: dict[str, Any]) -> dict[str, Any]:
    """``TrafficCounters.snapshot()`` with its tuple keys as lists (``[[key..., value]]``),
    so it crosses the engine link as JSON."""
    out = dict(snapshot)
    for name in ("requests", "durations", "durationSums"):
        out[name] = [[*key, value] for key, value in snapshot.get(name, {}).items()]
    return out


def traffic_from_json(payload: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`traffic_to_json` (key lengths: 3 for ``requests``, 2 for
    ``durations`` and ``durationSums``)."""
    out = dict(payload)
    for name, width in (("requests", 3), ("durations", 2), ("durationSums", 2)):
        out[name] = {tuple(row[:width]): row[width] for row in payload.get(name, [])}
    return out


def merge_traffic(snapshots: list[dict[str, Any]]) -> dict[str, Any]:
    """The sum of several traffic snapshots (same shape as one)."""
    merged: dict[str, Any] = {"requests": {}, "durations": {}, "durationSums": {},
                              "matchHits": {}, "matchMisses": 0, "errors": {}, "total": 0}
    for snapshot in snapshots:
        for name in ("requests", "durationSums", "matchHits", "errors"):
            target = merged[name]
            for key, value in snapshot.get(name, {}).items():
                target[key] = target.get(key, 0) + value
        for key, buckets in snapshot.get("durations", {}).items():
            target = merged["durations"].setdefault(key, [0] * len(buckets))
            for index, value in enumerate(buckets):
                target[index] += value
        merged["matchMisses"] += snapshot.get("matchMisses", 0)
        merged["total"] += snapshot.get("total", 0)
    return merged


# ---------------------------------------------------------------------------- join


def join_admin(admin_url: str, api_key: str | None, engine_url: str, token: str,
               version_of: Callable[[], int], name: str | None = None,
               stop: threading.Event | None = None,
               interval: float = JOIN_INTERVAL) -> threading.Thread:
    """Start a daemon thread that registers this engine with the admin at ``admin_url``
    (``POST /engines {url, token, configVersion, name?}`` with the admin API key in
    ``X-API-Key``; ``version_of()`` gives the config version the engine serves) at once
    and again every ``interval`` seconds until ``stop`` is set (split mode, ``mockd engine
    --join``). Each registration is bounded by :data:`CALL_TIMEOUT`; a refusal (401, 400) or
    an unreachable admin is logged once per change of reason, and retried. Returns the
    thread."""
    stop = stop or threading.Event()
    body = {"url": engine_url, "token": token}
    if name:
        body["name"] = name
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["X-API-Key"] = api_key

    def loop() -> None:
        import httpx

        last_problem: str | None = None
        with httpx.Client(base_url=admin_url.rstrip("/"), trust_env=False,
                          timeout=httpx.Timeout(CALL_TIMEOUT, connect=CONNECT_TIMEOUT)) as client:
            while not stop.is_set():
                problem = None
                try:
                    answer = client.post("/engines", headers=headers, content=orjson.dumps(
                        {**body, "configVersion": version_of()}))
                    if answer.status_code >= 300:
                        problem = f"{answer.status_code} {answer.text[:200]}"
                except httpx.HTTPError as error:
                    problem = f"{type(error).__name__} {error}"
                if problem != last_problem:
                    if problem:
                        logger.warning("cannot register with the admin at %s: %s", admin_url,
                                       problem)
                    else:
                        logger.info("registered with the admin at %s", admin_url)
                    last_problem = problem
                stop.wait(interval if problem is None else min(interval, 1.0))

    thread = threading.Thread(target=loop, name="mockd-join", daemon=True)
    thread.start()
    return thread

