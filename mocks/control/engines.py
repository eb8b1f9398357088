"""The engines an admin drives: its in-process engine plus remote ones, as one control.

:class:`EngineSet` is the registry behind ``GET /engines``: each remote engine (a worker of
``--workers N`` or a replica that joined with ``mockd engine --join``) with its health, the
config version it serves and the last push error. The admin keeps one monotonically
increasing config version; every committed change bumps it and is pushed at once to every
healthy engine (concurrently, each push bounded in time). A push that fails marks that
engine unhealthy with the error and its time; a checker task asks every engine's ``/health``
each :data:`CHECK_INTERVAL` seconds and pushes the current config to any engine that answers
with an older version (an engine that was down catches up by version, and a restarted engine
reports version 0).

:class:`FanOutControl` is what ``runtime.control`` holds in full mode: it forwards every
``EngineControl`` call to the local engine unchanged (the in-process path costs one
attribute lookup more), pushes each config to the remote engines too, and merges the reads
that span engines: the request log (newest first across engines; a remote entry's id gets
``@<engine id>`` appended so it stays unique), verification counts, invocations and the
traffic counters behind ``/metrics``. With ``--engines-only`` there is no local engine: the
config is kept here and every read comes from the remote engines.

Django-free; every coroutine runs on the admin's event loop (ARCHITECTURE seam 5).
Source: ARCHITECTURE "Processes and ports", "Scale"; behavior notes §1 "Other routes",
§16; issue 32 items 1 and 3.
"""
from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from urllib.parse import urlsplit

import orjson

from mocks.config import ConfigFile
from mocks.control.errors import AdminError
from mocks.core.errors import ConfigError
from mocks.engine.control import EngineControl
from mocks.engine.core import utc_timestamp
from mocks.engine.remote import (EngineCallError, RemoteEngine, filter_query, merge_traffic)
from mocks.engine.verification import CallCriteria, verify_calls
from mocks.loader import validate_config

logger = logging.getLogger("mockd.engines")

#: Seconds between two health checks of the remote engines.
CHECK_INTERVAL = 2.0
#: Most remote engines one admin drives (registrations past it are refused).
MAX_ENGINES = 256
#: Id of the admin's in-process engine in ``GET /engines``.
LOCAL_ENGINE_ID = "local"
#: Longest accepted engine URL, token and name.
MAX_URL_LENGTH = 2048
MAX_TOKEN_LENGTH = 512
MAX_NAME_LENGTH = 200


@dataclass
class EngineRecord:
    """One remote engine of the set.

    Attributes:
        id: ``eng_<12 hex>`` (``worker-<n>`` for a worker of ``--workers``).
        remote: its control-port client.
        name: a label it registered with, or None.
        worker: its worker number (1..N-1) when it is a worker of this process, else None.
        healthy: False until a push succeeded, and after a failed push or health check.
        config_version: the version the engine last reported or took.
        last_error, last_error_at: the last failure (push or health check) and its time.
        last_push_at, last_seen_at: times of the last successful push and answer.
        registered_at: when the engine was added.
    """

    id: str
    remote: RemoteEngine
    name: str | None = None
    worker: int | None = None
    healthy: bool = False
    config_version: int = 0
    last_error: str | None = None
    last_error_at: str | None = None
    last_push_at: str | None = None
    last_seen_at: str | None = None
    registered_at: str = field(default_factory=utc_timestamp)
    #: Successful pushes so far (a health answer sent before the latest push is stale).
    pushes: int = 0
    #: A worker's restarts after dying, and why it stays down when its supervisor gave up.
    restarts: int = 0
    gave_up: str | None = None

    def document(self) -> dict[str, Any]:
        """The ``GET /engines`` row: ``{id, url, name?, worker?, restarts?, status, healthy,
        configVersion, lastPushAt, lastSeenAt, lastError, lastErrorAt, registeredAt}``;
        ``status`` is ``healthy``, ``unhealthy`` (a push or health check failed, or a worker
        died and is being restarted), ``pending`` (registered, first push not done yet) or
        ``stopped`` (a worker that is not restarted again: ``lastError`` says why);
        ``restarts`` (workers only) counts its restarts after dying."""
        row: dict[str, Any] = {"id": self.id, "url": self.remote.url}
        if self.name:
            row["name"] = self.name
        if self.worker is not None:
            row["worker"] = self.worker
            row["restarts"] = self.restarts
        status = ("healthy" if self.healthy
                  else "stopped" if self.gave_up
                  else "pending" if self.last_push_at is None and self.last_error is None
                  else "unhealthy")
        row.update(status=status, healthy=self.healthy,
                   configVersion=self.config_version, lastPushAt=self.last_push_at,
                   lastSeenAt=self.last_seen_at, lastError=self.gave_up or self.last_error,
                   lastErrorAt=self.last_error_at, registeredAt=self.registered_at)
        return row

    def fail(self, error: Exception) -> None:
        """Mark the engine unhealthy with ``error`` (logged once per new message)."""
        message = str(error) or type(error).__name__
        if self.healthy or message != self.last_error:
            logger.warning("engine %s (%s) unhealthy: %s", self.id, self.remote.url, message)
        self.healthy = False
        self.last_error = message
        self.last_error_at = utc_timestamp()


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (a name or an IP address, IPv6 with or without brackets) is
    ``localhost`` or a loopback address (IPv4-mapped ones too); no name is resolved."""
    host = (host or "").strip("[]").lower()
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def engine_url_problem(url: str, remote_allowed: bool) -> str | None:
    """Why ``POST /engines`` refuses ``url`` (a ``url:`` message naming the fix), or None:
    the scheme must be http or https with a host, and without ``remote_allowed`` the host
    must be loopback (:func:`is_loopback`). The URL itself is not echoed (it may carry
    credentials)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        host = None
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        return "url: use an http:// or https:// URL with a host"
    if not remote_allowed and not is_loopback(host):
        return ("url: this admin listens on loopback and accepts engines on loopback only "
                "(127.0.0.1, ::1, localhost); start it with --allow-remote-engines, or with "
                "--host on a reachable interface, to drive engines on other machines")
    return None


