"""The proxy's certificate authority: a CA generated once into a directory, and the leaf
certificates minted from it per host so the proxy can read HTTPS traffic of clients that trust
the CA.

A CA directory holds two files: ``ca.crt`` (the CA certificate, PEM; what clients trust and
``GET /proxy/ca/download`` serves) and ``ca.key`` (its private key, PEM, written 0600, never
served or logged). Keys are ECDSA P-256 (fast to make, accepted by OpenSSL, curl, browsers and
Python). The CA is valid for 10 years; a leaf for 1 year (never past the CA), with the host as
its subject alternative name (a DNS name, or an IP address for a literal address).

Leaf certificates are minted on first use and kept in a bounded cache (:data:`LEAF_CACHE`
hosts, least recently used dropped); every leaf shares one key pair made when the CA is loaded,
so minting is one signature (about a millisecond).

Source: SPEC "Proxy" (HTTPS is recorded only when the client trusts the proxy CA), "Command-line
surface" (``proxy ca generate --ca-path``); behavior notes §1 (CA status fields).

Django-free; a :class:`CertificateAuthority` is used from the engine loop only.
"""
from __future__ import annotations

import datetime as dt
import ipaddress
import os
import ssl
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: File names inside a CA directory.
CERT_FILE, KEY_FILE = "ca.crt", "ca.key"
#: The organization named in the CA's subject (``GET /proxy/ca`` ``organization``).
ORGANIZATION = "mockd"
#: How long a generated CA is valid, and a leaf.
CA_VALIDITY = dt.timedelta(days=3650)
LEAF_VALIDITY = dt.timedelta(days=365)
#: Hosts whose leaf TLS context is cached.
LEAF_CACHE = 512


class CAError(Exception):
    """A CA directory that cannot be read or written (message says which file and why)."""


def fingerprint_of(cert: x509.Certificate) -> str:
    """SHA-256 fingerprint as upper-case hex pairs joined by ``:`` (OpenSSL's
    ``x509 -fingerprint -sha256`` form)."""
    return cert.fingerprint(hashes.SHA256()).hex(":").upper()


def _utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def ca_exists(directory: Path) -> bool:
    """True when ``directory`` holds a CA certificate or key (a CA is never overwritten)."""
    return (directory / CERT_FILE).exists() or (directory / KEY_FILE).exists()


