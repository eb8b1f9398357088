"""Record and replay for tests: real upstream traffic recorded as a mock config (a cassette).

A *cassette* is a YAML config fragment (``{"mocks": [...]}``) written beside the test, by
default ``cassettes/<test name>.yaml``. In record mode a :class:`Recorder` runs the recording
proxy (:mod:`proxy.server`, ``record`` mode) on a loopback port of its own, in a background
thread with its own asyncio loop and an in-memory recording store; the test's HTTP client
goes through it to the real upstream. :meth:`Recorder.finish` converts what was recorded:
HTTP recordings with :func:`mocks.portability.recordings_http.convert_http_recordings`, SSE
and WebSocket stream recordings with :func:`recordings.convert.convert` (an SSE answer
becomes one ``sse`` mock and is not also kept as a plain HTTP mock). In replay mode
:func:`load_cassette` reads the mocks back for the server.

Limits: at most :data:`MAX_RECORDINGS` recordings of each kind per test; cassettes larger
than :data:`MAX_CASSETTE_BYTES` are refused when read.

Source: SPEC "Proxy, CA and recordings", "Stream recordings" (convert); behavior notes §1.
Django-free (the ``mockd`` import contract).
"""
from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path
from typing import Any

#: Recordings of each kind (HTTP, stream) converted per test at most.
MAX_RECORDINGS = 5000
#: Largest cassette file read back, in bytes (64 MiB).
MAX_CASSETTE_BYTES = 64 * 1024 * 1024
#: Seconds to wait for the proxy to start or stop.
LOOP_TIMEOUT = 15.0

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]]+")


class CassetteError(Exception):
    """A cassette that is missing, unreadable or not a mock config; the message says what
    to do (for a missing one: run with ``--mockd-record``)."""


def cassette_name(test_name: str) -> str:
    """``test_name`` (a pytest node name, parametrize ids included) as a safe file name
    with ``.yaml``: characters outside letters, digits, ``_.-[]`` become ``_``; at most 200
    characters before the extension."""
    name = _UNSAFE.sub("_", test_name).strip("._") or "test"
    return name[:200] + ".yaml"


def load_cassette(path: Path) -> list[dict[str, Any]]:
    """The mocks of the cassette at ``path`` (a list of mock config dicts).

    Raises :class:`CassetteError` when the file is missing (the message names
    ``--mockd-record``), larger than :data:`MAX_CASSETTE_BYTES`, not YAML, or not a mapping
    with a ``mocks`` list."""
    path = Path(path)
    if not path.is_file():
        raise CassetteError(f"no cassette at {path}: run the test once with --mockd-record "
                            f"(against the real upstream) to record it")
    if path.stat().st_size > MAX_CASSETTE_BYTES:
        raise CassetteError(f"cassette {path} is larger than {MAX_CASSETTE_BYTES} bytes")
    import yaml

    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise CassetteError(f"cassette {path} is not valid YAML: {error}") from None
    if not isinstance(document, dict) or not isinstance(document.get("mocks", []), list):
        raise CassetteError(f"cassette {path}: expected a mapping with a 'mocks' list")
    return list(document.get("mocks") or [])


