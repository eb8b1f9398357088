"""Typed ``serverConfig`` and ``server`` blocks of the config file.

Owns the pydantic models of the server settings a config file may carry: listener ports,
limits, CORS, TLS, mTLS, rate limit and chaos. Plain pydantic, no Django and nothing else of
the project, so the loader, the admin API, the runner and the published JSON Schema all read
the same models (ARCHITECTURE seam 1). Unknown keys are errors that name the key
(``serverConfig.foo: unknown key``), like everywhere else in the config schema.

Which settings take effect (behavior notes §14 "File ports apply when no CLI flag is given",
§15 "flags > environment > files"): ``httpPort``, ``adminPort``, ``managementPort`` (engine
mode) and ``maxBodySize`` are applied by :mod:`mockd_project.runner`; ``maxLogEntries`` sizes
the request log; ``cors`` shapes the data-plane CORS policy (:mod:`mocks.engine.cors`);
``httpsPort``, ``tls`` and ``mtls`` (and the ``server`` block) are merged into one
:class:`TlsSettings` by :func:`tls_settings_from_file`, which the runner's HTTPS listener
uses; ``chaos`` (the model of :mod:`chaos.config`) is applied when the engine starts;
``maxConnections`` caps the mock port's connections (the runner). The other keys
(``rateLimit``, timeouts, ``logRequests``) are validated and kept for the features that will
use them.

Source: behavior notes §4 (``serverConfig.cors``, ``serverConfig.rateLimit``), §14
(``serverConfig`` keys, the ``server`` block as an alternative), §18 (limits); SPEC "TLS
configuration of the mock server" (``server {port, httpsRedirect, tls {...}}``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mocks.core.lazymodel import LazyModel, untitled_json_schema


#: A TCP port as a config file may give it (behavior notes §14: "ports 1–65535").
Port = Annotated[int, Field(ge=1, le=65535)]

#: ``mtls.clientAuth`` values (behavior notes §14).
MtlsClientAuth = Literal["none", "request", "require", "verify-if-given", "require-and-verify"]

#: ``server.tls.clientAuth`` values (SPEC "TLS configuration of the mock server").
ServerTlsClientAuth = Literal["none", "request", "require"]

#: ``server.tls.minVersion`` values (SPEC "TLS configuration of the mock server").
TlsVersion = Literal["1.0", "1.1", "1.2", "1.3"]


class _Strict(BaseModel):
    """Unknown keys are errors; camelCase keys through aliases, snake_case also accepted.

    The validators are built on first use (``defer_build``): the runner imports this module
    for :class:`TlsSettings`, and a config without ``serverConfig`` or ``server`` never
    builds them."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


def _comma_list(value: Any) -> Any:
    """``"a, b"`` -> ``["a", "b"]``; anything else unchanged (a list stays a list)."""
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


class CorsConfig(_Strict):
    """``serverConfig.cors``: the data-plane CORS policy (behavior notes §4).

    Compiled into a :class:`mocks.engine.cors.CorsPolicy`; absent keys keep the defaults.

    Attributes:
        enabled: False turns CORS off (no CORS headers; an unmatched ``OPTIONS`` gets the
            no-match 404). Default True.
        allow_origins: ``allowOrigins``: origins whose requests get CORS headers; ``["*"]``
            allows any. None (the default) allows loopback origins only
            (``http(s)://localhost|127.0.0.1|[::1]`` with any port). A comma-separated string
            is accepted as a list.
        allow_methods: ``allowMethods`` of a preflight answer (default ``GET, POST, PUT,
            PATCH, DELETE, OPTIONS, HEAD``); a list or a comma-separated string.
        allow_headers: ``allowHeaders`` of a preflight answer (default ``Content-Type,
            Authorization, X-Requested-With, Accept, Origin``).
        allow_credentials: ``allowCredentials``: send ``Access-Control-Allow-Credentials:
            true`` (and echo the origin even when ``*`` is allowed). Default False.
        expose_headers: ``exposeHeaders``: ``Access-Control-Expose-Headers`` on answers.
        max_age: ``maxAge``: preflight cache lifetime in seconds (default 86400).
    """

    enabled: bool = True
    allow_origins: list[str] | None = Field(None, alias="allowOrigins")
    allow_methods: list[str] | None = Field(None, alias="allowMethods")
    allow_headers: list[str] | None = Field(None, alias="allowHeaders")
    allow_credentials: bool = Field(False, alias="allowCredentials")
    expose_headers: list[str] | None = Field(None, alias="exposeHeaders")
    max_age: int | None = Field(None, alias="maxAge", ge=0)

    @field_validator("allow_origins", "allow_methods", "allow_headers", "expose_headers",
                     mode="before")
    @classmethod
    def _lists_from_text(cls, value: Any) -> Any:
        return _comma_list(value)


