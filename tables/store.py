"""The in-memory table store and its one entry point, :meth:`TableStore.execute`.

Owns: compiled table definitions (:class:`TableDefinition`, immutable, built when a config is
compiled), the runtime items of every table (:class:`RuntimeTable`), id generation, item
timestamps, validation of writes, list queries and ``expand``. It knows nothing of HTTP: every
protocol adapter (the HTTP binding now; SOAP, GraphQL, gRPC, custom operations and the admin
later) builds an :class:`OperationRequest` ``(action, table, id, body, query, parent)`` and
calls :meth:`TableStore.execute`, which answers an :class:`OperationResult` carrying either data
or a :class:`~tables.errors.TableError` (code, status, hint) for the adapter to map
(STYLE §6; ARCHITECTURE seams 5 and 6).

Runtime data lives on the store, not in the snapshot: :meth:`TableStore.apply_definitions`
(called by the engine after a config compiled) keeps the items of every table whose data
identity (``idField``, ``idStrategy``, ``idPrefix``, ``seedData``, ``parentField``) is
unchanged, so admin edits do not wipe runtime items; a changed or new table starts from its
seed data; :meth:`TableStore.reset` restores seed data; restart starts from seed data.

Concurrency: single owner, the engine's event loop. Nothing here awaits, so one
:meth:`~TableStore.execute` is atomic with respect to every other request.

Source: SPEC "Table", "Extend binding" (rule 5), "Query behavior of list", "States and
transitions" (tables); behavior notes §6, §7, §18.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from mocks.core.errors import ConfigError

from tables import errors
from tables.errors import TableError
from tables.ids import Clock, id_key, new_prefixed, new_short, new_uuid, numeric_id, ulids, value_text
from tables.transforms import CompiledTransform, compile_transform

if TYPE_CHECKING:  # annotations only: an engine without tables builds no table model
    from tables.config import TableConfig
    # Loaded with the first table (its validation) or list query instead.
    from tables.query import ListMeta
    from tables.validation import TableValidator, ValidationIssue

#: Fields the service sets on every stored item (never taken from a body).
TIMESTAMP_FIELDS = ("createdAt", "updatedAt")


# ---------------------------------------------------------------------------- requests


@dataclass(frozen=True, slots=True)
class OperationRequest:
    """What any protocol asks of a table.

    Attributes:
        action: ``list``, ``get``, ``create``, ``update``, ``patch``, ``delete`` or ``custom``.
        table: the table name.
        id: the item id for ``get``/``update``/``patch``/``delete`` (text, as in a URL).
        body: the write's JSON object (``create``/``update``/``patch``), or a custom
            operation's input.
        query: list parameters, name -> values (filters, ``sort``, ``limit``, cursors,
            ``expand``); ``get`` reads ``expand`` from it.
        parent: parameters of the enclosing request (HTTP path parameters): the parent id of
            ``parentField`` tables, checked by validation ``pathParams``.
        operation: the custom operation name when ``action`` is ``custom``.
        declared: query parameters the caller's API declares (an imported OpenAPI
            operation's ``http.declaredQueryParams``): on ``list`` each filters only when
            some item of the table has that field (see
            :func:`tables.query.without_absent_fields`).
    """

    action: str
    table: str
    id: str | None = None
    body: Any = None
    query: Mapping[str, Sequence[str]] | None = None
    parent: Mapping[str, str] | None = None
    operation: str | None = None
    declared: frozenset[str] = frozenset()


@dataclass(slots=True)
class OperationResult:
    """What :meth:`TableStore.execute` answers.

    Attributes:
        action: the action executed.
        definition: the table's definition (its table-level transform, for the adapter).
        item: the item of ``get``/``create``/``update``/``patch``, or the removed item of
            ``delete`` (shared with the store: copy before changing it).
        items: the page of a ``list``.
        meta: pagination facts of a ``list``.
        value: the result of a ``custom`` operation.
        warnings: validation issues that did not reject the write (mode ``warn``/
            ``permissive``).
        error: the failure, or None on success.
    """

    action: str
    definition: TableDefinition | None = None
    item: dict[str, Any] | None = None
    items: list[dict[str, Any]] | None = None
    meta: ListMeta | None = None
    value: Any = None
    warnings: list[ValidationIssue] = field(default_factory=list)
    error: TableError | None = None

    @property
    def ok(self) -> bool:
        """True when the operation succeeded."""
        return self.error is None


#: ``custom_runner(request, store) -> result value``; raises :class:`TableError` on failure.
CustomRunner = Callable[[OperationRequest, "TableStore"], Any]


# ---------------------------------------------------------------------------- definitions


@dataclass(frozen=True, slots=True)
class RelationshipTarget:
    """``relationships.<field>`` compiled: the target table and the field compared (None =
    the target's id field)."""

    table: str
    field: str | None


class TableDefinition:
    """One table, compiled from :class:`~tables.config.TableConfig` (immutable).

    Attributes:
        config: the table as configured.
        name, id_field, id_strategy, id_prefix, parent_field, max_items: from the config.
        relationships: ``{field: RelationshipTarget}`` for ``expand``.
        validator: the compiled validation, or None.
        transform: the table-level transform, or None.
        seed_items: ``((key, item), ...)`` seed data with ids assigned (stable across resets).
        sequence_start: the ``sequence`` counter after loading the seeds (highest numeric
            seed id, else 0).
        identity: what must stay equal for runtime items to survive a config reload.
    """

    __slots__ = ("config", "name", "id_field", "id_strategy", "id_prefix", "parent_field",
                 "max_items", "relationships", "validator", "transform", "seed_items",
                 "sequence_start", "identity")

    def __init__(self, config: TableConfig, key_path: str = ""):
        self.config = config
        self.name = config.name
        self.id_field = config.id_field
        self.id_strategy = config.id_strategy
        self.id_prefix = config.id_prefix or ""
        self.parent_field = config.parent_field
        self.max_items = config.max_items
        self.relationships = {name: RelationshipTarget(target.table, target.field)
                              for name, target in config.relationships.items()}
        from tables.validation import compile_validator

        self.validator: TableValidator | None = compile_validator(config.validation,
                                                                  config.seed_data)
        self.transform: CompiledTransform | None = compile_transform(config.response)
        # YAML may hold dates and times; stored items hold JSON values only (RFC 3339 text).
        seed_data = orjson.loads(orjson.dumps(config.seed_data, option=orjson.OPT_NON_STR_KEYS
                                              | orjson.OPT_UTC_Z))
        self.identity = (config.id_field, config.id_strategy, config.id_prefix,
                         config.parent_field, seed_data)
        seeds: list[tuple[str, dict[str, Any]]] = []
        seen: dict[str, int] = {}
        highest = 0
        for seed in seed_data:
            number = numeric_id(seed.get(self.id_field))
            if number is not None:
                highest = max(highest, number)
        counter = highest
        for index, seed in enumerate(seed_data):
            raw = seed.get(self.id_field)
            if raw is None or raw == "":
                if self.id_strategy == "sequence":
                    counter += 1
                    raw = counter
                else:
                    raw = self.new_id_value()
            elif not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
                raise ConfigError(f"{key_path}.seedData[{index}].{self.id_field}",
                                  "an id must be a string or a number")
            key = id_key(raw)
            if key in seen:
                raise ConfigError(f"{key_path}.seedData[{index}].{self.id_field}",
                                  f'duplicate id "{key}" (also seedData[{seen[key]}])')
            seen[key] = index
            item = {self.id_field: raw}
            item.update((name, value) for name, value in seed.items()
                        if name != self.id_field and name not in TIMESTAMP_FIELDS)
            seeds.append((key, item))
        self.seed_items = tuple(seeds)
        self.sequence_start = counter

    def new_id_value(self) -> str:
        """A fresh id of the table's strategy (not ``sequence``: that counter is runtime)."""
        strategy = self.id_strategy
        if strategy == "prefix":
            return new_prefixed(self.id_prefix)
        if strategy == "ulid":
            return ulids.new()
        if strategy == "short":
            return new_short()
        return new_uuid()

    def info(self) -> dict[str, Any]:
        """``{name, idField, parentField?, seedCount}`` of the definition."""
        out: dict[str, Any] = {"name": self.name, "idField": self.id_field}
        if self.parent_field:
            out["parentField"] = self.parent_field
        out["seedCount"] = len(self.seed_items)
        return out


def compile_table(config: TableConfig, key_path: str) -> TableDefinition:
    """A :class:`TableDefinition`; raises :class:`ConfigError` naming ``key_path``."""
    return TableDefinition(config, key_path)


def compile_tables(tables: Iterable[tuple[TableConfig, str]]) -> tuple[TableDefinition, ...]:
    """Definitions of ``(config, key path)`` pairs; a duplicate name is a :class:`ConfigError`
    on the second occurrence."""
    definitions: list[TableDefinition] = []
    seen: dict[str, str] = {}
    for config, key_path in tables:
        if config.name in seen:
            raise ConfigError(f"{key_path}.name",
                              f'duplicate table name "{config.name}" (also {seen[config.name]})')
        seen[config.name] = key_path
        definitions.append(compile_table(config, key_path))
    return tuple(definitions)


# ---------------------------------------------------------------------------- runtime


class RuntimeTable:
    """The live items of one table.

    Attributes:
        definition: the current definition (replaced in place when only non-data settings
            change).
        items: ``{id key: item}`` in insertion order; every item holds its id field,
            its data and ``createdAt``/``updatedAt``.
        sequence: the ``sequence`` strategy's counter.
        origin: ``config`` (defined by the config) or ``runtime`` (registered through the
            admin side; survives config reloads until unregistered).
    """

    __slots__ = ("definition", "items", "sequence", "origin", "_clock")

    def __init__(self, definition: TableDefinition, clock: Clock, origin: str = "config"):
        self.definition = definition
        self.items: dict[str, dict[str, Any]] = {}
        self.sequence = 0
        self.origin = origin
        self._clock = clock
        self.reset()

    @classmethod
    def loaded(cls, definition: TableDefinition, clock: Clock, items: dict[str, dict[str, Any]],
               sequence: int, origin: str = "config") -> "RuntimeTable":
        """A table holding ``items`` (read from a shared state store) instead of its seed
        data; ``items`` is used as it is, not copied."""
        table = cls.__new__(cls)
        table.definition = definition
        table.items = items
        table.sequence = sequence
        table.origin = origin
        table._clock = clock
        return table

    @property
    def name(self) -> str:
        """The table name."""
        return self.definition.name

    def reset(self) -> None:
        """Restore the seed data (fresh timestamps) and the sequence counter."""
        self.items = {}
        self.sequence = self.definition.sequence_start
        for key, seed in self.definition.seed_items:
            item = copy.deepcopy(seed)
            stamp = self._clock.now()
            item["createdAt"] = stamp
            item["updatedAt"] = stamp
            self.items[key] = item

    def clear(self) -> int:
        """Remove every item (seed data is not restored); returns how many were removed."""
        count = len(self.items)
        self.items = {}
        return count

    def info(self) -> dict[str, Any]:
        """``{name, itemCount, seedCount, idField, parentField?}`` (SPEC "Admin-side
        records": stateful resource)."""
        definition = self.definition
        out: dict[str, Any] = {"name": definition.name, "itemCount": len(self.items),
                               "seedCount": len(definition.seed_items),
                               "idField": definition.id_field}
        if definition.parent_field:
            out["parentField"] = definition.parent_field
        return out

    # ------------------------------------------------------------------ ids
    def _new_key(self) -> tuple[str, Any]:
        definition = self.definition
        while True:
            if definition.id_strategy == "sequence":
                self.sequence += 1
                value: Any = self.sequence
            else:
                value = definition.new_id_value()
            key = id_key(value)
            if key not in self.items:
                return key, value

    def find(self, field_name: str | None, value: Any) -> dict[str, Any] | None:
        """The item whose ``field_name`` (None: the id field) equals ``value`` as text."""
        if field_name is None or field_name == self.definition.id_field:
            return self.items.get(id_key(value))
        text = value_text(value)
        for item in self.items.values():
            if field_name in item and value_text(item[field_name]) == text:
                return item
        return None

    def _owned_by(self, item: dict[str, Any], parent: Mapping[str, str] | None) -> bool:
        parent_field = self.definition.parent_field
        if not parent_field or not parent or parent_field not in parent:
            return True
        return parent_field in item and value_text(item[parent_field]) == parent[parent_field]

    def existing(self, item_id: str, parent: Mapping[str, str] | None) -> dict[str, Any]:
        """The item ``item_id`` (under ``parent`` for sub-resources); raises 404."""
        item = self.items.get(item_id)
        if item is None or not self._owned_by(item, parent):
            raise errors.item_not_found(self.name, item_id)
        return item

    # ------------------------------------------------------------------ writes
    def create(self, body: Mapping[str, Any], parent: Mapping[str, str] | None) -> dict[str, Any]:
        """Add an item; the id in ``body`` wins over the strategy. Raises 409, 507, 400."""
        definition = self.definition
        if definition.max_items and len(self.items) >= definition.max_items:
            raise errors.capacity_exceeded(self.name, definition.max_items)
        id_field = definition.id_field
        raw = body.get(id_field)
        if raw is None or raw == "":
            key, raw = self._new_key()
        else:
            if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
                raise errors.bad_request(self.name, f'"{id_field}" must be a string or a number',
                                         field=id_field)
            key = id_key(raw)
            if key in self.items:
                raise errors.item_exists(self.name, key)
        item: dict[str, Any] = {id_field: raw}
        for name, value in body.items():
            if name != id_field and name not in TIMESTAMP_FIELDS:
                item[name] = value
        parent_field = definition.parent_field
        if parent_field and parent and parent_field in parent:
            item[parent_field] = parent[parent_field]
        stamp = self._clock.now()
        item["createdAt"] = stamp
        item["updatedAt"] = stamp
        self.items[key] = item
        return item

    def update(self, item_id: str, body: Mapping[str, Any],
               parent: Mapping[str, str] | None) -> dict[str, Any]:
        """Replace an item's data (id and ``createdAt`` kept). Raises 404."""
        existing = self.existing(item_id, parent)
        id_field = self.definition.id_field
        item: dict[str, Any] = {id_field: existing[id_field]}
        for name, value in body.items():
            if name != id_field and name not in TIMESTAMP_FIELDS:
                item[name] = value
        parent_field = self.definition.parent_field
        if parent_field:
            if parent and parent_field in parent:
                item[parent_field] = parent[parent_field]
            elif parent_field not in item and parent_field in existing:
                item[parent_field] = existing[parent_field]
        item["createdAt"] = existing["createdAt"]
        item["updatedAt"] = self._clock.now()
        self.items[item_id] = item
        return item

    def patch(self, item_id: str, body: Mapping[str, Any],
              parent: Mapping[str, str] | None) -> dict[str, Any]:
        """Merge top-level fields into an item (``createdAt``, ``updatedAt`` and the id field
        in ``body`` are ignored). Raises 404."""
        existing = self.existing(item_id, parent)
        id_field = self.definition.id_field
        item = {name: value for name, value in existing.items() if name not in TIMESTAMP_FIELDS}
        for name, value in body.items():
            if name != id_field and name not in TIMESTAMP_FIELDS:
                item[name] = value
        item["createdAt"] = existing["createdAt"]  # timestamps stay the last keys
        item["updatedAt"] = self._clock.now()
        self.items[item_id] = item
        return item

    def delete(self, item_id: str, parent: Mapping[str, str] | None) -> dict[str, Any]:
        """Remove an item; returns it. Raises 404."""
        item = self.existing(item_id, parent)
        del self.items[item_id]
        return item

    def select(self, query: Mapping[str, Sequence[str]] | None,
               parent: Mapping[str, str] | None,
               declared: frozenset[str] = frozenset()) -> tuple[list[dict[str, Any]],
                                                                ListMeta, tuple[str, ...]]:
        """``(page, meta, expand names)`` of a list query (filters AND-ed with the parent);
        a ``declared`` parameter that is no field of any item is not a filter."""
        from tables.query import (matches_filters, paginate, parse_list_query, sort_items,
                                  without_absent_fields)

        if declared and query:
            query = without_absent_fields(query, declared, self.items.values())
        parsed = parse_list_query(query)
        candidates = list(self.items.values())
        parent_field = self.definition.parent_field
        if parent_field and parent and parent_field in parent:
            wanted = parent[parent_field]
            candidates = [item for item in candidates
                          if parent_field in item and value_text(item[parent_field]) == wanted]
        if parsed.filters:
            filters = parsed.filters
            candidates = [item for item in candidates if matches_filters(item, filters)]
        ordered = sort_items(candidates, parsed.sort, parsed.descending, created_in_order=True)
        page, meta = paginate(ordered, parsed, self.definition.id_field)
        return page, meta, parsed.expand


# ---------------------------------------------------------------------------- the store


class TableStore:
    """Every runtime table of one engine, and :meth:`execute`: the in-memory state store.

    The state-store interface shared with :class:`tables.redis_store.RedisTableStore`: the
    sync methods (:meth:`execute`, :meth:`reset`...) and their ``*_async`` forms, which
    callers that can await use (the HTTP binding, the engine-control side). ``remote`` is
    False here: the sync methods hold the data and the async forms only call them, so the
    in-memory path costs no await.

    Attributes:
        tables: ``{name: RuntimeTable}``.
        clock: the timestamp source shared by all tables (strictly increasing).
        custom_runner: runs ``custom`` actions (set by the custom-operations feature); None
            answers 404 ``custom operation "<name>" not found``.
    """

    #: True when the data lives elsewhere and only the ``*_async`` methods reach it.
    remote = False

    def __init__(self) -> None:
        self.tables: dict[str, RuntimeTable] = {}
        self.clock = Clock()
        self.custom_runner: CustomRunner | None = None

    # ------------------------------------------------------------------ async interface
    async def execute_async(self, request: OperationRequest) -> OperationResult:
        """:meth:`execute` (the form a shared store implements with I/O)."""
        return self.execute(request)

    async def reset_async(self, name: str | None = None,
                          include: Callable[[str], bool] | None = None) -> int:
        """:meth:`reset`."""
        return self.reset(name, include)

    async def clear_async(self, name: str) -> int:
        """:meth:`clear`."""
        return self.clear(name)

    async def resources_async(self, include: Callable[[str], bool] | None = None
                              ) -> list[dict[str, Any]]:
        """``[{name, itemCount, seedCount, idField, parentField?}]`` of the tables
        ``include`` accepts (None: all)."""
        return [table.info() for table in self.tables.values()
                if include is None or include(table.name)]

    async def overview_async(self, include: Callable[[str], bool] | None = None
                             ) -> dict[str, Any]:
        """:meth:`overview` with the counts of :meth:`resources_async`."""
        return overview_of(await self.resources_async(include))

    async def unregister_async(self, name: str) -> bool:
        """:meth:`unregister`."""
        return self.unregister(name)

    async def close(self) -> None:
        """Release connections (nothing to release in memory)."""

    # ------------------------------------------------------------------ definitions
    def apply_definitions(self, definitions: Iterable[TableDefinition]) -> None:
        """Make ``definitions`` the config-defined tables (after a successful compile).

        A table whose :attr:`TableDefinition.identity` is unchanged keeps its runtime items
        and takes the new definition (validation, transform, relationships, ``maxItems``);
        a new or changed one starts from its seed data; config tables no longer defined are
        dropped. Tables registered at runtime stay unless the config now defines them.
        """
        tables: dict[str, RuntimeTable] = {}
        for definition in definitions:
            current = self.tables.get(definition.name)
            if current is not None and current.definition.identity == definition.identity:
                current.definition = definition
                current.origin = "config"
                tables[definition.name] = current
            else:
                tables[definition.name] = RuntimeTable(definition, self.clock)
        for name, table in self.tables.items():
            if table.origin == "runtime" and name not in tables:
                tables[name] = table
        self.tables = tables

    def register(self, config: TableConfig) -> RuntimeTable:
        """Add a table at runtime (``POST /state/resources``). Raises :class:`TableError`
        409 ``CONFLICT`` when the name is taken, 400 when the definition does not compile."""
        if config.name in self.tables:
            raise TableError(errors.CONFLICT, f'resource "{config.name}" already exists',
                             table=config.name)
        try:
            definition = compile_table(config, "resource")
        except ConfigError as error:
            raise errors.bad_request(config.name, str(error)) from None
        table = RuntimeTable(definition, self.clock, origin="runtime")
        self.tables[config.name] = table
        return table

    def unregister(self, name: str) -> bool:
        """Remove a table and its items; returns whether it existed."""
        return self.tables.pop(name, None) is not None

    def get(self, name: str) -> RuntimeTable:
        """The table ``name``; raises 404 ``resource "<name>" not found``."""
        table = self.tables.get(name)
        if table is None:
            raise errors.table_not_found(name)
        return table

    # ------------------------------------------------------------------ state
    def reset(self, name: str | None = None,
              include: Callable[[str], bool] | None = None) -> int:
        """Restore seed data of one table (404 if unknown) or all; returns tables reset.

        ``include`` (a table-name predicate, e.g. "belongs to workspace ws_x") narrows the
        reset of all tables; None means every table.
        """
        if name is not None:
            self.get(name).reset()
            return 1
        count = 0
        for table in self.tables.values():
            if include is None or include(table.name):
                table.reset()
                count += 1
        return count

    def clear(self, name: str) -> int:
        """Empty one table without restoring seeds; returns items removed. Raises 404."""
        return self.get(name).clear()

    def overview(self, include: Callable[[str], bool] | None = None) -> dict[str, Any]:
        """``{resources: [{name, itemCount, seedCount, idField, parentField?}], total,
        totalItems, resourceList}`` (behavior notes §1 "State"); ``include`` (a table-name
        predicate) narrows it, e.g. to one workspace's tables."""
        return overview_of([table.info() for table in self.tables.values()
                            if include is None or include(table.name)])

    # ------------------------------------------------------------------ the entry point
    def execute(self, request: OperationRequest) -> OperationResult:
        """Run one operation; never raises for a table error (it is in ``result.error``)."""
        try:
            return self._execute(request)
        except TableError as error:
            table = self.tables.get(request.table)
            return OperationResult(request.action, table.definition if table else None,
                                   error=error)

    def _execute(self, request: OperationRequest) -> OperationResult:
        action = request.action
        if action == "custom":
            return self._custom(request)
        table = self.get(request.table)
        definition = table.definition
        if action == "list":
            page, meta, expand = table.select(request.query, request.parent, request.declared)
            if expand:
                page = [self.expand(definition, item, expand) for item in page]
            return OperationResult(action, definition, items=page, meta=meta)
        if action not in ("create", "get", "update", "patch", "delete"):
            raise TableError(errors.INTERNAL_ERROR, f"unsupported action {action!r}",
                             table=table.name)
        if action == "create":
            body = self._object_body(table, request.body)
            warnings = self._validate(definition, body, action, request.parent)
            return OperationResult(action, definition,
                                   item=table.create(body, request.parent), warnings=warnings)
        item_id = request.id
        if item_id is None or item_id == "":
            raise errors.bad_request(table.name, f"item ID required for {action}")
        if action == "get":
            item = table.existing(item_id, request.parent)
            if request.query:
                from tables.query import expand_names

                names = expand_names(request.query)
            else:
                names = ()
            if names:
                item = self.expand(definition, item, names)
            return OperationResult(action, definition, item=item)
        if action == "delete":
            return OperationResult(action, definition, item=table.delete(item_id, request.parent))
        body = self._object_body(table, request.body)
        table.existing(item_id, request.parent)  # 404 before validation, like a real backend
        warnings = self._validate(definition, body, action, request.parent)
        write = table.update if action == "update" else table.patch
        return OperationResult(action, definition, item=write(item_id, body, request.parent),
                               warnings=warnings)

    @staticmethod
    def _object_body(table: RuntimeTable, body: Any) -> Mapping[str, Any]:
        if body is None:
            return {}
        if not isinstance(body, Mapping):
            raise errors.bad_request(table.name, "invalid JSON body: expected a JSON object")
        return body

    @staticmethod
    def _validate(definition: TableDefinition, body: Mapping[str, Any], action: str,
                  parent: Mapping[str, str] | None) -> list[ValidationIssue]:
        validator = definition.validator
        if validator is None:
            return []
        issues = validator.check(body, action, parent)
        if validator.rejects(issues, action):
            rejecting = issues
            if validator.mode_for(action) == "permissive":
                rejecting = [issue for issue in issues if issue.code == "required"]
            raise TableError(errors.VALIDATION_ERROR, "validation failed", table=definition.name,
                             field=rejecting[0].field,
                             details=[issue.as_dict() for issue in rejecting])
        return issues

    def _custom(self, request: OperationRequest) -> OperationResult:
        name = request.operation or request.table
        if self.custom_runner is None:
            raise TableError(errors.NOT_FOUND, f'custom operation "{name}" not found',
                             hint="Define it under 'customOperations'")
        value = self.custom_runner(request, self)
        table = self.tables.get(request.table)
        return OperationResult("custom", table.definition if table else None, value=value)

    def expand(self, definition: TableDefinition, item: dict[str, Any],
               names: Sequence[str]) -> dict[str, Any]:
        """``item`` with each named relationship field replaced by the related item (through
        the target table's own transform). A field without a relationship, an empty value or
        an unresolved id stays as it is. Returns a copy when anything changed."""
        expanded: dict[str, Any] | None = None
        for name in names:
            relation = definition.relationships.get(name)
            if relation is None:
                continue
            value = item.get(name)
            if value is None or value == "" or isinstance(value, (dict, list, bool)):
                continue
            target = self.tables.get(relation.table)
            if target is None:
                continue
            related = target.find(relation.field, value)
            if related is None:
                continue
            if expanded is None:
                expanded = dict(item)
            transform = target.definition.transform
            expanded[name] = transform.item(related) if transform is not None else related
        return expanded if expanded is not None else item


def overview_of(resources: list[dict[str, Any]]) -> dict[str, Any]:
    """``{resources, total, totalItems, resourceList}`` of resource records (behavior notes
    §1 "State")."""
    return {"resources": resources, "total": len(resources),
            "totalItems": sum(resource["itemCount"] for resource in resources),
            "resourceList": [resource["name"] for resource in resources]}
