"""``serverConfig`` and ``server`` blocks (mocks/server_config.py) as the config loader sees
them, and the published JSON Schema (mocks/control/config_schema.py). Behavior notes §4, §14."""
from __future__ import annotations

import pytest

from mocks.control.config_schema import config_json_schema
from mocks.core.errors import ConfigError
from mocks.engine.cors import compile_cors
from mocks.loader import validate_config
from mocks.server_config import ServerConfig


def _error(document: dict) -> str:
    with pytest.raises(ConfigError) as caught:
        validate_config(document)
    return str(caught.value)


@pytest.mark.parametrize("document,expected", [
    pytest.param({"serverConfig": {"foo": 1}}, "serverConfig.foo: unknown key", id="top level"),
    pytest.param({"serverConfig": {"tls": {"enabled": True, "cert": "a.pem"}}},
                 "serverConfig.tls.cert: unknown key", id="tls"),
    pytest.param({"serverConfig": {"mtls": {"allowedCn": ["a"]}}},
                 "serverConfig.mtls.allowedCn: unknown key", id="mtls"),
    pytest.param({"serverConfig": {"cors": {"origins": ["*"]}}},
                 "serverConfig.cors.origins: unknown key", id="cors"),
    pytest.param({"serverConfig": {"rateLimit": {"rps": 5}}},
                 "serverConfig.rateLimit.rps: unknown key", id="rateLimit"),
    pytest.param({"server": {"prot": 8080}}, "server.prot: unknown key", id="server block"),
    pytest.param({"server": {"tls": {"ciphers": []}}}, "server.tls.ciphers: unknown key",
                 id="server tls block"),
])
def test_server_config_unknown_key_is_an_error_naming_the_key(document, expected):
    assert _error(document) == expected


@pytest.mark.parametrize("value", ["none", "request", "require", "verify-if-given",
                                   "require-and-verify"])
def test_mtls_client_auth_accepts_the_five_policies(value):
    config = validate_config({"serverConfig": {"mtls": {"enabled": True, "clientAuth": value}}})
    assert config.server_config.mtls.client_auth == value


def test_mtls_client_auth_outside_the_list_is_an_error():
    message = _error({"serverConfig": {"mtls": {"enabled": True, "clientAuth": "always"}}})
    assert message.startswith("serverConfig.mtls.clientAuth: ")
    assert "require-and-verify" in message


def test_server_tls_client_auth_takes_only_the_three_block_policies():
    assert _error({"server": {"tls": {"clientAuth": "verify-if-given"}}}).startswith(
        "server.tls.clientAuth: ")


@pytest.mark.parametrize("document,path", [
    pytest.param({"server": {"port": 0}}, "server.port", id="server.port 0"),
    pytest.param({"server": {"port": 65536}}, "server.port", id="server.port 65536"),
    pytest.param({"server": {"tls": {"port": 99999}}}, "server.tls.port", id="server.tls.port"),
])
def test_ports_outside_1_to_65535_are_errors(document, path):
    # serverConfig ports were range-checked already (tests/unit/test_loader.py); the
    # `server` block was an untyped mapping.
    assert _error(document).startswith(f"{path}: ")


def test_ports_at_the_range_ends_are_accepted():
    config = validate_config({"serverConfig": {"httpPort": 1, "adminPort": 65535},
                              "server": {"port": 65535, "tls": {"port": 1}}})
    assert (config.server_config.http_port, config.server_config.admin_port) == (1, 65535)
    assert (config.server.port, config.server.tls.port) == (65535, 1)


@pytest.mark.parametrize("document,path", [
    pytest.param({"serverConfig": {"readTimeout": -1}}, "serverConfig.readTimeout",
                 id="negative readTimeout"),
    pytest.param({"serverConfig": {"maxConnections": "many"}}, "serverConfig.maxConnections",
                 id="maxConnections not a number"),
    pytest.param({"serverConfig": {"tls": {"enabled": True, "certFile": "c.pem"}}},
                 "serverConfig.tls", id="certFile without keyFile"),
    pytest.param({"serverConfig": {"rateLimit": {"requestsPerSecond": 0}}},
                 "serverConfig.rateLimit.requestsPerSecond", id="zero rate"),
    pytest.param({"serverConfig": {"rateLimit": {"burstSize": 0}}},
                 "serverConfig.rateLimit.burstSize", id="zero burst"),
    pytest.param({"serverConfig": {"cors": {"maxAge": "forever"}}}, "serverConfig.cors.maxAge",
                 id="cors maxAge"),
    pytest.param({"server": {"tls": {"minVersion": "1.4"}}}, "server.tls.minVersion",
                 id="unknown TLS version"),
])
def test_bad_server_values_name_their_path(document, path):
    assert _error(document).startswith(f"{path}: ")


