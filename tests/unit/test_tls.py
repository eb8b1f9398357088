"""HTTPS settings and listener pieces: the one TLS model the config blocks map onto
(mocks/server_config.py), certificates and contexts (mockd_project/tls.py), the
``clientCert`` matcher condition and ``request.tls.*`` templates. SPEC "TLS configuration of
the mock server"; behavior notes §14, §15."""
from __future__ import annotations

import ssl
import stat
from pathlib import Path

import pytest
import trustme
from cryptography import x509

from mocks.core.errors import ConfigError
from mocks.core.request import CLIENT_CERT_KEY, ClientCertificate, MockRequest
from mocks.core.templating import RenderContext, TemplateError, TemplateState, compile_template
from mocks.loader import validate_config
from mocks.protocols.http.conditions import ClientCertCondition
from mocks.server_config import TlsSettings, tls_settings_from_file
from mockd_project import tls
from mockd_project.runner import RunOptions, StartupFailure, resolve_tls

CLIENT = ClientCertificate(cn="svc-a", ous=("payments", "ops"), o="Acme",
                           subject="CN=svc-a,OU=payments,OU=ops,O=Acme",
                           issuer="CN=Test CA", serial="1f")


def _settings(document: dict, base_dir: str = "/cfg") -> TlsSettings:
    config = validate_config({"version": "1.0", "mocks": [], **document})
    return tls_settings_from_file(config.server_config, config.server, base_dir)


def _request(client: ClientCertificate | None = CLIENT, version: int = 0x0304) -> MockRequest:
    return MockRequest("GET", "/", scheme="https",
                       tls={"tls_version": version, "cipher_name": "TLS_AES_256_GCM_SHA384",
                            CLIENT_CERT_KEY: client})


# ------------------------------------------------------------------ one model


def test_tls_settings_server_block_maps_every_key():
    settings = _settings({"server": {"httpsRedirect": True, "tls": {
        "enabled": True, "port": 8443, "certFile": "c.pem", "keyFile": "k.pem",
        "minVersion": 1.3, "cipherSuites": ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
        "clientAuth": "require", "clientCAs": ["ca.pem"]}}})
    assert settings == TlsSettings(
        enabled=True, port=8443, cert_file="c.pem", key_file="k.pem", min_version="1.3",
        cipher_suites=("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",), client_auth="require",
        client_cas=("ca.pem",), https_redirect=True, source="server.tls", base_dir="/cfg")


def test_tls_settings_server_config_tls_and_mtls_map_onto_the_same_model():
    settings = _settings({"serverConfig": {
        "httpsPort": 9443, "tls": {"enabled": True, "autoGenerateCert": True},
        "mtls": {"enabled": True, "clientAuth": "verify-if-given", "caCertFile": "a.pem",
                 "caCertFiles": ["b.pem"], "allowedCNs": ["svc-a"], "allowedOUs": ["ops"]}}})
    assert (settings.enabled, settings.port, settings.auto_cert) == (True, 9443, True)
    assert settings.client_auth == "verify-if-given" and settings.verifies_clients
    assert not settings.requires_client_cert
    assert settings.client_cas == ("a.pem", "b.pem")
    assert (settings.allowed_cns, settings.allowed_ous) == (("svc-a",), ("ops",))
    assert settings.min_version == "1.2"


def test_tls_settings_server_block_wins_over_server_config():
    settings = _settings({"serverConfig": {"httpsPort": 9443, "tls": {"enabled": True}},
                          "server": {"tls": {"port": 8443, "clientAuth": "none"}}})
    assert (settings.port, settings.source, settings.client_auth) == (8443, "server.tls", "none")


@pytest.mark.parametrize("document,enabled", [
    pytest.param({}, False, id="nothing"),
    pytest.param({"serverConfig": {"httpsPort": 9443}}, True, id="a port alone"),
    pytest.param({"server": {"tls": {"enabled": False, "port": 8443}}}, False,
                 id="explicitly off"),
    pytest.param({"serverConfig": {"mtls": {"enabled": False, "clientAuth": "require"}}}, False,
                 id="mtls off is ignored"),
])
def test_tls_settings_enabled(document, enabled):
    settings = _settings(document)
    assert settings.enabled is enabled
    assert settings.client_auth == "none"


