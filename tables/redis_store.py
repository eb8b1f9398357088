"""The table store on Redis: replicas of one mock server share table items.

:class:`RedisTableStore` has the interface of :class:`~tables.store.TableStore` (the in-memory
store) and keeps its exact behaviour by running the same Python code: for each operation it
reads what the operation needs from Redis into a scratch in-memory store (the item of a
``get``/``update``/``patch``/``delete``, the count, the explicit id and the next free
``sequence`` id of a ``create``, every item of a ``list``, of an ``expand`` target and of
each table a custom operation names), runs :meth:`TableStore.execute
<tables.store.TableStore.execute>` there, and writes the difference back in one Lua script
(:data:`COMMIT_SCRIPT`) that first compares each table's version with the one read (and that
a created key is still free) and then applies every write, or nothing.

Atomicity (``consistency: atomic`` custom operations included): the commit script runs as one
Redis command, so nothing is half-written; a version that moved (another replica wrote in
between) makes it write nothing and the operation runs again on fresh data, at most
:data:`MAX_ATTEMPTS` times (then 503 ``state_store_unavailable``). Within one engine writes
take turns under an ``asyncio.Lock``, so retries only happen between replicas. A failed
``atomic`` run leaves its scratch tables as they were (the journal rolls them back), so it
writes nothing; a failed best-effort run writes the steps that succeeded, as in memory.

Keys (``N`` = ``--state-namespace``, default ``mockd``; table names are unique within one
engine, whatever their workspace)::

    N:table:<name>:items   hash  id key -> "<insertion number>|<item JSON>"
    N:table:<name>:meta    hash  ver (writes), seq (sequence counter), ord (insertion
                                 counter), ident (digest of the data identity: idField,
                                 idStrategy, idPrefix, parentField, seedData)

Seed data: the first operation on a table (after a start or a config reload) compares
``ident`` with its definition's and loads the seed data when they differ, so a replica that
joins keeps the items the others wrote, and a changed table starts from its seed data as in
memory. :meth:`reset_async` loads the seed data unconditionally: every replica on the
namespace sees it at once. A Redis server that restarted empty is seeded again on the next
operation after the connection error.

Failures: a connection or timeout error answers :class:`StateStoreUnavailable` (503
``state_store_unavailable``); redis-py drops the broken connection, so the next request
reconnects by itself. The sync :meth:`execute` (protocol adapters other than HTTP and the
admin side: SOAP, GraphQL, gRPC, MQTT) answers the same 503: only the async path reaches
Redis.

Source: issue #32 item 2 (shared state store); SPEC "Table", "Persistence and run modes".
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from tables import errors
from tables.config import TableConfig
from tables.errors import StateStoreUnavailable
from tables.query import expand_names
from tables.state_options import DEFAULT_NAMESPACE, check_url, redacted_url
from tables.store import (OperationRequest, OperationResult, RuntimeTable, TableDefinition,
                          TableStore)

log = logging.getLogger("mockd.tables.redis")

#: Commit attempts of one write when other replicas keep moving the versions.
MAX_ATTEMPTS = 50
#: Seconds to connect and to wait for one answer of Redis.
CONNECT_TIMEOUT_SECONDS = 2.0
SOCKET_TIMEOUT_SECONDS = 5.0

#: Check every table's version (and that created keys are free), then apply every write.
#: KEYS: meta, items of each table; ARGV[1]: JSON ``[{v, put: [[key, json, new]], del,
#: seq?}]`` in the same order. Returns 1 when written, 0 when something moved.
COMMIT_SCRIPT = """
local plan = cjson.decode(ARGV[1])
for i, t in ipairs(plan) do
  local v = redis.call('HGET', KEYS[2*i-1], 'ver') or '0'
  if v ~= t.v then return 0 end
  for _, p in ipairs(t.put) do
    if p[3] == 1 and redis.call('HEXISTS', KEYS[2*i], p[1]) == 1 then return 0 end
  end
