"""The one recording proxy of a server and its CA: start, stop, mode, filters, CA status and
generation. :mod:`proxy.api` parses admin requests and calls :data:`manager`; everything here
raises :class:`ProxyError` (status, code, message), which the routes render as ``{error,
message}``.

CA location: the CA directory last generated (``POST /proxy/ca``) or started with
(``caPath``), else ``<data dir>/ca``. ``POST /proxy/ca`` takes a path relative to the data
directory and never leaves it; ``POST /proxy/start`` also takes an absolute ``caPath`` (a CA
made by ``mockd proxy ca generate``) and loads it when it exists, or generates one there when
the path is inside the data directory.

Source: SPEC "States and transitions" (Proxy rows: start creates the session ``sessionName``;
stop; change mode), "Proxy, CA and recordings"; behavior notes §1.

Django-free; used from the server's event loop only (the admin routes are async views on it).
"""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Callable

from proxy.recording import DEFAULT_BODY_CAP, Filters, RecordingRedaction

if TYPE_CHECKING:  # pragma: no cover
    from proxy.ca import CertificateAuthority
    from proxy.server import ProxyServer

log = logging.getLogger("mockd.proxy")

DEFAULT_PORT = 8888
DEFAULT_CA_DIR = "ca"
MAX_NAME = 200
START_KEYS = ("port", "mode", "sessionName", "caPath", "filters", "upstreamCa",
              "insecureUpstream", "fallthrough", "host", "bodyCap")