def test_resolve_tls_flags_override_the_file(tmp_path):
    config = validate_config({"version": "1.0", "mocks": [],
                              "server": {"tls": {"enabled": True, "port": 8443,
                                                 "certFile": "c.pem", "keyFile": "k.pem"}}})
    options = RunOptions(https_port=9000, tls_auto=True, mtls_client_auth="require",
                         mtls_cas=("ca.pem",))
    settings = resolve_tls(options, config)
    assert (settings.port, settings.auto_cert, settings.client_auth) == (9000, True, "require")
    assert settings.client_cas == (str(Path("ca.pem").absolute()),)


@pytest.mark.parametrize("options,message", [
    pytest.param(RunOptions(tls_cert="c.pem"), "--tls-cert and --tls-key together", id="half"),
    pytest.param(RunOptions(tls_cert="c.pem", tls_key="k.pem", tls_auto=True, https_port=1),
                 "not both", id="both forms"),
    pytest.param(RunOptions(tls_auto=True), "has no port", id="no port"),
])
def test_resolve_tls_bad_flags_exit_2(options, message):
    with pytest.raises(StartupFailure) as caught:
        resolve_tls(options, None)
    assert caught.value.exit_code == 2 and message in caught.value.message


# ------------------------------------------------------------------ certificates


def test_auto_certificate_is_self_signed_for_localhost_and_reused(tmp_path):
    cert_path, key_path = tls.auto_certificate(tmp_path)
    certificate = x509.load_pem_x509_certificate(cert_path.read_bytes())
    assert certificate.issuer == certificate.subject
    certificate.verify_directly_issued_by(certificate)  # raises unless self-signed
    san = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert {str(ip) for ip in san.get_values_for_type(x509.IPAddress)} == {"127.0.0.1", "::1"}
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_path.parent.stat().st_mode) == 0o700
    assert tls.auto_certificate(tmp_path) == (cert_path, key_path)
    assert x509.load_pem_x509_certificate(cert_path.read_bytes()) == certificate


def test_auto_certificate_verifies_as_its_own_anchor_strictly(tmp_path):
    cert_path, key_path = tls.auto_certificate(tmp_path)
    client = ssl.create_default_context(cafile=str(cert_path))
    client.verify_flags |= ssl.VERIFY_X509_STRICT
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(str(cert_path), str(key_path))
    _handshake(server, client, "localhost")


def test_auto_certificate_replaced_when_the_key_no_longer_matches(tmp_path):
    cert_path, key_path = tls.auto_certificate(tmp_path)
    first = cert_path.read_bytes()
    key_path.write_bytes(trustme.CA().private_key_pem.bytes())
    tls.auto_certificate(tmp_path)
    assert cert_path.read_bytes() != first
    tls.check_key_pair(cert_path, key_path)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    server = ca.issue_cert("localhost", "127.0.0.1")
    other = ca.issue_cert("other.test")
    files = {"ca": folder / "ca.pem", "cert": folder / "cert.pem", "key": folder / "key.pem",
             "other_key": folder / "other-key.pem"}
    ca.cert_pem.write_to_path(str(files["ca"]))
    server.cert_chain_pems[0].write_to_path(str(files["cert"]))
    server.private_key_pem.write_to_path(str(files["key"]))
    other.private_key_pem.write_to_path(str(files["other_key"]))
    return files


def test_check_key_pair_missing_file_names_it(pki, tmp_path):
    with pytest.raises(tls.TlsSetupError, match=r"^TLS certificate .*nope\.pem: no such file$"):
        tls.check_key_pair(tmp_path / "nope.pem", pki["key"])


def test_check_key_pair_key_of_another_certificate_names_both(pki):
    with pytest.raises(tls.TlsSetupError) as caught:
        tls.check_key_pair(pki["cert"], pki["other_key"])
    assert str(caught.value) == (f"TLS key {pki['other_key']}: does not match the certificate "
                                 f"{pki['cert']}")