def write_cassette(path: Path, fragment: dict[str, Any]) -> Path:
    """Write ``fragment`` (``{"mocks": [...]}``) as YAML to ``path`` (folders created),
    through a temporary file so a reader never sees half a cassette. Returns ``path``."""
    import yaml

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(fragment, sort_keys=False, allow_unicode=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text("# Recorded by mockd --mockd-record; replayed when run without it.\n"
                       + text, encoding="utf-8")
    partial.replace(path)
    return path


def convert_recordings(http: list[dict[str, Any]],
                       streams: list[dict[str, Any]]) -> dict[str, Any]:
    """HTTP and stream recording documents -> ``{"mocks": [...]}``, plus ``"warnings"``
    (text) when a stream recording could not be converted. SSE answers recorded as streams
    are dropped from the HTTP ones (same method GET and path), so each is one mock."""
    from mocks.portability.recordings_http import convert_http_recordings
    from recordings.convert import ConvertError, convert

    stream_mocks: list[dict[str, Any]] = []
    warnings: list[str] = []
    sse_paths: set[str] = set()
    for recording in streams:
        try:
            mock = convert(recording, {"simplifyTiming": True})
        except (ConvertError, KeyError, TypeError) as error:
            warnings.append(f"stream recording {recording.get('name')!r} left out: {error}")
            continue
        if recording.get("protocol") == "sse":
            sse_paths.add(str((recording.get("metadata") or {}).get("path")))
        stream_mocks.append(mock)

    def plain(record: dict[str, Any]) -> bool:
        request = record.get("request") or {}
        return not (str(request.get("method", "")).upper() == "GET"
                    and str(request.get("path", "")).partition("?")[0] in sse_paths)

    fragment = convert_http_recordings([r for r in http if plain(r)])
    fragment["mocks"] = list(fragment.get("mocks") or []) + stream_mocks
    if warnings:
        fragment["warnings"] = warnings
    return fragment


_CA_LOCK = threading.Lock()
_CA: dict[str, Any] = {}


def recording_ca() -> Any:
    """The process's recording CA (a :class:`proxy.ca.CertificateAuthority`), generated on
    first use into a private temporary folder (0700, removed at exit): the recording proxy
    presents leaf certificates of it to HTTPS clients, which trust its ``ca.crt``
    (``.directory / "ca.crt"``). Generating it costs a few milliseconds (ECDSA P-256)."""
    with _CA_LOCK:
        ca = _CA.get("ca")
        if ca is None:
            import atexit
            import shutil
            import tempfile

            from proxy.ca import generate_ca

            folder = Path(tempfile.mkdtemp(prefix="mockd-recording-ca-"))
            atexit.register(shutil.rmtree, folder, True)
            ca = _CA["ca"] = generate_ca(folder / "ca", common_name="mockd recording CA")
        return ca


class Recorder:
    """The recording proxy of one test in record mode.

    ``start()`` binds the proxy on ``127.0.0.1`` (a free port) in a background thread;
    :attr:`url` is its address (``http://127.0.0.1:<port>``), to be used as the client's
    proxy (HTTP requests, ``CONNECT`` for HTTPS and WebSocket). HTTPS is read through the
    :func:`recording_ca` (its certificate at :attr:`ca_path`, which the client must trust);
    WebSocket conversations and SSE answers become stream recordings. ``finish()`` stops it,
    waits for the queued recordings and returns the converted fragment
    (:func:`convert_recordings`). Upstream TLS is verified with the system store
    (``SSL_CERT_FILE`` honoured) unless ``insecure``; ``upstream_ca`` adds a PEM CA file.

    Raises :class:`OSError` from ``start()`` when the proxy cannot listen, ``ssl.SSLError``
    / ``OSError`` when ``upstream_ca`` cannot be loaded.
    """

    def __init__(self, *, upstream_ca: str | None = None, insecure: bool = False) -> None:
        self.upstream_ca = upstream_ca
        self.insecure = insecure
        self.url: str | None = None
        self.ca_path: Path | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: Any = None
        self._store: Any = None
        self._session: str | None = None

    def _run(self, coroutine: Any) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(LOOP_TIMEOUT)

    def start(self) -> "Recorder":
        """Start the proxy; returns self."""
        from proxy.server import ProxyServer, ProxySettings, upstream_context
        from recordings.store import RecordingStore

        ca = recording_ca()
        self.ca_path = ca.directory / "ca.crt"
        self._store = store = RecordingStore(None)
        self._session = store.create_session("pytest")["id"]
        settings = ProxySettings(
            host="127.0.0.1", port=0, mode="record", session_id=self._session,
            session_name="pytest", store=lambda: store, ca=ca,
            upstream_context=upstream_context(self.upstream_ca, self.insecure),
            upstream_h2_context=upstream_context(self.upstream_ca, self.insecure,
                                                 alpn=("h2",)))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever,
                                        name="mockd-recording-proxy", daemon=True)
        self._thread.start()
        self._server = ProxyServer(settings)
        try:
            self._run(self._server.start())
        except BaseException:
            self._close_loop()
            raise
        self.url = f"http://127.0.0.1:{self._server.port}"
        return self

    def _close_loop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._thread is not None:
                self._thread.join(LOOP_TIMEOUT)
            self._loop.close()
            self._loop = None

    def stop(self) -> None:
        """Stop the proxy (idempotent); queued recordings are written first."""
        if self._server is not None:
            server, self._server = self._server, None
            try:
                self._run(server.stop())
            finally:
                self._close_loop()

    def recordings(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """``(http, streams)``: the recording documents of this test so far, oldest first."""
        http, _ = self._store.query("http", session_id=self._session, limit=MAX_RECORDINGS)
        streams, _ = self._store.query("stream", session_id=self._session,
                                       limit=MAX_RECORDINGS)
        return http, streams

    def finish(self) -> dict[str, Any]:
        """Stop the proxy and return the converted fragment (:func:`convert_recordings`)."""
        self.stop()
        try:
            return convert_recordings(*self.recordings())
        finally:
            self._store.close()