end
for i, t in ipairs(plan) do
  local meta, items = KEYS[2*i-1], KEYS[2*i]
  local wrote = false
  for _, k in ipairs(t.del) do redis.call('HDEL', items, k); wrote = true end
  for _, p in ipairs(t.put) do
    local old = redis.call('HGET', items, p[1])
    local ord = old and string.match(old, '^(%d+)|')
    if not ord then ord = redis.call('HINCRBY', meta, 'ord', 1) end
    redis.call('HSET', items, p[1], ord .. '|' .. p[2])
    wrote = true
  end
  if t.seq then redis.call('HSET', meta, 'seq', t.seq); wrote = true end
  if wrote then redis.call('HINCRBY', meta, 'ver', 1) end
end
return 1
"""

#: Load the seed data when ``ident`` differs (or ARGV[2] is "1"). KEYS: meta, items;
#: ARGV: ident, force, sequence start, then key, item JSON pairs. Returns 1 when loaded.
SEED_SCRIPT = """
if ARGV[2] ~= '1' and redis.call('HGET', KEYS[1], 'ident') == ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
local n = 0
for i = 4, #ARGV, 2 do
  n = n + 1
  redis.call('HSET', KEYS[2], ARGV[i], n .. '|' .. ARGV[i+1])
end
redis.call('HSET', KEYS[1], 'ident', ARGV[1], 'seq', ARGV[3], 'ord', n)
redis.call('HINCRBY', KEYS[1], 'ver', 1)
return 1
"""

#: The next ``sequence`` id whose key is free. KEYS: meta, items.
NEXT_SEQUENCE_SCRIPT = """
local s = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
repeat s = s + 1 until redis.call('HEXISTS', KEYS[2], tostring(s)) == 0
return s
"""


class _Partial(dict):
    """Items of a table read in part: the keys fetched, and the table's real item count."""

    __slots__ = ("count", "base")

    def __init__(self, items: Mapping[str, dict[str, Any]], count: int):
        super().__init__(items)
        self.count = count
        self.base = dict.__len__(self)

    def __len__(self) -> int:
        return self.count + (dict.__len__(self) - self.base)


class _Loaded:
    """One table as read: its version, the items fetched and the counter values."""

    __slots__ = ("table", "version", "items", "before", "sequence")

    def __init__(self, table: RuntimeTable, version: str, items: dict[str, dict[str, Any]],
                 sequence: int):
        self.table = table
        self.version = version
        self.items = items
        self.before = dict(items)  # what the run starts from (the table changes ``items``)
        self.sequence = sequence


def _decode_items(raw: Mapping[bytes, bytes]) -> dict[str, dict[str, Any]]:
    """``{key: item}`` in insertion order from a hash of ``"<n>|<json>"`` values."""
    entries = []
    for key, value in raw.items():
        number, _, text = value.partition(b"|")
        entries.append((int(number), key.decode(), text))
    entries.sort(key=lambda entry: entry[0])
    return {key: orjson.loads(text) for _, key, text in entries}


def _identity_digest(definition: TableDefinition) -> str:
    return hashlib.sha256(orjson.dumps(definition.identity, option=orjson.OPT_NON_STR_KEYS)
                          ).hexdigest()