def test_check_key_pair_not_pem_never_quotes_the_file(pki, tmp_path):
    bad = tmp_path / "key.pem"
    bad.write_text("-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n")
    with pytest.raises(tls.TlsSetupError) as caught:
        tls.check_key_pair(pki["cert"], bad)
    assert str(caught.value) == f"TLS key {bad}: not a PEM private key"


def test_server_context_client_auth_without_ca_is_an_error(pki):
    settings = TlsSettings(enabled=True, port=1, cert_file=str(pki["cert"]),
                           key_file=str(pki["key"]), client_auth="require", source="server.tls")
    with pytest.raises(tls.TlsSetupError, match=r"^server\.tls\.clientAuth 'require' needs"):
        tls.server_context(settings, Path("."))


def test_server_context_unknown_cipher_suites_name_the_key(pki):
    settings = TlsSettings(enabled=True, port=1, cert_file=str(pki["cert"]),
                           key_file=str(pki["key"]), cipher_suites=("NOT-A-SUITE",),
                           source="server.tls")
    with pytest.raises(tls.TlsSetupError, match=r"^server\.tls\.cipherSuites: "):
        tls.server_context(settings, Path("."))


def test_server_context_maps_iana_suite_names_and_min_version(pki):
    settings = TlsSettings(enabled=True, port=1, cert_file=str(pki["cert"]),
                           key_file=str(pki["key"]), min_version="1.3",
                           cipher_suites=("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                                          "TLS_AES_128_GCM_SHA256"),
                           client_auth="verify-if-given", client_cas=(str(pki["ca"]),))
    context = tls.server_context(settings, Path("."))
    assert context.minimum_version == ssl.TLSVersion.TLSv1_3
    assert context.verify_mode == ssl.CERT_OPTIONAL
    names = {cipher["name"] for cipher in context.get_ciphers()}
    assert "ECDHE-RSA-AES128-GCM-SHA256" in names and "ECDHE-RSA-AES256-GCM-SHA384" not in names


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext, name: str) -> tuple:
    """Run a TLS handshake in memory; returns (server SSLObject, client SSLObject)."""
    server_in, server_out, client_in, client_out = (ssl.MemoryBIO() for _ in range(4))
    server_side = server.wrap_bio(server_in, server_out, server_side=True)
    client_side = client.wrap_bio(client_in, client_out, server_hostname=name)
    done = {"server": False, "client": False}
    for _ in range(20):
        for side, obj in (("client", client_side), ("server", server_side)):
            if not done[side]:
                try:
                    obj.do_handshake()
                    done[side] = True
                except ssl.SSLWantReadError:
                    pass
        server_in.write(client_out.read())
        client_in.write(server_out.read())
        if all(done.values()):
            return server_side, client_side
    raise AssertionError("handshake did not finish")


class _Transport:
    def __init__(self, ssl_object):
        self.ssl_object = ssl_object

    def get_extra_info(self, name, default=None):
        return self.ssl_object if name == "ssl_object" else default


def test_tls_extension_carries_the_verified_client_certificate(pki):
    ca = trustme.CA()
    server_cert = ca.issue_cert("localhost")
    client_cert = ca.issue_cert("svc-a", common_name="svc-a", organization_unit_name="ops")
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_cert.configure_cert(server)
    ca.configure_trust(server)
    server.verify_mode = ssl.CERT_REQUIRED
    client = ssl.create_default_context()
    ca.configure_trust(client)
    client_cert.configure_cert(client)
    server_side, _ = _handshake(server, client, "localhost")
    extension = tls.tls_extension(_Transport(server_side))
    cert = extension[CLIENT_CERT_KEY]
    assert (cert.cn, cert.ous) == ("svc-a", ("ops",))
    assert extension["client_cert_name"] == cert.subject
    assert extension["client_cert_chain"][0].startswith("-----BEGIN CERTIFICATE-----")
    assert extension["tls_version"] in (0x0303, 0x0304)
    assert tls.tls_extension(_Transport(None)) is None


