"""The table store on Redis: replicas of one mock server share table items.

:class:`RedisTableStore` has the interface of :class:`~tables.store.TableStore` (the in-memory
store) and keeps its exact behaviour by running the same Python code: for each operation it
reads what the operation needs from Redis into a scratch in-memory store (the item of a
``get``/``update``/``patch``/``delete``; the count, the given id and the next free
``sequence`` id of a ``create``, or nothing for a generated id; every item of a ``list``, of
an ``expand`` target and of each table a custom operation names), runs
:meth:`TableStore.execute <tables.store.TableStore.execute>` there, and writes the difference
back in one Lua script (:data:`COMMIT_SCRIPT`) that checks what the write was decided on and
then applies every write, or nothing.

Atomicity (``consistency: atomic`` custom operations included): the commit script runs as one
Redis command, so nothing is half-written. A single-item write checks per key (each written
key still holds the value read, a created key is free, the ``sequence`` counter is the one
read, ``maxItems`` holds); a custom operation checks the version of every table it read
(each write increments it). When a check fails (another request or replica wrote in between)
nothing is written and the operation runs again on fresh data, at most :data:`MAX_ATTEMPTS`
times (then 503 ``state_store_unavailable``). Custom operations of one engine take turns
under an ``asyncio.Lock``, so their retries only happen between replicas. A failed
``atomic`` run leaves its scratch tables as they were (the journal rolls them back), so it
writes nothing; a failed best-effort run writes the steps that succeeded, as in memory.

Round trips: the commands of all the requests an engine serves in one turn of its event loop
go to Redis in one pipeline (:meth:`RedisTableStore._command`); a whole table comes back as
one reply (:data:`READ_TABLE_SCRIPT`). Scripts run by ``EVALSHA`` and are loaded on the
first ``NOSCRIPT`` answer.

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
operation after the connection error (or after its ``NOSCRIPT`` answer).

Failures: a connection or timeout error answers :class:`StateStoreUnavailable` (503
``state_store_unavailable``); redis-py drops the broken connection, so the next request
reconnects by itself. Every table caller of the engine awaits :meth:`execute_async` when
``remote`` is true (HTTP bindings, custom operations, the SOAP, GraphQL, gRPC and MQTT
handlers, the admin side); the sync :meth:`execute` is left for a caller that cannot await
and answers 503: only the async path reaches Redis.

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
from tables.query import expand_names, parse_list_query
from tables.state_options import DEFAULT_NAMESPACE, check_url, redacted_url
from tables.store import (OperationRequest, OperationResult, RuntimeTable, TableDefinition,
                          TableStore)

log = logging.getLogger("mockd.tables.redis")

#: Commit attempts of one write when other replicas keep moving the versions.
MAX_ATTEMPTS = 50
#: Seconds to connect and to wait for one answer of Redis.
CONNECT_TIMEOUT_SECONDS = 2.0
SOCKET_TIMEOUT_SECONDS = 5.0

#: Check what each table's writes were decided on, then apply every write, or nothing.
#: KEYS: meta, items of each table; ARGV[1]: JSON ``[{v, seqexp, max, put: [[key, index of
#: the item JSON in ARGV, expect]], del: [[key, expect]], seq?}]`` in the same order; ARGV[2...]:
#: the item JSONs. ``v`` (a version, or false)
#: checks the whole table (operations that read whole tables); without it each written key
#: must still hold ``expect`` (the raw value read; "" = absent), ``seqexp`` the sequence
#: counter read, and ``max`` (0 = none) bounds the item count. Returns 1 when written, 0
#: when something moved.
COMMIT_SCRIPT = """
local plan = cjson.decode(ARGV[1])
for i, t in ipairs(plan) do
  local meta, items = KEYS[2*i-1], KEYS[2*i]
  if t.v and (redis.call('HGET', meta, 'ver') or '0') ~= t.v then return 0 end
  if t.seqexp and (redis.call('HGET', meta, 'seq') or '') ~= t.seqexp then return 0 end
  local added = 0
  for _, p in ipairs(t.put) do
    local old = redis.call('HGET', items, p[1])
    if p[3] == '' then
      if old then return 0 end
      added = added + 1
    elseif not t.v and old ~= p[3] then return 0 end
  end
  if not t.v then
    for _, d in ipairs(t.del) do
      if redis.call('HGET', items, d[1]) ~= d[2] then return 0 end
    end
  end
  if t.max > 0 and added > 0 and redis.call('HLEN', items) + added > t.max then return 0 end
