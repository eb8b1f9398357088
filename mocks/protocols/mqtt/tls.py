"""TLS of an MQTT broker: the server certificate and the client certificates it asks for.

:func:`compile_tls` turns a mock's ``mqtt.tls`` block into :class:`MqttTlsSettings` (files
resolved and confined like every file a config names, then loaded once to check them);
:func:`server_context` builds the :class:`ssl.SSLContext` the broker's listeners (TCP and
WebSocket) serve with, and :func:`certificate_refusal` applies ``allowedCNs``/``allowedOUs``
to a connected client at CONNECT.

``clientAuth`` takes the values of ``serverConfig.mtls`` with the same meaning as on the
HTTPS port: ``none`` asks for no certificate; ``request`` and ``verify-if-given`` ask, and a
certificate that is sent must be signed by the CA files; ``require`` and
``require-and-verify`` end the TLS handshake of a client without such a certificate
(Python's TLS stack verifies every client certificate it receives, so every mode but
``none`` needs the CA files).

Source: behavior notes §10 (``mqtt`` row: ``tls {enabled, certFile, keyFile}``), §14
(``serverConfig.mtls {clientAuth, caCertFile, caCertFiles, allowedCNs, allowedOUs}``), §15
(files a config may read). Django-free.
"""
from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mocks.core.errors import ConfigError
from mocks.core.responses import body_file_path

#: ``clientAuth`` values under which a client without a certificate fails the handshake.
REQUIRED_MODES = frozenset({"require", "require-and-verify"})


@dataclass(frozen=True)
class MqttTlsSettings:
    """The TLS of one broker, files resolved.

    Attributes:
        cert_file, key_file: paths of the PEM certificate chain and key.
        client_auth: a ``clientAuth`` value (see the module docstring).
        ca_files: paths of the PEM files of the CAs that sign client certificates.
        allowed_cns, allowed_ous: the ``allowedCNs``/``allowedOUs`` lists (empty: any).
    """

    cert_file: str
    key_file: str
    client_auth: str = "none"
    ca_files: tuple[str, ...] = ()
    allowed_cns: tuple[str, ...] = ()
    allowed_ous: tuple[str, ...] = ()


def server_context(settings: MqttTlsSettings) -> ssl.SSLContext:
    """The server context of ``settings``: certificate and key, and the client CAs and
    verify mode of ``client_auth``. Raises ``OSError`` or ``ssl.SSLError`` when a file
    cannot be loaded."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(settings.cert_file, settings.key_file)
    if settings.client_auth != "none":
        for name in settings.ca_files:
            context.load_verify_locations(cafile=name)
        context.verify_mode = (ssl.CERT_REQUIRED if settings.client_auth in REQUIRED_MODES
                               else ssl.CERT_OPTIONAL)
    return context


def _names(certificate: dict[str, Any], field: str) -> list[str]:
    return [value for relative in certificate.get("subject", ()) for key, value in relative
            if key == field]


def certificate_refusal(ssl_object: Any, settings: MqttTlsSettings | None) -> str | None:
    """Why ``allowedCNs``/``allowedOUs`` refuse the client of ``ssl_object`` (the
    connection's :class:`ssl.SSLObject`, None on a plain connection), or None when they let
    it in: no lists, no certificate sent under a mode that allows none, or a listed name."""
    if settings is None or ssl_object is None or not (settings.allowed_cns
                                                      or settings.allowed_ous):
        return None
    certificate = ssl_object.getpeercert()
    if not certificate:
        return None
    common_names = _names(certificate, "commonName")
    common_name = common_names[0] if common_names else ""
    if settings.allowed_cns and common_name not in settings.allowed_cns:
        return f"CN {common_name!r} is not in allowedCNs"
    if settings.allowed_ous and not set(_names(certificate, "organizationalUnitName")) & set(
            settings.allowed_ous):
        return "no OU of the client certificate is in allowedOUs"
    return None


def _existing(name: str, base_dir: Path, roots: tuple[Path, ...], key: str) -> str:
    path = body_file_path(name, base_dir, roots, key)
    if not path.is_file():
        raise ConfigError(key, f"file not found: {path}")
    return str(path)


def compile_tls(config: Any, base_dir: Path, roots: tuple[Path, ...],
                key_path: str) -> MqttTlsSettings | None:
    """:class:`MqttTlsSettings` of an ``mqtt.tls`` block (a
    :class:`~mocks.protocols.mqtt.config.MqttTls`), None when it is absent or off.

    Files are resolved against ``base_dir`` and must lie in ``roots`` (the compile context's
    file roots; see :func:`~mocks.core.responses.body_file_path`). Raises
    :class:`~mocks.core.errors.ConfigError` naming the key below ``key_path`` (``mocks[0].
    mqtt.tls``): a file outside the roots or missing (``.certFile``, ``.keyFile``,
    ``.caCertFile``, ``.caCertFiles[1]``), or files OpenSSL cannot use together.
    """
    if config is None or not config.enabled:
        return None
    cas = [(config.caCertFile, f"{key_path}.caCertFile")] if config.caCertFile else []
    cas += [(name, f"{key_path}.caCertFiles[{index}]")
            for index, name in enumerate(config.caCertFiles)]
    settings = MqttTlsSettings(
        _existing(config.certFile or "", base_dir, roots, f"{key_path}.certFile"),
        _existing(config.keyFile or "", base_dir, roots, f"{key_path}.keyFile"),
        config.clientAuth,
        tuple(_existing(name, base_dir, roots, key) for name, key in cas),
        tuple(config.allowedCNs), tuple(config.allowedOUs))
    try:
        server_context(settings)
    except (OSError, ValueError) as error:  # ssl.SSLError is an OSError
        raise ConfigError(key_path, f"cannot load the certificate, key or CA files: "
                                    f"{error}") from None
    return settings