class TlsConfig(_Strict):
    """``serverConfig.tls``: HTTPS for the mock server (behavior notes §14); merged into
    :class:`TlsSettings` by :func:`tls_settings_from_file`.

    Attributes:
        enabled: serve HTTPS. Default False.
        cert_file: ``certFile``: PEM certificate path (relative to the config file's folder).
        key_file: ``keyFile``: PEM private-key path.
        auto_generate_cert: ``autoGenerateCert``: generate a self-signed certificate for
            ``localhost`` instead of reading files.

    Raises (as a config error at ``serverConfig.tls``): only one of ``certFile`` and
    ``keyFile`` given.
    """

    enabled: bool = False
    cert_file: str | None = Field(None, alias="certFile", min_length=1)
    key_file: str | None = Field(None, alias="keyFile", min_length=1)
    auto_generate_cert: bool = Field(False, alias="autoGenerateCert")

    @model_validator(mode="after")
    def _cert_and_key_together(self) -> "TlsConfig":
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("give both certFile and keyFile, or neither")
        return self


class MtlsConfig(_Strict):
    """``serverConfig.mtls``: client-certificate checks on HTTPS (behavior notes §14);
    merged into :class:`TlsSettings` by :func:`tls_settings_from_file`.

    Attributes:
        enabled: ask clients for certificates. Default False.
        client_auth: ``clientAuth``: ``none`` (no certificate asked), ``request`` (asked, not
            required), ``require`` (required, not verified), ``verify-if-given`` (verified
            when sent), ``require-and-verify`` (the default: required and verified). Any
            other value is a config error at ``serverConfig.mtls.clientAuth``.
        ca_cert_file: ``caCertFile``: PEM file of the CA that signs client certificates.
        ca_cert_files: ``caCertFiles``: more CA files.
        allowed_cns: ``allowedCNs``: accept only these certificate Common Names (empty: any).
        allowed_ous: ``allowedOUs``: accept only these Organizational Units (empty: any).
    """

    enabled: bool = False
    client_auth: MtlsClientAuth = Field("require-and-verify", alias="clientAuth")
    ca_cert_file: str | None = Field(None, alias="caCertFile", min_length=1)
    ca_cert_files: list[str] = Field(default_factory=list, alias="caCertFiles")
    allowed_cns: list[str] = Field(default_factory=list, alias="allowedCNs")
    allowed_ous: list[str] = Field(default_factory=list, alias="allowedOUs")


class RateLimitConfig(_Strict):
    """``serverConfig.rateLimit``: an optional data-plane rate limit (behavior notes §4:
    over the limit -> 429 ``{"error":"rate_limit_exceeded","message":"Too many requests.
    Please slow down."}``).

    Parsed and checked only; the data plane does not limit requests yet.

    Attributes:
        enabled: limit requests. Default True when the block is present.
        requests_per_second: ``requestsPerSecond``: sustained rate per client IP (> 0).
        burst_size: ``burstSize``: requests allowed at once above the rate (>= 1; default:
            the rate rounded up).
    """

    enabled: bool = True
    requests_per_second: float | None = Field(None, alias="requestsPerSecond", gt=0)
    burst_size: int | None = Field(None, alias="burstSize", ge=1)


