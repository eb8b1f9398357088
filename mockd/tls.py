"""HTTPS for :class:`mockd.MockServer` (``tls=True`` or ``tls=(cert, key)``).

``tls=True`` serves the self-signed ``localhost``/``127.0.0.1``/``::1`` certificate that
``mockd start --tls-auto`` uses (:func:`mockd_project.tls.generate_self_signed`: ECDSA P-256,
``CA:TRUE``, so clients trust the certificate itself as their CA), made once per process into
a private temporary folder (0700, key 0600, removed at exit). ``tls=(cert, key)`` serves the
given PEM files; clients then trust ``tls_ca`` (default: the certificate file, right for a
self-signed one). Contexts and the uvicorn protocol classes come from
:mod:`mockd_project.tls` (Django-free), so the ASGI ``tls`` extension (client certificate)
is the same as the runner's.

Source: SPEC "TLS configuration of the mock server"; behavior notes §14, §15
(``--tls-auto``).
"""
from __future__ import annotations

import ssl
import threading
from pathlib import Path
from typing import Any, NamedTuple

from mockd.errors import ServerStartError

_LOCK = threading.Lock()
_GENERATED: dict[str, tuple[Path, Path]] = {}


class ServerTls(NamedTuple):
    """The HTTPS of one server: the ``ssl.SSLContext``, the
    :class:`~mocks.server_config.TlsSettings` the uvicorn protocols take, and the CA file its
    clients trust."""

    context: ssl.SSLContext
    settings: Any
    ca_path: Path


def generated_certificate() -> tuple[Path, Path]:
    """``(cert path, key path)`` of this process's self-signed ``localhost`` certificate,
    generated on first use (a few milliseconds) into a private temporary folder. Raises
    ``OSError`` when the folder cannot be written."""
    with _LOCK:
        found = _GENERATED.get("localhost")
        if found is not None and found[0].is_file() and found[1].is_file():
            return found
        import atexit
        import shutil
        import tempfile

        from mockd_project.paths import write_private_file
        from mockd_project.tls import generate_self_signed

        folder = Path(tempfile.mkdtemp(prefix="mockd-tls-"))  # 0700
        atexit.register(shutil.rmtree, folder, True)
        cert_pem, key_pem = generate_self_signed()
        cert_path, key_path = folder / "localhost-cert.pem", folder / "localhost-key.pem"
        write_private_file(key_path, key_pem)
        write_private_file(cert_path, cert_pem, mode=0o644)
        _GENERATED["localhost"] = (cert_path, key_path)
        return cert_path, key_path


def check_tls_option(tls: Any, tls_ca: Any) -> None:
    """Raise ``TypeError`` naming the argument unless ``tls`` is a bool or a ``(cert, key)``
    pair of paths and ``tls_ca`` is None or a path given with such a pair."""
    if isinstance(tls, bool):
        if tls_ca is not None:
            raise TypeError("tls_ca: only with tls=(cert, key); tls=True trusts the "
                            "generated certificate (server.ca_path)")
        return
    if not (isinstance(tls, (tuple, list)) and len(tls) == 2
            and all(isinstance(part, (str, Path)) for part in tls)):
        raise TypeError(f"tls: expected True, False or a (cert file, key file) pair, got "
                        f"{tls!r}")
    if tls_ca is not None and not isinstance(tls_ca, (str, Path)):
        raise TypeError(f"tls_ca: expected a PEM file path, got {type(tls_ca).__name__}")


def server_tls(tls: bool | tuple[str | Path, str | Path],
               tls_ca: str | Path | None) -> ServerTls:
    """The :class:`ServerTls` of a server's ``tls``/``tls_ca`` arguments (see the module
    docstring). Raises :class:`~mockd.errors.ServerStartError` with the one-line reason of
    :class:`mockd_project.tls.TlsSetupError` (file missing, not PEM, key not matching) or
    when the generated certificate cannot be written."""
    from mocks.server_config import TlsSettings

    from mockd_project.tls import TlsSetupError, server_context

    try:
        if tls is True:
            cert_path, key_path = generated_certificate()
            ca_path = cert_path
        else:
            cert_path, key_path = (Path(part).expanduser().resolve() for part in tls)
            ca_path = Path(tls_ca).expanduser().resolve() if tls_ca is not None else cert_path
        settings = TlsSettings(enabled=True, cert_file=str(cert_path), key_file=str(key_path),
                               source="MockServer(tls=...)")
        context = server_context(settings, cert_path.parent)
    except TlsSetupError as error:
        raise ServerStartError(str(error)) from None
    except OSError as error:
        raise ServerStartError(f"cannot write the generated TLS certificate: "
                               f"{error.strerror or error}") from None
    if not ca_path.is_file():
        raise ServerStartError(f"tls_ca {ca_path}: no such file")
    return ServerTls(context, settings, ca_path)


def client_context(ca_path: Path) -> ssl.SSLContext:
    """A client ``ssl.SSLContext`` trusting ``ca_path`` (and the system CAs): httpx's
    ``verify=``, websockets' ``ssl=``."""
    context = ssl.create_default_context()
    context.load_verify_locations(cafile=str(ca_path))
    return context
