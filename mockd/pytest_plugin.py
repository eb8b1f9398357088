"""The mockd pytest plugin (registered through the ``pytest11`` entry point): nothing of the
server is imported until a test uses its fixtures.

Fixtures:

* ``mockd`` (function scope): a :class:`MockdFixture` around a running
  :class:`mockd.MockServer`. With ``mockd_isolation = reset`` (the default) the server is
  shared for the session (one per config file) and reset before each test (tables back to
  their seed, request log and counters cleared, mocks back to the config's); with ``fresh``
  each test gets a server of its own, stopped after it.
* ``mockd_session`` (session scope): the shared server of the ``mockd_config`` file (or
  empty); state carries over between the tests that use it directly.

Marker ``@pytest.mark.mockd(config=..., mocks=[...], cassette=..., upstream=...,
upstream_ca=...)``: ``config`` a config file (relative to the test file), ``mocks`` mocks
added for the test (builder results or mock config dicts), ``upstream`` the real service
recorded with ``--mockd-record`` (``http://``, ``https://``, ``ws://`` or ``wss://``),
``upstream_ca`` a PEM CA file (relative to the test file) the upstream's certificate is
checked with while recording (besides the system CAs), ``cassette`` the cassette file
(default ``<mockd_cassette_dir>/<test name>.yaml`` beside the test file).

Options: ``--mockd-record`` (ini ``mockd_record``, off), ini ``mockd_config`` (relative to
the rootdir), ``mockd_isolation`` (``reset`` or ``fresh``), ``mockd_cassette_dir``
(``cassettes``).

Record and replay: a test with ``upstream`` or ``cassette`` in its marker is a cassette
test. It reaches the service through ``mockd.http_client()`` and
``mockd.websocket_connect(path)`` (or ``mockd.base_url``, ``mockd.proxy_url`` and
``mockd.verify`` with another client). Recording: the client goes to ``upstream`` through
the recording proxy (HTTPS through its CA, which the helpers trust), and after the test the
recordings (HTTP exchanges, SSE streams, WebSocket conversations) are converted to mocks and
written to the cassette. Replaying (the default): the cassette's mocks are added to the
server and the client's base URL is the server's; a missing cassette fails the test, naming
``--mockd-record``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest

ISOLATIONS = ("reset", "fresh")
MARKER_KEYS = ("config", "mocks", "cassette", "upstream", "upstream_ca")


class _Settings(NamedTuple):
    """The run's options, read once: ``fresh`` isolation, ``record`` cassettes, the
    ``mockd_config`` path (or None) and the cassette folder name."""

    fresh: bool
    record: bool
    config: Path | None
    cassette_dir: str


_POOL = pytest.StashKey[dict]()
_SETTINGS = pytest.StashKey[_Settings]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--mockd-record`` flag and the ``mockd_*`` ini options."""
    group = parser.getgroup("mockd", "mockd mock servers")
    group.addoption("--mockd-record", action="store_true", default=None,
                    help="record cassette tests against their real upstream through the "
                         "mockd recording proxy and write the converted mocks "
                         "(default: replay the cassettes)")
    parser.addini("mockd_record", type="bool", default=False,
                  help="record cassette tests (as --mockd-record)")
    parser.addini("mockd_config", default="",
                  help="config file of the session's mock server (relative to the rootdir)")
    parser.addini("mockd_isolation", default="reset",
                  help="between tests: 'reset' a shared server (tables, logs, counters, "
                       "mocks) or start a 'fresh' one")
    parser.addini("mockd_cassette_dir", default="cassettes",
                  help="folder of the cassettes, relative to each test file")


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``mockd`` marker and check ``mockd_isolation``."""
    config.addinivalue_line(
        "markers", "mockd(config=None, mocks=None, cassette=None, upstream=None, "
                   "upstream_ca=None): the mockd server of the test: a config file, mocks "
                   "to add, a cassette to replay or the upstream to record it from "
                   "(--mockd-record)")
    isolation = config.getini("mockd_isolation")
    if isolation not in ISOLATIONS:
        raise pytest.UsageError(f"mockd_isolation must be one of {', '.join(ISOLATIONS)}, "
                                f"not {isolation!r}")
    config.stash[_POOL] = {}
    flag = config.getoption("mockd_record", None)
    ini_config = config.getini("mockd_config")
    config.stash[_SETTINGS] = _Settings(
        fresh=isolation == "fresh",
        record=bool(flag) if flag is not None else bool(config.getini("mockd_record")),
        config=(config.rootpath / ini_config).resolve() if ini_config else None,
        cassette_dir=config.getini("mockd_cassette_dir") or "cassettes")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the shared servers that are still running."""
    pool = config.stash.get(_POOL, {})
    for server in pool.values():
        _stop(server)
    pool.clear()