#: ``serverConfig.chaos``: fault injection applied when the server starts (behavior notes
#: §11, §14): the strict typed model of :mod:`chaos.config` (unknown keys, probabilities
#: outside 0..1 and unknown fault types are config errors naming the key). Built when a
#: ``chaos`` block is first validated (:class:`~mocks.core.lazymodel.LazyModel`);
#: ``mocks.server_config.ChaosConfig`` still names the class.
CHAOS_CONFIG = LazyModel("chaos.config:ChaosConfig")


class ServerConfig(_Strict):
    """``serverConfig``: settings of the server a config file starts (behavior notes §14).

    Ports apply only when no CLI flag (or ``MOCKD_PORT``/``MOCKD_ADMIN_PORT``) gives one:
    flags > environment > file > built-in defaults (behavior notes §15).

    Attributes:
        http_port: ``httpPort``: mock-server (data plane) port, 1-65535 (default 4280).
        https_port: ``httpsPort``: HTTPS port of the mock server (see :class:`TlsSettings`).
        admin_port: ``adminPort``: admin API port (default 4290).
        management_port: ``managementPort``: engine-control port of ``mockd engine`` (default:
            first free from 4281); accepted and ignored in full mode.
        log_requests: ``logRequests``: keep a request log (parsed; default True).
        max_log_entries: ``maxLogEntries``: request-log capacity (default 1000).
        max_body_size: ``maxBodySize``: data-plane request body limit in bytes (default
            10 MiB, behavior notes §18); larger bodies get 413 ``body_too_large``.
        read_timeout, write_timeout: ``readTimeout``/``writeTimeout`` in seconds (parsed;
            default 30).
        max_connections: ``maxConnections``: concurrent connections and requests in flight on
            the mock port, per process, before it answers 503 (0 or unset: no cap).
        tls, mtls, cors, rate_limit, chaos: the blocks above (``rateLimit`` for rate_limit).
        state_store: ``stateStore``: Redis URL keeping the tables
            (``redis://host:port/db``) so that engine replicas share them; ``--state-store``
            wins (see :mod:`tables.state_options`).

    Errors: an unknown key -> ``serverConfig.<key>: unknown key``; a port outside 1-65535 ->
    ``serverConfig.<key>: Input should be ...``.
    """

    http_port: Port | None = Field(None, alias="httpPort")
    https_port: Port | None = Field(None, alias="httpsPort")
    admin_port: Port | None = Field(None, alias="adminPort")
    management_port: Port | None = Field(None, alias="managementPort")
    log_requests: bool | None = Field(None, alias="logRequests")
    max_log_entries: int | None = Field(None, alias="maxLogEntries", ge=0)
    max_body_size: int | None = Field(None, alias="maxBodySize", ge=1)
    read_timeout: int | None = Field(None, alias="readTimeout", ge=0)
    write_timeout: int | None = Field(None, alias="writeTimeout", ge=0)
    max_connections: int | None = Field(None, alias="maxConnections", ge=0)
    tls: TlsConfig | None = None
    mtls: MtlsConfig | None = None
    cors: CorsConfig | None = None
    rate_limit: RateLimitConfig | None = Field(None, alias="rateLimit")
    chaos: Annotated[Any, CHAOS_CONFIG] | None = None
    state_store: str | None = Field(None, alias="stateStore", min_length=1, max_length=2048)

    @field_validator("state_store")
    @classmethod
    def _state_store_url(cls, value: str | None) -> str | None:
        from tables.state_options import check_url, redacted_url

        problem = check_url(value) if value is not None else None
        if problem is not None:
            raise ValueError(f"{redacted_url(value)}: {problem}")
        return value

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        return untitled_json_schema(handler(core_schema), handler, ("chaos",))


