"""HTTPS listeners: certificates, TLS contexts and the uvicorn protocols that pass the client
certificate to the app.

Owns everything TLS of the runner: the self-signed ``localhost`` certificate kept in the data
directory (:func:`auto_certificate`), the checks that turn a missing, unreadable or mismatched
certificate or key into one line naming the file (:class:`TlsSetupError`, exit 2 in the
runner), the :class:`ssl.SSLContext` of a :class:`~mocks.server_config.TlsSettings`
(:func:`server_context`), the uvicorn protocol classes of an HTTPS listener
(:func:`tls_protocols`) and the plain-port redirect (:func:`https_redirect_app`).

uvicorn does not give the app the peer certificate (uvicorn issue 745), so the protocol
classes read it from the transport once per connection and put the ASGI ``tls`` scope
extension (with a :class:`~mocks.core.request.ClientCertificate` under
:data:`~mocks.core.request.CLIENT_CERT_KEY`) into every scope of that connection. Plain
connections are untouched: the hot path of the plain port pays nothing.

Used by :mod:`mockd_project.runner` only, on the engine's event loop; Django-free. Private keys
are read by OpenSSL and :mod:`cryptography` and never logged or printed.

Source: SPEC "TLS configuration of the mock server", "Authentication" (TLS client
certificates); behavior notes §14 (``serverConfig.tls``/``mtls``), §15 (``--tls-*`` flags).
"""
from __future__ import annotations

import datetime
import ipaddress
import logging
import os
import ssl
from pathlib import Path
from typing import Any, Callable

from mocks.core.request import CLIENT_CERT_KEY, ClientCertificate
from mocks.server_config import TlsSettings

logger = logging.getLogger("mockd.tls")

#: Folder of the data directory holding the generated certificate.
AUTO_CERT_DIR = "tls"
#: File names of the generated certificate and its key (the key is written 0600).
AUTO_CERT_FILE = "localhost-cert.pem"
AUTO_KEY_FILE = "localhost-key.pem"
#: Names the generated certificate is valid for.
AUTO_CERT_DNS_NAMES = ("localhost",)
AUTO_CERT_IP_ADDRESSES = ("127.0.0.1", "::1")
#: Lifetime of a generated certificate, and how long before its end a new one is made.
AUTO_CERT_LIFETIME = datetime.timedelta(days=365)
AUTO_CERT_RENEW_BEFORE = datetime.timedelta(days=7)