def _stop(server: Any) -> None:
    try:
        server.stop()
    except Exception:  # noqa: BLE001 - a server that fails to stop must not fail the run
        pass


def _start(config: Path | None, mocks: list[Any] | None = None) -> Any:
    from mockd.server import MockServer

    server = MockServer(config=config, mocks=mocks or None,
                        base_dir=config.parent if config is not None else None)
    server.start()
    return server


def _shared(config: pytest.Config, path: Path | None) -> Any:
    """The session's server of ``path`` (one per config file), started on first use."""
    pool = config.stash[_POOL]
    server = pool.get(path)
    if server is None:
        server = pool[path] = _start(path)
    return server


@pytest.fixture(scope="session")
def mockd_session(pytestconfig: pytest.Config) -> Any:
    """The session's :class:`mockd.MockServer` of the ``mockd_config`` file (or empty),
    started on first use and stopped at the end of the run; never reset."""
    return _shared(pytestconfig, pytestconfig.stash[_SETTINGS].config)


class MockdFixture:
    """What the ``mockd`` fixture gives: every attribute of the test's
    :class:`mockd.MockServer` (``url``, ``add``, ``verify``, ``requests``, ``table``, ...),
    plus the cassette helpers.

    Attributes:
        server: the :class:`mockd.MockServer`.
        recording: True when this test records its cassette (``--mockd-record``).
        cassette: the cassette path of a cassette test, else None.
        upstream: the marker's ``upstream`` URL, or None.
        proxy_url: the recording proxy (``http://127.0.0.1:<port>``) while recording, else
            None.
        proxy_ca_path: the recording proxy's CA certificate (PEM) while recording, else None.
    """

    def __init__(self, server: Any, *, cassette: Path | None = None,
                 upstream: str | None = None, recording: bool = False) -> None:
        self.server = server
        self.cassette = cassette
        self.upstream = upstream
        self.recording = recording
        self.proxy_url: str | None = None
        self.proxy_ca_path: Path | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.server, name)

    def __repr__(self) -> str:
        mode = "recording" if self.recording else "replaying" if self.cassette else "mocking"
        return f"<mockd {mode} at {self.server.url}>"

    @property
    def base_url(self) -> str:
        """Where the test's HTTP requests go: ``upstream`` while recording (a ``ws://`` /
        ``wss://`` upstream given as ``http://`` / ``https://``), else the server's URL
        (where a replayed cassette's mocks answer)."""
        if self.recording and self.upstream:
            base = self.upstream.rstrip("/")
            for stream, plain in (("ws://", "http://"), ("wss://", "https://")):
                if base.startswith(stream):
                    return plain + base[len(stream):]
            return base
        return self.server.url

    @property
    def ca_path(self) -> Path | None:
        """The CA certificate (PEM) the test's clients must trust: the recording proxy's
        while recording, else the server's own (``MockServer(tls=...)``), else None."""
        if self.proxy_ca_path is not None:
            return self.proxy_ca_path
        return getattr(self.server, "ca_path", None)

    def ssl_context(self) -> Any:
        """An :class:`ssl.SSLContext` trusting :attr:`ca_path` (and the system CAs), or
        True (the system CAs) when there is none: httpx's ``verify=``, requests needs
        ``verify=str(mockd.ca_path)`` instead."""
        if self.ca_path is None:
            return True
        from mockd.tls import client_context

        return client_context(self.ca_path)

    def _client_options(self, options: dict[str, Any]) -> dict[str, Any]:
        options.setdefault("base_url", self.base_url)
        if self.proxy_url is not None:
            options.setdefault("proxy", self.proxy_url)
        if self.ca_path is not None:
            options.setdefault("verify", self.ssl_context())
        return options

    def http_client(self, **options: Any) -> Any:
        """An ``httpx.Client`` on :attr:`base_url` (through the recording proxy, trusting
        its CA, while recording); ``options`` go to ``httpx.Client``. Close it (``with``)
        when done."""
        import httpx

        return httpx.Client(**self._client_options(options))

    def async_http_client(self, **options: Any) -> Any:
        """As :meth:`http_client`, an ``httpx.AsyncClient``."""
        import httpx

        return httpx.AsyncClient(**self._client_options(options))

    def websocket_url(self, path: str = "/") -> str:
        """``ws://`` (``wss://`` over TLS) URL of ``path`` at :attr:`base_url`."""
        base = self.base_url
        scheme, _, rest = base.partition("://")
        return ("wss" if scheme == "https" else "ws") + "://" + rest + "/" + path.lstrip("/")

    def websocket_connect(self, path: str = "/", **options: Any) -> Any:
        """A connected ``websockets.sync.client`` connection to :meth:`websocket_url`
        (``path``), through the recording proxy while recording; ``options`` go to
        ``websockets.sync.client.connect`` (``open_timeout`` 10 s unless given). Close it
        (``with``) when done."""
        from websockets.sync.client import connect

        url = self.websocket_url(path)
        options.setdefault("proxy", self.proxy_url)  # None: no proxy of the environment
        options.setdefault("open_timeout", 10)
        if url.startswith("wss://") and self.ca_path is not None:
            options.setdefault("ssl", self.ssl_context())
        return connect(url, **options)