class EngineSet:
    """The remote engines of one admin and the config version they should serve.

    ``version`` starts at 0 and grows by one on every config the admin makes live
    (:meth:`set_config`); ``document`` holds that config's JSON bytes for pushes. Methods
    run on the admin's event loop; none raises on an engine failure (the engine is marked
    unhealthy instead).

    Args:
        remote_allowed: whether ``POST /engines`` may register engines off loopback
            (:func:`engine_url_problem`): an admin on a non-loopback ``--host``, or one
            started with ``--allow-remote-engines``.
    """

    def __init__(self, remote_allowed: bool = True) -> None:
        self.remote_allowed = remote_allowed
        self.records: dict[str, EngineRecord] = {}
        self.version = 0
        self.document: bytes | None = None
        self._config: ConfigFile | None = None
        self._checker: asyncio.Task | None = None

    def set_config(self, config: ConfigFile) -> int:
        """Make ``config`` the current one; returns its new version. Serialises it only when
        there is an engine to push to (later engines serialise on demand)."""
        self.version += 1
        self._config = config
        self.document = self._dump(config) if self.records else None
        return self.version

    @staticmethod
    def _dump(config: ConfigFile) -> bytes:
        return orjson.dumps(config.model_dump(mode="json", by_alias=True, exclude_none=True))

    def _current_document(self) -> bytes | None:
        if self.document is None and self._config is not None:
            self.document = self._dump(self._config)
        return self.document

    def add(self, url: str, token: str, name: str | None = None,
            worker: int | None = None) -> tuple[EngineRecord, bool]:
        """Register an engine (or refresh the one with the same URL: its token and name);
        returns ``(record, created)``. Raises ValueError past :data:`MAX_ENGINES`."""
        url = url.rstrip("/")
        for record in self.records.values():
            if record.remote.url == url:
                if not record.remote.has_token(token):
                    record.remote = RemoteEngine(url, token)
                record.name = name or record.name
                return record, False
        if len(self.records) >= MAX_ENGINES:
            raise ValueError(f"at most {MAX_ENGINES} engines may be registered")
        engine_id = f"worker-{worker}" if worker is not None else f"eng_{secrets.token_hex(6)}"
        record = EngineRecord(engine_id, RemoteEngine(url, token), name=name, worker=worker)
        self.records[engine_id] = record
        return record, True

    def remove(self, engine_id: str) -> bool:
        """Forget an engine; False when the id is unknown."""
        return self.records.pop(engine_id, None) is not None

    def rows(self) -> list[dict[str, Any]]:
        """The ``GET /engines`` rows of the remote engines, in registration order."""
        return [record.document() for record in self.records.values()]

    def healthy(self) -> list[EngineRecord]:
        """The engines a merged read asks (healthy ones)."""
        return [record for record in self.records.values() if record.healthy]

    async def push(self, record: EngineRecord, remote: RemoteEngine | None = None) -> bool:
        """Push the current config to one engine (through ``remote``, a client of the
        running loop, when given; else the record's); True when it took it."""
        document = self._current_document()
        if document is None:
            return False
        version = self.version
        try:
            await (remote or record.remote).push(document, version)
        except EngineCallError as error:
            record.fail(error)
            return False
        record.healthy = True
        record.config_version = version
        record.pushes += 1
        record.last_push_at = record.last_seen_at = utc_timestamp()
        return True

    async def push_all(self) -> None:
        """Push the current config to every healthy engine at once (each bounded in time).
        An unhealthy engine is left to the health check, which pushes it the config once it
        answers: a change never waits on an engine known to be down."""
        healthy = self.healthy()
        if healthy:
            await asyncio.gather(*(self.push(record) for record in healthy))

    async def check(self, record: EngineRecord) -> None:
        """Ask one engine's ``/health``; push the current config when it reports an older
        version (catch-up), mark it unhealthy when it does not answer. A worker its
        supervisor gave up on is left alone."""
        if record.gave_up:
            return
        pushes = record.pushes
        try:
            health = await record.remote.health()
        except EngineCallError as error:
            if record.pushes == pushes:  # else a push since proved it alive
                record.fail(error)
            return
        record.last_seen_at = utc_timestamp()
        if record.pushes != pushes:
            return  # a push landed while asking: the answer may predate it
        reported = health.get("configVersion") if isinstance(health, dict) else None
        record.config_version = reported if isinstance(reported, int) else 0
        if record.config_version != self.version:
            await self.push(record)
        elif not record.healthy:
            record.healthy = True

    async def check_all(self) -> None:
        """:meth:`check` every engine at once."""
        if self.records:
            await asyncio.gather(*(self.check(record) for record in list(self.records.values())))

    def start_checker(self) -> None:
        """Start the periodic health check on the running loop (once per loop; a no-op
        without engines)."""
        if not self.records:
            return
        loop = asyncio.get_running_loop()
        if self._checker is None or self._checker.done() or self._checker.get_loop() is not loop:
            self._checker = loop.create_task(self._check_forever())

    async def _check_forever(self) -> None:
        while True:
            await asyncio.sleep(CHECK_INTERVAL)
            try:
                await self.check_all()
            except Exception:  # noqa: BLE001 - the checker must outlive one bad round
                logger.exception("engine health check failed")