end
for i, t in ipairs(plan) do
  local meta, items = KEYS[2*i-1], KEYS[2*i]
  local wrote = false
  for _, d in ipairs(t.del) do redis.call('HDEL', items, d[1]); wrote = true end
  for _, p in ipairs(t.put) do
    local old = redis.call('HGET', items, p[1])
    local ord = old and string.match(old, '^(%d+)|')
    if not ord then ord = redis.call('HINCRBY', meta, 'ord', 1) end
    redis.call('HSET', items, p[1], ord .. '|' .. ARGV[p[2]])
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

#: A whole table in one reply: ``[version, sequence, values joined by newlines]`` (one
#: bulk string parses far faster than one per item). KEYS: meta, items.
READ_TABLE_SCRIPT = """
local m = redis.call('HMGET', KEYS[1], 'ver', 'seq')
return {m[1] or '0', m[2] or '', table.concat(redis.call('HVALS', KEYS[2]), '\\n')}
"""

#: What a create is decided on: ``[sequence, item count, raw value of the given id or nil,
#: next free sequence id or 0]``. KEYS: meta, items; ARGV: the given id key ("" = none),
#: "1" for a ``sequence`` table.
CREATE_READ_SCRIPT = """
local seq = redis.call('HGET', KEYS[1], 'seq') or ''
local value = false
if ARGV[1] ~= '' then value = redis.call('HGET', KEYS[2], ARGV[1]) end
local free = 0
if ARGV[2] == '1' then
  free = tonumber(seq) or 0
  repeat free = free + 1 until redis.call('HEXISTS', KEYS[2], tostring(free)) == 0
end
return {seq, redis.call('HLEN', KEYS[2]), value, free}
"""


#: The Lua scripts by name, and their SHA1 digests (``EVALSHA``; loaded on ``NOSCRIPT``).
SCRIPTS = {"commit": COMMIT_SCRIPT, "seed": SEED_SCRIPT, "read_table": READ_TABLE_SCRIPT,
           "create_read": CREATE_READ_SCRIPT}
SHAS = {name: hashlib.sha1(text.encode()).hexdigest() for name, text in SCRIPTS.items()}


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
    """One table as read: how, its version, the items fetched (and their raw values), the
    sequence counter as stored and as the run starts from it."""

    __slots__ = ("table", "how", "version", "items", "before", "raw", "stored_sequence",
                 "sequence")

    def __init__(self, table: RuntimeTable, how: str, version: str,
                 items: dict[str, dict[str, Any]], raw: dict[str, str],
                 stored_sequence: str, sequence: int):
        self.table = table
        self.how = how
        self.version = version
        self.items = items
        self.before = dict(items)  # what the run starts from (the table changes ``items``)
        self.raw = raw
        self.stored_sequence = stored_sequence
        self.sequence = sequence


def _decode_items(raw: Mapping[bytes, bytes]) -> tuple[dict[str, dict[str, Any]],
                                                       dict[str, str]]:
    """``({key: item} in insertion order, {key: raw value})`` from a hash of
    ``"<n>|<json>"`` values."""
    entries = []
    texts: dict[str, str] = {}
    for key, value in raw.items():
        number, _, text = value.partition(b"|")
        name = key.decode()
        entries.append((int(number), name, text))
        texts[name] = value.decode()
    entries.sort(key=lambda entry: entry[0])
    return {name: orjson.loads(text) for _, name, text in entries}, texts