class ServerTlsBlock(_Strict):
    """``server.tls`` (SPEC "TLS configuration of the mock server"); merged into
    :class:`TlsSettings` by :func:`tls_settings_from_file`.

    Attributes:
        enabled: serve HTTPS.
        port: HTTPS port, 1-65535.
        cert_file, key_file: ``certFile``/``keyFile``: PEM certificate and key paths.
        min_version: ``minVersion``: ``1.0``, ``1.1``, ``1.2`` or ``1.3`` (a YAML number such
            as ``1.2`` is read as the text ``"1.2"``).
        cipher_suites: ``cipherSuites``: suite names.
        client_auth: ``clientAuth``: ``none``, ``request`` or ``require``.
        client_cas: ``clientCAs``: CA files for client certificates.
    """

    enabled: bool = False
    port: Port | None = None
    cert_file: str | None = Field(None, alias="certFile", min_length=1)
    key_file: str | None = Field(None, alias="keyFile", min_length=1)
    min_version: TlsVersion | None = Field(None, alias="minVersion")
    cipher_suites: list[str] = Field(default_factory=list, alias="cipherSuites")
    client_auth: ServerTlsClientAuth | None = Field(None, alias="clientAuth")
    client_cas: list[str] = Field(default_factory=list, alias="clientCAs")

    @field_validator("min_version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        if isinstance(value, float):
            return f"{value:.1f}"
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{value}.0"
        return value


class ServerBlock(_Strict):
    """``server``: the SPEC's alternative to ``serverConfig`` for the plain port and TLS
    (SPEC "TLS configuration of the mock server"; behavior notes §14).

    Attributes:
        port: plain HTTP (data plane) port, 1-65535; used when neither a flag nor
            ``serverConfig.httpPort`` gives one.
        https_redirect: ``httpsRedirect``: answer every plain-HTTP request with a redirect
            to the same URL on the HTTPS port (needs HTTPS on).
        tls: :class:`ServerTlsBlock`.
    """

    port: Port | None = None
    https_redirect: bool = Field(False, alias="httpsRedirect")
    tls: ServerTlsBlock | None = None


#: ``minVersion`` when none is given: TLS 1.0 and 1.1 are off unless asked for.
DEFAULT_TLS_MIN_VERSION: TlsVersion = "1.2"


@dataclass(frozen=True)
class TlsSettings:
    """HTTPS of one listener, whichever way it was asked for: the single model that the
    ``server`` block, ``serverConfig.httpsPort``/``tls``/``mtls`` and the start flags
    (``--https-port``, ``--tls-cert``, ``--tls-key``, ``--tls-auto``, ``--mtls-*``; the
    ``--admin-tls-*`` flags for the admin port) all map onto.

    Attributes:
        enabled: serve HTTPS (on :attr:`port`).
        port: HTTPS port, 1-65535; None when nothing gave one.
        cert_file, key_file: PEM certificate (chain) and private-key paths, absolute or
            relative to :attr:`base_dir`; None with :attr:`auto_cert`.
        auto_cert: use the self-signed certificate for ``localhost``, ``127.0.0.1`` and
            ``::1`` kept in the data directory (generated on first use).
        min_version: lowest TLS version accepted: ``"1.0"``..``"1.3"`` (default ``"1.2"``).
        cipher_suites: OpenSSL names of the TLS 1.2 (and lower) suites offered; empty keeps
            OpenSSL's defaults. TLS 1.3 suites are not configurable.
        client_auth: client certificates: ``none`` (not asked), ``request`` and
            ``verify-if-given`` (asked; verified against :attr:`client_cas` when sent),
            ``require`` and ``require-and-verify`` (required and verified). The SPEC's three
            values and the five of ``serverConfig.mtls``.
        client_cas: PEM files of the CAs that sign client certificates (relative to
            :attr:`base_dir`).
        allowed_cns, allowed_ous: when not empty, a client certificate whose Common Name (or
            none of whose Organizational Units) is not listed is refused: the connection is
            closed right after the handshake.
        https_redirect: the plain-HTTP port answers every request with a redirect to the
            HTTPS port (``server.httpsRedirect``).
        source: the config key the settings came from (``server.tls``,
            ``serverConfig.tls``) or ``""`` (flags only); names the key in errors.
        base_dir: folder relative file names are read from (the config file's folder, or
            the working directory for flags).

    Source: SPEC "TLS configuration of the mock server", "Authentication" (TLS client
    certificates); behavior notes §14 (``serverConfig.tls``, ``serverConfig.mtls``), §15.
    """

    enabled: bool = False
    port: int | None = None
    cert_file: str | None = None
    key_file: str | None = None
    auto_cert: bool = False
    min_version: TlsVersion = DEFAULT_TLS_MIN_VERSION
    cipher_suites: tuple[str, ...] = ()
    client_auth: MtlsClientAuth = "none"
    client_cas: tuple[str, ...] = ()
    allowed_cns: tuple[str, ...] = ()
    allowed_ous: tuple[str, ...] = ()
    https_redirect: bool = False
    source: str = ""
    base_dir: str = "."

    @property
    def verifies_clients(self) -> bool:
        """True when client certificates are asked for (any ``client_auth`` but ``none``)."""
        return self.client_auth != "none"

    @property
    def requires_client_cert(self) -> bool:
        """True for ``require`` and ``require-and-verify``: no certificate, no connection."""
        return self.client_auth in ("require", "require-and-verify")


def tls_settings_from_file(server_config: ServerConfig | None, server: ServerBlock | None,
                           base_dir: str = ".") -> TlsSettings:
    """Merge ``serverConfig`` (``httpsPort``, ``tls``, ``mtls``) and the ``server`` block into
    one :class:`TlsSettings`; the ``server`` block's keys win where both give one.

    HTTPS is on when a ``tls`` block says ``enabled: true``, or when a port is given
    (``serverConfig.httpsPort``, ``server.tls.port``) and no ``tls`` block says ``enabled:
    false``. Without ``certFile``/``keyFile`` the self-signed ``localhost`` certificate is
    used. ``serverConfig.mtls`` counts only with ``enabled: true``; its ``caCertFile`` and
    ``caCertFiles`` become :attr:`TlsSettings.client_cas`.

    Pure: files are not read here (the runner checks them, naming the file). ``base_dir`` is
    the config file's folder. Either argument may be None.
    Source: SPEC "TLS configuration of the mock server"; behavior notes §14.
    """
    values: dict[str, Any] = {"base_dir": base_dir}
    explicit_enabled: bool | None = None
    if server_config is not None:
        if server_config.https_port is not None:
            values["port"] = server_config.https_port
        tls = server_config.tls
        if tls is not None:
            values["source"] = "serverConfig.tls"
            if "enabled" in tls.model_fields_set:
                explicit_enabled = tls.enabled
            if tls.cert_file is not None:
                values.update(cert_file=tls.cert_file, key_file=tls.key_file)
            values["auto_cert"] = tls.auto_generate_cert
        mtls = server_config.mtls
        if mtls is not None and mtls.enabled:
            values["client_auth"] = mtls.client_auth
            values["client_cas"] = tuple(([mtls.ca_cert_file] if mtls.ca_cert_file else [])
                                         + list(mtls.ca_cert_files))
            values["allowed_cns"] = tuple(mtls.allowed_cns)
            values["allowed_ous"] = tuple(mtls.allowed_ous)
    if server is not None:
        values["https_redirect"] = server.https_redirect
        block = server.tls
        if block is not None:
            values["source"] = "server.tls"
            given = block.model_fields_set
            if "enabled" in given:
                explicit_enabled = block.enabled
            if block.port is not None:
                values["port"] = block.port
            if block.cert_file is not None:
                values["cert_file"] = block.cert_file
            if block.key_file is not None:
                values["key_file"] = block.key_file
            if block.min_version is not None:
                values["min_version"] = block.min_version
            if block.cipher_suites:
                values["cipher_suites"] = tuple(block.cipher_suites)
            if block.client_auth is not None:
                values["client_auth"] = block.client_auth
            if block.client_cas:
                values["client_cas"] = tuple(block.client_cas)
    values["enabled"] = (explicit_enabled if explicit_enabled is not None
                         else values.get("port") is not None)
    return TlsSettings(**values)


def __getattr__(name: str) -> Any:
    # ``ChaosConfig`` is still importable from here, without importing chaos.config at once.
    if name == "ChaosConfig":
        return CHAOS_CONFIG.model()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