def generate_ca(directory: Path, *, common_name: str = "mockd proxy CA") -> "CertificateAuthority":
    """Write a new CA into ``directory`` (created 0700 when missing) and load it.

    Raises :class:`FileExistsError` when the directory already holds ``ca.crt`` or ``ca.key``;
    :class:`CAError` when the files cannot be written.
    """
    directory = Path(directory)
    if ca_exists(directory):
        raise FileExistsError(f"a CA already exists in {directory}")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION)])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + CA_VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        key_pem = key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        # O_EXCL: never replace a key another process wrote meanwhile; 0600 from the start.
        descriptor = os.open(directory / KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(key_pem)
        (directory / CERT_FILE).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    except FileExistsError:
        raise
    except OSError as error:
        raise CAError(f"cannot write the CA into {directory}: {error.strerror}") from None
    return CertificateAuthority(directory, cert, key)


def load_ca(directory: Path) -> "CertificateAuthority":
    """Load the CA of ``directory``.

    Raises :class:`FileNotFoundError` when ``ca.crt`` or ``ca.key`` is missing, and
    :class:`CAError` when a file is not a PEM certificate / private key or the key does not
    belong to the certificate.
    """
    directory = Path(directory)
    cert_path, key_path = directory / CERT_FILE, directory / KEY_FILE
    for path in (cert_path, key_path):
        if not path.is_file():
            raise FileNotFoundError(f"no CA in {directory} ({path.name} missing)")
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    except (ValueError, OSError) as error:
        raise CAError(f"{cert_path} is not a PEM certificate ({error})") from None
    try:
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (ValueError, TypeError, OSError):
        # The key's text never goes into the message.
        raise CAError(f"{key_path} is not an unencrypted PEM private key") from None
    if key.public_key().public_bytes(serialization.Encoding.DER,
                                     serialization.PublicFormat.SubjectPublicKeyInfo) != \
            cert.public_key().public_bytes(serialization.Encoding.DER,
                                           serialization.PublicFormat.SubjectPublicKeyInfo):
        raise CAError(f"{key_path} does not belong to {cert_path}")
    return CertificateAuthority(directory, cert, key)


@dataclass
class CAInfo:
    """What ``GET /proxy/ca`` shows of a CA (never the key)."""

    path: str
    fingerprint: str
    expires_at: str
    organization: str | None

    def document(self) -> dict[str, object]:
        """``{exists: true, path, fingerprint, expiresAt, organization}``."""
        return {"exists": True, "path": self.path, "fingerprint": self.fingerprint,
                "expiresAt": self.expires_at, "organization": self.organization}


class CertificateAuthority:
    """A loaded CA that mints leaf certificates (see the module docstring).

    Attributes:
        directory: the CA directory.
        cert: the CA certificate.
    """

    def __init__(self, directory: Path, cert: x509.Certificate, key: object):
        self.directory = Path(directory)
        self.cert = cert
        self._key = key
        self._leaf_key = ec.generate_private_key(ec.SECP256R1())
        self._leaf_key_pem = self._leaf_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption())
        self._contexts: OrderedDict[str, ssl.SSLContext] = OrderedDict()
        self._ski = x509.SubjectKeyIdentifier.from_public_key(cert.public_key())

    @property
    def cert_pem(self) -> bytes:
        """The CA certificate as PEM (what clients trust)."""
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def info(self) -> CAInfo:
        """Path, fingerprint, expiry and organization of the CA."""
        organizations = self.cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
        return CAInfo(str(self.directory), fingerprint_of(self.cert),
                      _utc(self.cert.not_valid_after_utc),
                      str(organizations[0].value) if organizations else None)

    def mint(self, host: str) -> x509.Certificate:
        """A new leaf certificate for ``host`` (a DNS name or a literal IP address)."""
        now = dt.datetime.now(dt.timezone.utc)
        try:
            san: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host.strip("[]")))
        except ValueError:
            san = x509.DNSName(host)
        common_name = host[:64] or "localhost"
        not_after = min(now + LEAF_VALIDITY, self.cert.not_valid_after_utc)
        return (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                                         x509.NameAttribute(NameOID.ORGANIZATION_NAME,
                                                            ORGANIZATION)]))
                .issuer_name(self.cert.subject)
                .public_key(self._leaf_key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(minutes=5))
                .not_valid_after(not_after)
                .add_extension(x509.SubjectAlternativeName([san]), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                               critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(
                    self._ski), critical=False)
                .sign(self._key, hashes.SHA256()))

    def server_context(self, host: str) -> ssl.SSLContext:
        """A server-side TLS context presenting a leaf for ``host`` (ALPN: HTTP/1.1, or
        ``h2`` for a client that offers only that, as gRPC clients do),
        cached per host (bounded, least recently used dropped)."""
        host = host.lower()
        context = self._contexts.get(host)
        if context is not None:
            self._contexts.move_to_end(host)
            return context
        leaf = self.mint(host)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.set_alpn_protocols(["http/1.1", "h2"])
        chain = leaf.public_bytes(serialization.Encoding.PEM) + self.cert_pem
        # ssl loads certificates from files only: a private temporary file (0600, removed
        # at once) carries the leaf chain and the shared leaf key.
        with tempfile.NamedTemporaryFile("wb", suffix=".pem") as handle:
            handle.write(chain + self._leaf_key_pem)
            handle.flush()
            context.load_cert_chain(handle.name)
        self._contexts[host] = context
        if len(self._contexts) > LEAF_CACHE:
            self._contexts.popitem(last=False)
        return context