def test_full_server_config_is_typed():
    config = validate_config({"serverConfig": {
        "httpPort": 8080, "httpsPort": 8443, "adminPort": 9090, "managementPort": 9091,
        "logRequests": False, "maxLogEntries": 50, "maxBodySize": 2048, "readTimeout": 5,
        "writeTimeout": 6, "maxConnections": 100,
        "tls": {"enabled": True, "certFile": "c.pem", "keyFile": "k.pem"},
        "mtls": {"enabled": True, "caCertFile": "ca.pem", "caCertFiles": ["ca2.pem"],
                 "allowedCNs": ["client"], "allowedOUs": ["qa"]},
        "cors": {"allowOrigins": ["https://a.example"]},
        "rateLimit": {"requestsPerSecond": 10, "burstSize": 20},
        "chaos": {"enabled": True, "latency": {"min": "10ms"}}}})
    server = config.server_config
    assert isinstance(server, ServerConfig)
    assert (server.http_port, server.https_port, server.admin_port, server.management_port) == (
        8080, 8443, 9090, 9091)
    assert server.max_body_size == 2048 and server.log_requests is False
    assert (server.tls.cert_file, server.tls.key_file) == ("c.pem", "k.pem")
    assert server.mtls.client_auth == "require-and-verify"  # the default policy
    assert server.mtls.allowed_cns == ["client"] and server.mtls.allowed_ous == ["qa"]
    assert server.rate_limit.enabled and server.rate_limit.requests_per_second == 10
    # The chaos block is the typed chaos model: durations in ms, defaults filled in.
    assert server.chaos.enabled and (server.chaos.latency.min, server.chaos.latency.max) == (
        10, 100)


def test_server_block_reads_yaml_number_tls_versions_as_text():
    config = validate_config({"server": {"port": 8080, "httpsRedirect": True,
                                         "tls": {"enabled": True, "minVersion": 1.2,
                                                 "clientAuth": "require",
                                                 "clientCAs": ["ca.pem"]}}})
    assert config.server.https_redirect and config.server.tls.min_version == "1.2"
    assert config.server.tls.client_cas == ["ca.pem"]


def test_cors_block_reaches_the_compiled_policy():
    # Guards the move of `cors` from untyped extras to CorsConfig: every key still applies.
    config = validate_config({"serverConfig": {"cors": {
        "allowOrigins": "https://a.example, https://b.example", "allowMethods": ["GET"],
        "allowHeaders": "X-One", "exposeHeaders": ["X-Total"], "allowCredentials": True,
        "maxAge": 60}}})
    policy = compile_cors(config)
    assert policy.allowed("https://b.example") and not policy.allowed("http://localhost:3000")
    assert dict(policy.preflight_headers()) == {
        b"access-control-allow-methods": b"GET", b"access-control-allow-headers": b"X-One",
        b"access-control-max-age": b"60"}
    headers = dict(policy.headers("https://a.example"))
    assert headers[b"access-control-allow-credentials"] == b"true"
    assert headers[b"access-control-expose-headers"] == b"X-Total"


def test_config_json_schema_describes_the_file_and_every_server_block():
    schema = config_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] and "$id" not in schema
    assert {"mocks", "serverConfig", "server", "tables"} <= set(schema["properties"])
    server = schema["$defs"]["ServerConfig"]
    assert server["additionalProperties"] is False
    assert {"httpPort", "maxBodySize", "tls", "mtls", "cors", "rateLimit", "chaos"} <= set(
        server["properties"])
    client_auth = schema["$defs"]["MtlsConfig"]["properties"]["clientAuth"]
    assert set(client_auth["enum"]) == {"none", "request", "require", "verify-if-given",
                                        "require-and-verify"}


def test_config_json_schema_returns_a_fresh_copy():
    first = config_json_schema()
    first["properties"].clear()
    assert config_json_schema()["properties"]


def test_published_schema_descriptions_state_behaviour_without_citations():
    import json

    text = json.dumps(config_json_schema())
    assert "SPEC" not in text and "behavior notes" not in text and "Attributes:" not in text
    assert config_json_schema()["$defs"]["Matcher"]["description"] == (
        "every field present becomes one condition; all must hold.")