def _decode_table(joined: bytes, id_field: str) -> dict[str, dict[str, Any]]:
    """``{key: item}`` in insertion order from :data:`READ_TABLE_SCRIPT`'s joined values
    (the key of an item is the id key of its id field)."""
    from tables.ids import id_key

    if not joined:
        return {}
    entries = []
    for value in joined.split(b"\n"):
        number, _, text = value.partition(b"|")
        entries.append((int(number), text))
    entries.sort(key=lambda entry: entry[0])
    items = orjson.loads(b"[" + b",".join(text for _, text in entries) + b"]")
    return {id_key(item[id_field]): item for item in items}


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
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None
        self._pending: list[tuple[tuple[Any, ...], asyncio.Future]] = []
        self._flushes: set[asyncio.Future] = set()
        self._ensured: dict[str, TableDefinition] = {}

    # ------------------------------------------------------------------ connection
    @property
    def client(self) -> Any:
        """The ``redis.asyncio.Redis`` client (created on first use, on the running loop)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            # A pool belongs to one event loop (tests drive one store from several).
            self._client = self._client_factory(self.url)
            self._client_loop = loop
        return self._client

    async def _command(self, *argv: Any) -> Any:
        """Run one command; the commands of one turn of the event loop go in one pipeline
        (one write and one read on the socket for all the requests being served at once).
        Raises :class:`StateStoreUnavailable` when Redis cannot be reached, or the command's
        own error (``NoScriptError``...)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._pending.append((argv, future))
        if len(self._pending) == 1:
            loop.call_soon(self._start_flush)
        return await future

    def _start_flush(self) -> None:
        pending, self._pending = self._pending, []
        task = asyncio.ensure_future(self._flush(pending))
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush(self, pending: list[tuple[tuple[Any, ...], asyncio.Future]]) -> None:
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        pipe = self.client.pipeline(transaction=False)
        for argv, _ in pending:
            pipe.execute_command(*argv)
        try:
            results = await pipe.execute(raise_on_error=False)
        except (RedisConnectionError, RedisTimeoutError, OSError) as error:
            failure: BaseException = self._unavailable(error)
            results = [failure] * len(pending)
        except BaseException as error:  # noqa: BLE001 - handed to every waiting request
            results = [error] * len(pending)
        for (_, future), result in zip(pending, results):
            if future.done():
                continue
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)

    async def _eval(self, name: str, keys: list[str], args: list[Any] = (),
                    pipe: Any = None) -> Any:
        """``EVALSHA`` of script ``name``: added to ``pipe`` when given, else run through
        :meth:`_command`."""
        argv = ("EVALSHA", SHAS[name], len(keys), *keys, *args)
        if pipe is not None:
            pipe.execute_command(*argv)
            return None
        return await self._command(*argv)

    async def _load_scripts(self) -> None:
        for text in SCRIPTS.values():
            await self._call(self.client.script_load, text)

    async def _with_scripts(self, function: Callable[..., Any], *args: Any) -> Any:
        """``await function(*args)``; when Redis answers ``NOSCRIPT`` (first use, or a
        restarted Redis, which also lost the tables: they are seeded again) the scripts are
        loaded and the call runs once more."""
        from redis.exceptions import NoScriptError

        try:
            return await function(*args)
        except NoScriptError:
            self._ensured.clear()
            await self._load_scripts()
            return await function(*args)

    async def ping(self) -> None:
        """Raise :class:`StateStoreUnavailable` unless Redis answers ``PING``."""
        await self._call(self.client.ping)

    async def close(self) -> None:
        """Close the connection pool."""
        if self._client is not None:
            if self._client_loop is asyncio.get_running_loop():
                await self._client.aclose()
            self._client = None  # a pool of another (ended) loop: dropped

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
        await self._with_scripts(self._eval, "seed", [self._key(definition.name, "meta"),
                                                      self._key(definition.name, "items")],
                                 args)
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
            names = parse_list_query(request.query).expand
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

    async def _read(self, request: OperationRequest, reads: Mapping[str, str],
                    blind: bool = False) -> dict[str, _Loaded]:
        """Read what ``reads`` asks (see :meth:`_plan_reads`). A ``blind`` create reads
        nothing: it assumes a free generated id and room in the table, which the commit
        checks (a failed check reads properly on the next attempt)."""
        if len(reads) == 1:
            name, how = next(iter(reads.items()))
            table = self.tables[name]
            if how == "item":  # one command: no pipeline
                value = await self._command("HGET", self._key(name, "items"),
                                            request.id or "")
                items, raw = _decode_items({} if value is None else
                                           {(request.id or "").encode(): value})
                return {name: _Loaded(table, how, "0", items, raw, "", 0)}
            if how == "create" and blind:
                return {name: _Loaded(table, how, "0", _Partial({}, 0), {}, "", 0)}
            answers = iter([await self._eval(*self._read_script(request, name, how))])
            return self._loaded(request, reads, answers)
        pipe = self.client.pipeline(transaction=len(reads) > 1)
        for name, how in reads.items():
            if how == "item":
                pipe.hmget(self._key(name, "items"), request.id or "")
            else:
                await self._eval(*self._read_script(request, name, how), pipe=pipe)
        return self._loaded(request, reads, iter(await self._call(pipe.execute)))

    def _read_script(self, request: OperationRequest, name: str,
                     how: str) -> tuple[str, list[str], list[str]]:
        keys = [self._key(name, "meta"), self._key(name, "items")]
        if how == "full":
            return "read_table", keys, []
        definition = self.tables[name].definition
        return "create_read", keys, [self._given_key(request, definition) or "",
                                     "1" if definition.id_strategy == "sequence" else "0"]

    def _loaded(self, request: OperationRequest, reads: Mapping[str, str],
                answers: Any) -> dict[str, _Loaded]:
        loaded: dict[str, _Loaded] = {}
        for name, how in reads.items():
            table = self.tables[name]
            answer = next(answers)
            if how == "full":
                version, stored, joined = answer
                items = _decode_table(joined, table.definition.id_field)
                loaded[name] = _Loaded(table, how, version.decode(), items, {},
                                       stored.decode(), int(stored or 0))
            elif how == "item":
                value = answer[0] if isinstance(answer, list) else answer
                items, raw = _decode_items({} if value is None else
                                           {(request.id or "").encode(): value})
                loaded[name] = _Loaded(table, how, "0", items, raw, "", 0)
            else:
                stored, count, value, free = answer
                key = self._given_key(request, table.definition)
                items, raw = _decode_items({} if value is None else {key.encode(): value})
                sequence = int(free) - 1 if free else int(stored or 0)
                loaded[name] = _Loaded(table, how, "0", _Partial(items, count), raw,
                                       stored.decode(), sequence)
        return loaded

    @staticmethod
    def _given_key(request: OperationRequest, definition: TableDefinition) -> str | None:
        body = request.body
        return explicit_key(body.get(definition.id_field)) if isinstance(body, Mapping) \
            else None

    # ------------------------------------------------------------------ the entry points
    def execute(self, request: OperationRequest) -> OperationResult:
        """The sync entry point, for a caller that cannot await: answers 503 (callers check
        ``remote`` and use :meth:`execute_async`)."""
        table = self.tables.get(request.table)
        return OperationResult(request.action, table.definition if table else None,
                               error=StateStoreUnavailable(
                                   "this caller cannot use the Redis state store (it "
                                   "does not await); run without --state-store"))

    async def execute_async(self, request: OperationRequest) -> OperationResult:
        """Run one operation on Redis with the in-memory store's behaviour; never raises for
        a table error (it is in ``result.error``, 503 ``state_store_unavailable`` when Redis
        cannot be reached)."""
        try:
            return await self._with_scripts(self._execute_remote, request)
        except errors.TableError as error:
            table = self.tables.get(request.table)
            return OperationResult(request.action, table.definition if table else None,
                                   error=error)

    async def _execute_remote(self, request: OperationRequest) -> OperationResult:
        reads = self._plan_reads(request)
        for name in reads:
            table = self.tables[name]
            if self._ensured.get(name) is not table.definition:
                await self._call(self._ensure, table)
        if request.action in ("list", "get"):
            result, _ = await self._run(request, reads)
            return result
        if "full" not in reads.values():
            table = self.tables.get(request.table)
            blind = (request.action == "create" and table is not None
                     and table.definition.id_strategy != "sequence")
            for attempt in range(MAX_ATTEMPTS):  # one item: checked per key, no lock
                result, loaded = await self._run(request, reads, blind and attempt == 0)
                if await self._write(loaded):
                    return result
        else:
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                for _ in range(MAX_ATTEMPTS):
                    result, loaded = await self._run(request, reads)
                    if await self._write(loaded):
                        return result
        raise StateStoreUnavailable(f"the state store kept changing under this write "
                                    f"({MAX_ATTEMPTS} attempts); try again")

    async def _run(self, request: OperationRequest, reads: Mapping[str, str],
                   blind: bool = False) -> tuple[OperationResult, dict[str, _Loaded]]:
        loaded = await self._read(request, reads, blind)
        scratch = TableStore()
        scratch.clock = self.clock
        scratch.custom_runner = self.custom_runner
        for name, entry in loaded.items():
            table = self.tables[name]
            scratch.tables[name] = RuntimeTable.loaded(
                table.definition, self.clock, entry.items, entry.sequence, table.origin)
        # Tables the request does not read are unknown to the scratch store (404).
        result = scratch.execute(request)
        for name, entry in loaded.items():
            entry.table = scratch.tables[name]
        return result, loaded

    async def _write(self, loaded: Mapping[str, _Loaded]) -> bool:
        """Commit what the scratch tables changed; False when what the writes were decided
        on moved (the whole table for whole-table reads, else each written key, the
        sequence counter and the item count)."""
        plan: list[dict[str, Any]] = []
        keys: list[str] = []
        documents: list[bytes] = []  # ARGV[2...]: sent as they are, not inside the plan
        changed = False
        for name, entry in loaded.items():
            after = entry.table.items
            before = entry.before
            raw = entry.raw
            # expect: the raw value read; "" = absent; "=" = present (whole-table reads,
            # checked by the version)
            puts = []
            for key, item in after.items():
                if before.get(key) is not item:
                    documents.append(orjson.dumps(item))
                    puts.append([key, len(documents) + 1,
                                 raw.get(key) or ("=" if key in before else "")])
            deletes = [[key, raw.get(key, "")] for key in before if key not in after]
            definition = entry.table.definition
            step: dict[str, Any] = {"v": entry.version if entry.how == "full" else False,
                                    "seqexp": False, "max": definition.max_items or 0,
                                    "put": puts, "del": deletes}
            if entry.table.sequence != entry.sequence:
                step["seq"] = str(entry.table.sequence)
                step["seqexp"] = entry.stored_sequence
            changed = changed or bool(puts or deletes or "seq" in step)
            plan.append(step)
            keys += [self._key(name, "meta"), self._key(name, "items")]
        if not changed:
            return True
        return bool(await self._eval("commit", keys, [orjson.dumps(plan), *documents]))

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