@pytest.mark.parametrize("settings,refused", [
    pytest.param(TlsSettings(), False, id="no lists"),
    pytest.param(TlsSettings(allowed_cns=("svc-a",)), False, id="CN listed"),
    pytest.param(TlsSettings(allowed_cns=("svc-b",)), True, id="CN not listed"),
    pytest.param(TlsSettings(allowed_ous=("ops",)), False, id="second OU listed"),
    pytest.param(TlsSettings(allowed_ous=("sales",)), True, id="no OU listed"),
])
def test_refusal_reason_allowed_cns_and_ous(settings, refused):
    assert (tls.refusal_reason(CLIENT, settings) is not None) is refused
    assert tls.refusal_reason(None, settings) is None


# ------------------------------------------------------------------ matcher and templates


@pytest.mark.parametrize("expected,client,ok", [
    pytest.param({"cn": "svc-a"}, CLIENT, True, id="exact CN"),
    pytest.param({"cn": "svc-*"}, CLIENT, True, id="prefix wildcard"),
    pytest.param({"ou": "payments", "o": "Acme"}, CLIENT, True, id="first OU and O"),
    pytest.param({"cn": "svc-b"}, CLIENT, False, id="other CN"),
    pytest.param({"cn": "svc-a"}, None, False, id="no certificate"),
    pytest.param({"cn": {"absent": True}}, None, True, id="absent without certificate"),
    pytest.param({"issuer": {"contains": "Test"}}, CLIENT, True, id="value matcher object"),
])
def test_client_cert_condition(expected, client, ok):
    condition = ClientCertCondition(expected)
    result = condition.evaluate(_request(client))
    assert result.matched is ok
    assert result.score == (10 * len(expected) if ok else result.score)


def test_client_cert_condition_explains_a_miss():
    result = ClientCertCondition({"cn": "svc-b"}).evaluate(_request(), explain=True)
    assert result.mismatch == 'client certificate cn expected "svc-b", got "svc-a"'


def test_client_cert_matcher_config_round_trip_and_bad_key():
    config = validate_config({"version": "1.0", "mocks": [{"id": "m", "http": {
        "matcher": {"path": "/x", "clientCert": {"CN": "svc-a"}},
        "response": {"statusCode": 200}}}]})
    assert config.mocks[0].http.matcher.client_cert == {"cn": "svc-a"}
    with pytest.raises(ConfigError, match=r"mocks\[0\]\.http\.matcher\.clientCert"):
        validate_config({"version": "1.0", "mocks": [{"id": "m", "http": {
            "matcher": {"path": "/x", "clientCert": {"email": "a@b"}},
            "response": {"statusCode": 200}}}]})


@pytest.mark.parametrize("text,request_,expected", [
    pytest.param("{{request.tls.clientCN}}", _request(), "svc-a", id="client CN"),
    pytest.param("{{request.tls.clientOU}}/{{request.tls.clientO}}", _request(),
                 "payments/Acme", id="OU and O"),
    pytest.param("{{request.tls.version}}", _request(), "TLSv1.3", id="version"),
    pytest.param("[{{request.tls.clientCN}}]", _request(None), "[]", id="no certificate"),
    pytest.param("[{{request.tls.clientCN}}]", MockRequest("GET", "/"), "[]", id="plain HTTP"),
])
def test_request_tls_template_fields(text, request_, expected):
    context = RenderContext(request_, {}, None, TemplateState())
    assert compile_template(text).render(context) == expected


def test_request_tls_unknown_field_is_a_template_error():
    with pytest.raises(TemplateError, match=r"unknown TLS field 'request\.tls\.cn'"):
        compile_template("{{request.tls.cn}}")


def test_https_redirect_app_keeps_host_path_and_query():
    import asyncio

    sent = []

    async def send(message):
        sent.append(message)

    app = tls.https_redirect_app(None, 8443)
    scope = {"type": "http", "path": "/a b", "raw_path": b"/a%20b", "query_string": b"x=1",
             "headers": [(b"host", b"localhost:8080")]}
    asyncio.run(app(scope, None, send))
    assert sent[0]["status"] == 308
    assert dict(sent[0]["headers"])[b"location"] == b"https://localhost:8443/a%20b?x=1"
