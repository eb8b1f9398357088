"""The engine object: the current snapshot, runtime state and serve-event observers.

Source: ARCHITECTURE seams 4 (copy-on-write snapshots) and 5 (one owner for runtime state);
STYLE §4 (named pipeline stages plus a serve event observed at fixed points).
"""
from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from tables.store import TableStore

from mocks.protocols.http.scenarios import ScenarioStore
from mocks.protocols.streaming.runtime import StreamRuntime

from mocks.config import ConfigFile
from mocks.engine.cors import CorsPolicy, compile_cors
from mocks.core.request import MockRequest
from mocks.engine.listeners import ListenerSupervisor
from mocks.engine.snapshot import Snapshot, compile_snapshot, empty_snapshot, patch_snapshot
from mocks.core.templating import TemplateState

if TYPE_CHECKING:  # chaos is imported when first configured (Engine.chaos_runtime)
    from chaos.injector import ChaosInjector, ChaosRuntime

logger = logging.getLogger("mockd.engine")

#: Data-plane request body limit in bytes (behavior notes §18: 10 MiB).
DEFAULT_MAX_BODY_SIZE = 10 * 1024 * 1024


def utc_timestamp(epoch_seconds: float | None = None) -> str:
    """RFC 3339 UTC with milliseconds and ``Z`` (``2026-11-21T21:16:53.123Z``)."""
    moment = datetime.fromtimestamp(time.time() if epoch_seconds is None else epoch_seconds,
                                    tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class ServeEvent:
    """What happened to one data-plane request, handed to observers after the response.

    Attributes:
        request: the request as matched.
        received_at: wall-clock time of arrival (epoch seconds).
        duration_ms: time from arrival to the last byte sent, in milliseconds.
        status: the status code sent.
        mock_id: the winning mock's id, or None when nothing matched.
        path_template: the winning mock's path (low-cardinality label), or None.
        near_misses: near-miss rows when nothing matched (behavior notes §4).
        error: an error code when the engine answered an error itself.
        response_body: the answer when known (an HTTP body, a gRPC reply as JSON, an MQTT
            payload), else None; the request log keeps only its first 64 KiB.
        body_size: the request body's size in bytes when the request log kept only the start
            of the body (None: ``len(request.body)``).
        response_size: the answer's size in bytes when the request log kept only the start
            of ``response_body`` (None: ``len(response_body)``).
        protocol: ``http``, or the protocol of a handler that reports its own events
            (``websocket``: one event per connection, when it ends).
        details: protocol fields added to the request-log entry (``wsConnectionId``,
            ``messagesReceived``, ...), or None.
    """

    request: MockRequest
    received_at: float
    duration_ms: float
    status: int
    mock_id: str | None = None
    path_template: str | None = None
    near_misses: list[dict[str, Any]] | None = None
    error: str | None = None
    response_body: bytes | None = None
    body_size: int | None = None
    protocol: str = "http"
    details: dict[str, Any] | None = None
    response_size: int | None = None


Observer = Callable[[ServeEvent], None]


class Engine:
    """One mock engine: serves the current :class:`Snapshot`.

    Attributes:
        snapshot: the snapshot requests are answered from; replaced whole by :meth:`load`.
        template_state: runtime template state (sequences) for the server's lifetime.
        tables: runtime table items (seam 5): they live here, not in the snapshot, so a
            config reload keeps them unless a table's definition changed.
        scenarios: the current state of every scenario (``http.scenario``); kept across
            config reloads, reset with the tables.
        streams: open streaming connections, resumption buffers and stats
            (:class:`~mocks.protocols.streaming.runtime.StreamRuntime`); a load stops the
            streams of mocks that changed or are gone.
        max_body_size: request body limit in bytes (larger bodies get 413).
        ready: False until the first config is loaded (readiness answers follow it).
        started_at: epoch seconds when the engine was created.

    Concurrency: owned by one event loop. :meth:`load` builds the new snapshot first and then
    swaps it with one assignment, so in-flight requests finish on the snapshot they started on.
    """

    def __init__(self, max_body_size: int = DEFAULT_MAX_BODY_SIZE):
        self.snapshot: Snapshot = empty_snapshot()
        self.template_state = TemplateState()
        self.tables = TableStore()
        self.scenarios = ScenarioStore()
        #: ``mock id -> {name: object}``: runtime state of protocol handlers (an identity
        #: provider's token store) that must outlive recompiles of its mock; dropped when the
        #: mock leaves the config.
        self.protocol_state: dict[str, dict[str, Any]] = {}
        self.streams = StreamRuntime()  # open streams and resumption buffers
        #: Listener services of protocol handlers (ports of their own), started, restarted
        #: and stopped as snapshots change (:class:`~mocks.engine.listeners.ListenerSupervisor`).
        self.listeners = ListenerSupervisor()
        self.max_body_size = max_body_size
        self.ready = False
        #: CORS policy (behavior notes §4); from ``serverConfig.cors`` of the last loaded
        #: config that has one, else the loopback default. ``cors_origins`` pins the origins
        #: (``--cors-origins``).
        self.cors = CorsPolicy()
        self.cors_origins: list[str] | None = None
        self.started_at = time.time()
        #: Fault injection (behavior notes §11): the live injector while chaos is enabled,
        #: else None, so chaos off costs the data plane one attribute read. Set only by
        #: ``chaos_runtime``, which keeps the config, statistics and fault state.
        self.chaos: ChaosInjector | None = None
        self._chaos_runtime: ChaosRuntime | None = None
        self.base_dir = Path(".")
        #: Folders a ``bodyFile`` must resolve into (behavior notes §15); empty: anywhere.
        self.body_file_roots: tuple[Path, ...] = ()
        #: Callables receiving every :class:`ServeEvent`; read on the hot path as a plain list.
        self.observers: list[Observer] = []
        #: State shared by all mocks of a protocol (``CompileContext.shared``): the template
        #: state, an event sink for handlers that report their own events, and whatever a
        #: handler keeps engine-wide under its mock type (the WebSocket connection hub).
        self.shared_state: dict[str, Any] = {
            "template_state": self.template_state,
            "serve_event": lambda **fields: self.notify(ServeEvent(**fields)),
            "chaos": lambda: self.chaos,
            # Listeners of their own that browsers can reach (MQTT over WebSocket) admit
            # the same origins as the data plane: the live CORS policy.
            "cors": lambda: self.cors}

    @property
    def chaos_runtime(self) -> ChaosRuntime:
        """The chaos state (:class:`chaos.injector.ChaosRuntime`: config, statistics, fault
        state), created on first use: an engine nobody turns chaos on for never imports the
        chaos modules or builds their config models."""
        if self._chaos_runtime is None:
            from chaos.injector import ChaosRuntime

            self._chaos_runtime = ChaosRuntime(self)
        return self._chaos_runtime

    @chaos_runtime.setter
    def chaos_runtime(self, runtime: ChaosRuntime) -> None:
        self._chaos_runtime = runtime

    def load(self, config: ConfigFile, base_dir: Path | str | None = None) -> Snapshot:
        """Compile ``config`` and make it the live snapshot.

        Raises :class:`~mocks.core.errors.ConfigError`; the old snapshot then stays live.
        """
        snapshot = self.compile(config, base_dir)
        self.swap(snapshot)
        return snapshot

    def compile(self, config: ConfigFile, base_dir: Path | str | None = None, *,
                patch_only: bool = False) -> Snapshot | None:
        """A new snapshot of ``config`` built on the live one (incremental: unchanged mocks
        are reused); not yet live. ``base_dir`` defaults to the last one loaded.

        With ``patch_only`` it returns None instead of compiling when ``config`` is not a
        small edit of the live snapshot (see :func:`~mocks.engine.snapshot.patch_snapshot`).
        Safe to call from a worker thread while the loop serves: it only reads the live
        snapshot and adds entries to ``protocol_state``. Raises
        :class:`~mocks.core.errors.ConfigError`.
        """
        base = Path(base_dir) if base_dir is not None else self.base_dir
        if patch_only:
            return patch_snapshot(config, self.snapshot, base, self.tables, self.protocol_state,
                                  self.body_file_roots, self.scenarios, self.shared_state)
        return compile_snapshot(config, base, self.tables, self.protocol_state,
                                previous=self.snapshot, body_file_roots=self.body_file_roots,
                                scenarios=self.scenarios, shared_state=self.shared_state)

    def swap(self, snapshot: Snapshot) -> None:
        """Make a compiled ``snapshot`` live (call on the engine's loop, with no await between
        compile checks and this call). Raises :class:`~mocks.core.errors.ConfigError` for a bad
        ``serverConfig.cors`` before anything changes."""
        config = snapshot.config
        cors = (compile_cors(config, self.cors_origins)
                if config.server_config is not None or self.cors_origins is not None else None)
        self.base_dir = snapshot.base_dir
        # No await between these lines: requests see the new tables, operations and snapshot
        # together.
        self.tables.apply_definitions(snapshot.table_definitions)
        if snapshot.custom_operations or "tables.operations" in sys.modules:
            # Without that module no custom operation was ever compiled or registered, so
            # there is none to replace: an engine that never has one never imports it.
            from tables.operations import apply_operations

            apply_operations(self.tables, snapshot.custom_operations)
        retired = _retired_apps(self.snapshot, snapshot)
        self.snapshot = snapshot
        for app in retired:
            app.retire()  # WebSocket clients of a changed or removed mock: close 1012
        # Runtime state of protocol mocks that are gone (an IdP's issued tokens) goes with them.
        live = snapshot.compiled
        for mock_id in [mock_id for mock_id in self.protocol_state if mock_id not in live]:
            del self.protocol_state[mock_id]
        if cors is not None:
            self.cors = cors
        self.streams.snapshot_loaded(snapshot)  # closes streams of changed or removed mocks
        self.listeners.schedule(snapshot.services)  # gRPC/MQTT/... listeners follow the config
        self.ready = True

    def add_observer(self, observer: Observer) -> None:
        """Register a callable that receives every :class:`ServeEvent` after its response."""
        self.observers.append(observer)

    def remove_observer(self, observer: Observer) -> None:
        """Unregister an observer (no error if it is not registered)."""
        if observer in self.observers:
            self.observers.remove(observer)

    def notify(self, event: ServeEvent) -> None:
        """Hand ``event`` to every observer; an observer that raises is logged, never fatal."""
        for observer in self.observers:
            try:
                observer(event)
            except Exception:  # noqa: BLE001 - observers must never change the outcome
                logger.exception("serve-event observer %r failed", observer)


def _retired_apps(old: Snapshot, new: Snapshot) -> list[Any]:
    """WebSocket route apps of ``old`` that ``new`` no longer holds and that can be retired
    (an unchanged mock keeps its compiled app across an incremental compile)."""
    if not old.websocket_routes:
        return []
    kept = {id(route.app) for route in new.websocket_routes.values()}
    return [route.app for route in old.websocket_routes.values()
            if id(route.app) not in kept and hasattr(route.app, "retire")]