#: ``sequence(name, start)``: the counter's value (``start`` on first use), then one more.
#: KEYS: the counters hash; ARGV: name, start.
SEQUENCE_SCRIPT = """
local value = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], value + 1)
return value
"""


class RedisSequences:
    """``sequence()`` template counters kept in Redis (hash ``<namespace>:sequences``), so
    the replicas of a namespace count together; installed as
    :attr:`mocks.core.templating.TemplateState.shared`.

    Templates render synchronously, so each call is one blocking round trip (a Lua script,
    atomic) on a sync client with short timeouts: about a tenth of a millisecond on a local
    or nearby Redis, paid only by responses that call ``sequence()``. While Redis cannot be
    reached a call answers None (logged once per outage) and the engine's own counter
    answers instead.
    """

    def __init__(self, url: str, namespace: str = DEFAULT_NAMESPACE):
        import redis

        self.shown_url = redacted_url(url)
        self.key = f"{namespace}:sequences"
        self._client = redis.Redis.from_url(url, socket_connect_timeout=0.5,
                                            socket_timeout=0.5)
        self._script = self._client.register_script(SEQUENCE_SCRIPT)
        self._down = False

    def __call__(self, name: str, start: int) -> int | None:
        """The counter ``name``'s value, advanced by one; None when Redis is unreachable."""
        from redis.exceptions import RedisError

        try:
            value = int(self._script(keys=[self.key], args=[name, start]))
        except (RedisError, OSError) as error:
            if not self._down:
                log.warning("state store %s unavailable for sequence(): %s; counting in "
                            "this engine", self.shown_url, type(error).__name__)
            self._down = True
            return None
        self._down = False
        return value


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