#: Attributes an ``EngineControl`` sets on itself (the class has the others).
_ENGINE_ATTRIBUTES = frozenset({"engine", "request_log", "config_version"})


class NoEngine(AdminError, AttributeError):
    """503 ``no_engine``: the admin runs with ``--engines-only`` and the route needs an
    engine of its own (behavior notes §1 "Errors"). An AttributeError too, so that
    ``getattr(control, "engine", None)`` stays None on such an admin."""

    def __init__(self) -> None:
        super().__init__(503, "no_engine", "No engine connected: this admin runs with "
                                           "--engines-only and this route needs an engine "
                                           "of its own")


def _newest_first(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(entries, key=lambda entry: entry.get("timestamp") or "", reverse=True)


class FanOutControl:
    """``runtime.control`` of a full-mode admin: the local ``EngineControl`` (or None with
    ``--engines-only``) plus the remote engines of ``engines``.

    Args:
        local: the in-process engine control, or None.
        engines: the remote engines (:class:`EngineSet`).
        guard: ``guard(config) -> message or None``: a config the engines cannot serve
            together (``--workers N`` without a shared state store) is refused with
            :class:`ConfigError` naming the fix, before any engine takes it.

    Every attribute not defined here is the local control's. Without one (``--engines-only``)
    a method of ``EngineControl`` raises :class:`NoEngine` (503 ``no_engine``) when called;
    reading its engine or another attribute an ``EngineControl`` has (``engine``,
    ``table_store``, ``request_log``) raises :class:`NoEngine` at once, which is an
    AttributeError too (so ``hasattr(control, "engine")`` is False and an admin route that
    reaches the engine answers 503, not 500); other names raise AttributeError.
    """

    def __init__(self, local: Any, engines: EngineSet,
                 guard: Callable[[ConfigFile], str | None] | None = None):
        self.local = local
        self.engines = engines
        self.guard = guard
        self._config: ConfigFile | None = None if local is not None else validate_config(
            {"version": "1.0"})
        self._lock: asyncio.Lock | None = None
        self._started_at = time.time()

    def __getattr__(self, name: str) -> Any:
        local = self.__dict__.get("local")
        if local is not None:
            return getattr(local, name)
        # --engines-only: a route that needs the admin's own engine answers 503.
        if callable(getattr(EngineControl, name, None)):
            def unavailable(*args: Any, **kwargs: Any) -> Any:
                raise NoEngine()
            return unavailable
        if name in _ENGINE_ATTRIBUTES or hasattr(EngineControl, name):
            raise NoEngine()
        raise AttributeError(name)

    # ------------------------------------------------------------------ config
    async def apply_config(self, config: ConfigFile, base_dir: Any = None) -> dict[str, Any]:
        """Make ``config`` live on the local engine (raises :class:`ConfigError` as it does),
        then push it to every remote engine under a new version. Returns the local answer
        (``{message, mocks}``)."""
        if self.guard is not None:
            refused = self.guard(config)
            if refused:
                raise ConfigError("", refused)
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.local is not None:
                answer = await self.local.apply_config(config, base_dir)
            else:
                answer = {"message": "Configuration loaded", "mocks": len(config.mocks)}
                self._config = config
            self.engines.set_config(config)
            await self.engines.push_all()
        self.engines.start_checker()
        return answer

    async def load_config(self, document: dict[str, Any]) -> dict[str, Any]:
        """Validate a whole config document and :meth:`apply_config` it."""
        return await self.apply_config(validate_config(document))

    async def current_config(self) -> ConfigFile:
        """The config the engines serve (the local engine's, else the last one pushed)."""
        if self.local is not None:
            return await self.local.current_config()
        return self._config

    async def mocks(self) -> dict[str, Any]:
        """``{mocks, count}`` of the live config."""
        if self.local is not None:
            return await self.local.mocks()
        mocks = [mock.model_dump(mode="json", by_alias=True, exclude_none=True)
                 for mock in self._config.mocks]
        return {"mocks": mocks, "count": len(mocks)}

    async def has_mock(self, mock_id: str) -> bool:
        """Whether the live config holds a mock with this id."""
        if self.local is not None:
            return await self.local.has_mock(mock_id)
        return any(mock.id == mock_id for mock in self._config.mocks)

    async def health(self) -> dict[str, Any]:
        """The local engine's health, or ``{status: healthy, timestamp}``."""
        if self.local is not None:
            return await self.local.health()
        return {"status": "healthy", "timestamp": utc_timestamp()}

    # ------------------------------------------------------------------ merged reads
    async def _remote(self, call: Callable[[RemoteEngine], Any]) -> list[tuple[str, Any]]:
        """``call(remote)`` on every healthy engine at once: ``[(engine id, answer)]`` of
        those that answered (an engine that fails is marked unhealthy and left out)."""
        records = self.engines.healthy()
        if not records:
            return []
        answers = await asyncio.gather(*(call(record.remote) for record in records),
                                       return_exceptions=True)
        out = []
        for record, answer in zip(records, answers):
            if isinstance(answer, EngineCallError):
                record.fail(answer)
            elif isinstance(answer, BaseException):
                raise answer
            else:
                out.append((record.id, answer))
        return out

    async def status(self) -> dict[str, Any]:
        """The local status with ``requestCount`` summed over every engine (with
        ``--engines-only``, built from the pushed config and the remote engines)."""
        if self.local is not None:
            answer = dict(await self.local.status())
        else:
            by_type: dict[str, int] = {}
            enabled: dict[str, int] = {}
            for mock in self._config.mocks:
                by_type[mock.type] = by_type.get(mock.type, 0) + 1
                if mock.enabled:
                    enabled[mock.type] = enabled.get(mock.type, 0) + 1
            answer = {"ready": True, "mockCount": len(self._config.mocks),
                      "activeMocks": sum(enabled.values()), "requestCount": 0,
                      "mocksByType": by_type, "enabledByType": enabled,
                      "streamSubscribers": 0, "openStreams": {}, "grpcPorts": [],
                      "startedAt": utc_timestamp(self._started_at),
                      "uptime": int(time.time() - self._started_at)}
        for _, remote in await self._remote(lambda remote: remote.status()):
            answer["requestCount"] += int(remote.get("requestCount", 0))
        return answer

    async def traffic(self) -> dict[str, Any]:
        """The traffic counters summed over every engine (``/metrics``)."""
        snapshots = [await self.local.traffic()] if self.local is not None else []
        if not self.engines.records:
            return snapshots[0] if snapshots else merge_traffic([])
        snapshots += [answer for _, answer in await self._remote(lambda r: r.traffic())]
        return merge_traffic(snapshots)

    async def requests(self, filters: Any) -> dict[str, Any]:
        """``{requests, count, total}`` across engines, newest first; remote ids carry
        ``@<engine id>``."""
        if not self.engines.records and self.local is not None:
            return await self.local.requests(filters)
        window = filters.offset + filters.limit
        entries: list[dict[str, Any]] = []
        total = 0
        if self.local is not None:
            local = await self.local.requests(dataclasses.replace(filters, limit=window,
                                                                  offset=0))
            entries += local["requests"]
            total += local["total"]
        query = filter_query(filters, window)
        for engine_id, answer in await self._remote(lambda remote: remote.requests(query)):
            for entry in answer.get("requests", []):
                entries.append({**entry, "id": f"{entry['id']}@{engine_id}"})
            total += int(answer.get("total", 0))
        page = _newest_first(entries)[filters.offset:window]
        return {"requests": page, "count": len(page), "total": total}

    async def request(self, entry_id: str) -> dict[str, Any] | None:
        """One entry by id (``req-…`` local, ``req-…@<engine id>`` remote), or None."""
        base, _, engine_id = entry_id.partition("@")
        if not engine_id:
            return await self.local.request(entry_id) if self.local is not None else None
        record = self.engines.records.get(engine_id)
        if record is None:
            return None
        try:
            entry = await record.remote.request(base)
        except EngineCallError as error:
            record.fail(error)
            return None
        return {**entry, "id": entry_id} if entry is not None else None

    async def clear_requests(self) -> int:
        """Clear every engine's request log; returns how many entries went in all."""
        cleared = await self.local.clear_requests() if self.local is not None else 0
        for _, answer in await self._remote(lambda remote: remote.clear_requests()):
            cleared += answer
        return cleared

    async def verification(self, mock_id: str) -> dict[str, Any]:
        """``{mockId, callCount, firstCalledAt?, lastCalledAt?}`` summed over engines."""
        parts = [await self.local.verification(mock_id)] if self.local is not None else []
        if self.engines.records:
            parts += [answer for _, answer in
                      await self._remote(lambda remote: remote.verification(mock_id))]
        out: dict[str, Any] = {"mockId": mock_id,
                               "callCount": sum(int(part.get("callCount", 0))
                                                for part in parts)}
        firsts = [part["firstCalledAt"] for part in parts if part.get("firstCalledAt")]
        lasts = [part["lastCalledAt"] for part in parts if part.get("lastCalledAt")]
        if firsts:
            out["firstCalledAt"] = min(firsts)
            out["lastCalledAt"] = max(lasts)
        return out

    async def verify(self, mock_id: str, criteria: CallCriteria) -> dict[str, Any]:
        """Judge the call count summed over engines: ``{success, passed, actual,
        expected?, message}``."""
        if not self.engines.records and self.local is not None:
            return await self.local.verify(mock_id, criteria)
        return verify_calls((await self.verification(mock_id))["callCount"], criteria)

    async def invocations(self, mock_id: str, limit: int = 100,
                          offset: int = 0) -> dict[str, Any]:
        """``{invocations, count, total}`` across engines, oldest first."""
        if not self.engines.records and self.local is not None:
            return await self.local.invocations(mock_id, limit, offset)
        window = offset + limit
        calls: list[dict[str, Any]] = []
        total = 0
        if self.local is not None:
            local = await self.local.invocations(mock_id, window, 0)
            calls += local["invocations"]
            total += local["total"]
        for engine_id, answer in await self._remote(
                lambda remote: remote.invocations(mock_id, window)):
            calls += [{**call, "id": f"{call['id']}@{engine_id}"}
                      for call in answer.get("invocations", [])]
            total += int(answer.get("total", 0))
        calls.sort(key=lambda call: call.get("timestamp") or "")
        page = calls[offset:window]
        return {"invocations": page, "count": len(page), "total": total}

    async def clear_invocations(self, mock_id: str) -> int:
        """Forget one mock's calls on every engine; returns how many in all."""
        cleared = (await self.local.clear_invocations(mock_id)
                   if self.local is not None else 0)
        for _, answer in await self._remote(lambda remote: remote.clear_invocations(mock_id)):
            cleared += answer
        return cleared