class ProxyError(Exception):
    """A proxy request that cannot be served: ``status``, ``code`` and ``message``."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _invalid(message: str) -> ProxyError:
    return ProxyError(400, "validation_error", message)


def _mode(value: Any) -> str:
    from proxy.server import MODES  # h11, httptools: on the proxy's first use

    if value not in MODES:
        raise ProxyError(400, "invalid_mode",
                         f"mode must be one of {', '.join(MODES)}, not {value!r}")
    return value


def relative_ca_dir(data_dir: Path, value: Any) -> Path:
    """``data_dir / value`` for a ``caPath`` relative to the data directory; raises a 400
    ``validation_error`` for a non-string, empty, absolute path, a ``..`` part, or a path that
    resolves (symbolic links followed) outside the data directory."""
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise _invalid("caPath must be a non-empty path relative to the data directory")
    if len(value) > 1024:
        raise _invalid("caPath is longer than 1024 characters")
    pure = PurePosixPath(value.replace("\\", "/"))
    if pure.is_absolute() or os.path.isabs(value) or (len(value) > 1 and value[1] == ":"):
        raise _invalid(f"caPath must be relative to the data directory, not absolute: "
                       f"{value!r}")
    if ".." in pure.parts:
        raise _invalid(f"caPath must not contain '..': {value!r}")
    root = data_dir.resolve()
    target = (root / pure).resolve()
    if target != root and root not in target.parents:
        raise _invalid(f"caPath leads outside the data directory: {value!r}")
    return target


class ProxyManager:
    """The process's proxy (see the module docstring).

    Attributes:
        server: the running :class:`~proxy.server.ProxyServer`, or None.
        filters: the recording filters (kept while stopped; used by the next start).
        ca_dir: the CA directory chosen by ``POST /proxy/ca`` or a start's ``caPath``.
        store: returns the recording store (default ``recordings.store.current``).
    """

    def __init__(self, store: Callable[[], Any] | None = None):
        self.server: ProxyServer | None = None
        self.filters = Filters()
        self.ca_dir: Path | None = None
        self.store = store
        self._ca: CertificateAuthority | None = None
        self._hook: Any = None

    def _store(self) -> Any:
        if self.store is not None:
            return self.store()
        from recordings.store import current

        return current()

    # ------------------------------------------------------------------ CA
    def _ca_dir(self, data_dir: Path | None) -> Path | None:
        if self.ca_dir is not None:
            return self.ca_dir
        return None if data_dir is None else Path(data_dir) / DEFAULT_CA_DIR

    def _load(self, directory: Path) -> CertificateAuthority | None:
        from proxy.ca import CAError, load_ca  # cryptography: on the CA's first use

        if self._ca is not None and self._ca.directory == directory and \
                (directory / "ca.crt").exists():
            return self._ca
        try:
            self._ca = load_ca(directory)
        except FileNotFoundError:
            return None
        except CAError as error:
            raise ProxyError(400, "invalid_ca", str(error)) from None
        return self._ca

    def ca_status(self, data_dir: Path | None) -> dict[str, Any]:
        """``{exists: false}`` or ``{exists, path, fingerprint, expiresAt, organization}``."""
        directory = self._ca_dir(data_dir)
        if directory is None:
            return {"exists": False}
        try:
            authority = self._load(directory)
        except ProxyError:
            return {"exists": False, "path": str(directory)}
        if authority is None:
            return {"exists": False, "path": str(directory)}
        return authority.info().document()

    def generate(self, data_dir: Path | None, ca_path: Any) -> dict[str, Any]:
        """Generate a CA at ``caPath`` (default ``ca``) under the data directory; it becomes
        the proxy's CA (a running proxy intercepts with it from now on). 409 ``ca_exists``
        when the directory holds one; 400 for a bad path (:func:`relative_ca_dir`)."""
        if data_dir is None:
            raise ProxyError(503, "no_data_dir", "the server has no data directory")
        directory = relative_ca_dir(Path(data_dir), DEFAULT_CA_DIR if ca_path is None
                                    else ca_path)
        from proxy.ca import CAError, ca_exists, generate_ca

        if ca_exists(directory):
            raise ProxyError(409, "ca_exists",
                             f"a CA already exists in {directory}; download it with GET "
                             f"/proxy/ca/download or choose another caPath")
        try:
            self._ca = generate_ca(directory)
        except FileExistsError:
            raise ProxyError(409, "ca_exists", f"a CA already exists in {directory}") from None
        except CAError as error:
            raise ProxyError(500, "ca_error", str(error)) from None
        self.ca_dir = directory
        if self.server is not None:
            self.server.settings.ca = self._ca
        return self._ca.info().document()

    def ca_pem(self, data_dir: Path | None) -> bytes:
        """The CA certificate PEM; 404 ``no_ca`` when there is none."""
        directory = self._ca_dir(data_dir)
        authority = self._load(directory) if directory is not None else None
        if authority is None:
            raise ProxyError(404, "no_ca", "no proxy CA exists yet; create one with POST "
                                           "/proxy/ca or 'mockd proxy ca generate'")
        return authority.cert_pem

    # ------------------------------------------------------------------ lifecycle
    def status(self) -> dict[str, Any]:
        """``{running: false}`` or ``{running, port, host, mode, sessionId, sessionName,
        recordingCount, uptime (s), caEnabled, fallthrough}``."""
        server = self.server
        if server is None:
            return {"running": False}
        settings = server.settings
        count = server.recorded
        try:
            session = self._store().get_session(settings.session_id)
            if session is not None:
                count = int(session.get("recordingCount", count))
        except Exception:  # noqa: BLE001 - the counter is the fallback
            pass
        return {"running": True, "port": server.port, "host": settings.host,
                "mode": settings.mode, "sessionId": settings.session_id,
                "sessionName": settings.session_name, "recordingCount": count,
                "uptime": int(time.time() - server.started_at),
                "caEnabled": settings.ca is not None, "fallthrough": settings.fallthrough}

    async def start(self, body: Any, *, data_dir: Path | None,
                    redaction: Any = None,
                    on_started: Callable[[Callable[[], Any]], None] | None = None
                    ) -> dict[str, Any]:
        """Start the proxy from a ``POST /proxy/start`` body (keys :data:`START_KEYS`);
        returns :meth:`status`. Errors: 409 ``already_running``; 400 ``invalid_mode``,
        ``port_error`` (busy or invalid port), ``validation_error`` naming the key,
        ``invalid_ca``; ``on_started`` gets the async stop function (for the server's
        shutdown hooks)."""
        if self.server is not None:
            raise ProxyError(409, "already_running",
                             f"the proxy is already running on port {self.server.port}; "
                             f"stop it first (POST /proxy/stop)")
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise _invalid("the body must be a JSON object")
        unknown = sorted(set(body) - set(START_KEYS))
        if unknown:
            raise _invalid(f"{unknown[0]} is not a proxy start option; use "
                           f"{', '.join(START_KEYS)}")
        port = body.get("port", DEFAULT_PORT)
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ProxyError(400, "port_error", f"port must be an integer 0-65535 (0: any "
                                                f"free port), not {port!r}")
        mode = _mode(body.get("mode", "record"))
        name = body.get("sessionName", "default")
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            raise _invalid(f"sessionName must be a non-empty string of at most {MAX_NAME} "
                           f"characters")
        host = body.get("host", "127.0.0.1")
        if not isinstance(host, str) or not host or len(host) > 255:
            raise _invalid("host must be an interface address such as 127.0.0.1")
        from proxy.server import (FALLTHROUGHS, ProxyServer, ProxySettings, bind_check,
                                  upstream_context)

        fallthrough = str(body.get("fallthrough", "502"))
        if fallthrough not in FALLTHROUGHS:
            raise _invalid(f"fallthrough must be one of {', '.join(FALLTHROUGHS)}, not "
                           f"{body.get('fallthrough')!r}")
        insecure = body.get("insecureUpstream", False)
        if not isinstance(insecure, bool):
            raise _invalid("insecureUpstream must be true or false")
        body_cap = body.get("bodyCap", DEFAULT_BODY_CAP)
        if isinstance(body_cap, bool) or not isinstance(body_cap, int) or \
                not 0 <= body_cap <= 64 * 1024 * 1024:
            raise _invalid("bodyCap must be an integer number of bytes, 0 to 67108864")
        filters = self.filters
        if "filters" in body:
            try:
                filters = Filters.from_document(body["filters"])
            except ValueError as error:
                raise _invalid(str(error)) from None
        upstream_ca = body.get("upstreamCa")
        if upstream_ca is not None and (not isinstance(upstream_ca, str) or not upstream_ca):
            raise _invalid("upstreamCa must be the path of a PEM file")
        try:
            ca_file = self._path(data_dir, upstream_ca) if upstream_ca else None
            context = upstream_context(ca_file, insecure)
            h2_context = upstream_context(ca_file, insecure, alpn=("h2",))
        except (OSError, ValueError) as error:
            raise _invalid(f"upstreamCa {upstream_ca!r} cannot be loaded as PEM CA "
                           f"certificates: {getattr(error, 'strerror', None) or error}") \
                from None
        authority = self._start_ca(data_dir, body.get("caPath"))
        try:
            bind_check(host, port)
        except OSError as error:
            raise ProxyError(400, "port_error", f"cannot listen on {host}:{port}: "
                                                f"{error.strerror or error}") from None
        store = self._store()
        session = store.create_session(name, filters=filters.document())
        settings = ProxySettings(host=host, port=port, mode=mode, session_id=session["id"],
                                 session_name=name, filters=filters, ca=authority,
                                 upstream_context=context, fallthrough=fallthrough,
                                 upstream_h2_context=h2_context,
                                 body_cap=body_cap,
                                 redaction=RecordingRedaction(redaction) if redaction
                                 is not None else RecordingRedaction(),
                                 store=self._store)
        server = ProxyServer(settings)
        try:
            await server.start()
        except OSError as error:
            store.end_session(session["id"])
            raise ProxyError(400, "port_error", f"cannot listen on {host}:{port}: "
                                                f"{error.strerror or error}") from None
        self.server = server
        self.filters = filters
        log.info("recording proxy on %s:%d, mode %s, session %s", host, server.port, mode,
                 name)
        if on_started is not None:
            self._hook = self._shutdown
            on_started(self._hook)
        return self.status()

    @staticmethod
    def _path(data_dir: Path | None, value: str) -> str:
        path = Path(value).expanduser()
        if not path.is_absolute() and data_dir is not None:
            path = Path(data_dir) / path
        return str(path)

    def _start_ca(self, data_dir: Path | None, ca_path: Any) -> CertificateAuthority | None:
        from proxy.ca import CAError, generate_ca

        if ca_path is None:
            directory = self._ca_dir(data_dir)
            return self._load(directory) if directory is not None else None
        if not isinstance(ca_path, str) or not ca_path.strip():
            raise _invalid("caPath must be a directory path")
        if os.path.isabs(os.path.expanduser(ca_path)):
            directory = Path(os.path.expanduser(ca_path)).resolve()
            authority = self._load(directory)
            if authority is None:
                inside = data_dir is not None and \
                    Path(data_dir).resolve() in (directory, *directory.parents)
                if not inside:
                    raise ProxyError(400, "no_ca", f"no CA in {directory}; create one with "
                                                   f"'mockd proxy ca generate --ca-path "
                                                   f"{directory}'")
                self._ca = generate_ca(directory)
                authority = self._ca
        else:
            if data_dir is None:
                raise ProxyError(503, "no_data_dir", "the server has no data directory")
            directory = relative_ca_dir(Path(data_dir), ca_path)
            authority = self._load(directory)
            if authority is None:
                try:
                    self._ca = authority = generate_ca(directory)
                except (CAError, FileExistsError) as error:
                    raise ProxyError(400, "invalid_ca", str(error)) from None
        self.ca_dir = directory
        return authority

    async def _shutdown(self) -> None:
        """The server's shutdown hook: stop when running."""
        if self.server is not None:
            await self.stop()

    async def stop(self, on_stopped: Callable[[Any], None] | None = None) -> dict[str, Any]:
        """Stop the proxy and end its session; returns the status before stopping with
        ``running: false``. 404 ``not_running`` when it is not running."""
        server = self.server
        if server is None:
            raise ProxyError(404, "not_running", "the proxy is not running; start it with "
                                                 "POST /proxy/start")
        status = self.status()
        self.server = None
        await server.stop()
        try:
            self._store().end_session(server.settings.session_id)
        except Exception:  # noqa: BLE001 - the proxy is stopped either way
            log.exception("cannot end the proxy session")
        if on_stopped is not None and self._hook is not None:
            on_stopped(self._hook)
        self._hook = None
        return dict(status, running=False)

    def set_mode(self, mode: Any) -> dict[str, Any]:
        """Change the running proxy's mode; 400 ``invalid_mode``, 404 ``not_running``."""
        mode = _mode(mode)
        if self.server is None:
            raise ProxyError(404, "not_running", "the proxy is not running; start it with "
                                                 "POST /proxy/start")
        self.server.settings.mode = mode
        return self.status()

    def set_filters(self, document: Any) -> dict[str, list[str]]:
        """Replace the recording filters (a running proxy applies them to its next
        exchange); 400 ``validation_error`` naming the key."""
        try:
            filters = Filters.from_document(document)
        except ValueError as error:
            raise _invalid(str(error)) from None
        self.filters = filters
        if self.server is not None:
            self.server.settings.filters = filters
        return filters.document()


#: The process's proxy.
manager = ProxyManager()
