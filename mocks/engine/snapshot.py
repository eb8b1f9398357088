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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mocks.config import ConfigFile, Mock
from mocks.engine.matching import MatchIndex
from mocks.protocols import (NOTHING, CompileContext, CompiledMock, ListenerService,
                             ProtocolRoute, WebSocketRoute, handler_for)
from mocks.protocols.http.matcher import Candidate
from tables.binding import collect_bindings, table_configs
from tables.operations import CustomOperation, compile_operations
from tables.store import TableDefinition, TableStore, compile_tables


@dataclass(frozen=True, slots=True)
class CompiledEntry:
    """What one mock compiled to, kept for the next compile.

    Attributes:
        mock: the validated config object that was compiled (reused only if identical).
        order: its position then (candidates' precedence keys embed it).
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
    return binding is not None or (http is not None and (http.stateful_binding is not None
                                                         or bool(http.stateful_operation)))


def _reordered(output: CompiledMock, order: int) -> CompiledMock:
    """``output`` with its candidates' precedence keys moved to position ``order``."""
    if not output.candidates:
        return output
    candidates = tuple(dataclasses.replace(candidate, key=(*candidate.key[:3], order))
                       for candidate in output.candidates)
    return dataclasses.replace(output, candidates=candidates)


def compile_snapshot(config: ConfigFile, base_dir: Path | str = ".",
                     tables: TableStore | None = None,
                     protocol_state: dict[str, dict[str, Any]] | None = None,
                     previous: Snapshot | None = None,
                     body_file_roots: tuple[Path, ...] = ()) -> Snapshot:
    """Compile every mock, table and extend binding of ``config`` and build the index.

    ``base_dir`` resolves relative files (the config file's folder). ``tables`` is the
    engine's table store that bound mocks answer from (compiling never changes it; the
    engine applies ``table_definitions`` when it swaps the snapshot in). ``protocol_state``
    is the engine's ``mock id -> state`` dict: a handler gets its mock's entry as
    ``context.state`` and keeps there what must survive a recompile. ``previous`` is the
    live snapshot: its compiled output is reused for every mock whose config object is
    unchanged (see the module docstring). ``body_file_roots`` confines ``bodyFile`` reads.

    Raises :class:`~mocks.core.errors.ConfigError` for the first mock, table or binding that
    does not compile; nothing is swapped in that case, so the running snapshot stays as it was.
    """
    base = Path(base_dir)
    definitions = compile_tables(table_configs(config))
    bindings = collect_bindings(config)
    operations = compile_operations(config.custom_operations)
    reuse = (previous.compiled if previous is not None and previous.base_dir == base
             and previous.body_file_roots == body_file_roots else {})
    compiled: dict[str, CompiledEntry] = {}
    candidates: list[Candidate] = []
    routes: dict[str, ProtocolRoute] = {}
    prefix_routes: list[ProtocolRoute] = []
    websocket_routes: dict[str, WebSocketRoute] = {}
    services: dict[str, ListenerService] = {}
    for order, mock in enumerate(config.mocks):
        binding = bindings.get(order)
        entry = reuse.get(mock.id)
        if entry is None or not entry.reusable or entry.mock is not mock:
            state = {} if protocol_state is None else protocol_state.setdefault(mock.id, {})
            output = compile_one(mock, CompileContext(
                key_path=f"mocks[{order}]", order=order, base_dir=base, state=state,
                tables=tables, binding=binding, body_file_roots=body_file_roots))
            entry = CompiledEntry(mock, order, output,
                                  not _depends_on_more_than_the_mock(mock, binding))
        elif entry.order != order:
            entry = CompiledEntry(mock, order, _reordered(entry.output, order), True)
        output = entry.output
        compiled[mock.id] = entry
        if not mock.enabled:
            continue
        candidates.extend(output.candidates)
        for route in output.routes:
            if route.prefix:
                prefix_routes.append(route)
            else:
                routes.setdefault(route.path, route)  # the first mock keeps a contested path
        for websocket_route in output.websocket_routes:
            websocket_routes.setdefault(websocket_route.path, websocket_route)
        for service in output.services:
            services.setdefault(service.name, service)
    index = MatchIndex(candidates, previous.index if previous is not None else None)
    return Snapshot(
        config=config, mocks=tuple(config.mocks), candidates=tuple(index.candidates),
        index=index, routes=routes,
        prefix_routes=tuple(sorted(prefix_routes, key=lambda route: -len(route.path))),
        websocket_routes=websocket_routes, services=services, table_definitions=definitions,
        custom_operations=operations, compiled=compiled, base_dir=base,
        body_file_roots=body_file_roots)


def empty_snapshot() -> Snapshot:
    """A snapshot with no mocks (what an engine serves before its first config)."""
    return compile_snapshot(ConfigFile())
