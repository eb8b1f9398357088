"""``MockServer``: the mockd engine in a background thread of the calling process.

One :class:`MockServer` owns one engine (the data plane: every protocol, tables, chaos) served
by uvicorn on a free loopback port, on an event loop of its own in one background thread.
The protocol listeners of its mocks (gRPC servers, MQTT brokers) run on that loop too. The
calling thread drives the engine through :class:`~mocks.engine.control.EngineControl`, the
same operations the admin API performs, handed to the engine's loop and awaited there.

No Django is imported (the ``pyproject.toml`` contract "The mockd library runs without
Django"); the engine is the one ``mockd engine`` runs (``mockd_project/runner.py``).

Source: SPEC "Mock", "Verification", "Request log"; behavior notes §1 ("Verification",
"Request log", "State"), §4 (near misses), §11 (chaos).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable, Mapping, TypeVar

from mockd.errors import (MockConfigError, MockdError, NearMiss, ServerNotRunning,
                          ServerStartError, TableOperationError, VerificationError)

if TYPE_CHECKING:  # pragma: no cover - typing only
    import ssl

    import httpx
    import requests

    from mocks.config import ConfigFile
    from mocks.engine.control import EngineControl
    from mocks.engine.core import Engine

__all__ = ["LoggedRequest", "MockServer", "Table"]

T = TypeVar("T")

#: Seconds ``start()`` waits for the engine to be ready.
START_TIMEOUT = 30.0
#: Seconds ``stop()`` waits for the background thread to end.
STOP_TIMEOUT = 10.0
#: Seconds a call into the engine's loop may take before it is given up.
CALL_TIMEOUT = 30.0
#: Seconds ``stop()`` lets open connections finish before their tasks are cancelled, and
#: the poll interval meanwhile.
SHUTDOWN_GRACE = 1.0
SHUTDOWN_POLL = 0.005
#: At most this many unmatched requests are explained in a verification failure.
MAX_REPORTED_MISSES = 5
#: The request-log capacity of a library server (entries; the oldest are dropped).
DEFAULT_LOG_ENTRIES = 1000


@dataclass(frozen=True)
class LoggedRequest:
    """One request-log entry, as :meth:`MockServer.requests` returns it.

    Attributes:
        id: the entry id (``req-1a``).
        timestamp: arrival time, RFC 3339 UTC (``2026-11-27T10:00:00.123Z``).
        protocol: ``http``, ``websocket``, ``grpc``, ``mqtt``, ...
        method: the HTTP method (or the protocol's verb).
        path: the request path, without the query string.
        query_string: the raw query string (``""`` when none).
        headers: ``{Header-Name: [values]}`` (secret headers redacted as the log redacts them).
        body: the body as text (``""`` when none; the first 64 KiB).
        status: the status code answered.
        matched_mock_id: the mock that answered, or None.
        duration_ms: time to the last byte sent, in milliseconds.
        near_misses: for an unmatched HTTP request, ``[{mockId, mockName?,
            matchPercentage, reason}]``.
        entry: the whole entry as the admin API's ``GET /requests`` shows it.
    """

    id: str
    timestamp: str
    protocol: str
    method: str
    path: str
    query_string: str
    headers: dict[str, list[str]]
    body: str
    status: int
    matched_mock_id: str | None
    duration_ms: float
    near_misses: list[dict[str, Any]] = field(default_factory=list)
    entry: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def matched(self) -> bool:
        """Whether a mock answered the request."""
        return self.matched_mock_id is not None

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), or None."""
        wanted = name.lower()
        for key, values in self.headers.items():
            if key.lower() == wanted and values:
                return values[0]
        return None

    def json(self) -> Any:
        """The body parsed as JSON; raises ``ValueError`` when it is not JSON."""
        import json

        return json.loads(self.body)

    @classmethod
    def of(cls, entry: dict[str, Any]) -> LoggedRequest:
        """The view of one request-log entry (behavior notes §1 "Request log")."""
        return cls(id=entry["id"], timestamp=entry["timestamp"],
                   protocol=entry.get("protocol", "http"), method=entry.get("method", ""),
                   path=entry.get("path", ""), query_string=entry.get("queryString", ""),
                   headers=entry.get("headers", {}), body=entry.get("body", ""),
                   status=entry.get("statusCode", 0),
                   matched_mock_id=entry.get("matchedMockId"),
                   duration_ms=entry.get("durationMs", 0.0),
                   near_misses=entry.get("nearMisses", []), entry=entry)


class Table:
    """One table of a running :class:`MockServer` (``server.table("users")``).

    Every method runs on the engine's loop, so it is atomic with respect to the requests the
    server is answering. Items are returned as copies: changing them changes nothing.
    Raises :class:`~mockd.errors.TableOperationError` (404) when the table does not exist.

    Source: behavior notes §1 "State".
    """

    def __init__(self, server: MockServer, name: str):
        self._server = server
        self.name = name

    def items(self) -> list[dict[str, Any]]:
        """Every item, in the table's order (creation order)."""
        return self._server._table_call(
            self.name, lambda table: copy.deepcopy(list(table.items.values())))

    def get(self, item_id: str | int) -> dict[str, Any] | None:
        """The item whose id is ``item_id`` (compared as text), or None."""
        return self._server._table_call(
            self.name, lambda table: copy.deepcopy(table.items.get(str(item_id))))

    def insert(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """Create an item as a bound ``create`` would (id generated when absent, the table's
        validation applied); returns the stored item. Raises
        :class:`~mockd.errors.TableOperationError` 409 (id taken), 400 (invalid item), 507
        (table full)."""
        control = self._server._require_control()
        return self._server._call(lambda: control.create_table_item(self.name, dict(item)),
                                  table_errors=True)

    def reset(self) -> None:
        """Put the seed items back (everything else is dropped)."""
        control = self._server._require_control()
        self._server._call(lambda: control.reset_tables(self.name), table_errors=True)

    def clear(self) -> int:
        """Remove every item, seeds included; returns how many were removed."""
        control = self._server._require_control()
        return self._server._call(lambda: control.clear_table(self.name), table_errors=True)

    def __len__(self) -> int:
        return self._server._table_call(self.name, lambda table: len(table.items))

    def __repr__(self) -> str:
        return f"Table({self.name!r})"


class _BaseUrlSession:
    """Factory of a ``requests.Session`` whose relative URLs go to the server."""

    @staticmethod
    def create(base_url: str, verify: bool | ssl.SSLContext = True) -> requests.Session:
        import requests as requests_module

        class BaseUrlSession(requests_module.Session):
            """A ``requests.Session`` that prefixes relative URLs with ``base_url``."""

            def request(self, method: str, url: str | bytes, *args: Any,
                        **kwargs: Any) -> requests_module.Response:
                text = url.decode() if isinstance(url, bytes) else url
                if not text.startswith(("http://", "https://")):
                    text = base_url.rstrip("/") + "/" + text.lstrip("/")
                return super().request(method, text, *args, **kwargs)

        session = BaseUrlSession()
        if not isinstance(verify, bool):  # an ssl.SSLContext
            # requests hands a CA file to a context of its own that OpenSSL then refuses a
            # self-signed anchor with; an adapter on this context verifies as httpx does.
            from requests.adapters import HTTPAdapter

            class TrustingAdapter(HTTPAdapter):
                """Verifies HTTPS with the server's CA context."""

                def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
                    kwargs["ssl_context"] = verify
                    super().init_poolmanager(*args, **kwargs)

            session.mount("https://", TrustingAdapter())
        else:
            session.verify = verify
        return session


class MockServer:
    """A mockd engine serving mocks on a free loopback port, in this process.

    Args:
        config: None (no mocks), a config file path (YAML or JSON, SPEC "Configuration
            file"), or a config document as a dict (``{"mocks": [...], "tables": [...]}``;
            ``version`` may be left out).
        mocks: more mocks (dicts or :mod:`mockd.builders` results) after the config's.
        port: the HTTP port; 0 (default) picks a free one.
        host: the interface to listen on (default loopback). gRPC and MQTT listeners of the
            mocks bind here too.
        base_dir: the folder ``bodyFile``, ``dataFile`` and other relative paths of the
            config resolve against, and the only one they may read from; default: the config
            file's folder, else the working directory.
        max_log_entries: request-log capacity (oldest dropped first).
        tls: False (plain HTTP), True (HTTPS with a self-signed ``localhost`` certificate
            generated for the process; clients trust :attr:`ca_path`), or a ``(cert file,
            key file)`` pair of PEM files. See :mod:`mockd.tls`.
        tls_ca: with a ``(cert, key)`` pair, the CA file clients trust (default: the
            certificate file).

    Raises :class:`~mockd.errors.MockConfigError` at construction when the config or a mock
    is invalid (naming the key); ``TypeError`` for a ``tls``/``tls_ca`` of the wrong shape.

    Example::

        from mockd import MockServer, http

        with MockServer(mocks=[http("GET", "/users/{id}", json={"id": "{{request.pathParam.id}}"},
                                    id="get-user")]) as server:
            response = server.client().get("/users/42")
            server.verify("get-user", times=1)

    Concurrency: every method may be called from any thread except the server's own; they
    wait for the engine's loop, which keeps answering requests meanwhile. ``async with``
    starts and stops the server in a worker thread, so an event loop of the caller is not
    blocked.
    """

    def __init__(self, config: str | Path | Mapping[str, Any] | None = None, *,
                 mocks: Iterable[Mapping[str, Any]] | None = None, port: int = 0,
                 host: str = "127.0.0.1", base_dir: str | Path | None = None,
                 max_log_entries: int = DEFAULT_LOG_ENTRIES,
                 tls: bool | tuple[str | Path, str | Path] = False,
                 tls_ca: str | Path | None = None):
        from mockd.tls import check_tls_option

        check_tls_option(tls, tls_ca)
        self.host = host
        self._tls_option = tls
        self._tls_ca_option = tls_ca
        self._tls: Any = None
        self._requested_port = port
        self._max_log_entries = max_log_entries
        self._initial: ConfigFile = _initial_config(config, mocks)
        if base_dir is not None:
            self.base_dir = Path(base_dir).resolve()
        elif isinstance(config, (str, Path)):
            self.base_dir = Path(config).resolve().parent
        else:
            self.base_dir = Path.cwd().resolve()
        self._current: ConfigFile = self._initial
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._engine: Engine | None = None
        self._control: EngineControl | None = None
        self._chaos_changed = False
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle
    @property
    def running(self) -> bool:
        """Whether the server is started and not stopped."""
        return self._thread is not None and self._thread.is_alive() and self._port is not None

    @property
    def port(self) -> int:
        """The HTTP port; raises :class:`~mockd.errors.ServerNotRunning` before ``start()``."""
        if self._port is None:
            raise ServerNotRunning("the mock server is not running: call start() or use "
                                   "'with MockServer(...) as server'")
        return self._port

    @property
    def url(self) -> str:
        """``http://<host>:<port>`` (``https://`` with ``tls``; no trailing slash)."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self._tls_option else 'http'}://{shown}:{self.port}"

    @property
    def ca_path(self) -> Path | None:
        """The CA certificate (PEM) clients of an HTTPS server trust (the generated
        certificate with ``tls=True``); None for plain HTTP or before ``start()``."""
        return self._tls.ca_path if self._tls is not None else None

    def ssl_context(self) -> Any:
        """A client ``ssl.SSLContext`` trusting :attr:`ca_path` (httpx's ``verify=``,
        websockets' ``ssl=``); True (the system CAs) for a plain server."""
        if self._tls is None:
            return True
        from mockd.tls import client_context

        return client_context(self._tls.ca_path)

    def start(self) -> MockServer:
        """Start the engine; returns once it answers on :attr:`port` (and the listeners of
        its gRPC and MQTT mocks are up). Starting a running server does nothing.

        Raises :class:`~mockd.errors.ServerStartError` with the reason (port taken, a mock
        that does not compile, a listener that cannot bind); nothing is left running then.
        """
        with self._lock:
            if self._thread is not None:
                return self
            if self._tls_option and self._tls is None:
                from mockd.tls import server_tls

                self._tls = server_tls(self._tls_option, self._tls_ca_option)
            ready: concurrent.futures.Future[int] = concurrent.futures.Future()
            thread = threading.Thread(target=self._run, args=(ready,),
                                      name=f"mockd-server-{id(self):x}", daemon=True)
            self._thread = thread
            thread.start()
            try:
                self._port = ready.result(timeout=START_TIMEOUT)
            except BaseException as error:
                self._shutdown_thread()
                if isinstance(error, concurrent.futures.TimeoutError):
                    raise ServerStartError(f"the mock server did not start within "
                                           f"{START_TIMEOUT:.0f} s") from None
                if isinstance(error, MockdError):
                    raise
                raise ServerStartError(f"cannot start the mock server: {error}") from error
        return self

    def stop(self) -> None:
        """Stop the server: open streams end, listeners close, the thread ends (within
        about :data:`STOP_TIMEOUT` seconds at most). Idempotent."""
        with self._lock:
            self._shutdown_thread()

    def _shutdown_thread(self) -> None:
        thread, loop, stop_event = self._thread, self._loop, self._stop_event
        if thread is None:
            return
        if loop is not None and stop_event is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stop_event.set)
            except RuntimeError:
                pass  # the loop closed in between: the thread is ending anyway
        if thread is not threading.current_thread():
            thread.join(STOP_TIMEOUT)
        self._thread = None
        self._loop = None
        self._stop_event = None
        self._port = None
        self._engine = None
        self._control = None

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    async def __aenter__(self) -> MockServer:
        await asyncio.get_running_loop().run_in_executor(None, self.start)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.stop)

    def __repr__(self) -> str:
        where = self.url if self._port is not None else "not running"
        return f"<MockServer {where}>"

    # ------------------------------------------------------------------ the engine thread
    def _run(self, ready: concurrent.futures.Future[int]) -> None:
        try:
            import uvloop

            loop = uvloop.new_event_loop()
        except ImportError:  # pragma: no cover - uvloop ships with uvicorn[standard]
            loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self._serve(ready))
        except BaseException as error:  # noqa: BLE001 - handed to start()
            if not ready.done():
                ready.set_exception(error)
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                asyncio.set_event_loop(None)
                loop.close()

    async def _serve(self, ready: concurrent.futures.Future[int]) -> None:
        import uvicorn

        from mockd_project.engine_start import bind_socket, lazy_websocket_protocol
        from mocks.core.errors import ConfigError
        from mocks.core.responses import FileRoots
        from mocks.engine.control import EngineControl
        from mocks.engine.core import Engine
        from mocks.engine.routing import lean_data_plane
        from mocks.protocols import load_handlers

        self._stop_event = asyncio.Event()
        engine = Engine()
        engine.shared_state["listen_host"] = self.host
        engine.body_file_roots = FileRoots((self.base_dir,))
        load_handlers({mock.type for mock in self._initial.mocks})
        try:
            engine.load(self._initial, base_dir=self.base_dir)
        except ConfigError as error:
            raise _config_error(error) from None
        engine.ready = True
        control = EngineControl(engine, self._max_log_entries)
        file_chaos = getattr(self._initial.server_config, "chaos", None)
        if file_chaos is not None:
            from chaos.startup import startup_chaos

            chaos = startup_chaos(file_chaos, None)
            if chaos is not None:
                control.install_chaos(chaos)
        sock = bind_socket(self.host, self._requested_port, "mock server", error=ServerStartError)
        # The WebSocket library is imported on the first upgrade, not at start.
        from mockd_project.bounded_http import bounded_head, bounded_httptools

        protocols: dict[str, Any] = {"http": bounded_httptools(), "ws": lazy_websocket_protocol}
        if self._tls is not None:
            from mockd_project.tls import tls_protocols

            https, protocols["ws"] = tls_protocols(self._tls.settings)
            protocols["http"] = bounded_head(https)
            context = self._tls.context
            protocols["ssl_context_factory"] = lambda _config, _default: context
        # log_config None: a library leaves the process's logging set-up alone (and saves
        # uvicorn's dictConfig); uvicorn's loggers still get the warning level.
        config = uvicorn.Config(lean_data_plane(engine), lifespan="off",
                                loop="none", log_level="warning", log_config=None,
                                access_log=False, server_header=False,
                                timeout_graceful_shutdown=1, proxy_headers=False,
                                ws_per_message_deflate=False, **protocols)
        server = uvicorn.Server(config)
        try:
            config.load()
            server.lifespan = config.lifespan_class(config)
            await server.startup(sockets=[sock])
            # Listener services (gRPC, MQTT) of the first snapshot start on this loop.
            await engine.listeners.reconcile(engine.snapshot.services)
        except BaseException:
            await engine.listeners.stop_all()
            server.should_exit = True
            if server.servers:
                await _shutdown(server, sock)
            sock.close()
            raise
        self._engine, self._control = engine, control
        ready.set_result(sock.getsockname()[1])
        # uvicorn's own main loop polls every 0.1 s; this one wakes at once on stop() and
        # still refreshes the Date header once a second (on_tick with counter 0).
        while not self._stop_event.is_set():
            await server.on_tick(0)
            try:
                await asyncio.wait_for(self._stop_event.wait(), 1.0)
            except asyncio.TimeoutError:
                pass
        server.should_exit = True
        control.stop_streams()  # open SSE/chunked streams end now, cleanly
        await engine.listeners.stop_all()
        await _shutdown(server, sock)
        sock.close()

    # ------------------------------------------------------------------ calls into the loop
    def _require_control(self) -> EngineControl:
        control = self._control
        if control is None or self._loop is None:
            raise ServerNotRunning("the mock server is not running: call start() or use "
                                   "'with MockServer(...) as server'")
        return control

    def _call(self, make: Callable[[], Awaitable[T]], *, table_errors: bool = False) -> T:
        """Run the coroutine ``make()`` on the engine's loop and return its result."""
        self._require_control()
        loop = self._loop
        assert loop is not None
        if threading.current_thread() is self._thread:
            raise MockdError("MockServer methods cannot be called from the server's own "
                             "thread (a mock's callback): they would wait for themselves")

        async def run() -> T:
            return await make()

        future = asyncio.run_coroutine_threadsafe(run(), loop)
        try:
            return future.result(CALL_TIMEOUT)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise MockdError(f"the engine did not answer within {CALL_TIMEOUT:.0f} s") from None
        except Exception as error:
            raise _library_error(error, table_errors) from None

    def _table_call(self, name: str, read: Callable[[Any], T]) -> T:
        control = self._require_control()

        async def run() -> T:
            return read(control.engine.tables.get(name))

        return self._call(run, table_errors=True)

    # ------------------------------------------------------------------ mocks
    def add(self, *mocks: Mapping[str, Any]) -> list[str]:
        """Add mocks (config-format dicts or :mod:`mockd.builders` results) after the ones
        served; returns their ids (generated ``<type>_<hex>`` when a mock has none).

        Raises :class:`~mockd.errors.MockConfigError` naming the key
        (``mocks[0].http.matcher.method: ...``, indexes counting the arguments) for an
        invalid mock or an id already served; nothing is added then.
        """
        control = self._require_control()
        added = _validated_mocks(mocks)
        served = {mock.id for mock in self._current.mocks}
        for index, mock in enumerate(added):
            if mock.id in served:
                raise MockConfigError(f"mocks[{index}].id: a mock with id {mock.id!r} is "
                                      f"already served; remove it first",
                                      f"mocks[{index}].id")
            served.add(mock.id)
        from mocks.protocols import load_handlers

        load_handlers({mock.type for mock in added})
        config = self._current.model_copy(update={"mocks": [*self._current.mocks, *added]})
        self._apply(control, config)
        return [mock.id for mock in added]

    def remove(self, mock_id: str) -> None:
        """Stop serving the mock ``mock_id``. Raises ``KeyError`` when no mock has that id."""
        control = self._require_control()
        kept = [mock for mock in self._current.mocks if mock.id != mock_id]
        if len(kept) == len(self._current.mocks):
            raise KeyError(f"no mock with id {mock_id!r}")
        self._apply(control, self._current.model_copy(update={"mocks": kept}))

    def mocks(self) -> list[dict[str, Any]]:
        """The mocks served, in precedence order, as config-format dicts."""
        return [mock.model_dump(mode="json", by_alias=True, exclude_none=True)
                for mock in self._current.mocks]

    def _apply(self, control: EngineControl, config: ConfigFile) -> None:
        self._call(lambda: control.apply_config(config, self.base_dir))
        self._current = config

    def reset(self) -> None:
        """Back to the state right after ``start()``: the mocks given at construction, tables
        at their seed items, scenarios at ``Started``, the request log, call counts and
        traffic counters empty, chaos as the config set it (statistics zeroed).

        Costs well under a millisecond when the mocks did not change, a few milliseconds
        when some were added or removed (an incremental recompile).
        """
        control = self._require_control()
        initial, changed, chaos_changed = self._initial, self._current is not self._initial, \
            self._chaos_changed

        async def run() -> None:
            if changed:
                await control.apply_config(initial, self.base_dir)
            engine = control.engine
            engine.tables.reset()
            engine.scenarios.reset(None)
            log = control.request_log
            log.clear()
            log.counters.series.clear()
            log.counters.errors.clear()
            if chaos_changed:
                _restore_chaos(control, initial)

        self._call(run)
        self._current = initial
        self._chaos_changed = False

    # ------------------------------------------------------------------ verification
    def verify(self, mock_id: str, times: int | None = None, *, at_least: int | None = None,
               at_most: int | None = None) -> int:
        """Check how often ``mock_id`` answered (the retained request log); returns the
        count.

        ``times`` asks for exactly that many calls; ``at_least``/``at_most`` bound it; with
        none of them, at least one call is expected. Raises
        :class:`~mockd.errors.VerificationError` (an ``AssertionError``) whose message
        names the mock, the expected and actual counts and the near misses of the unmatched
        requests (what each request had against what the mock expected); ``KeyError`` when no
        mock has that id. Source: behavior notes §1 "Verification".
        """
        __tracebackhide__ = True  # pytest reports the failure at the test's line
        from mocks.engine.verification import CallCriteria, verify_calls

        control = self._require_control()
        if times is None and at_least is None and at_most is None:
            at_least = 1
        for name, value in (("times", times), ("at_least", at_least), ("at_most", at_most)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                raise ValueError(f"{name}: must be a non-negative integer, got {value!r}")
        criteria = CallCriteria(exactly=times, at_least=at_least, at_most=at_most)

        async def run() -> tuple[dict[str, Any], str, list[NearMiss]] | None:
            mock = next((mock for mock in control.engine.snapshot.mocks
                         if mock.id == mock_id), None)
            if mock is None:
                return None
            result = verify_calls(len(control.request_log.calls(mock_id)), criteria)
            if result["passed"]:
                return result, "", []
            return result, _describe_mock(mock), _near_misses_of(control, mock_id)

        outcome = self._call(run)
        if outcome is None:
            served = ", ".join(repr(mock.id) for mock in self._current.mocks[:20]) or "none"
            raise KeyError(f"no mock with id {mock_id!r} (served: {served})")
        result, described, misses = outcome
        if result["passed"]:
            return result["actual"]
        raise VerificationError(
            _verification_message(mock_id, described, result, misses), mock_id=mock_id,
            expected=result.get("expected", ""), actual=result["actual"], near_misses=misses)

    def calls(self, mock_id: str) -> int:
        """How many retained requests ``mock_id`` answered."""
        control = self._require_control()

        async def run() -> int:
            return len(control.request_log.calls(mock_id))

        return self._call(run)

    def requests(self, *, method: str | None = None, path: str | None = None,
                 matched: str | bool | None = None) -> list[LoggedRequest]:
        """The retained request log, oldest first, filtered.

        Args:
            method: keep this method only (any case).
            path: keep this exact path only (no query string).
            matched: a mock id keeps the requests it answered; True those any mock answered;
                False the unmatched ones; None all.
        """
        control = self._require_control()
        wanted_method = method.upper() if method else None

        async def run() -> list[dict[str, Any]]:
            log = control.request_log
            entries = []
            for record in log.records():
                event = record.event
                if wanted_method is not None and event.request.method != wanted_method:
                    continue
                if path is not None and event.request.path != path:
                    continue
                if matched is True and event.mock_id is None:
                    continue
                if matched is False and event.mock_id is not None:
                    continue
                if isinstance(matched, str) and event.mock_id != matched:
                    continue
                entries.append(record.entry(log.workspace_of))
            return entries

        return [LoggedRequest.of(entry) for entry in self._call(run)]

    # ------------------------------------------------------------------ tables and chaos
    def table(self, name: str) -> Table:
        """The table ``name`` (declared in the config's ``tables``); the check that it exists
        happens on first use (:class:`~mockd.errors.TableOperationError` 404)."""
        return Table(self, name)

    def tables(self) -> list[str]:
        """The names of the tables the engine holds."""
        control = self._require_control()

        async def run() -> list[str]:
            return list(control.engine.tables.tables)

        return self._call(run)

    def chaos(self, profile_or_config: str | Mapping[str, Any] | None) -> None:
        """Inject faults: a profile name (``"flaky"``, ``"slow"``, ... as ``mockd chaos
        profiles`` lists), a chaos config dict (the ``PUT /chaos`` body: ``{"enabled": true,
        "latency": {...}, "errorRate": {...}}``), or None to turn chaos off. ``reset()``
        restores the config's chaos.

        Raises :class:`~mockd.errors.MockConfigError` naming the field, or for an unknown
        profile. Source: behavior notes §11.
        """
        control = self._require_control()
        if profile_or_config is None:
            async def run() -> Any:
                control.engine.chaos_runtime.disable()
        elif isinstance(profile_or_config, str):
            name = profile_or_config

            async def run() -> Any:
                return await control.apply_chaos_profile(name)
        else:
            document = dict(profile_or_config)

            async def run() -> Any:
                return await control.set_chaos(document)
        self._chaos_changed = True
        self._call(run)

    def chaos_stats(self) -> dict[str, Any]:
        """``{totalRequests, injectedFaults, latencyInjected, errorsInjected, ...}``."""
        control = self._require_control()
        return self._call(control.chaos_stats)

    # ------------------------------------------------------------------ clients
    def client(self, **kwargs: Any) -> httpx.Client:
        """An ``httpx.Client`` whose relative URLs go to the server (``base_url`` set, and
        ``verify`` trusting :attr:`ca_path` with ``tls``); ``kwargs`` go to
        ``httpx.Client``. Close it (or use ``with``)."""
        import httpx

        kwargs.setdefault("base_url", self.url)
        if self._tls is not None:
            kwargs.setdefault("verify", self.ssl_context())
        return httpx.Client(**kwargs)

    def async_client(self, **kwargs: Any) -> httpx.AsyncClient:
        """An ``httpx.AsyncClient`` with ``base_url`` (and ``verify``) set as
        :meth:`client` sets them."""
        import httpx

        kwargs.setdefault("base_url", self.url)
        if self._tls is not None:
            kwargs.setdefault("verify", self.ssl_context())
        return httpx.AsyncClient(**kwargs)

    def requests_session(self) -> requests.Session:
        """A ``requests.Session`` whose relative URLs (``session.get("/users")``) go to the
        server (``verify`` set to :attr:`ca_path` with ``tls``). Raises ``ImportError`` naming the package when ``requests`` is not
        installed."""
        try:
            import requests  # noqa: F401 - the error below names it
        except ImportError:
            raise ImportError("requests_session() needs the 'requests' package: "
                              "pip install requests") from None
        return _BaseUrlSession.create(self.url, self.ssl_context())

    def grpc_port(self) -> int:
        """The port of the first gRPC mock. Raises ``LookupError`` when there is none."""
        return _first_port(self._current, "grpc")

    def mqtt_port(self) -> int:
        """The port of the first MQTT mock's broker. Raises ``LookupError`` when there is
        none."""
        return _first_port(self._current, "mqtt")

    def grpc_channel(self, port: int | None = None) -> Any:
        """An insecure ``grpc.Channel`` to ``port`` (default: the first gRPC mock's). Close
        it when done."""
        import grpc

        self._require_control()
        return grpc.insecure_channel(f"{self.host}:{port or self.grpc_port()}")

    def mqtt_client(self, client_id: str = "", port: int | None = None,
                    timeout: float = 10.0) -> Any:
        """A ``paho.mqtt.client.Client`` (callback API 2) connected to ``port`` (default: the
        first MQTT mock's broker) with its network loop running in a thread. When done call
        ``client.disconnect()`` then ``client.loop_stop()``.

        Raises ``ImportError`` naming the package when paho-mqtt is missing, ``TimeoutError``
        when the broker does not accept the connection within ``timeout`` seconds."""
        try:
            from paho.mqtt import client as mqtt
        except ImportError:
            raise ImportError("mqtt_client() needs the 'paho-mqtt' package: "
                              "pip install paho-mqtt") from None
        self._require_control()
        connected = threading.Event()
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
        client.on_connect = lambda *args: connected.set()
        client.connect(self.host, port or self.mqtt_port())
        client.loop_start()
        if not connected.wait(timeout):
            client.loop_stop()
            raise TimeoutError(f"the MQTT broker on port {port or self.mqtt_port()} did not "
                               f"accept the connection within {timeout} s")
        return client


# ---------------------------------------------------------------------------- helpers


async def _shutdown(server: Any, sock: socket.socket) -> None:
    """Stop a started ``uvicorn.Server``: stop accepting, ask every connection to close and
    poll every :data:`SHUTDOWN_POLL` s (uvicorn's own shutdown sleeps 0.1 s at least) until
    connections and their tasks are gone, cancelling what is left after
    :data:`SHUTDOWN_GRACE` s."""
    for listener in server.servers:
        listener.close()
    sock.close()
    state = server.server_state
    for connection in list(state.connections):
        connection.shutdown()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SHUTDOWN_GRACE
    while (state.connections or state.tasks) and loop.time() < deadline:
        await asyncio.sleep(SHUTDOWN_POLL)
    for task in list(state.tasks):
        task.cancel()
    for listener in server.servers:
        await listener.wait_closed()


def _config_error(error: Exception) -> MockConfigError:
    """The :class:`MockConfigError` of a ``ConfigError``."""
    issues = [(issue.path, issue.reason) for issue in getattr(error, "errors", [])]
    return MockConfigError(str(error), getattr(error, "path", ""), issues or None)


def _library_error(error: Exception, table_errors: bool) -> Exception:
    from mocks.core.errors import ConfigError

    if isinstance(error, (MockdError, AssertionError, KeyError)):
        return error
    if isinstance(error, ConfigError):
        return _config_error(error)
    if table_errors:
        from tables.control import admin_error_of
        from tables.errors import TableError

        if isinstance(error, TableError):
            status, body = admin_error_of(error, "table")
            return TableOperationError(status, body["error"], body["message"])
    from chaos.control import ChaosError

    if isinstance(error, ChaosError):
        return MockConfigError(f"chaos: {error.message}")
    return error


def _initial_config(config: str | Path | Mapping[str, Any] | None,
                    mocks: Iterable[Mapping[str, Any]] | None) -> ConfigFile:
    """The validated config of a new server (raises :class:`MockConfigError`)."""
    from mocks.core.errors import ConfigError
    from mocks.loader import load_config_file, validate_config

    if config is None and mocks:
        return _mocks_document(list(mocks))
    try:
        if config is None:
            document: ConfigFile = validate_config({"version": "1.0"})
        elif isinstance(config, (str, Path)):
            document = load_config_file(config)
        elif isinstance(config, Mapping):
            document = validate_config({"version": "1.0", **dict(config)})
        else:
            raise MockConfigError(f"config: expected a file path, a dict or None, got "
                                  f"{type(config).__name__}", "config")
    except ConfigError as error:
        raise _config_error(error) from None
    if mocks:
        # Dumped whole (not mock by mock): the config's serializer covers its mocks, so no
        # other model is built for it. Only what was set is dumped: a default written back
        # would count as given when validated again (a bound mock's statusCode 200 would
        # override its action's status).
        merged = _dump_set(document)
        merged["mocks"] = [*merged.get("mocks", []),
                           *_dump_set(_mocks_document(list(mocks))).get("mocks", [])]
        try:
            document = validate_config(merged)
        except ConfigError as error:
            raise _config_error(error) from None
    return document


def _dump_set(model: Any) -> dict[str, Any]:
    """``model`` as the JSON document that gives it: the fields set, by their aliases."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude_none=True)


def _validated_mocks(mocks: Iterable[Mapping[str, Any]]) -> list[Any]:
    """The mock models of ``mocks`` (ids given to those without one). Raises
    :class:`MockConfigError` naming the key (``mocks[<argument index>]...``)."""
    return list(_mocks_document(mocks).mocks)


def _mocks_document(mocks: Iterable[Mapping[str, Any]]) -> ConfigFile:
    """The config holding ``mocks`` alone (ids given to those without one). Raises
    :class:`MockConfigError` naming the key (``mocks[<argument index>]...``), a duplicate
    id included."""
    from mocks.core.errors import ConfigError
    from mocks.loader import validate_config

    documents = []
    for index, mock in enumerate(mocks):
        if not isinstance(mock, Mapping):
            raise MockConfigError(f"mocks[{index}]: a mock must be a dict (or a mockd.builders "
                                  f"result), got {type(mock).__name__}", f"mocks[{index}]")
        documents.append(dict(mock))
    try:
        return validate_config({"version": "1.0", "mocks": documents})
    except ConfigError as error:
        raise _config_error(error) from None


def _restore_chaos(control: EngineControl, initial: ConfigFile) -> None:
    """Chaos back to the config's (off when it has none), statistics zeroed."""
    runtime = control.engine.chaos_runtime
    file_chaos = getattr(initial.server_config, "chaos", None)
    chaos = None
    if file_chaos is not None:
        from chaos.startup import startup_chaos

        chaos = startup_chaos(file_chaos, None)
    if chaos is not None:
        runtime.configure(chaos)
    else:
        runtime.disable()
    runtime.stats.reset()


def _first_port(config: ConfigFile, mock_type: str) -> int:
    for mock in config.mocks:
        if mock.type == mock_type and mock.enabled:
            port = getattr(getattr(mock, mock_type), "port", None)
            if port:
                return int(port)
    raise LookupError(f"no enabled {mock_type} mock with a port is served")


def _describe_mock(mock: Any) -> str:
    """``GET /users/{id}`` for an HTTP mock, else its type (and name)."""
    parts = []
    if mock.type == "http" and mock.http is not None:
        matcher = mock.http.matcher
        method = getattr(matcher, "method", None)
        where = (getattr(matcher, "path", None) or getattr(matcher, "path_pattern", None)
                 or "any path")
        parts.append(f"{method or 'ANY'} {where}")
    else:
        parts.append(mock.type)
    if mock.name:
        parts.append(f"{mock.name!r}")
    return ", ".join(parts)


def _near_misses_of(control: EngineControl, mock_id: str) -> list[NearMiss]:
    """How the newest unmatched HTTP requests missed ``mock_id`` (engine loop only)."""
    from mocks.engine.matching import near_misses

    candidate = next((candidate for candidate in control.engine.snapshot.candidates
                      if candidate.mock_id == mock_id), None)
    misses: list[NearMiss] = []
    for record in control.request_log.newest_first():
        event = record.event
        if event.mock_id is not None or event.protocol != "http":
            continue
        request = event.request
        shown = request.method + " " + request.path + (
            "?" + request.query_string if request.query_string else "")
        miss = NearMiss(shown, event.status)
        rows = near_misses([candidate], request, limit=1) if candidate is not None else []
        if rows:
            row = rows[0]
            miss.match_percentage = row.get("matchPercentage", 0)
            miss.reason = row.get("reason", "")
            miss.mismatches = _mismatches(row.get("fields", []))
        elif candidate is not None:
            miss.reason = "no field of the mock's matcher matched"
        misses.append(miss)
        if len(misses) >= MAX_REPORTED_MISSES:
            break
    return misses


def _mismatches(fields: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    """``(field, expected, actual)`` of every failed condition of a near-miss row; a keyed
    condition (headers, query parameters, JSON paths) gives one per failed key
    (``headers.X-Tenant``)."""
    out: list[tuple[str, Any, Any]] = []
    for row in fields:
        if row.get("matched"):
            continue
        details = row.get("details")
        keyed = [detail for detail in details if isinstance(detail, dict) and "key" in detail
                 and not detail.get("matched")] if isinstance(details, list) else []
        if keyed:
            out.extend((f"{row['field']}.{detail['key']}", detail.get("expected"),
                        detail.get("actual")) for detail in keyed)
        else:
            out.append((row["field"], row.get("expected"), row.get("actual")))
    return out


def _verification_message(mock_id: str, described: str, result: dict[str, Any],
                          misses: list[NearMiss]) -> str:
    expected = result.get("expected", "")
    lines = [f"mock {mock_id!r} ({described}) was expected {expected} but was called "
             f"{result['actual']} time(s). {result['message']}"]
    if not misses:
        lines.append("No unmatched requests were received.")
        return "\n".join(lines)
    lines.append(f"Unmatched requests, newest first (at most {MAX_REPORTED_MISSES}):")
    for miss in misses:
        head = f"  {miss.request} -> {miss.status}"
        if miss.reason:
            head += f": {miss.match_percentage}% of the mock matched; {miss.reason}"
        lines.append(head)
        for name, wanted, actual in miss.mismatches:
            lines.append(f"      {name}: mock expected {_short(wanted)}, request had "
                         f"{_short(actual)}")
    return "\n".join(lines)


def _short(value: Any, limit: int = 200) -> str:
    text = "(nothing)" if value is None else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