class RedisTableStore(TableStore):
    """The table store on Redis (see the module docstring).

    Attributes:
        url: the Redis URL (with its password: never log it; :attr:`shown_url` is safe).
        namespace: the key prefix (``--state-namespace``).
        remote: True: callers use the ``*_async`` methods.
    """

    remote = True

    def __init__(self, url: str, namespace: str = DEFAULT_NAMESPACE,
                 client_factory: Callable[[str], Any] | None = None):
        super().__init__()
        self.url = url
        self.shown_url = redacted_url(url)
        self.namespace = namespace
        self._client_factory = client_factory or _client
        self._client: Any = None
        self._lock: asyncio.Lock | None = None
        self._scripts: dict[str, Any] = {}
        self._ensured: dict[str, TableDefinition] = {}

    # ------------------------------------------------------------------ connection
    @property
    def client(self) -> Any:
        """The ``redis.asyncio.Redis`` client (created on first use, on the running loop)."""
        if self._client is None:
            client = self._client_factory(self.url)
            self._scripts = {name: client.register_script(text) for name, text in
                             (("commit", COMMIT_SCRIPT), ("seed", SEED_SCRIPT),
                              ("next_sequence", NEXT_SEQUENCE_SCRIPT))}
            self._client = client
        return self._client

    def _script(self, name: str) -> Any:
        self.client  # noqa: B018 - creates the client and its scripts
        return self._scripts[name]

    async def ping(self) -> None:
        """Raise :class:`StateStoreUnavailable` unless Redis answers ``PING``."""
        await self._call(self.client.ping)

    async def close(self) -> None:
        """Close the connection pool."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _key(self, table: str, part: str) -> str:
        return f"{self.namespace}:table:{table}:{part}"

    def _unavailable(self, error: BaseException) -> StateStoreUnavailable:
        self._ensured.clear()  # Redis may come back empty: seed again
        log.warning("state store %s unavailable: %s", self.shown_url, type(error).__name__)
        return StateStoreUnavailable(f"the state store (Redis at {self.shown_url}) is not "
                                     f"reachable: {type(error).__name__}")

    async def _call(self, function: Callable[..., Any], *args: Any) -> Any:
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        try:
            return await function(*args)
        except (RedisConnectionError, RedisTimeoutError, OSError) as error:
            raise self._unavailable(error) from None

    # ------------------------------------------------------------------ seed data
    async def _ensure(self, table: RuntimeTable, force: bool = False) -> None:
        definition = table.definition
        if not force and self._ensured.get(definition.name) is definition:
            return
        args: list[Any] = [_identity_digest(definition), "1" if force else "0",
                           str(definition.sequence_start)]
        for key, seed in definition.seed_items:
            item = dict(seed)
            stamp = self.clock.now()
            item["createdAt"] = stamp
            item["updatedAt"] = stamp
            args += [key, orjson.dumps(item)]
        await self._script("seed")(keys=[self._key(definition.name, "meta"),
                               self._key(definition.name, "items")], args=args)
        self._ensured[definition.name] = definition

    # ------------------------------------------------------------------ reading
    def _plan_reads(self, request: OperationRequest) -> dict[str, str]:
        """``{table: how}`` to read: ``full``, ``item`` (the request's id) or ``create``."""
        action = request.action
        if action == "custom":
            runner = self.custom_runner
            operation = getattr(runner, "get", lambda _name: None)(
                request.operation or request.table)
            names = operation.resources if operation is not None else ()
            return {name: "full" for name in names if name in self.tables}
        reads: dict[str, str] = {}
        table = self.tables.get(request.table)
        if table is None:
            return reads
        if action == "list":
            reads[request.table] = "full"
            names = expand_names(request.query) if request.query else ()
        elif action == "create":
            reads[request.table] = "create"
            names = ()
        else:
            reads[request.table] = "item"
            names = expand_names(request.query) if action == "get" and request.query else ()
        for name in names:
            relation = table.definition.relationships.get(name)
            if relation is not None and relation.table in self.tables:
                reads.setdefault(relation.table, "full")
        return reads

    async def _read(self, request: OperationRequest,
                    reads: Mapping[str, str]) -> dict[str, _Loaded]:
        client = self.client
        pipe = client.pipeline(transaction=True)
        for name, how in reads.items():
            meta, items = self._key(name, "meta"), self._key(name, "items")
            pipe.hmget(meta, "ver", "seq")
            if how == "full":
                pipe.hgetall(items)
            elif how == "item":
                pipe.hmget(items, request.id or "")
            else:
                table = self.tables[name]
                pipe.hlen(items)
                explicit = request.body.get(table.definition.id_field) \
                    if isinstance(request.body, Mapping) else None
                key = explicit_key(explicit)
                pipe.hmget(items, key if key is not None else "")
                if table.definition.id_strategy == "sequence":
                    await self._script("next_sequence")(keys=[meta, items], client=pipe)
        answers = iter(await self._call(pipe.execute))
        loaded: dict[str, _Loaded] = {}
        for name, how in reads.items():
            table = self.tables[name]
            version, sequence = next(answers)
            version = (version or b"0").decode()
            sequence = int(sequence or 0)
            if how == "full":
                items: dict[str, dict[str, Any]] = _decode_items(next(answers))
            elif how == "item":
                value = next(answers)[0]
                items = {} if value is None else _decode_items({(request.id or "").encode():
                                                                value})
            else:
                count = next(answers)
                value = next(answers)[0]
                items = {}
                if value is not None:
                    key = explicit_key(request.body.get(table.definition.id_field))
                    items = _decode_items({key.encode(): value})
                if table.definition.id_strategy == "sequence":
                    sequence = int(next(answers)) - 1  # the next free one comes next
                items = _Partial(items, count)
            loaded[name] = _Loaded(table, version, items, sequence)
        return loaded

    # ------------------------------------------------------------------ the entry points
    def execute(self, request: OperationRequest) -> OperationResult:
        """The sync entry point of adapters that cannot await: answers 503 (use
        :meth:`execute_async`)."""
        table = self.tables.get(request.table)
        return OperationResult(request.action, table.definition if table else None,
                               error=StateStoreUnavailable(
                                   "this protocol cannot use the Redis state store yet; "
                                   "serve its tables from HTTP mocks or run without "
                                   "--state-store"))

    async def execute_async(self, request: OperationRequest) -> OperationResult:
        """Run one operation on Redis with the in-memory store's behaviour; never raises for
        a table error (it is in ``result.error``, 503 ``state_store_unavailable`` when Redis
        cannot be reached)."""
        try:
            reads = self._plan_reads(request)
            for name in reads:
                await self._call(self._ensure, self.tables[name])
            if request.action in ("list", "get"):
                result, _ = await self._run(request, reads)
                return result
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                for _ in range(MAX_ATTEMPTS):
                    result, loaded = await self._run(request, reads)
                    if await self._write(loaded):
                        return result
            raise StateStoreUnavailable(f"the state store kept changing under this write "
                                        f"({MAX_ATTEMPTS} attempts); try again")
        except errors.TableError as error:
            table = self.tables.get(request.table)
            return OperationResult(request.action, table.definition if table else None,
                                   error=error)

    async def _run(self, request: OperationRequest,
                   reads: Mapping[str, str]) -> tuple[OperationResult, dict[str, _Loaded]]:
        loaded = await self._read(request, reads)
        scratch = TableStore()
        scratch.clock = self.clock
        scratch.custom_runner = self.custom_runner
        for name, table in self.tables.items():
            entry = loaded.get(name)
            if entry is not None:
                scratch.tables[name] = RuntimeTable.loaded(
                    table.definition, self.clock, entry.items, entry.sequence, table.origin)
        # Tables the request does not read are unknown to the scratch store (404).
        result = scratch.execute(request)
        for name, entry in loaded.items():
            entry.table = scratch.tables[name]
        return result, loaded

    async def _write(self, loaded: Mapping[str, _Loaded]) -> bool:
        """Commit what the scratch tables changed; False when a version moved."""
        plan: list[dict[str, Any]] = []
        keys: list[str] = []
        for name, entry in loaded.items():
            after = entry.table.items
            before = entry.before
            puts = [[key, orjson.dumps(item).decode(), 0 if key in before else 1]
                    for key, item in after.items()
                    if before.get(key) is not item]
            deletes = [key for key in before if key not in after]
            step: dict[str, Any] = {"v": entry.version, "put": puts, "del": deletes}
            if entry.table.sequence != entry.sequence:
                step["seq"] = str(entry.table.sequence)
            plan.append(step)
            keys += [self._key(name, "meta"), self._key(name, "items")]
        if not any(step["put"] or step["del"] or "seq" in step for step in plan):
            return True
        return bool(await self._call(self._script("commit"), keys, [orjson.dumps(plan).decode()]))

    # ------------------------------------------------------------------ admin side
    async def reset_async(self, name: str | None = None,
                          include: Callable[[str], bool] | None = None) -> int:
        """Load the seed data of one table (404 if unknown) or of all ``include`` accepts,
        for every replica of the namespace; returns the tables reset."""
        if name is not None:
            await self._call(self._ensure, self.get(name), True)
            return 1
        count = 0
        for table in list(self.tables.values()):
            if include is None or include(table.name):
                await self._call(self._ensure, table, True)
                count += 1
        return count

    async def clear_async(self, name: str) -> int:
        """Remove every item of ``name`` (seed data not restored); returns how many."""
        table = self.get(name)
        await self._call(self._ensure, table)
        items, meta = self._key(name, "items"), self._key(name, "meta")
        pipe = self.client.pipeline(transaction=True)
        pipe.hlen(items)
        pipe.delete(items)
        pipe.hincrby(meta, "ver", 1)
        count, _, _ = await self._call(pipe.execute)
        return count

    async def resources_async(self, include: Callable[[str], bool] | None = None
                              ) -> list[dict[str, Any]]:
        """``[{name, itemCount, seedCount, idField, parentField?}]`` of the tables
        ``include`` accepts, counts from Redis."""
        tables = [table for table in self.tables.values()
                  if include is None or include(table.name)]
        for table in tables:
            await self._call(self._ensure, table)
        pipe = self.client.pipeline(transaction=False)
        for table in tables:
            pipe.hlen(self._key(table.name, "items"))
        counts = await self._call(pipe.execute) if tables else []
        out = []
        for table, count in zip(tables, counts):
            info = table.info()
            info["itemCount"] = count
            out.append(info)
        return out

    async def unregister_async(self, name: str) -> bool:
        """Remove a table and its items from this engine and from Redis."""
        if name not in self.tables:
            return False
        await self._call(self.client.delete, self._key(name, "items"), self._key(name, "meta"))
        self._ensured.pop(name, None)
        return self.unregister(name)

    def register(self, config: TableConfig) -> RuntimeTable:
        """As :meth:`TableStore.register`; the seed data reaches Redis on first use."""
        table = super().register(config)
        self._ensured.pop(config.name, None)
        return table


def explicit_key(value: Any) -> str | None:
    """The id key of an id given in a create body, or None (generated id)."""
    from tables.ids import id_key

    if value is None or value == "" or isinstance(value, (bool, dict, list)):
        return None
    return id_key(value)


def _client(url: str) -> Any:
    """A ``redis.asyncio.Redis`` for ``url`` with bounded timeouts and one immediate retry
    (a pooled connection that broke when Redis restarted reconnects at once)."""
    from redis.asyncio import Redis
    from redis.backoff import NoBackoff
    from redis.asyncio.retry import Retry

    return Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS,
                          socket_timeout=SOCKET_TIMEOUT_SECONDS,
                          retry=Retry(NoBackoff(), 1), decode_responses=False)


def open_store(url: str, namespace: str = DEFAULT_NAMESPACE) -> RedisTableStore:
    """A :class:`RedisTableStore` after a sync ``PING`` of ``url``.

    Raises:
        ValueError: the URL is not usable (message names the problem).
        ConnectionError: Redis does not answer (message names the URL, password redacted).
    """
    problem = check_url(url)
    if problem is not None:
        raise ValueError(problem)
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS,
                                      socket_timeout=SOCKET_TIMEOUT_SECONDS)
        try:
            client.ping()
        finally:
            client.close()
    except (redis.exceptions.RedisError, OSError, ValueError) as error:
        detail = "authentication failed" if isinstance(
            error, redis.exceptions.AuthenticationError) else type(error).__name__
        raise ConnectionError(f"cannot reach the state store at {redacted_url(url)} "
                              f"({detail})") from None
    return RedisTableStore(url, namespace)


def table_names(store: TableStore) -> Iterable[str]:
    """The names of the store's tables (both implementations)."""
    return store.tables.keys()
