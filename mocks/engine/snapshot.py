"""Compiling a validated config into an immutable snapshot (ARCHITECTURE seams 3 and 4).

Source: ARCHITECTURE "Copy-on-write snapshots"; STYLE §2 ("compile once; serve from an
immutable snapshot").
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tables.binding import BindingSpec, BoundAction, binding_of, collect_bindings, table_configs
from tables.operations import CustomOperation, compile_operations, operation_binding
from tables.store import TableDefinition, TableStore, compile_tables

from mocks.config import ConfigFile, Mock
from mocks.protocols import ProtocolRoute, compiler_for
from mocks.protocols.streaming.actions import compile_stream_action
from mocks.engine.matching import Candidate, MatchIndex, compile_matcher, precedence_key
from mocks.core.responses import CompiledResponse
from mocks.protocols.http.validation import compile_request_validation, validating_action


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
        table_definitions: compiled ``tables`` and ``statefulResources`` (their runtime
            items live on the engine's :class:`~tables.store.TableStore`, not here).
        custom_operations: compiled ``customOperations`` (made live on the table store by
            :func:`tables.operations.apply_operations` when the snapshot is swapped in).
    """

    config: ConfigFile
    mocks: tuple[Mock, ...]
    candidates: tuple[Candidate, ...]
    index: MatchIndex
    routes: dict[str, ProtocolRoute]
    prefix_routes: tuple[ProtocolRoute, ...] = ()
    table_definitions: tuple[TableDefinition, ...] = ()
    custom_operations: tuple[CustomOperation, ...] = ()

    @property
    def mock_count(self) -> int:
        """All mocks, of every type, enabled or not."""
        return len(self.mocks)


def compile_mock(mock: Mock, order: int, key_path: str, base_dir: Path,
                 binding: BindingSpec | None = None,
                 tables: TableStore | None = None) -> Candidate | None:
    """Compile one mock into a :class:`Candidate`, or None when it cannot be served over HTTP.

    A mock bound to a table (``binding`` from ``extend``, else its ``http.statefulBinding``)
    answers from ``tables`` through a :class:`~tables.binding.BoundAction` (a throw-away store
    when None, for validation only). With ``http.validation`` the action is wrapped so the
    request is checked first (:mod:`mocks.protocols.http.validation`).

    Raises :class:`ConfigError` naming the offending key (``mocks[3].http.matcher.path``).
    """
    if mock.type != "http" or mock.http is None:
        return None
    http = mock.http
    matcher = compile_matcher(http.matcher, f"{key_path}.http.matcher")
    if binding is None and http.stateful_binding is not None:
        binding = binding_of(http.stateful_binding, f"{key_path}.http.statefulBinding")
    if binding is None and http.stateful_operation:
        # `statefulOperation: <name>` is the custom action of a binding without a table.
        binding = operation_binding(http.stateful_operation,
                                    f"{key_path}.http.statefulOperation")
    # Compiled before the action so that a bad rule is reported even for a bound mock.
    validator = compile_request_validation(http.validation, f"{key_path}.http.validation")
    action: Any
    if binding is not None:
        action = BoundAction(binding, tables if tables is not None else TableStore(),
                             http.response, http.matcher, f"{key_path}.http.response")
    elif http.sse is not None or http.chunked is not None:
        action = compile_stream_action(http, f"{key_path}.http", base_dir)
    else:
        action = CompiledResponse(http.response, f"{key_path}.http.response", base_dir)
    action = validating_action(validator, action)
    label = http.matcher.path or http.matcher.path_pattern or "*"
    return Candidate(mock_id=mock.id, name=mock.name, matcher=matcher,
                     key=precedence_key(matcher.specificity, matcher.condition_count,
                                        http.priority, order),
                     action=action, path_template=label)


def compile_snapshot(config: ConfigFile, base_dir: Path | str = ".",
                     tables: TableStore | None = None,
                     protocol_state: dict[str, dict[str, Any]] | None = None) -> Snapshot:
    """Compile every mock, table and extend binding of ``config`` and build the index.

    ``base_dir`` resolves relative ``bodyFile`` paths (the config file's folder). ``tables``
    is the engine's table store that bound mocks answer from (compiling never changes it; the
    engine applies ``table_definitions`` when it swaps the snapshot in). ``protocol_state``
    is the engine's ``mock id -> state`` dict: a protocol compiler gets its mock's entry as
    ``context["state"]`` and keeps there what must survive a recompile.
    Raises :class:`ConfigError` for the first mock, table or binding that does not compile;
    nothing is swapped in that case, so the running snapshot stays as it was.
    """
    base = Path(base_dir)
    definitions = compile_tables(table_configs(config))
    bindings = collect_bindings(config)
    operations = compile_operations(config.custom_operations)
    candidates: list[Candidate] = []
    routes: dict[str, ProtocolRoute] = {}
    prefix_routes: list[ProtocolRoute] = []
    for order, mock in enumerate(config.mocks):
        key_path = f"mocks[{order}]"
        if mock.type == "http":
            candidate = compile_mock(mock, order, key_path, base, bindings.get(order), tables)
            if candidate is not None and mock.enabled:
                candidates.append(candidate)
            continue
        compiler = compiler_for(mock.type)
        if compiler is None:
            continue
        state = {} if protocol_state is None else protocol_state.setdefault(mock.id, {})
        for route in compiler(mock, key_path, {"base_dir": base, "state": state}):
            if not mock.enabled:
                continue
            if route.prefix:
                prefix_routes.append(route)
            else:
                # first mock in file order keeps a contested path
                routes.setdefault(route.path, route)
    index = MatchIndex(candidates)
    return Snapshot(config=config, mocks=tuple(config.mocks), candidates=tuple(index.candidates),
                    index=index, routes=routes,
                    prefix_routes=tuple(sorted(prefix_routes, key=lambda route: -len(route.path))), table_definitions=definitions,
                    custom_operations=operations)


def empty_snapshot() -> Snapshot:
    """A snapshot with no mocks (what an engine serves before its first config)."""
    return compile_snapshot(ConfigFile())