def _marker(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The keyword arguments of the test's ``mockd`` markers (closest first wins)."""
    found: dict[str, Any] = {}
    for marker in reversed(list(request.node.iter_markers("mockd"))):
        if marker.args:
            raise pytest.UsageError("@pytest.mark.mockd takes keyword arguments only: "
                                    f"{', '.join(MARKER_KEYS)}")
        unknown = sorted(set(marker.kwargs) - set(MARKER_KEYS))
        if unknown:
            raise pytest.UsageError(f"@pytest.mark.mockd: unknown argument {unknown[0]!r}; "
                                    f"use {', '.join(MARKER_KEYS)}")
        found.update(marker.kwargs)
    mocks = found.get("mocks")
    if mocks is not None and not isinstance(mocks, (list, tuple)):
        raise pytest.UsageError("@pytest.mark.mockd(mocks=...) must be a list of mocks")
    return found


def _cassette_path(request: pytest.FixtureRequest, options: dict[str, Any],
                   folder: str) -> Path | None:
    if options.get("cassette") is None and options.get("upstream") is None:
        return None
    base = Path(request.path).parent
    if options.get("cassette") is not None:
        return (base / str(options["cassette"])).resolve()
    from mockd.cassettes import cassette_name

    return base / folder / cassette_name(request.node.name)


@pytest.fixture
def mockd(request: pytest.FixtureRequest) -> Any:
    """A running :class:`mockd.MockServer` for this test, as a :class:`MockdFixture` (see
    the module docstring for isolation, the marker and record/replay)."""
    config = request.config
    settings = config.stash[_SETTINGS]
    options = _marker(request)
    path = settings.config
    if options.get("config") is not None:
        path = (Path(request.path).parent / str(options["config"])).resolve()
    mocks = list(options.get("mocks") or [])
    cassette = _cassette_path(request, options, settings.cassette_dir) if options else None
    recording = cassette is not None and settings.record
    if recording and not options.get("upstream"):
        pytest.fail(f"{request.node.nodeid}: recording needs "
                    f"@pytest.mark.mockd(upstream='http://...')", pytrace=False)
    if cassette is not None and not recording:
        from mockd.cassettes import CassetteError, load_cassette

        try:
            mocks += load_cassette(cassette)
        except CassetteError as error:
            pytest.fail(str(error), pytrace=False)

    fresh = settings.fresh
    if fresh:
        server = _start(path, mocks)
    else:
        server = _shared(config, path)
        server.reset()
        if mocks:
            server.add(*mocks)
    handle = MockdFixture(server, cassette=cassette, upstream=options.get("upstream"),
                          recording=recording)
    recorder = None
    try:
        if recording:
            from mockd.cassettes import Recorder

            upstream_ca = options.get("upstream_ca")
            recorder = Recorder(upstream_ca=str(Path(request.path).parent / str(upstream_ca))
                                if upstream_ca is not None else None).start()
            handle.proxy_url = recorder.url
            handle.proxy_ca_path = recorder.ca_path
        yield handle
    finally:
        try:
            if recorder is not None:
                fragment = recorder.finish()
                warnings = fragment.pop("warnings", None)
                from mockd.cassettes import write_cassette

                write_cassette(cassette, fragment)
                if warnings:
                    import warnings as warning_module

                    for text in warnings:
                        warning_module.warn(text, stacklevel=1)
        finally:
            if fresh:
                _stop(server)