_TLS_VERSIONS = {"1.0": ssl.TLSVersion.TLSv1, "1.1": ssl.TLSVersion.TLSv1_1,
                 "1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}
#: ``ssl.SSLObject.version()`` names -> the ASGI ``tls_version`` numbers.
_VERSION_NUMBERS = {"TLSv1": 0x0301, "TLSv1.1": 0x0302, "TLSv1.2": 0x0303, "TLSv1.3": 0x0304}

#: IANA suite names (as the Go tool's users write them) -> OpenSSL names. Other names are
#: passed to OpenSSL as they are.
IANA_CIPHER_NAMES = {
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
}
#: TLS 1.3 suites: always on (Python's ``ssl`` cannot choose among them).
TLS13_SUITES = frozenset({"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                          "TLS_CHACHA20_POLY1305_SHA256"})


class TlsSetupError(Exception):
    """A certificate, key, CA file or TLS setting that cannot be used; ``str()`` is one line
    naming the file or the config key (the runner prints it and exits 2)."""


# ---------------------------------------------------------------------------- files


def _resolve(name: str, base_dir: str) -> Path:
    path = Path(name).expanduser()
    return path if path.is_absolute() else Path(base_dir) / path


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise TlsSetupError(f"TLS {what} {path}: no such file") from None
    except IsADirectoryError:
        raise TlsSetupError(f"TLS {what} {path}: is a folder, not a file") from None
    except OSError as error:
        raise TlsSetupError(f"TLS {what} {path}: cannot read it "
                            f"({error.strerror or error})") from None


def check_key_pair(cert_path: Path, key_path: Path) -> Any:
    """Read and check a PEM certificate (chain) and its private key; returns the first
    certificate (a ``cryptography`` ``x509.Certificate``).

    Raises :class:`TlsSetupError` naming the file: missing or unreadable, not PEM, an
    encrypted key, or a key that does not belong to the certificate.
    """
    from cryptography import x509
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization

    cert_bytes = _read(cert_path, "certificate")
    key_bytes = _read(key_path, "key")
    try:
        certificate = x509.load_pem_x509_certificates(cert_bytes)[0]
    except (ValueError, IndexError):
        raise TlsSetupError(f"TLS certificate {cert_path}: not a PEM certificate") from None
    try:
        key = serialization.load_pem_private_key(key_bytes, password=None)
    except TypeError:
        raise TlsSetupError(f"TLS key {key_path}: the key is encrypted; give an unencrypted "
                            f"PEM key") from None
    except (ValueError, UnsupportedAlgorithm):
        # The message of cryptography's error may quote key material; say only what it is.
        raise TlsSetupError(f"TLS key {key_path}: not a PEM private key") from None
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    encoding = serialization.Encoding.DER
    if (key.public_key().public_bytes(encoding, public)
            != certificate.public_key().public_bytes(encoding, public)):
        raise TlsSetupError(f"TLS key {key_path}: does not match the certificate {cert_path}")
    return certificate


def _usable_auto_cert(cert_path: Path, key_path: Path) -> bool:
    """True when the stored generated certificate can be reused: both files read, the key
    matches, every name is covered and it is not about to expire."""
    from cryptography import x509

    try:
        certificate = check_key_pair(cert_path, key_path)
        names = certificate.extensions.get_extension_for_class(
            x509.SubjectAlternativeName).value
    except (TlsSetupError, x509.ExtensionNotFound):
        return False
    dns = set(names.get_values_for_type(x509.DNSName))
    ips = {str(address) for address in names.get_values_for_type(x509.IPAddress)}
    now = datetime.datetime.now(datetime.timezone.utc)
    return (dns >= set(AUTO_CERT_DNS_NAMES) and ips >= set(AUTO_CERT_IP_ADDRESSES)
            and certificate.not_valid_after_utc - now > AUTO_CERT_RENEW_BEFORE)


def generate_self_signed() -> tuple[bytes, bytes]:
    """A new self-signed certificate for ``localhost``, ``127.0.0.1`` and ``::1``: ``(cert
    PEM, key PEM)``. ECDSA P-256, valid from an hour ago for :data:`AUTO_CERT_LIFETIME`; it is
    its own CA (basic constraints ``CA:TRUE``), so a client may trust it as its own anchor."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "mockd (self-signed)")])
    now = datetime.datetime.now(datetime.timezone.utc)
    public = key.public_key()
    san = [x509.DNSName(dns) for dns in AUTO_CERT_DNS_NAMES]
    san += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in AUTO_CERT_IP_ADDRESSES]
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + AUTO_CERT_LIFETIME)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                     content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False,
                                     crl_sign=False, encipher_only=False,
                                     decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(san), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public),
                       critical=False)
        .sign(key, hashes.SHA256()))
    return (certificate.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def auto_certificate(data_dir: Path) -> tuple[Path, Path]:
    """The self-signed ``localhost`` certificate of ``--tls-auto``: ``(cert path, key path)``
    under ``<data_dir>/tls/`` (folder 0700, key 0600). Reused while it covers every name and
    is more than :data:`AUTO_CERT_RENEW_BEFORE` from its end; generated otherwise.

    Raises :class:`TlsSetupError` when the files cannot be written.
    """
    from mockd_project.paths import ensure_private_dir, write_private_file

    folder = data_dir / AUTO_CERT_DIR
    cert_path, key_path = folder / AUTO_CERT_FILE, folder / AUTO_KEY_FILE
    if _usable_auto_cert(cert_path, key_path):
        if key_path.stat().st_mode & 0o077:
            os.chmod(key_path, 0o600)
        return cert_path, key_path
    try:
        ensure_private_dir(folder)
        cert_pem, key_pem = generate_self_signed()
        write_private_file(key_path, key_pem)
        write_private_file(cert_path, cert_pem, mode=0o644)
    except OSError as error:
        raise TlsSetupError(f"TLS certificate {cert_path}: cannot write the generated "
                            f"certificate ({error.strerror or error})") from None
    logger.info("generated a self-signed certificate for localhost in %s", cert_path)
    return cert_path, key_path


# ---------------------------------------------------------------------------- context


def openssl_cipher_list(names: tuple[str, ...], key: str) -> str | None:
    """The OpenSSL cipher string for ``cipherSuites`` (IANA names translated, TLS 1.3 names
    dropped since those suites are always on); None when nothing is left to set. Raises
    :class:`TlsSetupError` at ``key`` for an empty name."""
    chosen = []
    for name in names:
        text = name.strip()
        if not text:
            raise TlsSetupError(f"{key}: empty cipher suite name")
        if text.upper() in TLS13_SUITES:
            continue
        chosen.append(IANA_CIPHER_NAMES.get(text.upper(), text))
    return ":".join(chosen) or None


def server_context(settings: TlsSettings, data_dir: Path) -> ssl.SSLContext:
    """The server :class:`ssl.SSLContext` of ``settings``: the certificate (files, or the
    generated one in ``data_dir``), ``minVersion``, ``cipherSuites``, client certificates
    (``client_auth`` with ``client_cas``) and ALPN ``http/1.1``.

    Raises :class:`TlsSetupError` (one line naming the file or the key): a certificate or key
    missing, unreadable, not PEM or not matching; a CA file that cannot be loaded; cipher
    suites OpenSSL does not know; client certificates asked for without a CA file (Python's
    TLS stack verifies every client certificate it receives, so it needs the CA).
    """
    key_prefix = settings.source or "--tls"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = _TLS_VERSIONS[settings.min_version]
    ciphers = openssl_cipher_list(settings.cipher_suites, f"{key_prefix}.cipherSuites")
    if settings.min_version in ("1.0", "1.1"):
        # OpenSSL 3 refuses TLS 1.0/1.1 handshakes at its default security level.
        ciphers = (ciphers or "DEFAULT") + ":@SECLEVEL=0"
    if ciphers is not None:
        try:
            context.set_ciphers(ciphers)
        except ssl.SSLError:
            raise TlsSetupError(f"{key_prefix}.cipherSuites: no cipher suite OpenSSL knows in "
                                f"{list(settings.cipher_suites)} (use names such as "
                                f"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or "
                                f"ECDHE-RSA-AES128-GCM-SHA256)") from None
    if settings.cert_file and settings.key_file and not settings.auto_cert:
        cert_path = _resolve(settings.cert_file, settings.base_dir)
        key_path = _resolve(settings.key_file, settings.base_dir)
    elif settings.cert_file or settings.key_file:
        given = "certificate" if settings.cert_file else "key"
        raise TlsSetupError(f"{key_prefix}: a TLS {given} without its "
                            f"{'key' if given == 'certificate' else 'certificate'}; give both "
                            f"(--tls-cert and --tls-key, or certFile and keyFile)")
    else:
        cert_path, key_path = auto_certificate(data_dir)
    check_key_pair(cert_path, key_path)
    try:
        context.load_cert_chain(str(cert_path), str(key_path))
    except (ssl.SSLError, OSError) as error:
        raise TlsSetupError(f"TLS certificate {cert_path}: OpenSSL cannot use it with "
                            f"{key_path} ({getattr(error, 'reason', None) or error})") from None
    if settings.verifies_clients:
        if not settings.client_cas:
            raise TlsSetupError(
                f"{key_prefix}.clientAuth {settings.client_auth!r} needs the CA files that sign "
                f"client certificates (server.tls.clientCAs, serverConfig.mtls.caCertFile or "
                f"--mtls-ca)")
        for name in settings.client_cas:
            path = _resolve(name, settings.base_dir)
            _read(path, "client CA file")
            try:
                context.load_verify_locations(cafile=str(path))
            except (ssl.SSLError, ValueError):
                raise TlsSetupError(f"TLS client CA file {path}: no PEM certificate in it") \
                    from None
        context.verify_mode = (ssl.CERT_REQUIRED if settings.requires_client_cert
                               else ssl.CERT_OPTIONAL)
    context.set_alpn_protocols(["http/1.1"])
    return context


def client_context(ca_file: str | None) -> ssl.SSLContext | bool:
    """How a client of a TLS admin port checks its certificate (the ``AdminClient`` of the
    CLI; also usable as httpx's ``verify=``): an :class:`ssl.SSLContext` trusting ``ca_file``
    (plus the system CAs), or True (system CAs only) without one. Raises :class:`TlsSetupError` naming the file when it cannot be read."""
    if not ca_file:
        return True
    path = Path(ca_file).expanduser()
    _read(path, "CA file")
    context = ssl.create_default_context()
    try:
        context.load_verify_locations(cafile=str(path))
    except (ssl.SSLError, ValueError):
        raise TlsSetupError(f"TLS CA file {path}: no PEM certificate in it") from None
    return context


# ---------------------------------------------------------------------------- per connection


def client_certificate_from_der(der: bytes) -> ClientCertificate:
    """The :class:`~mocks.core.request.ClientCertificate` of a DER certificate."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    certificate = x509.load_der_x509_certificate(der)
    subject = certificate.subject

    def values(oid: Any) -> list[str]:
        return [str(attribute.value) for attribute in subject.get_attributes_for_oid(oid)]

    common_names = values(NameOID.COMMON_NAME)
    organizations = values(NameOID.ORGANIZATION_NAME)
    return ClientCertificate(cn=common_names[0] if common_names else "",
                             ous=tuple(values(NameOID.ORGANIZATIONAL_UNIT_NAME)),
                             o=organizations[0] if organizations else "",
                             subject=subject.rfc4514_string(),
                             issuer=certificate.issuer.rfc4514_string(),
                             serial=format(certificate.serial_number, "x"))


def tls_extension(transport: Any) -> dict[str, Any] | None:
    """The ASGI ``tls`` scope extension of a connection, or None when it is not TLS.

    Keys: ``server_cert`` (None), ``client_cert_chain`` (the client certificate as PEM, or
    empty), ``client_cert_name`` (RFC 4514 subject or None), ``client_cert_error`` (None:
    unverified certificates never get this far), ``tls_version`` (``0x0304`` for TLS 1.3),
    ``cipher_suite`` (None: Python does not expose the number), ``cipher_name`` (OpenSSL
    name), and :data:`~mocks.core.request.CLIENT_CERT_KEY` (a ``ClientCertificate`` or None).
    """
    ssl_object = transport.get_extra_info("ssl_object")
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    cipher = ssl_object.cipher()
    client = client_certificate_from_der(der) if der else None
    return {"server_cert": None,
            "client_cert_chain": [ssl.DER_cert_to_PEM_cert(der)] if der else [],
            "client_cert_name": client.subject if client is not None else None,
            "client_cert_error": None,
            "tls_version": _VERSION_NUMBERS.get(ssl_object.version() or ""),
            "cipher_suite": None,
            "cipher_name": cipher[0] if cipher else None,
            CLIENT_CERT_KEY: client}


def refusal_reason(client: ClientCertificate | None, settings: TlsSettings) -> str | None:
    """Why ``allowedCNs``/``allowedOUs`` refuse this client certificate, or None when they let
    it in (no lists, no certificate sent under a mode that allows none, or a listed name)."""
    if client is None:
        return None
    if settings.allowed_cns and client.cn not in settings.allowed_cns:
        return f"CN {client.cn!r} is not in allowedCNs"
    if settings.allowed_ous and not set(client.ous) & set(settings.allowed_ous):
        return f"no OU of {client.subject!r} is in allowedOUs"
    return None


def _with_tls(app: Callable, extension: dict[str, Any]) -> Callable:
    async def app_with_tls(scope: dict[str, Any], receive: Any, send: Any) -> Any:
        extensions = scope.get("extensions")
        if extensions is None:
            scope["extensions"] = {"tls": extension}
        else:
            extensions["tls"] = extension
        return await app(scope, receive, send)

    return app_with_tls


def _connection_extension(transport: Any, settings: TlsSettings) -> dict[str, Any] | None:
    """This connection's ``tls`` extension, or None after closing the connection when
    ``allowedCNs``/``allowedOUs`` refuse its certificate (or when it is not TLS)."""
    extension = tls_extension(transport)
    if extension is None:
        return None
    reason = refusal_reason(extension[CLIENT_CERT_KEY], settings)
    if reason is not None:
        logger.warning("closed an HTTPS connection from %s: %s",
                       transport.get_extra_info("peername"), reason)
        transport.abort()
        return None
    return extension


def tls_protocols(settings: TlsSettings) -> tuple[type, type]:
    """``(HTTP protocol class, WebSocket protocol class)`` for a uvicorn HTTPS listener: the
    httptools and auto WebSocket protocols, extended to put the ``tls`` scope extension into
    every scope and to enforce ``allowedCNs``/``allowedOUs``."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

    class HttpsProtocol(HttpToolsProtocol):
        """httptools over TLS, with the client certificate in the scope."""

        tls_extensions: dict[str, Any] | None = None

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            extension = _connection_extension(transport, settings)
            if extension is not None:
                self.tls_extensions = {"tls": extension}

        def on_message_begin(self) -> None:
            super().on_message_begin()
            # Set on the scope uvicorn just built: no extra app layer per request.
            self.scope["extensions"] = self.tls_extensions  # type: ignore[typeddict-item]

    class WssProtocol(AutoWebSocketsProtocol):  # type: ignore[misc, valid-type]
        """The WebSocket protocol over TLS, with the client certificate in the scope."""

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            extension = _connection_extension(transport, settings)
            if extension is not None:
                self.app = _with_tls(self.app, extension)

    return HttpsProtocol, WssProtocol


# ---------------------------------------------------------------------------- redirect


def https_redirect_app(app: Callable, https_port: int) -> Callable:
    """The plain port's app with ``httpsRedirect``: every HTTP request is answered ``308``
    with ``Location: https://<host>:<https_port><path>?<query>`` (the Host header's name, the
    method and body kept by the client); WebSocket and lifespan scopes go to ``app``."""

    async def redirect(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        host = "localhost"
        for name, value in scope["headers"]:
            if name == b"host":
                host = value.decode("latin-1")
                break
        if host.startswith("["):
            host = host[:host.find("]") + 1] or "localhost"
        else:
            host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        target = scope.get("raw_path") or scope["path"].encode()
        location = f"https://{host}:{https_port}{target.decode('latin-1')}"
        if scope.get("query_string"):
            location += "?" + scope["query_string"].decode("latin-1")
        await send({"type": "http.response.start", "status": 308,
                    "headers": [(b"location", location.encode("latin-1")),
                                (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    return redirect
