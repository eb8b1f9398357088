"""Compiling a validated config into an immutable snapshot (ARCHITECTURE seams 3 and 4).

Every mock is compiled by the handler of its type (:mod:`mocks.protocols`); this module only
collects what the handlers return into the structures the pipeline reads: the match index over
HTTP candidates, the protocol route tables, the WebSocket routes and the listener services.

Compiles are incremental: a snapshot remembers what each mock compiled to, and the next
compile reuses that output for every mock whose validated config object is the very same
object (the admin side keeps unchanged mocks' objects across changes), so an edit of one mock
among 10,000 recompiles that mock only. Mocks bound to tables or custom operations are always
recompiled, since their actions depend on definitions outside the mock.

Source: ARCHITECTURE "Copy-on-write snapshots", "Protocol handlers"; STYLE §2 ("compile once;
serve from an immutable snapshot"), §5.
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from mocks.core.errors import ConfigError
from mocks.config import ConfigFile, Mock
from mocks.engine.matching import MatchIndex
from mocks.protocols import (NOTHING, CompileContext, CompiledMock, ListenerService,
                             ProtocolRoute, WebSocketRoute, binding_member, handler_for)
from mocks.protocols.http.matcher import Candidate
from tables.binding import collect_bindings, table_configs
from tables.store import TableDefinition, TableStore, compile_tables

if TYPE_CHECKING:  # custom operations load when a config has one (_custom_operations)
    from tables.operations import CustomOperation


@dataclass(frozen=True, slots=True)
class CompiledEntry:
    """What one mock compiled to, kept for the next compile.

    Attributes:
        mock: the validated config object that was compiled (reused only if identical).
        order: its precedence slot (candidates' keys embed it): its position in the file when
            fully compiled; kept across patches, so slots grow in file order with gaps.
        output: the handler's :class:`~mocks.protocols.CompiledMock`.
        reusable: False for mocks whose output depends on more than the mock (bindings).
    """

    mock: Mock
    order: int
    output: CompiledMock
    reusable: bool


@dataclass(frozen=True)
class Snapshot:
    """Everything the data plane reads to answer requests; never mutated once built.

    Attributes:
        config: the validated config it was built from (for export and the admin side).
        mocks: every mock, enabled or not, in file order.
        candidates: enabled HTTP mocks, compiled, in precedence order.
        index: the :class:`MatchIndex` over ``candidates``.
        routes: exact path -> :class:`ProtocolRoute` of HTTP-borne protocol handlers
            (identity provider, GraphQL, SOAP), consulted before HTTP mocks (notes §4).
        prefix_routes: protocol routes answering whole sub-trees, consulted only when no
            mock matched, longest prefix first.
        websocket_routes: exact path -> :class:`WebSocketRoute` of enabled mocks.
        services: listener services of enabled mocks, by ``name``.
        table_definitions: compiled ``tables`` and ``statefulResources`` (their runtime
            items live on the engine's :class:`~tables.store.TableStore`, not here).
        custom_operations: compiled ``customOperations`` (made live on the table store by
            :func:`tables.operations.apply_operations` when the snapshot is swapped in).
        compiled: mock id -> :class:`CompiledEntry`, reused by the next incremental compile.
        routed: the entries of ``compiled`` that serve routes, WebSocket routes or services.
        next_order: the precedence slot a mock added at the end gets next.
        bound: how many mocks are bound to a table or operation (their compiled output
            depends on more than the mock, so edits then take the full path).
        base_dir: the folder relative files were resolved against (reuse needs the same).
        body_file_roots: the folders ``bodyFile`` reads were confined to (reuse needs the
            same).
    """

    config: ConfigFile
    mocks: tuple[Mock, ...]
    candidates: tuple[Candidate, ...]
    index: MatchIndex
    routes: dict[str, ProtocolRoute]
    prefix_routes: tuple[ProtocolRoute, ...] = ()
    websocket_routes: dict[str, WebSocketRoute] = field(default_factory=dict)
    services: dict[str, ListenerService] = field(default_factory=dict)
    table_definitions: tuple[TableDefinition, ...] = ()
    custom_operations: tuple[CustomOperation, ...] = ()
    compiled: dict[str, CompiledEntry] = field(default_factory=dict, repr=False)
    routed: dict[str, CompiledEntry] = field(default_factory=dict, repr=False)
    next_order: int = 0
    bound: int = 0
    base_dir: Path = Path(".")
    body_file_roots: tuple[Path, ...] = ()

    @property
    def mock_count(self) -> int:
        """All mocks, of every type, enabled or not."""
        return len(self.mocks)


def compile_one(mock: Mock, context: CompileContext) -> CompiledMock:
    """Compile one validated mock with its type's handler (nothing for a type not served yet).

    Raises :class:`~mocks.core.errors.ConfigError` naming the offending key, and
    :class:`~mocks.protocols.HandlerImportError` when the type's handler cannot be loaded.
    """
    handler = handler_for(mock.type)
    if handler is None:
        return NOTHING
    return handler.compile(mock, context)


def _depends_on_more_than_the_mock(mock: Mock, binding: Any) -> bool:
    http = mock.http if mock.type == "http" else None
    if mock.type == "graphql" and getattr(mock.graphql, "binds_tables", False):
        return True  # resolvers answering from tables (``resolvers."Query.x".table``)
    return binding is not None or (http is not None and (http.stateful_binding is not None
                                                         or bool(http.stateful_operation)))


def _reordered(output: CompiledMock, order: int) -> CompiledMock:
    """``output`` with its candidates' precedence keys moved to position ``order``."""
    if not output.candidates:
        return output
    candidates = tuple(dataclasses.replace(candidate, key=(*candidate.key[:3], order))
                       for candidate in output.candidates)
    return dataclasses.replace(output, candidates=candidates)


def _custom_operations(config: ConfigFile) -> tuple[CustomOperation, ...]:
    """The compiled ``customOperations`` of ``config``
    (:func:`tables.operations.compile_operations`; raises its ``ConfigError``). A config with
    none and no ``extend`` binding (which may run one) imports no custom-operation module."""
    if not config.custom_operations and not config.extend:
        return ()
    from tables.operations import compile_operations

    return compile_operations(config.custom_operations)


def compile_snapshot(config: ConfigFile, base_dir: Path | str = ".",
                     tables: TableStore | None = None,
                     protocol_state: dict[str, dict[str, Any]] | None = None,
                     previous: Snapshot | None = None,
                     body_file_roots: tuple[Path, ...] = (),
                     scenarios: Any = None,
                     shared_state: dict[str, Any] | None = None) -> Snapshot:
    """Compile every mock, table and extend binding of ``config`` and build the index.

    ``base_dir`` resolves relative files (the config file's folder). ``tables`` is the
    engine's table store that bound mocks answer from (compiling never changes it; the
    engine applies ``table_definitions`` when it swaps the snapshot in). ``protocol_state``
    is the engine's ``mock id -> state`` dict: a handler gets its mock's entry as
    ``context.state`` and keeps there what must survive a recompile. ``previous`` is the
    live snapshot: when ``config`` differs from it in a few mocks (edited in place, removed,
    or added at the end) only those are compiled and the index is patched; otherwise every
    mock whose config object is unchanged still reuses its compiled output (see the module
    docstring). ``body_file_roots`` confines ``bodyFile`` reads. ``scenarios`` is the
    engine's :class:`~mocks.protocols.http.scenarios.ScenarioStore` (scenario conditions and
    actions hold it; None: a throw-away store, for validation). ``shared_state`` is the
    engine's protocol-wide state (:attr:`~mocks.protocols.CompileContext.shared`).

    Raises :class:`~mocks.core.errors.ConfigError` for the first table or binding that does
    not compile, or naming every mock that does not (:attr:`ConfigError.errors`); nothing is
    swapped in that case, so the running snapshot stays as it was.
    """
    base = Path(base_dir)
    shared = _Shared(base, tables, protocol_state, body_file_roots,
                     compile_tables(table_configs(config)),
                     collect_bindings(config, binding_member),
                     _custom_operations(config), scenarios, shared_state)
    if (previous is not None and previous.base_dir == base
            and previous.body_file_roots == body_file_roots):
        patched = _patch(config, previous, shared)
        if patched is not None:
            return patched
        reuse = previous.compiled
    else:
        reuse = {}
    return _compile_all(config, shared, reuse, previous)


def patch_snapshot(config: ConfigFile, previous: Snapshot, base_dir: Path | str = ".",
                   tables: TableStore | None = None,
                   protocol_state: dict[str, dict[str, Any]] | None = None,
                   body_file_roots: tuple[Path, ...] = (),
                   scenarios: Any = None,
                   shared_state: dict[str, Any] | None = None) -> Snapshot | None:
    """:func:`compile_snapshot` when ``config`` is a small edit of ``previous`` (a few mocks
    edited in place, removed, or added at the end; no table bindings), else None without
    compiling anything. Cheap: callers try it on the event loop first and run a full compile
    elsewhere when it returns None. Raises :class:`~mocks.core.errors.ConfigError`."""
    base = Path(base_dir)
    if previous.base_dir != base or previous.body_file_roots != body_file_roots:
        return None
    shared = _Shared(base, tables, protocol_state, body_file_roots,
                     compile_tables(table_configs(config)),
                     collect_bindings(config, binding_member),
                     _custom_operations(config), scenarios, shared_state)
    return _patch(config, previous, shared)


def _compile_all(config: ConfigFile, shared: _Shared, reuse: dict[str, CompiledEntry],
                 previous: Snapshot | None) -> Snapshot:
    """Every mock of ``config``, reusing the entries of ``reuse`` whose mock is unchanged."""
    compiled: dict[str, CompiledEntry] = {}
    candidates: list[Candidate] = []
    routed: dict[str, CompiledEntry] = {}
    failed: list[ConfigError] = []
    for order, mock in enumerate(config.mocks):
        binding = shared.bindings.get(order)
        entry = reuse.get(mock.id)
        if entry is None or not entry.reusable or entry.mock is not mock or binding is not None:
            try:
                entry = _compile_entry(mock, order, order, binding, shared)
            except ConfigError as error:
                failed.append(error)  # go on, so one error names every mock that fails
                continue
        elif entry.order != order:
            entry = CompiledEntry(mock, order, _reordered(entry.output, order), True)
        compiled[mock.id] = entry
        if _serves_more_than_candidates(entry.output):
            routed[mock.id] = entry
        if mock.enabled:
            candidates.extend(entry.output.candidates)
    if failed:
        raise ConfigError.combine(failed)
    index = MatchIndex(candidates, previous.index if previous is not None else None)
    bound = sum(1 for entry in compiled.values() if not entry.reusable)
    return _assemble(config, shared, compiled, routed, index, len(config.mocks), bound)


@dataclass(frozen=True, slots=True)
class _Shared:
    """What every mock of one compile shares."""

    base_dir: Path
    tables: TableStore | None
    protocol_state: dict[str, dict[str, Any]] | None
    body_file_roots: tuple[Path, ...]
    definitions: tuple[TableDefinition, ...]
    bindings: dict[int, Any]
    operations: tuple[CustomOperation, ...]
    scenarios: Any = None
    shared_state: dict[str, Any] | None = None


def _compile_entry(mock: Mock, position: int, order: int, binding: Any,
                   shared: _Shared) -> CompiledEntry:
    """Compile ``mock`` (at ``position`` in the file, precedence slot ``order``)."""
    kept = None if shared.protocol_state is None else shared.protocol_state.get(mock.id)
    state = {} if kept is None else kept
    output = compile_one(mock, CompileContext(
        key_path=f"mocks[{position}]", order=order, base_dir=shared.base_dir, state=state,
        tables=shared.tables, binding=binding, body_file_roots=shared.body_file_roots,
        scenarios=shared.scenarios, shared=shared.shared_state))
    if kept is None and state and shared.protocol_state is not None:
        # Only mocks whose handler keeps something get an entry (most never do).
        shared.protocol_state[mock.id] = state
    return CompiledEntry(mock, order, output, not _depends_on_more_than_the_mock(mock, binding))


def _serves_more_than_candidates(output: CompiledMock) -> bool:
    return bool(output.routes or output.websocket_routes or output.services)


#: A patch is tried while at most this share of the mocks changed (else a full recompile,
#: which rebuilds the index in one pass, is cheaper).
PATCH_MAX_SHARE = 0.125


def _common_run(new: Sequence[Any], old: Sequence[Any]) -> int:
    """How many leading items of ``new`` and ``old`` are the very same objects (compared
    in C: ``map(operator.is_, ...)``)."""
    flags = list(map(operator.is_, new, old))
    try:
        return flags.index(False)
    except ValueError:
        return len(flags)


def _patch(config: ConfigFile, previous: Snapshot, shared: _Shared) -> Snapshot | None:
    """``config`` compiled as a patch of ``previous``, or None when it is not one.

    Only the window between the longest common prefix and suffix of unchanged mock objects is
    examined, so an edit among 10,000 mocks costs no Python loop over them all. A patch
    applies when the mocks kept from ``previous`` in that window are in the same relative
    order, new mocks come after all kept ones, few mocks changed, and no mock is bound to a
    table or operation (bound mocks depend on definitions outside the mock; those configs
    take the full path). Kept mocks keep their precedence slot (``order``): slots only need
    to grow in file order, so removing a mock leaves a gap instead of renumbering every
    later one.
    """
    if shared.bindings or previous.bound:
        return None
    old = previous.compiled
    mocks = config.mocks
    old_mocks = previous.mocks
    prefix = _common_run(mocks, old_mocks)
    longest = min(len(mocks), len(old_mocks)) - prefix
    suffix = _common_run(mocks[::-1][:longest], old_mocks[::-1][:longest])
    window = mocks[prefix:len(mocks) - suffix]
    old_window = old_mocks[prefix:len(old_mocks) - suffix]
    budget = max(16, int(len(mocks) * PATCH_MAX_SHARE))
    changes: list[tuple[int, Mock, CompiledEntry | None]] = []
    last_order = -1
    seen_new = False
    window_ids = set()
    for position, mock in enumerate(window, start=prefix):
        window_ids.add(mock.id)
        entry = old.get(mock.id)
        if entry is None:
            if suffix:
                return None  # a new mock before kept ones
            seen_new = True
            changes.append((position, mock, None))
        else:
            if seen_new or entry.order <= last_order:
                return None  # reordered, or a new mock among kept ones
            last_order = entry.order
            if entry.mock is not mock or not entry.reusable:
                changes.append((position, mock, entry))
    removed_ids = [mock.id for mock in old_window if mock.id not in window_ids]
    if len(changes) + len(removed_ids) > budget:
        return None
    compiled = dict(old)
    routed = dict(previous.routed)
    gone: list[Candidate] = []
    added: list[Candidate] = []
    next_order = previous.next_order
    for mock_id in removed_ids:
        entry = compiled.pop(mock_id)
        routed.pop(mock_id, None)
        if entry.mock.enabled:
            gone.extend(entry.output.candidates)
    for position, mock, entry in changes:
        if entry is None:
            order, next_order = next_order, next_order + 1
        else:
            order = entry.order
            if entry.mock.enabled:
                gone.extend(entry.output.candidates)
        fresh = _compile_entry(mock, position, order, shared.bindings.get(position), shared)
        compiled[mock.id] = fresh
        if _serves_more_than_candidates(fresh.output):
            routed[mock.id] = fresh
        else:
            routed.pop(mock.id, None)
        if mock.enabled:
            added.extend(fresh.output.candidates)
    index = previous.index.patched(gone, added) if gone or added else previous.index
    bound = sum(1 for _, mock, _ in changes if not compiled[mock.id].reusable)
    return _assemble(config, shared, compiled, routed, index, next_order, bound)


def _assemble(config: ConfigFile, shared: _Shared, compiled: dict[str, CompiledEntry],
              routed: dict[str, CompiledEntry], index: MatchIndex, next_order: int,
              bound: int) -> Snapshot:
    """The snapshot around compiled mocks: protocol route tables in precedence order."""
    routes: dict[str, ProtocolRoute] = {}
    prefix_routes: list[ProtocolRoute] = []
    websocket_routes: dict[str, WebSocketRoute] = {}
    services: dict[str, ListenerService] = {}
    for entry in sorted(routed.values(), key=lambda item: item.order):
        if not entry.mock.enabled:
            continue
        output = entry.output
        for route in output.routes:
            if route.prefix:
                prefix_routes.append(route)
            else:
                routes.setdefault(route.path, route)  # the first mock keeps a contested path
        for websocket_route in output.websocket_routes:
            websocket_routes.setdefault(websocket_route.path, websocket_route)
        for service in output.services:
            present = services.get(service.name)
            if present is None:
                services[service.name] = service
            elif hasattr(present, "merged"):
                services[service.name] = present.merged(service)  # gRPC mocks of one port
    return Snapshot(
        config=config, mocks=tuple(config.mocks), candidates=tuple(index.candidates),
        index=index, routes=routes,
        prefix_routes=tuple(sorted(prefix_routes, key=lambda route: -len(route.path))),
        websocket_routes=websocket_routes, services=services,
        table_definitions=shared.definitions, custom_operations=shared.operations,
        compiled=compiled, routed=routed, next_order=next_order, bound=bound,
        base_dir=shared.base_dir,
        body_file_roots=shared.body_file_roots)


def empty_snapshot() -> Snapshot:
    """A snapshot with no mocks (what an engine serves before its first config)."""
    return compile_snapshot(ConfigFile())
